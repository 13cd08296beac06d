package hostmon

import (
	"fmt"
	"strconv"
	"strings"
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

// Verdict is the result of screening a span.
type Verdict struct {
	// Contended is true when any screened figure is above its threshold.
	Contended bool
	// Reasons says, for each figure above its threshold, what it read, on
	// which CPUs, and the threshold: "foreign 22% on CPUs 0,2 > 5%". Empty
	// when clean.
	Reasons []string
	// Unscreened lists the checks that could not run because their figure
	// is unavailable: "steal: unavailable (no /proc/stat)".
	Unscreened []string
	// ForeignLoad is true when a figure that measures other tasks' load on
	// the measured CPUs or their siblings (foreign busy, sibling busy,
	// steal) is above its threshold, as opposed to host-wide pressure.
	ForeignLoad bool
}

// String returns "clean" or "contended: " and the reasons joined by "; ",
// followed by the unscreened checks in parentheses when there are any.
func (v Verdict) String() string {
	s := "clean"
	if v.Contended {
		s = "contended: " + strings.Join(v.Reasons, "; ")
	}
	if len(v.Unscreened) > 0 {
		s += " (not screened: " + strings.Join(v.Unscreened, "; ") + ")"
	}
	return s
}

// pct formats a percentage for a reason: no decimals for whole numbers and
// from 10% up, one below.
func pct(v float64) string {
	if v >= 9.95 || v == float64(int64(v)) {
		return strconv.FormatFloat(v, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "%"
}

// Screen compares the span's figures with th (zero fields: defaults) and
// returns the verdict. A figure that is unavailable is listed in
// Unscreened, never taken as 0.
func (sp Span) Screen(th Thresholds) Verdict {
	th = th.withDefaults()
	var v Verdict
	check := func(name string, f Figure, limit float64, reason func() string, foreign bool) {
		if limit < 0 {
			return
		}
		if !f.Available() {
			v.Unscreened = append(v.Unscreened, name+": "+f.String())
			return
		}
		if f.Value > limit {
			v.Contended = true
			v.ForeignLoad = v.ForeignLoad || foreign
			v.Reasons = append(v.Reasons, reason())
		}
	}
	on := sp.CPUs.Words()
	check("foreign busy", sp.ForeignBusyPct, th.ForeignBusyPct, func() string {
		return fmt.Sprintf("foreign %s on %s > %s", pct(sp.ForeignBusyPct.Value), on, pct(th.ForeignBusyPct))
	}, true)
	if th.SiblingBusyPct >= 0 && len(sp.Siblings) > 0 {
		if !sp.SiblingBusyPct.Available() {
			v.Unscreened = append(v.Unscreened, "sibling busy: "+sp.SiblingBusyPct.String())
		} else {
			var over []string
			for _, c := range sp.SiblingBusy {
				if c.BusyPct > th.SiblingBusyPct {
					over = append(over, fmt.Sprintf("%s on CPU %d", pct(c.BusyPct), c.CPU))
				}
			}
			if len(over) > 0 {
				v.Contended, v.ForeignLoad = true, true
				v.Reasons = append(v.Reasons, fmt.Sprintf("sibling %s > %s", strings.Join(over, ", "), pct(th.SiblingBusyPct)))
			}
		}
	}
	check("steal", sp.StealPct, th.StealPct, func() string {
		return fmt.Sprintf("steal %s on %s > %s", pct(sp.StealPct.Value), on, pct(th.StealPct))
	}, true)
	check("run-queue wait", sp.RunQueueWaitPct, th.RunQueueWaitPct, func() string {
		return fmt.Sprintf("run-queue wait %s of CPU time on %s (%s) > %s", pct(sp.RunQueueWaitPct.Value), on, sp.RunQueueWaitNs, pct(th.RunQueueWaitPct))
	}, false)
	check("PSI cpu some", sp.PSISomePct, th.PSISomePct, func() string {
		return fmt.Sprintf("PSI cpu some %s > %s", pct(sp.PSISomePct.Value), pct(th.PSISomePct))
	}, false)
	if sp.OnlineCPUs > 0 {
		n := float64(sp.OnlineCPUs)
		check("load1", sp.Load1, th.Load1PerCPU*n, func() string {
			return fmt.Sprintf("load1 %.2f > %.2f (%g per CPU × %d online CPUs)", sp.Load1.Value, th.Load1PerCPU*n, th.Load1PerCPU, sp.OnlineCPUs)
		}, false)
		check("running processes", sp.ProcsRunning, th.ProcsRunningPerCPU*n, func() string {
			return fmt.Sprintf("%.0f runnable tasks > %.1f (%g per CPU × %d online CPUs)", sp.ProcsRunning.Value, th.ProcsRunningPerCPU*n, th.ProcsRunningPerCPU, sp.OnlineCPUs)
		}, false)
	}
	check("cgroup throttling", sp.ThrottledPct, th.ThrottledPct, func() string {
		return fmt.Sprintf("cgroup CPU quota throttled %s of the span (%.0f periods) > %s", pct(sp.ThrottledPct.Value), sp.ThrottledPeriods.Value, pct(th.ThrottledPct))
	}, false)
	return v
}
