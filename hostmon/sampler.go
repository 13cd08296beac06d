package hostmon

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/procfs"
)

// Figure is one contention figure: a value, or the reason it is unavailable
// (its source is missing, unreadable, or the span is empty). An unavailable
// Figure is never a zero: check Available, or print it with String.
type Figure struct {
	// Value is the figure in Unit; meaningless when Reason is set.
	Value float64
	// Unit is "%", "ns", "n" (a count) or "" (a plain number).
	Unit string
	// Reason says why the figure is unavailable; "" when it is available.
	Reason string
}

func avail(v float64, unit string) Figure { return Figure{Value: v, Unit: unit} }
func unavail(unit, reason string) Figure  { return Figure{Unit: unit, Reason: reason} }

// Available reports whether the figure has a value.
func (f Figure) Available() bool { return f.Reason == "" }

// String returns the value with its unit ("22.0%", "1.5ms", "3.21"), or
// "unavailable (reason)".
func (f Figure) String() string {
	if !f.Available() {
		return "unavailable (" + f.Reason + ")"
	}
	switch f.Unit {
	case "%":
		return strconv.FormatFloat(f.Value, 'f', 1, 64) + "%"
	case "ns":
		return time.Duration(math.Round(f.Value)).String()
	case "n":
		return strconv.FormatFloat(f.Value, 'f', 0, 64)
	}
	return strconv.FormatFloat(f.Value, 'f', 2, 64)
}

// userHZ is the unit of /proc/stat and /proc/<pid>/stat times: USER_HZ,
// 100 on every Linux architecture procfs supports (procfs assumes it too).
const userHZ = 100

// Sampler takes snapshots of the host's contention counters at the
// caller's window boundaries; Between turns two snapshots into the figures
// for the span between them. Nothing polls: the cost is paid only when
// Snapshot is called (see BenchmarkSnapshot). A Sampler is safe for use by
// one goroutine at a time.
type Sampler struct {
	fs  FS
	pid int
	// cpus is the measured (confined) set; siblings their SMT siblings
	// outside it.
	cpus, siblings CPUSet
	online         int
	// cgroupStat is the cgroup cpu.stat path, or "" with cgroupWhy.
	cgroupStat, cgroupWhy string
	// now is the clock; tests replace it.
	now func() time.Time
	// tasks reads the process's threads, keeping their files open;
	// nil with tasksWhy when it could not be made. taskBuf is reused
	// between snapshots.
	tasks    *TaskReader
	tasksWhy string
	taskBuf  []Task
}

// NewSampler returns a Sampler for this process (<proc>/self) on the host fs
// describes, measuring the confined set cpus and the sibling set siblings
// (from a Budget). An empty cpus means "unconfined": the CPUs the process
// may run on (Topology.Allowed), with siblings as given.
//
// Foreign busy is the busy time on cpus minus this process's own CPU time,
// which the kernel reports only as a whole. The subtraction assumes that all
// of the process's CPU time was spent on cpus: true when the process is
// confined to cpus (Confine), and when unconfined with cpus empty (the set
// is then every CPU the process may use). When the process also runs
// outside cpus, foreign busy reads low by that time.
func NewSampler(fs FS, cpus, siblings CPUSet) (*Sampler, error) {
	topo, err := fs.Topology()
	if err != nil {
		return nil, err
	}
	if len(cpus) == 0 {
		cpus = topo.Allowed
	}
	for _, c := range cpus.Union(siblings) {
		if !topo.Online.Contains(c) {
			return nil, fmt.Errorf("hostmon: cannot sample CPU %d: it is not online (online CPUs: %s)", c, topo.Online)
		}
	}
	pid, err := fs.SelfPID()
	if err != nil {
		return nil, err
	}
	s := &Sampler{fs: fs, pid: pid, cpus: cpus, siblings: siblings.Minus(cpus), online: len(topo.Online), now: time.Now}
	s.cgroupStat, s.cgroupWhy = fs.cgroupCPUStatPath(pid)
	if s.tasks, err = fs.NewTaskReader(pid); err != nil {
		s.tasksWhy = err.Error()
	}
	return s, nil
}

// Close closes the thread files the Sampler keeps open between snapshots
// (two per thread of the process). A Sampler that lives as long as the
// process need not be closed. Snapshot must not be called after Close.
func (s *Sampler) Close() error {
	if s.tasks == nil {
		return nil
	}
	return s.tasks.Close()
}

// CPUs returns the measured set; Siblings the sibling set.
func (s *Sampler) CPUs() CPUSet     { return s.cpus }
func (s *Sampler) Siblings() CPUSet { return s.siblings }

