package hostmon

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureSpan takes a snapshot of host's proc tree, then one of its
// proc-<scenario> tree (and sys-<scenario>, which holds the cgroup files,
// when it exists) span later, and returns the span between them.
func fixtureSpan(t *testing.T, host, scenario string, cpus, siblings CPUSet, span time.Duration) Span {
	t.Helper()
	s, err := NewSampler(fixtureFS(t, host), cpus, siblings)
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return t0 }
	a := s.Snapshot()

	sys := "testdata/" + host + "/sys-" + scenario
	if _, err := os.Stat(sys); err != nil {
		sys = "testdata/" + host + "/sys"
	}
	after, err := NewFS("testdata/"+host+"/proc-"+scenario, sys)
	require.NoError(t, err)
	switchFS(s, after)
	s.now = func() time.Time { return t0.Add(span) }
	return Between(a, s.Snapshot())
}

// switchFS makes s read another tree from now on, as if the host had moved
// on to that state.
func switchFS(s *Sampler, fs FS) {
	s.fs = fs
	s.cgroupStat, s.cgroupWhy = fs.cgroupCPUStatPath(s.pid)
	s.tasks.Close()
	s.tasks, s.tasksWhy = nil, "no task directory"
	if r, err := fs.NewTaskReader(s.pid); err == nil {
		s.tasks = r
	}
}

func TestSpanEPYCBusySibling(t *testing.T) {
	// The first "Why": a budget of 4 physical cores on the 32-thread host;
	// our threads use 395 of 400 ticks, and CPU 17 (sibling of 1) is 68%
	// busy. Foreign load on the budget reads about 1%; the sibling must be
	// seen.
	topo := fixtureTopology(t, "epyc32")
	b, err := topo.SelectBudget(4)
	require.NoError(t, err)
	sp := fixtureSpan(t, "epyc32", "sibling", b.CPUs, b.Siblings, time.Second)
	assert.Equal(t, 1.0, sp.Seconds)
	assert.InDelta(t, 100, sp.BusyPct.Value, 1e-9)
	assert.InDelta(t, 98.75, sp.OwnPct.Value, 1e-9)
	assert.InDelta(t, 1.25, sp.ForeignBusyPct.Value, 1e-9)
	assert.InDelta(t, 71.0/4, sp.SiblingBusyPct.Value, 1e-9)
	require.Len(t, sp.SiblingBusy, 4)
	assert.Equal(t, 17, sp.SiblingBusy[0].CPU)
	assert.InDelta(t, 68, sp.SiblingBusy[0].BusyPct, 1e-9)
	assert.InDelta(t, 0, sp.StealPct.Value, 1e-9)
	assert.InDelta(t, 40e6, sp.RunQueueWaitNs.Value, 1e-3)
	assert.InDelta(t, 1, sp.RunQueueWaitPct.Value, 1e-9)
	assert.InDelta(t, 4e6, sp.ProcessRunQueueWaitNs.Value, 1e-3)
	assert.InDelta(t, 5, sp.PSISomePct.Value, 1e-9)
	assert.Equal(t, Figure{Value: 4.5}, sp.Load1)
	assert.Equal(t, Figure{Value: 5, Unit: "n"}, sp.ProcsRunning)
	assert.Equal(t, Figure{Value: 0, Unit: "n"}, sp.ThrottledPeriods, "cgroup v2 cpu.stat: no new throttling")
	assert.InDelta(t, 0.25, sp.ResolutionPct, 1e-9)

	v := sp.Screen(Thresholds{})
	assert.True(t, v.Contended)
	assert.True(t, v.ForeignLoad)
	assert.Equal(t, []string{"sibling-busy 68 > 20 on 17"}, overs(v))
	assert.Empty(t, v.Unscreened)

	// Raising the sibling threshold above 68% (and only that) makes it clean.
	v = sp.Screen(Thresholds{SiblingBusyPct: 70})
	assert.False(t, v.Contended)
	assert.Empty(t, v.Over)
	// Turning the check off does too.
	assert.False(t, sp.Screen(Thresholds{SiblingBusyPct: -1}).Contended)
	// A tight foreign threshold catches the 1.25%.
	assert.Equal(t, []string{"foreign-busy 1.25 > 1 on 0-3", "sibling-busy 68 > 20 on 17"}, overs(sp.Screen(Thresholds{ForeignBusyPct: 1})))
}

