package decodegap

import (
	"errors"
	"github.com/gapbench/gapbench/decodegap/internal/cpucost"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/hostmon"
)

func TestCheckSliceNamesTheFieldAndTheLeastSlice(t *testing.T) {
	for _, tc := range []struct {
		cfg  CompareConfig
		n    int
		want string
	}{
		{CompareConfig{Slice: 10, Gap: Gap{Open: true, Mean: time.Millisecond}}, 300, "CompareConfig.Slice = 10 with CompareConfig.Gap.Open"},
		{CompareConfig{Slice: 4}, 300, "CompareConfig.Slice = 4 with blocks of 300 steps: at most 64 turns a block, so want Slice >= 5 (or 0: chosen, -1: whole blocks)"},
	} {
		err := checkSlice(&tc.cfg, tc.n)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	for _, ok := range []CompareConfig{{}, {Slice: SliceWhole}, {Slice: 5}, {Slice: 300}, {Slice: 1000}, {Slice: SliceWhole, Gap: Gap{Open: true}}} {
		assert.NoError(t, checkSlice(&ok, 300), "Slice %d", ok.Slice)
	}
}

// TestSlicedRoundTakesTurnsAndCountsOnlyItsOwn runs one sliced round of
// two arms: arm "idle" does nothing, arm "busy" spins 200 µs a step. The
// log of calls shows the opens in the round's order, each arm's warm-up,
// then turns of one lead step and Slice recorded steps, the turn order
// rotating; every arm records its N steps; and the idle arm's counter
// span leaves out the busy arm's turns.
func TestSlicedRoundTakesTurnsAndCountsOnlyItsOwn(t *testing.T) {
	runtime.LockOSThread() // as Compare does: the waiters and the thread clock need it
	defer runtime.UnlockOSThread()
	var calls []string
	arm := func(name string, work time.Duration) Arm {
		return Arm{Name: name, Open: func() (Step, func() error, error) {
			calls = append(calls, "open "+name)
			step := spinFor(work)
			return func() error { calls = append(calls, name); return step() },
				func() error { calls = append(calls, "close "+name); return nil }, nil
		}}
	}
	arms := []Arm{arm("idle", 0), arm("busy", 200*time.Microsecond)}
	cfg := CompareConfig{Window: 4, Warmup: 2, Slice: 5}
	s := cfg.settings()
	res, runs, err := measureSliced(s, 12, cfg.Slice, arms, []int{1, 0}, nil)
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.Len(t, runs, 2)

	// busy opened first (the round's order), warmed up first, then turns:
	// 5, 5 and 2 recorded steps, each after a lead step.
	want := []string{"open busy", "open idle"}
	want = append(want, "busy", "busy", "idle", "idle") // warm-ups
	turn := func(name string, k int) {
		for range k + 1 {
			want = append(want, name)
		}
	}
	turn("busy", 5)
	turn("idle", 5)
	turn("idle", 5) // turn 2 starts from the second arm of the order
	turn("busy", 5)
	turn("busy", 2)
	turn("idle", 2)
	want = append(want, "close idle", "close busy")
	assert.Equal(t, want, calls)

	for a, name := range []string{"idle", "busy"} {
		assert.Equal(t, 12, res[a].n, name)
		assert.True(t, res[a].proc.ok, "%s: %s", name, res[a].proc.why)
		assert.Equal(t, 12, res[a].proc.iters(), name)
		// Two snapshots a turn, the first of the second and third turns
		// foreign.
		assert.Len(t, runs[a].snaps, 6, name)
		var foreign []int
		for k, sn := range runs[a].snaps {
			if sn.foreign {
				foreign = append(foreign, k)
			}
		}
		assert.Equal(t, []int{2, 4}, foreign, name)
	}
	idle, busy := res[0].proc, res[1].proc
	// The busy arm spun 12 recorded steps of 200 µs within its span; the
	// idle arm's span holds none of them (its own steps and gaps take a few
	// µs each; the snapshots and a loaded host's preemptions add some).
	// (A spin is timed by the wall clock: a preempted one takes less CPU.)
	assert.GreaterOrEqual(t, busy.cpuNs, int64(12*200*time.Microsecond/2))
	assert.Less(t, idle.cpuNs, busy.cpuNs/3, "the idle arm's CPU time leaves out the busy arm's turns")
	// Without the host's thread list a turn's cpu-ns/op cannot leave the
	// other arm's threads out: unavailable, said, never partial.
	for _, c := range []counterSpan{idle, busy} {
		_, ok := c.stepCPUNs()
		assert.False(t, ok)
		assert.Equal(t, cpucost.NoThreadList, c.cost.Why)
	}
	assert.GreaterOrEqual(t, busy.wallNs, int64(12*200*time.Microsecond))
}

func TestSlicedRoundNamesTheFailingArmAndClosesEveryInstance(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var closed []string
	arm := func(name string, failAt int) Arm {
		return Arm{Name: name, Open: func() (Step, func() error, error) {
			i := 0
			return func() error {
					if i++; i == failAt {
						return errors.New("frame corrupt")
					}
					return nil
				}, func() error {
					closed = append(closed, name)
					return nil
				}, nil
		}}
	}
	cfg := CompareConfig{Window: 4, Slice: 4}
	_, _, err := measureSliced(cfg.settings(), 8, 4, []Arm{arm("a", 0), arm("b", 3)}, []int{0, 1}, nil)
	require.Error(t, err)
	// b's third call is the second recorded step of its first turn (after
	// the lead step): iteration 2.
	assert.Contains(t, err.Error(), `arm "b": step failed at iteration 2 of 8 (b.N; after 0 warm-up): frame corrupt`)
	assert.Equal(t, []string{"b", "a"}, closed, "every instance closed, the last opened first")

	_, _, err = measureSliced(cfg.settings(), 8, 4, []Arm{arm("a", 0), arm("b", 6)}, []int{0, 1}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `arm "b": step failed at the lead step before iteration 5 of 8 (CompareConfig.Slice): frame corrupt`)
}

// neverContended is a screen that marks nothing contended: on a loaded
// host every round would be quarantined and the verdicts undecided.
var neverContended = hostmon.Thresholds{ForeignBusyPct: 1e9, SiblingBusyPct: 1e9, RunQueueWaitPct: 1e9, StealPct: 1e9, PSISomePct: 1e9, Load1PerCPU: 1e9, ThrottledPct: 1e9}

// compareSlicedChild is the "compare-sliced" mode: compareChild's arms in
// sliced rounds.
func compareSlicedChild(b *testing.B) {
	Compare(b, CompareConfig{Window: 8, Seed: 3, Slice: 16, Screen: Screen{Thresholds: neverContended}},
		Arm{Name: "fast", Open: Func(spinFor(5 * time.Microsecond))},
		Arm{Name: "slow", Open: Func(spinFor(10 * time.Microsecond))})
}

func TestCompareSlicedJudgesTheSlowerArm(t *testing.T) {
	out, err := runChildArgs(t, "compare-sliced", "-test.benchtime=64x", "-test.count=10", "-test.cpu=1")
	require.NoError(t, err, out)
	n := 0
	for _, r := range benchResults(t, out) {
		assert.Equal(t, 64, r.Iters)
		n++
	}
	assert.GreaterOrEqual(t, n, 3*4, out)
	v := regexp.MustCompile(`(?m)^ +slow +p50-sec/op +slower +(\d+\.\d{3}) `).FindStringSubmatch(out)
	require.NotNil(t, v, out)
	ratio, _ := strconv.ParseFloat(v[1], 64)
	assert.Greater(t, ratio, 1.5)
	assert.False(t, strings.Contains(out, "FAIL"), out)
}

// compareAutoChild is the "compare-auto" mode: two arms at a 2 ms gap,
// CompareConfig.Slice unset.
func compareAutoChild(b *testing.B) {
	Compare(b, CompareConfig{Window: 8, Seed: 3, Gap: Gap{Mean: 2 * time.Millisecond}, Screen: Screen{Thresholds: neverContended}},
		Arm{Name: "fast", Open: Func(spinFor(5 * time.Microsecond))},
		Arm{Name: "slow", Open: Func(spinFor(10 * time.Microsecond))})
}

// Issue 33, point 4: with Slice unset, Compare slices a 2 ms gap in turns
// of 30 steps, and says so in a configuration line and above the
// verdicts.
func TestCompareSlicesALongGapByDefault(t *testing.T) {
	out, err := runChildArgs(t, "compare-auto", "-test.benchtime=64x", "-test.count=2", "-test.cpu=1")
	require.NoError(t, err, out)
	assert.Contains(t, out, "\nslice: turn=30 reason=long-gap\n")
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "rounds sliced: the arms take turns of 30 recorded steps, 60ms of gaps (CompareConfig.Slice unset: at a gap of 2ms")
	assert.Len(t, benchResults(t, out), 2*3, out)
}

func TestChooseSliceFromCompareConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  CompareConfig
		arms int
		turn int
	}{
		{CompareConfig{Gap: Gap{Mean: 2 * time.Millisecond}}, 3, 30},
		{CompareConfig{Gap: Gap{Mean: 2 * time.Millisecond}, Slice: SliceWhole}, 3, 0},
		{CompareConfig{Gap: Gap{Mean: 2 * time.Millisecond, Open: true}}, 3, 0},
		{CompareConfig{Gap: Gap{Mean: 2 * time.Millisecond}, NoNullArm: true}, 1, 0},
		{CompareConfig{Gap: Gap{Mean: 100 * time.Microsecond}}, 3, 0},
		{CompareConfig{Gap: Gap{Mean: 100 * time.Microsecond}, Slice: 250}, 3, 250},
	} {
		assert.Equal(t, tc.turn, chooseSlice(&tc.cfg, tc.arms, 300).Turn, "%+v", tc.cfg)
	}
	assert.Equal(t, 79, chooseSlice(&CompareConfig{Gap: Gap{Mean: 2 * time.Millisecond}}, 3, 5000).Turn, "at least N/64")
}

func TestTurnsCountEachArmsOwnThreads(t *testing.T) {
	before := []int{10, 11}        // there before the open (another arm's pool among them)
	setup := []int{10, 11, 20, 21} // after the open: 20 and 21 are the arm's
	own := openedTIDs(before, setup)
	others := []int{11}
	first := []hostmon.Task{{TID: 10, OnCPUNanoseconds: 100}, {TID: 11, OnCPUNanoseconds: 5000}, {TID: 20, OnCPUNanoseconds: 300}}
	last := []hostmon.Task{{TID: 10, OnCPUNanoseconds: 900}, {TID: 11, OnCPUNanoseconds: 95000}, {TID: 20, OnCPUNanoseconds: 1300}, {TID: 21, OnCPUNanoseconds: 40}, {TID: 30, OnCPUNanoseconds: 7}}
	// 20 ran 1000 ns, 21 (born after first) 40: the arm's; 11 ran 90000:
	// the other arm's; 10 and 30 are the runtime's, neither arm's.
	o, x, ok := tasksBetween(own, others, first, last)
	assert.True(t, ok)
	assert.Equal(t, [2]int64{1040, 90000}, [2]int64{o, x})
	o, x, ok = tasksBetween(openedTIDs(setup, setup), nil, first, last)
	assert.True(t, ok)
	assert.Equal(t, [2]int64{0, 0}, [2]int64{o, x}, "an open that started no thread: a true zero")
	_, _, ok = tasksBetween(own, others, nil, last)
	assert.False(t, ok, "a thread list unread")
	_, _, ok = threadsBetween(own, others, nil, nil)
	assert.False(t, ok, "no host snapshots")
}