// Snapshot is the host's cumulative counters at one instant. Only Between
// reads its contents; Tasks exposes the thread reading it took.
type Snapshot struct {
	time           time.Time
	cpus, siblings CPUSet
	online         int

	stat    procfs.Stat // per-CPU times in seconds, procs_running
	statErr string

	ownSeconds float64 // utime+stime of the process, seconds (ticks/USER_HZ)
	ownErr     string

	runq    map[int]uint64 // /proc/schedstat run_delay per CPU, ns
	runqErr string

	tasks    []Task
	tasksErr string

	psiSomeMicroseconds uint64
	psiErr              string

	load1   float64
	loadErr string

	cgroup    cgroupCPU
	cgroupErr string
}

// Time returns when the snapshot was taken.
func (s *Snapshot) Time() time.Time { return s.time }

// Tasks returns the process's threads at the snapshot (see FS.Tasks), nil
// when they could not be read. The slice belongs to the Snapshot.
func (s *Snapshot) Tasks() []Task { return s.tasks }

// Snapshot reads the counters now. It does not fail: a source that cannot
// be read makes its figures unavailable in Between, with the reason.
func (s *Sampler) Snapshot() *Snapshot {
	sn := &Snapshot{time: s.now(), cpus: s.cpus, siblings: s.siblings, online: s.online}
	fs := s.fs

	if st, err := fs.proc.Stat(); err != nil {
		sn.statErr = why(err, fs.procPath("stat"))
	} else {
		sn.stat = st
	}

	if p, err := fs.proc.Proc(s.pid); err != nil {
		sn.ownErr = why(err, fs.procPath(strconv.Itoa(s.pid), "stat"))
	} else if ps, err := p.Stat(); err != nil {
		sn.ownErr = why(err, fs.procPath(strconv.Itoa(s.pid), "stat"))
	} else {
		sn.ownSeconds = float64(ps.UTime+ps.STime) / userHZ
	}

	if ss, err := fs.proc.Schedstat(); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			sn.runqErr = "no " + fs.procPath("schedstat") + ": kernel built without CONFIG_SCHEDSTATS"
		} else {
			sn.runqErr = why(err, fs.procPath("schedstat"))
		}
	} else {
		sn.runq = map[int]uint64{}
		for _, c := range ss.CPUs {
			if n, err := strconv.Atoi(c.CPUNum); err == nil {
				sn.runq[n] = c.WaitingNanoseconds
			}
		}
	}

	if s.tasks == nil {
		sn.tasksErr = s.tasksWhy
	} else if tasks, err := s.tasks.Read(s.taskBuf); err != nil {
		sn.tasksErr = err.Error()
	} else {
		sn.tasks = append([]Task(nil), tasks...)
		s.taskBuf = tasks
	}

	if psi, err := fs.proc.PSIStatsForResource("cpu"); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			sn.psiErr = "no " + fs.procPath("pressure/cpu") + ": kernel without PSI, or booted with psi=0"
		} else {
			sn.psiErr = why(err, fs.procPath("pressure/cpu"))
		}
	} else if psi.Some == nil {
		sn.psiErr = "no some line in " + fs.procPath("pressure/cpu")
	} else {
		sn.psiSomeMicroseconds = psi.Some.Total
	}

	if la, err := fs.proc.LoadAvg(); err != nil {
		sn.loadErr = why(err, fs.procPath("loadavg"))
	} else {
		sn.load1 = la.Load1
	}

	if s.cgroupStat == "" {
		sn.cgroupErr = s.cgroupWhy
	} else if b, err := os.ReadFile(s.cgroupStat); err != nil {
		sn.cgroupErr = why(err, s.cgroupStat)
	} else if c, err := parseCgroupCPUStat(b); err != nil {
		sn.cgroupErr = s.cgroupStat + ": " + err.Error()
	} else {
		sn.cgroup = c
	}
	return sn
}

// why turns a read error into an unavailability reason naming the file.
func why(err error, path string) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no " + path
	case errors.Is(err, os.ErrPermission):
		return "no permission to read " + path
	}
	return err.Error()
}

// busyTotal returns a CPU's busy time (user, nice, system, irq, softirq;
// guest time is already inside user) and its total (busy plus idle, iowait
// and steal), in seconds.
func busyTotal(c procfs.CPUStat) (busy, total float64) {
	busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
	return busy, busy + c.Idle + c.Iowait + c.Steal
}

