package hostmon

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/prometheus/procfs"
)

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
func statDelta(a, b []cpuStat, cpus CPUSet) (busy, total, steal float64, per []CPUBusy, why string) {
	for _, c := range cpus {
		if c >= len(a) || c >= len(b) || !a[c].ok || !b[c].ok {
			return 0, 0, 0, nil, "CPU " + strconv.Itoa(c) + " missing from /proc/stat (offline?)"
		}
		ca, cb := a[c].t, b[c].t
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
		busy, total, steal, _, statWhy = statDelta(a.cpu, b.cpu, sp.CPUs)
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
		sb, st, _, per, why := statDelta(a.cpu, b.cpu, sp.Siblings)
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
			if c >= len(a.runq) || c >= len(b.runq) || !a.runq[c].ok || !b.runq[c].ok {
				why = "CPU " + strconv.Itoa(c) + " missing from /proc/schedstat"
				break
			}
			w += float64(sub(b.runq[c].ns, a.runq[c].ns))
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
		sp.ProcsRunning = avail(float64(b.running), "n")
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
