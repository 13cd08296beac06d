package levels

import (
	"fmt"
	"time"
)

// SliceGap is the shortest closed-loop gap at which an unset
// CompareConfig.Slice slices a round. At a 2 ms gap the VAD's noise is
// between blocks, the host's weather over seconds (docs/noise-levels.md:
// two sessions 0.8 s apart differ by ±18.5–20.8% round to round, the same
// two in turns of 10 steps by ±2.4–4.6%), and turns of 30 steps found
// +10% in 9 of 10 quiet trials where whole blocks found 2 of 6. At 100 µs
// turns narrowed the median's interval but not the mean's (its noise is
// the steps' own tail), and at gap 0 nothing was measured: there blocks
// stay whole.
const SliceGap = time.Millisecond

// SliceSpan is the gap time a turn spans when Slice is chosen: 60 ms, 30
// steps at a 2 ms gap, the turn of the trials above.
const SliceSpan = 60 * time.Millisecond

// SliceFewest is the fewest recorded steps of a chosen turn: each turn
// adds one unrecorded lead step, 10% of the steps at most.
const SliceFewest = 10

// SliceReason says why a comparison's rounds are sliced or whole.
type SliceReason int

const (
	// SliceGiven: CompareConfig.Slice > 0 set the turn.
	SliceGiven SliceReason = iota + 1
	// WholeGiven: CompareConfig.Slice < 0 asked for whole blocks.
	WholeGiven
	// SliceLongGap: Slice unset and the gap at least SliceGap: turns of
	// SliceSpan of gaps.
	SliceLongGap
	// WholeShortGap: Slice unset and the gap below SliceGap.
	WholeShortGap
	// WholeOpenLoop: Slice unset and an open loop (Gap.Open), whose
	// arrival schedule a turn would break.
	WholeOpenLoop
	// WholeOneArm: Slice unset and a single arm (no null arm): nothing to
	// take turns with.
	WholeOneArm
	// WholeShortBlock: Slice unset and a block too short for two turns.
	WholeShortBlock
	// SliceGivenBlock: CompareConfig.Slice at least a block's steps: each
	// arm runs its whole block in one turn (the arms opened side by
	// side), and Turn is clamped to the block's steps.
	SliceGivenBlock
)

// String returns the reason's name as the slice: configuration line
// writes it ("given", "whole-given", "long-gap", ...).
func (r SliceReason) String() string {
	switch r {
	case SliceGiven:
		return "given"
	case WholeGiven:
		return "whole-given"
	case SliceLongGap:
		return "long-gap"
	case WholeShortGap:
		return "short-gap"
	case WholeOpenLoop:
		return "open-loop"
	case WholeOneArm:
		return "one-arm"
	case WholeShortBlock:
		return "short-block"
	case SliceGivenBlock:
		return "given-block"
	}
	return fmt.Sprintf("SliceReason(%d)", int(r))
}

// Slicing is the choice between whole blocks and sliced rounds.
type Slicing struct {
	// Turn is the recorded steps of an arm's turn; 0 runs blocks whole.
	Turn int
	// Reason is why.
	Reason SliceReason
	// Given is CompareConfig.Slice as set (0: unset); Gap the gap mean
	// and Steps the recorded steps of a block it was chosen at.
	Given int
	Gap   time.Duration
	Steps int
}

// Sliced reports whether rounds are sliced.
func (s Slicing) Sliced() bool { return s.Turn > 0 }

// ChooseSlice chooses the slicing of a comparison: given is
// CompareConfig.Slice (> 0 a turn, < 0 whole blocks, 0 unset), gap the
// gap mean, open an open loop, arms the arms a round runs (the null arm
// included), steps the recorded steps of a block and least the fewest
// steps a turn may have. Unset, it slices at gaps of SliceGap or more,
// closed loop, two arms or more: turns of SliceSpan of gaps, at least
// SliceFewest and least steps, when the block holds two such turns.
// A given turn is returned as given (the caller checks it), but for one
// of steps or more: a turn cannot hold more than the block, so it is
// clamped to steps (SliceGivenBlock).
func ChooseSlice(given int, gap time.Duration, open bool, arms, steps, least int) Slicing {
	s := Slicing{Given: given, Gap: gap, Steps: steps}
	switch {
	case given > 0 && steps > 0 && given >= steps:
		s.Turn, s.Reason = steps, SliceGivenBlock
	case given > 0:
		s.Turn, s.Reason = given, SliceGiven
	case given < 0:
		s.Reason = WholeGiven
	case open:
		s.Reason = WholeOpenLoop
	case arms < 2:
		s.Reason = WholeOneArm
	case gap < SliceGap:
		s.Reason = WholeShortGap
	default:
		turn := max(int((SliceSpan+gap/2)/gap), SliceFewest, least)
		if 2*turn > steps {
			s.Reason = WholeShortBlock
			break
		}
		s.Turn, s.Reason = turn, SliceLongGap
	}
	return s
}

// Config is the value of the slice: configuration line: the turn (0:
// whole blocks) and the reason, "turn=30 reason=long-gap".
func (s Slicing) Config() string {
	return fmt.Sprintf("turn=%d reason=%v", s.Turn, s.Reason)
}
