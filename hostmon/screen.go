package hostmon

import (
	"fmt"
)

// Thresholds are the limits above which Screen calls a span contended. A
// zero field takes its default (DefaultThresholds); a negative field turns
// that check off. Percentages are of the CPU time on the measured set unless
// said otherwise.
type Thresholds struct {
	// ForeignBusyPct limits others' busy time on the confined CPUs.
	// Default 5: a confined process cannot migrate away, so every foreign
	// percent is taken from the benchmark's CPUs; 5% is the size of the
	// effects worth resolving, and twice the tick resolution of a
	// 2-second window on one CPU.
	ForeignBusyPct float64
	// SiblingBusyPct limits the busiest single SMT sibling of the confined
	// CPUs. Default 20: a sibling shares the core's execution units and
	// caches, and a busy sibling cost 68% of throughput where foreign load
	// read 1.1%; an idle sibling on a quiet host reads under 5%
	// (housekeeping), so 20% means a sustained co-tenant.
	SiblingBusyPct float64
	// RunQueueWaitPct limits run-queue wait on the confined CPUs as a
	// percentage of their CPU time. Default 5: tasks that wait that long
	// for those CPUs queue behind one another (the benchmark's own threads
	// count too: more runnable threads than CPUs).
	RunQueueWaitPct float64
	// StealPct limits hypervisor steal on the confined CPUs. Default 2:
	// steal means another guest ran on our vCPU's physical CPU, and it
	// stretches steps directly; a quiet VM reads 0.
	StealPct float64
	// PSISomePct limits PSI cpu "some" (share of the span in which any task
	// waited for a CPU, host-wide). Default 20: host-wide pressure that
	// high means the scheduler has no idle CPU to give for a fifth of the
	// time, and a confined process will meet it on wake-up.
	PSISomePct float64
	// Load1PerCPU limits the 1-minute load average per online CPU.
	// Default 1.0: more runnable tasks than CPUs on average.
	Load1PerCPU float64
	// ProcsRunningPerCPU limits runnable tasks at the later snapshot per
	// online CPU. Default: off (negative), since one instant says little;
	// set it to screen on it.
	ProcsRunningPerCPU float64
	// ThrottledPct limits the share of the span in which the process's
	// cgroup was throttled by its CPU quota. Default 1: CFS throttling
	// stops every thread of the group until the next period (100 ms by
	// default), a stall far longer than a step.
	ThrottledPct float64
}

// DefaultThresholds returns the thresholds a zero Thresholds means; each
// field's comment justifies its value.
func DefaultThresholds() Thresholds {
	return Thresholds{
		ForeignBusyPct:     5,
		SiblingBusyPct:     20,
		RunQueueWaitPct:    5,
		StealPct:           2,
		PSISomePct:         20,
		Load1PerCPU:        1,
		ProcsRunningPerCPU: -1,
		ThrottledPct:       1,
	}
}

// withDefaults replaces zero fields by their defaults.
func (t Thresholds) withDefaults() Thresholds {
	d := DefaultThresholds()
	pick := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	return Thresholds{
		ForeignBusyPct:     pick(t.ForeignBusyPct, d.ForeignBusyPct),
		SiblingBusyPct:     pick(t.SiblingBusyPct, d.SiblingBusyPct),
		RunQueueWaitPct:    pick(t.RunQueueWaitPct, d.RunQueueWaitPct),
		StealPct:           pick(t.StealPct, d.StealPct),
		PSISomePct:         pick(t.PSISomePct, d.PSISomePct),
		Load1PerCPU:        pick(t.Load1PerCPU, d.Load1PerCPU),
		ProcsRunningPerCPU: pick(t.ProcsRunningPerCPU, d.ProcsRunningPerCPU),
		ThrottledPct:       pick(t.ThrottledPct, d.ThrottledPct),
	}
}

// Check names one of Screen's checks.
type Check int

// The checks, in the order Screen runs them.
const (
	// ForeignBusy is others' busy time on the measured CPUs (%).
	ForeignBusy Check = iota
	// SiblingBusy is one SMT sibling's busy time (%).
	SiblingBusy
	// Steal is hypervisor steal on the measured CPUs (%).
	Steal
	// RunQueueWait is run-queue wait on the measured CPUs (% of their CPU
	// time).
	RunQueueWait
	// PSISome is PSI cpu "some", host-wide (% of the span).
	PSISome
	// Load1 is the 1-minute load average.
	Load1
	// ProcsRunning is the runnable tasks.
	ProcsRunning
	// Throttled is cgroup CPU-quota throttling (% of the span).
	Throttled
)