// statDelta sums, over cpus, the busy, total and steal seconds between two
// /proc/stat readings, and gives each CPU's busy percentage (those with a
// tick counted). why names a CPU missing from either reading, or says that no
// clock tick was counted on cpus within the span.
func statDelta(a, b *procfs.Stat, cpus CPUSet) (busy, total, steal float64, per []CPUBusy, why string) {
	for _, c := range cpus {
		ca, ok1 := a.CPU[int64(c)]
		cb, ok2 := b.CPU[int64(c)]
		if !ok1 || !ok2 {
			return 0, 0, 0, nil, "CPU " + strconv.Itoa(c) + " missing from /proc/stat (offline?)"
		}
		b0, t0 := busyTotal(ca)
		b1, t1 := busyTotal(cb)
		busy += b1 - b0
		total += t1 - t0
		steal += cb.Steal - ca.Steal
		if t1 > t0 {
			per = append(per, CPUBusy{CPU: c, BusyPct: round6(100 * (b1 - b0) / (t1 - t0))})
		}
	}
	if total <= 0 {
		return 0, 0, 0, nil, "no clock tick counted on " + cpus.Words() + " within the span"
	}
	return busy, total, steal, per, ""
}

// CPUBusy is one CPU's busy percentage over a span.
type CPUBusy struct {
	CPU     int
	BusyPct float64
}

// Span is the contention over the time between two snapshots. Percentages
// are of the CPU time available on the set over the span (100% = every CPU
// of the set busy throughout). Figures from /proc/stat have the resolution
// of one clock tick (10 ms): ResolutionPct says what one tick is worth.
type Span struct {
	// Seconds is the wall time between the snapshots.
	Seconds float64
	// CPUs is the measured (confined) set; Siblings their SMT siblings
	// outside it; OnlineCPUs the number of online CPUs.
	CPUs, Siblings CPUSet
	OnlineCPUs     int

	// ForeignBusyPct is busy time on CPUs not spent by this process:
	// busy on CPUs minus the process's own CPU time, clamped at 0 (see
	// NewSampler for the assumption).
	ForeignBusyPct Figure
	// BusyPct is all busy time on CPUs, ours included; OwnPct ours alone
	// (of the same denominator).
	BusyPct, OwnPct Figure
	// SiblingBusyPct is busy time on the sibling set; unavailable when the
	// set is empty (no SMT, or no siblings outside CPUs). SiblingBusy gives
	// each sibling CPU, busiest first.
	SiblingBusyPct Figure
	SiblingBusy    []CPUBusy
	// StealPct is time the hypervisor ran something else on CPUs' vCPUs.
	StealPct Figure
	// RunQueueWaitNs is the time tasks waited on CPUs' run queues
	// (/proc/schedstat run_delay, summed over CPUs; any task, ours too);
	// RunQueueWaitPct the same as a percentage of CPU time on CPUs.
	RunQueueWaitNs, RunQueueWaitPct Figure
	// ProcessRunQueueWaitNs is the time this process's threads waited for
	// a CPU (their schedstat; threads that exited within the span are
	// missing from it).
	ProcessRunQueueWaitNs Figure
	// PSISomePct is the share of the span in which some task on the host
	// (or in the PSI-reporting cgroup) waited for a CPU: the delta of
	// /proc/pressure/cpu "some" total.
	PSISomePct Figure
	// Load1 is the 1-minute load average at the later snapshot: a slow
	// moving average, the context rather than the span.
	Load1 Figure
	// ProcsRunning is the number of runnable tasks at the later snapshot
	// (procs_running in /proc/stat; includes the reader).
	ProcsRunning Figure
	// ThrottledPeriods is the number of CFS periods in which this
	// process's cgroup hit its CPU quota; ThrottledPct the time throttled
	// as a percentage of the span.
	ThrottledPeriods, ThrottledPct Figure
	// ResolutionPct is what one clock tick is worth in the /proc/stat
	// percentages (100 / ticks of CPU time on CPUs in the span).
	ResolutionPct float64
}

