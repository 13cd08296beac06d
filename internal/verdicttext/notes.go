package verdicttext

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gapbench/gapbench/nullband"
)

// The lines under the table: each distinct reason once, with the rows it
// concerns and their numbers.

// notes returns the lines under the table: each distinct reason once, with
// the rows it concerns, then each error.
func notes(rows []Row, n Names) []string {
	by := map[nullband.Reason][]Row{}
	var errs []string
	for _, r := range rows {
		if r.Err != nil {
			errs = append(errs, fmt.Sprintf("%s: no verdict: %v", label(r), r.Err))
			continue
		}
		for _, x := range r.Verdict.Reasons {
			if r.Check && x == nullband.NoNullArm {
				continue // the A/A check has no null arm by construction
			}
			by[x] = append(by[x], r)
		}
	}
	reasons := make([]nullband.Reason, 0, len(by))
	for x := range by {
		reasons = append(reasons, x)
	}
	sort.Slice(reasons, func(i, j int) bool { return reasons[i] < reasons[j] })
	var lines []string
	for _, x := range reasons {
		lines = append(lines, reasonText(x, by[x], n))
	}
	if eq := equivalentRows(rows); len(eq) > 0 {
		v := eq[0].Verdict
		if n.Brief != "" {
			margin := ""
			if n.Delta != "" {
				margin = " (" + n.Delta + ")"
			}
			lines = append(lines, fmt.Sprintf("equivalent (%s): the %s interval lies inside ±%s%s.", labels(eq), pct0(1-2*(1-v.EqConfidence)), pct(v.Delta), margin))
		} else {
			lines = append(lines, fmt.Sprintf("equivalent (%s): the %s interval marked (%s) lies inside ±%s: two one-sided tests, each at %s, rule out a change beyond the margin.",
				labels(eq), pct0(1-2*(1-v.EqConfidence)), pct0(1-2*(1-v.EqConfidence)), pct(v.Delta), pct0(1-v.EqConfidence)))
		}
	}
	if f := familyLine(rows, n); f != "" {
		lines = append(lines, f)
	}
	if c := checkLine(rows, n); c != "" {
		lines = append(lines, c)
	}
	var relieved []Row
	for _, r := range rows {
		if r.Relieved && r.Err == nil {
			relieved = append(relieved, r)
		}
	}
	if len(relieved) > 0 {
		lines = append(lines, fmt.Sprintf("extreme-spread quarantine lifted (%s): setting aside rounds whose arms spread widely would have left a row with no interval, so no round was set aside for its spread alone.", labels(relieved)))
	}
	return append(lines, errs...)
}