// String returns the check's identifier: "foreign-busy", "sibling-busy",
// "steal", "run-queue-wait", "psi-some", "load1", "procs-running",
// "throttled".
func (c Check) String() string {
	switch c {
	case ForeignBusy:
		return "foreign-busy"
	case SiblingBusy:
		return "sibling-busy"
	case Steal:
		return "steal"
	case RunQueueWait:
		return "run-queue-wait"
	case PSISome:
		return "psi-some"
	case Load1:
		return "load1"
	case ProcsRunning:
		return "procs-running"
	case Throttled:
		return "throttled"
	}
	return fmt.Sprintf("Check(%d)", int(c))
}

// Over is one figure Screen found above its threshold.
type Over struct {
	Check Check
	// Value is the figure and Limit the threshold it passed, in the
	// figure's unit (for Load1 and ProcsRunning, PerCPU × OnlineCPUs).
	Value, Limit float64
	// CPUs are the CPUs the figure covers: the measured set (ForeignBusy,
	// Steal, RunQueueWait), the one sibling (SiblingBusy); nil for a
	// host-wide figure.
	CPUs CPUSet
	// PerCPU and OnlineCPUs are Load1's and ProcsRunning's threshold per
	// online CPU and the online CPUs it was scaled by; 0 otherwise.
	PerCPU     float64
	OnlineCPUs int
	// Extra is the figure's companion: RunQueueWait's wait time, or
	// Throttled's throttled periods; the zero Figure otherwise.
	Extra Figure
}

// Unscreened is a check that could not run: its figure, unavailable.
type Unscreened struct {
	Check  Check
	Figure Figure
}

// Verdict is the result of screening a span: numbers and checks (the
// words are written by the renderers, internal/hostwords).
type Verdict struct {
	// Contended is true when any screened figure is above its threshold.
	Contended bool
	// Over lists, in Screen's order, each figure above its threshold;
	// SiblingBusy once per sibling over it. Empty when clean.
	Over []Over
	// Unscreened lists the checks that could not run because their figure
	// is unavailable.
	Unscreened []Unscreened
	// ForeignLoad is true when a figure that measures other tasks' load on
	// the measured CPUs or their siblings (foreign busy, sibling busy,
	// steal) is above its threshold, as opposed to host-wide pressure.
	ForeignLoad bool
}

// Screen compares the span's figures with th (zero fields: defaults) and
// returns the verdict. A figure that is unavailable is listed in
// Unscreened, never taken as 0.
func (sp Span) Screen(th Thresholds) Verdict {
	th = th.withDefaults()
	var v Verdict
	check := func(c Check, f Figure, limit float64, over Over, foreign bool) {
		if limit < 0 {
			return
		}
		if !f.Available() {
			v.Unscreened = append(v.Unscreened, Unscreened{Check: c, Figure: f})
			return
		}
		if f.Value > limit {
			v.Contended = true
			v.ForeignLoad = v.ForeignLoad || foreign
			over.Check, over.Value, over.Limit = c, f.Value, limit
			v.Over = append(v.Over, over)
		}
	}
	on := Over{CPUs: sp.CPUs}
	check(ForeignBusy, sp.ForeignBusyPct, th.ForeignBusyPct, on, true)
	if th.SiblingBusyPct >= 0 && len(sp.Siblings) > 0 {
		if !sp.SiblingBusyPct.Available() {
			v.Unscreened = append(v.Unscreened, Unscreened{Check: SiblingBusy, Figure: sp.SiblingBusyPct})
		} else {
			for _, c := range sp.SiblingBusy {
				if c.BusyPct > th.SiblingBusyPct {
					v.Contended, v.ForeignLoad = true, true
					v.Over = append(v.Over, Over{Check: SiblingBusy, Value: c.BusyPct, Limit: th.SiblingBusyPct, CPUs: NewCPUSet(c.CPU)})
				}
			}
		}
	}
	check(Steal, sp.StealPct, th.StealPct, on, true)
	check(RunQueueWait, sp.RunQueueWaitPct, th.RunQueueWaitPct, Over{CPUs: sp.CPUs, Extra: sp.RunQueueWaitNs}, false)
	check(PSISome, sp.PSISomePct, th.PSISomePct, Over{}, false)
	if sp.OnlineCPUs > 0 {
		n := float64(sp.OnlineCPUs)
		check(Load1, sp.Load1, th.Load1PerCPU*n, Over{PerCPU: th.Load1PerCPU, OnlineCPUs: sp.OnlineCPUs}, false)
		check(ProcsRunning, sp.ProcsRunning, th.ProcsRunningPerCPU*n, Over{PerCPU: th.ProcsRunningPerCPU, OnlineCPUs: sp.OnlineCPUs}, false)
	}
	check(Throttled, sp.ThrottledPct, th.ThrottledPct, Over{Extra: sp.ThrottledPeriods}, false)
	return v
}