// Between returns the contention over the span from a to b, two snapshots
// of the same Sampler, a taken first. It is a pure function of the two.
func Between(a, b *Snapshot) Span {
	sp := Span{
		Seconds:    b.time.Sub(a.time).Seconds(),
		CPUs:       b.cpus,
		Siblings:   b.siblings,
		OnlineCPUs: b.online,
	}
	if sp.Seconds <= 0 {
		r := "empty span: the second snapshot is not later than the first"
		for _, f := range []struct {
			f    *Figure
			unit string
		}{{&sp.ForeignBusyPct, "%"}, {&sp.BusyPct, "%"}, {&sp.OwnPct, "%"}, {&sp.SiblingBusyPct, "%"}, {&sp.StealPct, "%"},
			{&sp.RunQueueWaitNs, "ns"}, {&sp.RunQueueWaitPct, "%"}, {&sp.ProcessRunQueueWaitNs, "ns"}, {&sp.PSISomePct, "%"},
			{&sp.Load1, ""}, {&sp.ProcsRunning, "n"}, {&sp.ThrottledPeriods, "n"}, {&sp.ThrottledPct, "%"}} {
			*f.f = unavail(f.unit, r)
		}
		return sp
	}
	ns := sp.Seconds * 1e9

	// /proc/stat: busy, own, foreign, steal on the set; siblings.
	statWhy := firstOf(a.statErr, b.statErr)
	var busy, total, steal float64
	if statWhy == "" {
		busy, total, steal, _, statWhy = statDelta(&a.stat, &b.stat, sp.CPUs)
	}
	if statWhy != "" {
		sp.BusyPct, sp.OwnPct, sp.ForeignBusyPct, sp.StealPct = unavail("%", statWhy), unavail("%", statWhy), unavail("%", statWhy), unavail("%", statWhy)
	} else {
		sp.ResolutionPct = 100 / (total * userHZ)
		sp.BusyPct = avail(100*busy/total, "%")
		sp.StealPct = avail(100*steal/total, "%")
		if ownWhy := firstOf(a.ownErr, b.ownErr); ownWhy != "" {
			sp.OwnPct = unavail("%", ownWhy)
			sp.ForeignBusyPct = unavail("%", "own CPU time unknown: "+ownWhy)
		} else {
			own := b.ownSeconds - a.ownSeconds
			sp.OwnPct = avail(100*own/total, "%")
			sp.ForeignBusyPct = avail(100*max(0, busy-own)/total, "%")
		}
	}
	switch {
	case len(sp.Siblings) == 0:
		sp.SiblingBusyPct = unavail("%", "no SMT siblings outside "+sp.CPUs.Words())
	case firstOf(a.statErr, b.statErr) != "":
		sp.SiblingBusyPct = unavail("%", firstOf(a.statErr, b.statErr))
	default:
		sb, st, _, per, why := statDelta(&a.stat, &b.stat, sp.Siblings)
		if why != "" {
			sp.SiblingBusyPct, sp.SiblingBusy = unavail("%", why), nil
		} else {
			sp.SiblingBusyPct, sp.SiblingBusy = avail(100*sb/st, "%"), per
			sortBusiest(sp.SiblingBusy)
		}
	}

	// /proc/schedstat: run-queue wait on the set.
	if why := firstOf(a.runqErr, b.runqErr); why != "" {
		sp.RunQueueWaitNs, sp.RunQueueWaitPct = unavail("ns", why), unavail("%", why)
	} else {
		var w float64
		why := ""
		for _, c := range sp.CPUs {
			wa, ok1 := a.runq[c]
			wb, ok2 := b.runq[c]
			if !ok1 || !ok2 {
				why = "CPU " + strconv.Itoa(c) + " missing from /proc/schedstat"
				break
			}
			w += float64(sub(wb, wa))
		}
		if why != "" {
			sp.RunQueueWaitNs, sp.RunQueueWaitPct = unavail("ns", why), unavail("%", why)
		} else {
			sp.RunQueueWaitNs = avail(w, "ns")
			sp.RunQueueWaitPct = avail(100*w/(ns*float64(len(sp.CPUs))), "%")
		}
	}

	if why := firstOf(a.tasksErr, b.tasksErr); why != "" {
		sp.ProcessRunQueueWaitNs = unavail("ns", why)
	} else {
		sp.ProcessRunQueueWaitNs = avail(float64(TasksBetween(a.tasks, b.tasks).RunQueueWaitNanoseconds), "ns")
	}

	if why := firstOf(a.psiErr, b.psiErr); why != "" {
		sp.PSISomePct = unavail("%", why)
	} else {
		sp.PSISomePct = avail(min(100, 100*float64(sub(b.psiSomeMicroseconds, a.psiSomeMicroseconds))*1e3/ns), "%")
	}

	if b.loadErr != "" {
		sp.Load1 = unavail("", b.loadErr)
	} else {
		sp.Load1 = avail(b.load1, "")
	}
	if b.statErr != "" {
		sp.ProcsRunning = unavail("n", b.statErr)
	} else {
		sp.ProcsRunning = avail(float64(b.stat.ProcessesRunning), "n")
	}

	if why := firstOf(a.cgroupErr, b.cgroupErr); why != "" {
		sp.ThrottledPeriods, sp.ThrottledPct = unavail("n", why), unavail("%", why)
	} else {
		sp.ThrottledPeriods = avail(float64(sub(b.cgroup.Throttled, a.cgroup.Throttled)), "n")
		sp.ThrottledPct = avail(min(100, 100*float64(sub(b.cgroup.ThrottledNanoseconds, a.cgroup.ThrottledNanoseconds))/ns), "%")
	}
	return sp
}

// round6 rounds to 6 decimals: tick counts converted to seconds and back
// are not exact, and equal loads must compare equal.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sortBusiest orders CPUs by busy percentage, highest first, then by CPU.
func sortBusiest(c []CPUBusy) {
	slices.SortFunc(c, func(x, y CPUBusy) int {
		if r := cmp.Compare(y.BusyPct, x.BusyPct); r != 0 {
			return r
		}
		return cmp.Compare(x.CPU, y.CPU)
	})
}