// reasonText writes one reason, with the rows it concerns and their numbers.
func reasonText(x nullband.Reason, rows []Row, n Names) string {
	v := rows[0].Verdict
	var list []string
	switch x {
	case nullband.TooFewRounds:
		_, same := level(rows)
		for _, r := range rows {
			e := fmt.Sprintf("%s: %d used", label(r), r.Verdict.Used)
			if !same {
				e += fmt.Sprintf(" of %d needed at %s", r.Verdict.NeedRounds, pct0(r.Verdict.Confidence))
			}
			list = append(list, e)
		}
		s := fmt.Sprintf("too few rounds (%s): a %s interval needs at least %d used rounds",
			strings.Join(list, "; "), pct0(v.Confidence), v.NeedRounds)
		if !same {
			s = fmt.Sprintf("too few rounds (%s) for a finite interval", strings.Join(list, "; "))
		}
		if n.Rounds != "" {
			s += fmt.Sprintf("; raise %s", n.Rounds)
		}
		return s + "."
	case nullband.Straddles:
		_, same := level(rows)
		for _, r := range rows {
			e := fmt.Sprintf("%s: CI %s", label(r), interval(r.Verdict.Lo, r.Verdict.Hi))
			if !same {
				e = fmt.Sprintf("%s: %s CI %s", label(r), pct0(r.Verdict.Confidence), interval(r.Verdict.Lo, r.Verdict.Hi))
			}
			if k := r.Verdict.RoundsToDecide; k > 0 {
				e += fmt.Sprintf(", about %d rounds would decide", k)
			}
			list = append(list, e)
		}
		lv := pct0(v.Confidence) + " "
		if !same {
			lv = ""
		}
		s := fmt.Sprintf("undecided: the %sinterval holds 1 and reaches past ±%s, so it shows neither a change nor equivalence (%s)",
			lv, pct(v.Delta), strings.Join(list, "; "))
		if n.Rounds != "" {
			s += fmt.Sprintf("; more rounds narrow it (%s)", n.Rounds)
		}
		if n.Delta != "" {
			s += fmt.Sprintf(", a wider margin (%s) eases equivalence", n.Delta)
		}
		return s + "."
	case nullband.NullShifted:
		var held, kept []string
		for _, r := range rows {
			e := fmt.Sprintf("%s: %s/%s %s, %s CI %s, p=%.3f", label(r), n.Null, n.Base,
				ratio(r.Verdict.NullRatio), pct0(r.Verdict.NullConfidence), interval(r.Verdict.NullLo, r.Verdict.NullHi), r.Verdict.NullP)
			if r.Verdict.Outcome == nullband.Undecided {
				held = append(held, e)
			} else {
				kept = append(kept, e+fmt.Sprintf("; B/%s %s", n.Null, interval(r.Verdict.VsNullLo, r.Verdict.VsNullHi)))
			}
		}
		var parts []string
		if len(held) > 0 {
			parts = append(parts, fmt.Sprintf("withheld: %s, a second instance of %s, differs from %s itself (%s): the arms did not share the host's conditions, and B against %s does not confirm B/A; run again.",
				n.Null, n.Base, n.Base, strings.Join(held, "; "), n.Null))
		}
		if len(kept) > 0 {
			parts = append(parts, fmt.Sprintf("caveat: %s, a second instance of %s, differs from %s itself (%s): the arms did not share the host's conditions, but B differs from both instances the same way.",
				n.Null, n.Base, n.Base, strings.Join(kept, "; ")))
		}
		return strings.Join(parts, "\n")
	case nullband.TooManyQuarantined:
		for _, r := range rows {
			list = append(list, fmt.Sprintf("%s: %d of %d", label(r), r.Verdict.Quarantined, len(r.Verdict.Rounds)))
		}
		s := fmt.Sprintf("undecided: too many rounds quarantined (%s), more than the cap", strings.Join(list, "; "))
		if n.MaxQuarantined != "" {
			s += " (" + n.MaxQuarantined + ")"
		}
		return s + ": the host was too unsettled; see the quarantined rounds below."
	case nullband.WithinDelta:
		for _, r := range rows {
			list = append(list, fmt.Sprintf("%s %s", label(r), signed(r.Verdict.Ratio)))
		}
		return fmt.Sprintf("real but small: %s; the whole interval lies within ±%s, the equivalence margin.",
			strings.Join(list, ", "), pct(v.Delta))
	case nullband.Bimodal:
		for _, r := range rows {
			list = append(list, label(r))
		}
		return fmt.Sprintf("bimodal: an arm's values fall in separate levels (%s); the paired test holds, but medians fall between levels.",
			strings.Join(list, ", "))
	case nullband.NoNullArm:
		for _, r := range rows {
			list = append(list, label(r))
		}
		return fmt.Sprintf("no null arm (%s): whether the arms shared the host's conditions was not checked.", strings.Join(list, ", "))
	case nullband.BelowEqFloor:
		for _, r := range rows {
			list = append(list, fmt.Sprintf("%s: %d used of %d", label(r), r.Verdict.Used, r.Verdict.EqFloor))
		}
		s := fmt.Sprintf("not yet equivalent (%s): the interval lies inside ±%s, but equivalence needs %d used rounds, enough to see a change that shows in only some rounds",
			strings.Join(list, "; "), pct(v.Delta), v.EqFloor)
		if n.Rounds != "" {
			s += fmt.Sprintf("; raise %s", n.Rounds)
		}
		return s + "."
	case nullband.QuarantineChangesCall:
		for _, r := range rows {
			list = append(list, fmt.Sprintf("%s: %s on all %d complete rounds, %d of them set aside", label(r),
				Outcome(r.Verdict.Unscreened, r.Metric), r.Verdict.Used+r.Verdict.Quarantined, r.Verdict.Quarantined))
		}
		return fmt.Sprintf("withheld: judged with the rounds the screen set aside, the call changes (%s); the call rested on those rounds; see the quarantined rounds below.", strings.Join(list, "; "))
	case nullband.Continuing:
		for _, r := range rows {
			list = append(list, fmt.Sprintf("%s: %d rounds", label(r), len(r.Verdict.Rounds)))
		}
		s := fmt.Sprintf("stopped before deciding (%s)", strings.Join(list, "; "))
		if n.MaxRounds != "" {
			s += fmt.Sprintf(", below the cap %s", n.MaxRounds)
		}
		return s + "."
	}
	for _, r := range rows {
		list = append(list, label(r))
	}
	return fmt.Sprintf("%v: %s.", x, strings.Join(list, ", "))
}
