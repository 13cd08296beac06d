// Package hostwords writes hostmon's screen verdicts as the words a person
// reads: "contended: foreign 22% on CPUs 0,2,4,6 > 5%". hostmon returns
// the numbers and the checks (hostmon.Verdict); this is the one place
// their words are written.
package hostwords

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gapbench/gapbench/hostmon"
)

// Verdict returns "clean" or "contended: " and the reasons joined by "; ",
// followed by the unscreened checks in parentheses when there are any.
func Verdict(v hostmon.Verdict) string {
	s := "clean"
	if v.Contended {
		s = "contended: " + strings.Join(Reasons(v), "; ")
	}
	if len(v.Unscreened) > 0 {
		s += " (not screened: " + strings.Join(Unscreened(v), "; ") + ")"
	}
	return s
}

// Reasons returns one reason per figure over its threshold, in the
// verdict's order, the siblings over theirs in one reason: "foreign 22% on
// CPUs 0,2 > 5%", "sibling 90% on CPU 10, 90% on CPU 16 > 20%".
func Reasons(v hostmon.Verdict) []string {
	var out []string
	for i := 0; i < len(v.Over); i++ {
		o := v.Over[i]
		if o.Check != hostmon.SiblingBusy {
			out = append(out, Over(o))
			continue
		}
		var parts []string
		for ; i < len(v.Over) && v.Over[i].Check == hostmon.SiblingBusy; i++ {
			parts = append(parts, fmt.Sprintf("%s on CPU %s", pct(v.Over[i].Value), v.Over[i].CPUs))
		}
		i--
		out = append(out, fmt.Sprintf("sibling %s > %s", strings.Join(parts, ", "), pct(o.Limit)))
	}
	return out
}

// Over returns one figure over its threshold in words.
func Over(o hostmon.Over) string {
	on := o.CPUs.Words()
	switch o.Check {
	case hostmon.ForeignBusy:
		return fmt.Sprintf("foreign %s on %s > %s", pct(o.Value), on, pct(o.Limit))
	case hostmon.SiblingBusy:
		return fmt.Sprintf("sibling %s on CPU %s > %s", pct(o.Value), o.CPUs, pct(o.Limit))
	case hostmon.Steal:
		return fmt.Sprintf("steal %s on %s > %s", pct(o.Value), on, pct(o.Limit))
	case hostmon.RunQueueWait:
		return fmt.Sprintf("run-queue wait %s of CPU time on %s (%s) > %s", pct(o.Value), on, o.Extra, pct(o.Limit))
	case hostmon.PSISome:
		return fmt.Sprintf("PSI cpu some %s > %s", pct(o.Value), pct(o.Limit))
	case hostmon.Load1:
		return fmt.Sprintf("load1 %.2f > %.2f (%g per CPU × %d online CPUs)", o.Value, o.Limit, o.PerCPU, o.OnlineCPUs)
	case hostmon.ProcsRunning:
		return fmt.Sprintf("%.0f runnable tasks > %.1f (%g per CPU × %d online CPUs)", o.Value, o.Limit, o.PerCPU, o.OnlineCPUs)
	case hostmon.Throttled:
		return fmt.Sprintf("cgroup CPU quota throttled %s of the span (%.0f periods) > %s", pct(o.Value), o.Extra.Value, pct(o.Limit))
	}
	return fmt.Sprintf("%v %g > %g", o.Check, o.Value, o.Limit)
}

// Unscreened returns each check that could not run, with why:
// "steal: unavailable (no /proc/stat)".
func Unscreened(v hostmon.Verdict) []string {
	out := make([]string, len(v.Unscreened))
	for i, u := range v.Unscreened {
		out[i] = CheckName(u.Check) + ": " + u.Figure.String()
	}
	return out
}

// CheckName is a check's name in a sentence: "foreign busy", "PSI cpu some".
func CheckName(c hostmon.Check) string {
	switch c {
	case hostmon.ForeignBusy:
		return "foreign busy"
	case hostmon.SiblingBusy:
		return "sibling busy"
	case hostmon.Steal:
		return "steal"
	case hostmon.RunQueueWait:
		return "run-queue wait"
	case hostmon.PSISome:
		return "PSI cpu some"
	case hostmon.Load1:
		return "load1"
	case hostmon.ProcsRunning:
		return "running processes"
	case hostmon.Throttled:
		return "cgroup throttling"
	}
	return c.String()
}

// pct formats a percentage for a reason: no decimals for whole numbers and
// from 10% up, one below.
func pct(v float64) string {
	if v >= 9.95 || v == float64(int64(v)) {
		return strconv.FormatFloat(v, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "%"
}
