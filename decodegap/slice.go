package decodegap

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/internal/levels"
)

// maxSlices is the most turns one arm may take in a sliced round: each
// turn takes two counter snapshots (before and after its recorded steps),
// and a block keeps at most maxSnapshots without thinning them, which
// would mix a turn's snapshots with another's.
const maxSlices = maxSnapshots / 2

// checkSlice checks a CompareConfig.Slice that is set against the block
// size n: a turn of at least n/maxSlices steps (rounded up), and no open
// loop. Below 0 (SliceWhole) and 0 (chosen by chooseSlice) are valid.
func checkSlice(cfg *CompareConfig, n int) error {
	switch {
	case cfg.Slice <= 0:
		return nil
	case cfg.Gap.Open:
		return fmt.Errorf("CompareConfig.Slice = %d with CompareConfig.Gap.Open: a slice would break the arrival schedule; set Slice to %d (SliceWhole)", cfg.Slice, SliceWhole)
	}
	if least := leastSlice(n); cfg.Slice < least {
		return fmt.Errorf("CompareConfig.Slice = %d with blocks of %d steps: at most %d turns a block, so want Slice >= %d (or 0: chosen, %d: whole blocks)", cfg.Slice, n, maxSlices, least, SliceWhole)
	}
	return nil
}

// leastSlice is the fewest steps of a turn for blocks of n steps.
func leastSlice(n int) int { return (n + maxSlices - 1) / maxSlices }

// chooseSlice is the slicing of Compare's rounds (levels.ChooseSlice):
// CompareConfig.Slice as set, or, unset, turns of 60 ms of gaps at gaps
// of 1 ms or more (closed loop, two arms or more), whole blocks below.
// arms counts the arms of a round with the null arm, n a block's steps.
func chooseSlice(cfg *CompareConfig, arms, n int) levels.Slicing {
	return levels.ChooseSlice(cfg.Slice, cfg.Gap.Mean, cfg.Gap.Open, arms, n, leastSlice(n))
}

// slicedArm is one arm's instance in a sliced round.
type slicedArm struct {
	r    *runner
	step Step
	done int // recorded steps so far
}