func TestSpanEPYCCotenantOnBudget(t *testing.T) {
	// The second "Why": a budget confined to CPUs 0,2,4,6 whose cores are
	// 22% busy with co-tenant work; the process cannot migrate away.
	topo := fixtureTopology(t, "epyc32")
	b, err := topo.BudgetOf(NewCPUSet(0, 2, 4, 6))
	require.NoError(t, err)
	sp := fixtureSpan(t, "epyc32", "cotenant", b.CPUs, b.Siblings, time.Second)
	assert.InDelta(t, 387.0/4, sp.BusyPct.Value, 1e-9)
	assert.InDelta(t, 75, sp.OwnPct.Value, 1e-9)
	assert.InDelta(t, 21.75, sp.ForeignBusyPct.Value, 1e-9)
	assert.InDelta(t, 0.25, sp.StealPct.Value, 1e-9)
	assert.InDelta(t, 0, sp.SiblingBusyPct.Value, 1e-9)
	assert.InDelta(t, 8, sp.RunQueueWaitPct.Value, 1e-9)
	assert.InDelta(t, 25, sp.PSISomePct.Value, 1e-9)
	v := sp.Screen(Thresholds{})
	assert.Equal(t, []string{
		"foreign-busy 21.75 > 5 on 0,2,4,6",
		"run-queue-wait 8 > 5 on 0,2,4,6 (320ms)",
		"psi-some 25 > 20",
	}, overs(v))
	assert.True(t, v.ForeignLoad)
	// Steal 0.25% is under its 2% default, and over a 0.2% threshold.
	assert.Contains(t, overs(sp.Screen(Thresholds{StealPct: 0.2})), "steal 0.25 > 0.2 on 0,2,4,6")
}

func TestSpanSocket2HandPickedSiblings(t *testing.T) {
	// The third "Why": "idle" CPUs 11,17,31 picked by hand are SMT siblings
	// of busy 10,16,30 on the adjacent-sibling layout.
	topo := fixtureTopology(t, "socket2")
	b, err := topo.BudgetOf(NewCPUSet(11, 17, 31))
	require.NoError(t, err)
	assert.Equal(t, NewCPUSet(10, 16, 30), b.Siblings)
	sp := fixtureSpan(t, "socket2", "handpicked", b.CPUs, b.Siblings, time.Second)
	assert.InDelta(t, 0, sp.ForeignBusyPct.Value, 1e-9)
	assert.InDelta(t, 90, sp.SiblingBusyPct.Value, 1e-9)
	assert.Equal(t, Figure{Value: 5, Unit: "n"}, sp.ThrottledPeriods, "cgroup v1 nr_throttled delta")
	assert.InDelta(t, 3, sp.ThrottledPct.Value, 1e-9)
	assert.InDelta(t, 0, sp.PSISomePct.Value, 1e-9)
	v := sp.Screen(Thresholds{})
	assert.Equal(t, []string{
		"sibling-busy 90 > 20 on 10", "sibling-busy 90 > 20 on 16", "sibling-busy 90 > 20 on 30",
		"load1 40 > 32 (1 per CPU × 32)",
		"throttled 3 > 1 (5)",
	}, overs(v))
	// Running processes are screened only when asked.
	assert.Contains(t, overs(sp.Screen(Thresholds{ProcsRunningPerCPU: 1})), "procs-running 41 > 32 (1 per CPU × 32)")

	// Measuring only the siblings' set as the budget: their load is
	// foreign (our process did not run there... but the subtraction
	// assumes it did: foreign = 270-150 = 120 of 300 ticks).
	sp = fixtureSpan(t, "socket2", "handpicked", NewCPUSet(10, 16, 30), nil, time.Second)
	assert.InDelta(t, 40, sp.ForeignBusyPct.Value, 1e-9)
}

func TestSpanVM2RealFiles(t *testing.T) {
	// Real files of this 2-CPU VM, two readings ~4 s apart: no
	// /proc/schedstat (CONFIG_SCHEDSTATS off), no SMT, cgroup v1.
	sp := fixtureSpan(t, "vm2", "after", nil, nil, 3990*time.Millisecond)
	assert.Equal(t, NewCPUSet(0, 1), sp.CPUs, "unconfined: the allowed CPUs")
	assert.InDelta(t, 100*128.0/798, sp.BusyPct.Value, 1e-9)
	assert.InDelta(t, 0, sp.OwnPct.Value, 1e-9, "the fixture's process was asleep")
	assert.InDelta(t, 100*128.0/798, sp.ForeignBusyPct.Value, 1e-9)
	assert.InDelta(t, 100*173621e3/3.99e9, sp.PSISomePct.Value, 1e-9)
	assert.Equal(t, "unavailable (no testdata/vm2/proc/schedstat: kernel built without CONFIG_SCHEDSTATS)", sp.RunQueueWaitNs.String())
	assert.False(t, sp.RunQueueWaitPct.Available())
	assert.Equal(t, "unavailable (no SMT siblings outside CPUs 0,1)", sp.SiblingBusyPct.String())
	assert.Equal(t, Figure{Value: 1.47}, sp.Load1)
	assert.Equal(t, Figure{Value: 0, Unit: "n"}, sp.ThrottledPeriods)
	assert.True(t, sp.ProcessRunQueueWaitNs.Available())

	v := sp.Screen(Thresholds{})
	assert.Equal(t, []string{"foreign-busy 16.04 > 5 on 0,1"}, overs(v))
	require.Len(t, v.Unscreened, 1)
	assert.Equal(t, RunQueueWait, v.Unscreened[0].Check)
	assert.Equal(t, "unavailable (no testdata/vm2/proc/schedstat: kernel built without CONFIG_SCHEDSTATS)", v.Unscreened[0].Figure.String())
}

