package history

import (
	"context"
	"errors"
	"math"
	"math/bits"
)

// StepOutcome is what one comparison of a bisect said about the
// candidate against the last known good commit.
type StepOutcome int

const (
	// StepSlower: decided slower, by more than the threshold.
	StepSlower StepOutcome = iota
	// StepNotSlower: decided equivalent, faster, or slower by less than
	// the threshold.
	StepNotSlower
	// StepUndecided: the comparison ran out of rounds or budget.
	StepUndecided
)

func (o StepOutcome) String() string {
	switch o {
	case StepSlower:
		return "slower"
	case StepNotSlower:
		return "not slower"
	}
	return "undecided"
}

// StepResult is a Comparer's answer: the outcome and the numbers behind it.
type StepResult struct {
	Outcome StepOutcome
	// Ratio, Lo and Hi are the candidate/good ratio and its interval at
	// the step's confidence, of the row that decided (NaN when none).
	Ratio, Lo, Hi float64
	// Rounds is the number of interleaved rounds run.
	Rounds int
	// Detail is the comparer's own summary of the rows (its words).
	Detail string
}

// Comparer compares candidate against good (both commit hashes) at
// confidence (the step's share of the search's error rate).
type Comparer interface {
	Compare(ctx context.Context, good, candidate string, confidence float64) (StepResult, error)
}

// BisectStep is one comparison of a search.
type BisectStep struct {
	Good, Candidate string
	// GoodIndex and CandidateIndex are positions in the commit list.
	GoodIndex, CandidateIndex int
	Confidence                float64
	Result                    StepResult
}

// BisectResult is a whole search.
type BisectResult struct {
	// Commits are the commits searched, good first, bad last.
	Commits []string
	// Tests is the most comparisons the search may run (1 + ⌈log2 n⌉ for
	// n commits after good), Alpha the error rate over all of them; each
	// step is judged at confidence 1 − Alpha/Tests (Bonferroni), so the
	// chance that any step's slower or not-slower call is false is at most
	// Alpha.
	Tests int
	Alpha float64
	Steps []BisectStep
	// First is the index of the first slower commit, when the search
	// named one; −1 otherwise. Lo and Hi bound the commits the search
	// narrowed to: the slowdown entered after Commits[Lo] and at or before
	// Commits[Hi] (Hi == Lo+1 when named).
	First, Lo, Hi int
	// Why says why no commit was named: WhyNamed when one was.
	Why BisectWhy
}

// BisectWhy is why a search ended.
type BisectWhy int

const (
	// WhyNamed: the first slower commit was found.
	WhyNamed BisectWhy = iota
	// WhyNoSlowdown: the first comparison, bad against good, was not
	// slower: there is nothing to bisect.
	WhyNoSlowdown
	// WhyUndecided: a step was undecided; Lo and Hi bound the range.
	WhyUndecided
)

// Bisect finds the first commit of commits (good first, bad last) slower
// than good. It first compares the bad end with good: unless that is
// slower, the search names nothing. Then it halves [lo, hi] as git bisect
// does, comparing the middle commit with the last good one (lo): slower
// moves hi, not slower moves lo. An undecided step ends the search with
// the range so far. Each of the at most 1 + ⌈log2 (len(commits)−1)⌉
// comparisons is judged at 1 − alpha/Tests.
func Bisect(ctx context.Context, commits []string, c Comparer, alpha float64) (*BisectResult, error) {
	if len(commits) < 2 {
		return nil, errors.New("history: bisect needs a good and a bad commit")
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, errors.New("history: bisect alpha must be in (0, 1)")
	}
	n := len(commits) - 1
	tests := 1 + bits.Len(uint(n-1)) // 1 + ⌈log2 n⌉
	r := &BisectResult{Commits: commits, Tests: tests, Alpha: alpha, First: -1, Lo: 0, Hi: n}
	conf := 1 - alpha/float64(tests)
	step := func(good, cand int) (StepOutcome, error) {
		res, err := c.Compare(ctx, commits[good], commits[cand], conf)
		if err != nil {
			return StepUndecided, err
		}
		r.Steps = append(r.Steps, BisectStep{Good: commits[good], Candidate: commits[cand],
			GoodIndex: good, CandidateIndex: cand, Confidence: conf, Result: res})
		return res.Outcome, nil
	}
	switch o, err := step(0, n); {
	case err != nil:
		return r, err
	case o == StepUndecided:
		r.Why = WhyUndecided
		return r, nil
	case o == StepNotSlower:
		r.Why = WhyNoSlowdown
		return r, nil
	}
	for r.Hi-r.Lo > 1 {
		mid := r.Lo + (r.Hi-r.Lo)/2
		o, err := step(r.Lo, mid)
		if err != nil {
			return r, err
		}
		switch o {
		case StepSlower:
			r.Hi = mid
		case StepNotSlower:
			r.Lo = mid
		default:
			r.Why = WhyUndecided
			return r, nil
		}
	}
	r.First, r.Why = r.Hi, WhyNamed
	return r, nil
}

// NaNStep is a StepResult with no numbers, for a comparer that has none.
func NaNStep(o StepOutcome) StepResult {
	return StepResult{Outcome: o, Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
}
