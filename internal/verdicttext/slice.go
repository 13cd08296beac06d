package verdicttext

import (
	"fmt"
	"math"
	"strings"

	"github.com/gapbench/gapbench/internal/levels"
	"github.com/gapbench/gapbench/nullband"
)

// SliceLine says how a comparison's rounds ran, sliced in turns or in
// whole blocks, and why (levels.Slicing), naming field, the setting that
// chooses ("CompareConfig.Slice"), wrapped at Width ("\n" after each
// line). "" for a zero Slicing.
func SliceLine(s levels.Slicing, field string) string {
	if l := sliceText(s, field); l != "" {
		return wrap(l, Width)
	}
	return ""
}

// sliceText is SliceLine unwrapped.
func sliceText(s levels.Slicing, field string) string {
	gap := s.Gap.String()
	switch s.Reason {
	case levels.SliceGiven:
		return fmt.Sprintf("rounds sliced: the arms take turns of %d recorded steps (%s = %d). %s", s.Turn, field, s.Given, turnCPU(field))
	case levels.SliceGivenBlock:
		return fmt.Sprintf("rounds sliced in one turn an arm: %s = %d is at least a block's %d steps, so each arm runs its whole block in one turn of %d recorded steps, the arms opened side by side; set %s below %d for turns, or to decodegap.SliceWhole for each block on its own. %s",
			field, s.Given, s.Steps, s.Turn, field, s.Steps, turnCPU(field))
	case levels.SliceLongGap:
		return fmt.Sprintf("rounds sliced: the arms take turns of %d recorded steps, %s of gaps (%s unset: at a gap of %s, %s or more, a block spans the host's weather, which turns share; %s = decodegap.SliceWhole runs whole blocks). %s",
			s.Turn, levels.SliceSpan.String(), field, gap, levels.SliceGap.String(), field, turnCPU(field))
	case levels.WholeGiven:
		return fmt.Sprintf("rounds whole: each arm's block of %d steps runs on its own (%s = %d).", s.Steps, field, s.Given)
	case levels.WholeShortGap:
		return fmt.Sprintf("rounds whole: each arm's block of %d steps runs on its own (%s unset: the gap %s is below %s, where turns were not shown to help; set %s to slice).",
			s.Steps, field, gap, levels.SliceGap.String(), field)
	case levels.WholeOpenLoop:
		return fmt.Sprintf("rounds whole: each arm's block of %d steps runs on its own (%s unset: an open loop keeps its arrival schedule).", s.Steps, field)
	case levels.WholeOneArm:
		return fmt.Sprintf("rounds whole: one arm, nothing to take turns with (%s unset).", field)
	case levels.WholeShortBlock:
		return fmt.Sprintf("rounds whole: a block of %d steps holds fewer than two turns of %s of gaps at %s (%s unset; raise -benchtime to slice).",
			s.Steps, levels.SliceSpan.String(), gap, field)
	}
	return ""
}

// turnCPU says what a turn's cpu-sec/op holds.
func turnCPU(field string) string {
	return fmt.Sprintf("In a turn, cpu-sec/op leaves out the threads the other arms' opens started, but counts the goroutines another arm's open leaves running on the runtime's threads (one burning 2–3%% of a core read +23%% on its neighbour: docs/cpu-definition.md); %s = decodegap.SliceWhole keeps each arm's CPU to its own blocks.", field)
}

// notRunLine says that the A/A check did not run (report.CheckNotRun):
// the null rows among checks that are neither decided nor bounded, with
// their used and needed rounds; "" when every one is.
func notRunLine(checks []Row, n Names) string {
	var list []string
	for _, r := range checks {
		v := r.Verdict
		if v.Outcome != nullband.Undecided || (v.Lo > 0 && v.Hi < math.Inf(1)) {
			continue
		}
		list = append(list, fmt.Sprintf("%s: %d used of %d needed", label(r), v.Used, v.NeedRounds))
	}
	if len(list) == 0 {
		return ""
	}
	s := fmt.Sprintf("A/A check did not run: %s, a second instance of %s, has no interval yet (%s), so a shift between the instances could not be found and the verdicts above are not calibrated by it",
		n.Null, n.Base, strings.Join(list, "; "))
	if n.Rounds != "" {
		s += fmt.Sprintf("; the rounds ended first: raise %s", n.Rounds)
	}
	return s + "."
}