func TestSpanUnavailable(t *testing.T) {
	s, err := NewSampler(fixtureFS(t, "vm2"), nil, nil)
	require.NoError(t, err)
	t0 := time.Unix(0, 0)
	s.now = func() time.Time { return t0 }
	a := s.Snapshot()
	sp := Between(a, a)
	assert.Equal(t, "unavailable (empty span: the second snapshot is not later than the first)", sp.ForeignBusyPct.String())
	v := sp.Screen(Thresholds{})
	assert.False(t, v.Contended, "unavailable is never taken as a reading")
	assert.Len(t, v.Unscreened, 6, "all but running processes, which is off by default")

	// A tree without PSI, loadavg or the process's stat.
	empty, err := NewFS(t.TempDir(), t.TempDir())
	require.NoError(t, err)
	switchFS(s, empty)
	s.now = func() time.Time { return t0.Add(time.Second) }
	sp = Between(a, s.Snapshot())
	assert.Contains(t, sp.PSISomePct.String(), "unavailable (no ")
	assert.Contains(t, sp.PSISomePct.String(), "pressure/cpu: kernel without PSI, or booted with psi=0)")
	assert.Contains(t, sp.ForeignBusyPct.Reason, "stat")
	assert.Contains(t, sp.Load1.Reason, "loadavg")
	assert.Contains(t, sp.ThrottledPct.Reason, "cgroup")
	assert.False(t, sp.Screen(Thresholds{}).Contended)
}

func TestFigureString(t *testing.T) {
	assert.Equal(t, "22.0%", avail(22, "%").String())
	assert.Equal(t, "1.5ms", avail(1.5e6, "ns").String())
	assert.Equal(t, "3.21", avail(3.214, "").String())
	assert.Equal(t, "41", avail(41, "n").String())
	assert.Equal(t, "unavailable (no PSI)", unavail("%", "no PSI").String())
	assert.Equal(t, "0.0%", avail(0, "%").String(), "a true zero prints as 0")
}

func TestThresholdDefaults(t *testing.T) {
	assert.Equal(t, DefaultThresholds(), Thresholds{}.withDefaults())
	th := Thresholds{ForeignBusyPct: 10, StealPct: -1}.withDefaults()
	assert.Equal(t, 10.0, th.ForeignBusyPct)
	assert.Equal(t, -1.0, th.StealPct)
	assert.Equal(t, 20.0, th.SiblingBusyPct)
}

func TestParseCgroupCPUStat(t *testing.T) {
	v1, err := os.ReadFile("testdata/vm2/sys/fs/cgroup/cpu/cpu.stat")
	require.NoError(t, err)
	c, err := parseCgroupCPUStat(v1)
	require.NoError(t, err)
	assert.Equal(t, cgroupCPU{}, c, "the real VM's group is never throttled")
	c, err = parseCgroupCPUStat([]byte("usage_usec 5\nnr_periods 10\nnr_throttled 2\nthrottled_usec 300\n"))
	require.NoError(t, err)
	assert.Equal(t, cgroupCPU{Periods: 10, Throttled: 2, ThrottledNanoseconds: 300_000}, c)
	_, err = parseCgroupCPUStat([]byte("usage_usec 5\nuser_usec 3\n"))
	assert.ErrorContains(t, err, "cpu controller not enabled")
	_, err = parseCgroupCPUStat([]byte("nr_periods x\n"))
	assert.Error(t, err)
}

func FuzzParseCgroupCPUStat(f *testing.F) {
	f.Add([]byte("nr_periods 10\nnr_throttled 2\nthrottled_time 300\n"))
	f.Add([]byte("nr_periods 10\nnr_throttled 2\nthrottled_usec 300\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseCgroupCPUStat(b)
		if err != nil && c != (cgroupCPU{}) {
			t.Fatalf("error %v with a value %+v", err, c)
		}
	})
}

// BenchmarkSnapshot reports the cost of one Snapshot of this host for this
// process (decodegap takes one per window boundary).
func BenchmarkSnapshot(b *testing.B) {
	fs, err := DefaultFS()
	require.NoError(b, err)
	s, err := NewSampler(fs, nil, nil)
	require.NoError(b, err)
	for b.Loop() {
		s.Snapshot()
	}
}

// overs lists the verdict's figures over their thresholds as
// "check value > limit on CPUs (extra)", numbers to four digits.
func overs(v Verdict) []string {
	var out []string
	for _, o := range v.Over {
		s := fmt.Sprintf("%s %.4g > %.4g", o.Check, o.Value, o.Limit)
		if len(o.CPUs) > 0 {
			s += " on " + o.CPUs.String()
		}
		if o.OnlineCPUs > 0 {
			s += fmt.Sprintf(" (%g per CPU × %d)", o.PerCPU, o.OnlineCPUs)
		}
		if o.Extra != (Figure{}) {
			s += " (" + o.Extra.String() + ")"
		}
		out = append(out, s)
	}
	return out
}