// measureSliced runs one sliced round (CompareConfig.Slice): it opens the
// arms of order (indexes into arms) in that order, warms each up in turn,
// then runs turns until every arm has n recorded steps: at turn t the arms
// go in order rotated by t, each for one unrecorded lead step and then up
// to slice recorded steps, every step after its gap. It closes every
// instance, last opened first, and returns the results and runners by arm
// index (nil for arms not in order). A failure names the arm; a panic in
// an open, a step or a close is an error like Compare's. The caller has
// locked the OS thread.
func measureSliced(s *settings, n, slice int, arms []Arm, order []int, h *hostRun) (res []*result, runs []*runner, err error) {
	ins := make([]*slicedArm, len(arms))
	var closes []func() error
	var begun []*gap.Waiter
	defer func() {
		if p := recover(); p != nil {
			res, runs, err = nil, nil, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
		for i := len(begun) - 1; i >= 0; i-- {
			begun[i].End()
		}
		var cerrs []error
		for i := len(closes) - 1; i >= 0; i-- {
			cerrs = append(cerrs, closes[i]())
		}
		if cerr := errors.Join(cerrs...); cerr != nil && err == nil {
			res, runs, err = nil, nil, fmt.Errorf("closing: %w", cerr)
		}
	}()
	for _, a := range order {
		r := newRunner(s, n)
		r.sliced = true
		if h != nil {
			r.host, r.cr.sampler = h, h.sampler
			r.phases[phaseBefore] = h.tids()
		}
		step, closeArm, err := arms[a].Open()
		if closeArm != nil {
			name := arms[a].Name
			closes = append(closes, func() error {
				if err := closeArm(); err != nil {
					return fmt.Errorf("arm %q: %w", name, err)
				}
				return nil
			})
		}
		switch {
		case err != nil:
			return nil, nil, fmt.Errorf("arm %q: opening: %w", arms[a].Name, err)
		case step == nil:
			return nil, nil, fmt.Errorf("arm %q: opening returned a nil step (Arm.Open must return a step or an error)", arms[a].Name)
		}
		if h != nil {
			r.phases[phaseSetup] = h.tids()
			r.openTIDs = openedTIDs(r.phases[phaseBefore], r.phases[phaseSetup])
		}
		r.overheadNs = loopOverhead(s)
		ins[a] = &slicedArm{r: r, step: step}
	}
	// Each arm's turns leave out the threads the others' opens created.
	for _, a := range order {
		var others []int
		for _, b := range order {
			if b != a {
				others = append(others, ins[b].r.openTIDs...)
			}
		}
		slices.Sort(others)
		ins[a].r.otherTIDs = slices.Compact(others)
	}
	for _, a := range order {
		w := ins[a].r.waiter
		if err := w.Begin(); err != nil {
			return nil, nil, fmt.Errorf("preparing gaps (CompareConfig.Gap.Kind = %v): %w", s.gap.Kind, err)
		}
		begun = append(begun, w)
	}
	for _, a := range order {
		in := ins[a]
		in.r.wallStart, in.r.loopStartNs = wallNow(), gap.Now()
		if i, _, err := in.r.warm(in.step); err != nil {
			return nil, nil, fmt.Errorf("arm %q: step failed at %s: %w", arms[a].Name, in.r.iterName(i), err)
		}
		in.r.afterWarmup()
	}
	for t := 0; ; t++ {
		ran := false
		for k := range order {
			a := order[(k+t)%len(order)]
			in := ins[a]
			if in.done >= n {
				continue
			}
			ran = true
			m := min(slice, n-in.done)
			if where, err := in.r.turn(in.step, in.done, m); err != nil {
				return nil, nil, fmt.Errorf("arm %q: step failed at %s: %w", arms[a].Name, where, err)
			}
			in.done += m
		}
		if !ran {
			break
		}
	}
	for i := len(begun) - 1; i >= 0; i-- {
		begun[i].End()
	}
	begun = nil
	res, runs = make([]*result, len(arms)), make([]*runner, len(arms))
	for _, a := range order {
		res[a], runs[a] = ins[a].r.analyzeSingle(), ins[a].r
	}
	return res, runs, nil
}

// turn runs one turn of a sliced round: a lead step (after a gap of the
// mean, unrecorded: it brings the instance's memory back after the other
// arms' turns, as the warm-up did), a snapshot, recorded steps j0 to
// j0+m-1 each after its gap from the sequence, and a snapshot. The first
// snapshot of every turn but the first is marked foreign: the counter
// span leaves out the time since this arm's previous turn. On a failure
// it names the step.
func (r *runner) turn(step Step, j0, m int) (string, error) {
	noGap := r.s.noGap()
	prevEnd := gap.Now()
	if !noGap {
		r.waiter.WaitUntil(prevEnd + int64(r.s.gap.Mean))
	}
	_, prevEnd, err := timeStep(step)
	if err != nil {
		return fmt.Sprintf("the lead step before iteration %d of %d (CompareConfig.Slice)", j0+1, r.n), err
	}
	r.foreignNext = j0 > 0
	r.boundary(j0, true)
	for j := j0; j < j0+m; j++ {
		if prevEnd, err = r.recorded(step, j, prevEnd, noGap); err != nil {
			return r.iterName(r.s.warmup + j), err
		}
	}
	r.boundary(j0+m, true)
	return "", nil
}

// foreignSpan returns the counters of the snapshot intervals in (fi, li]
// that ran other arms' turns (snapshot.foreign), summed, for span to take
// out of its totals.
func (r *runner) foreignSpan(fi, li int) (c counterSpan) {
	for k := fi + 1; k <= li; k++ {
		s := &r.snaps[k]
		if !s.foreign {
			continue
		}
		p := &r.snaps[k-1]
		c.wallNs += s.wallNs - p.wallNs
		c.cpuNs += s.cpuNs - p.cpuNs
		c.userNs += s.userNs - p.userNs
		c.sysNs += s.sysNs - p.sysNs
		c.nvcsw += s.nvcsw - p.nvcsw
		c.nivcsw += s.nivcsw - p.nivcsw
		c.gcCycles += s.gcCycles - p.gcCycles
		c.gcPause += s.gcPauseNs - p.gcPauseNs
	}
	return c
}

// foreignUser returns user counter i's change over the foreign intervals
// in (fi, li] (see foreignSpan); NaN when one of them could not be read.
func (r *runner) foreignUser(i, fi, li int) float64 {
	var d float64
	for k := fi + 1; k <= li; k++ {
		if s, p := &r.snaps[k], &r.snaps[k-1]; s.foreign {
			if s.userErrs[i] != nil || p.userErrs[i] != nil {
				return math.NaN()
			}
			d += s.userVals[i] - p.userVals[i]
		}
	}
	return d
}
