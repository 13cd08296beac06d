package history

import (
	"context"
	"errors"
	"math"
	"math/bits"
)

// Direction is the change a bisect looks for.
type Direction int

const (
	// Slower: the first commit whose benchmark got slower (the default).
	Slower Direction = iota
	// Faster: the first commit whose benchmark got faster.
	Faster
)

// String returns "slower" or "faster".
func (d Direction) String() string {
	if d == Faster {
		return "faster"
	}
	return "slower"
}

// StepOutcome is what one comparison of a bisect said about the
// candidate against the last known good commit, in the search's
// Direction.
type StepOutcome int

const (
	// StepChanged: decided changed in the search's direction (slower, or
	// faster for a Faster search) by more than the threshold.
	StepChanged StepOutcome = iota
	// StepUnchanged: decided equivalent, changed the other way, or
	// changed by less than the threshold.
	StepUnchanged
	// StepUndecided: the comparison ran out of rounds or budget.
	StepUndecided
)

// Word returns the outcome in d's words: "slower", "not slower" and
// "undecided" for Slower; "faster", "not faster" and "undecided" for
// Faster.
func (o StepOutcome) Word(d Direction) string {
	switch o {
	case StepChanged:
		return d.String()
	case StepUnchanged:
		return "not " + d.String()
	}
	return "undecided"
}

// String returns the outcome in a Slower search's words (Word(Slower)).
func (o StepOutcome) String() string { return o.Word(Slower) }

// StepResult is a Comparer's answer: the outcome and the numbers behind it.
type StepResult struct {
	Outcome StepOutcome
	// Ratio, Lo and Hi are the candidate/good ratio and its interval at
	// the step's confidence, of the row that decided (NaN when none).
	Ratio, Lo, Hi float64
	// Rounds is the number of interleaved rounds run; MaxRounds the most
	// the step could run (its horizon: -max-rounds, or set from -budget).
	Rounds, MaxRounds int
	// Threshold is the change, a fraction in the search's direction
	// (B/A − 1 for Slower, A/B − 1 for Faster), above which the step is
	// changed and below which it is unchanged; ThresholdFrom says where
	// it came from.
	Threshold     float64
	ThresholdFrom ThresholdSource
	// Detail is the comparer's own summary of the rows (its words).
	Detail string
}

// ThresholdSource is where a step's threshold came from.
type ThresholdSource int

const (
	// ThresholdDelta: half of the equivalence margin (-delta), given
	// explicitly, or the first step's (bad against good) default.
	ThresholdDelta ThresholdSource = iota
	// ThresholdHalfChange: half of the change the first step measured
	// between good and bad (HalfChange), as Chromium's Pinpoint splits a
	// range: a commit is bad when it carries more than half of the
	// change the whole range shows.
	ThresholdHalfChange
)

// String returns "delta" or "half-change", the words of the JSON.
func (s ThresholdSource) String() string {
	if s == ThresholdHalfChange {
		return "half-change"
	}
	return "delta"
}

// HalfChange is half of the change first (the bad end against good)
// measured, as a fraction in direction d: (B/A − 1)/2 for Slower,
// (A/B − 1)/2 for Faster; NaN when first has no ratio, and 0 or below
// when it moved the other way.
func HalfChange(first StepResult, d Direction) float64 {
	r := first.Ratio
	if d == Faster {
		r = 1 / r
	}
	return (r - 1) / 2
}

// ErrSkip is what a Comparer returns (wrapped) when the candidate cannot
// be measured (it does not build): Bisect then skips the commit, as `git
// bisect skip` does, and tries a neighbour.
var ErrSkip = errors.New("the candidate cannot be measured")

// Comparer compares candidate against good (both commit hashes) at
// confidence (the step's share of the search's error rate), and answers
// in the search's Direction: a Comparer for a Faster search says
// StepChanged when the candidate is faster. An error wrapping ErrSkip
// skips the candidate; any other ends the search.
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
	// chance that any step's changed or unchanged call is false is at most
	// Alpha.
	Tests int
	Alpha float64
	// Direction is the change searched for: every step's outcome is in
	// its words.
	Direction Direction
	Steps     []BisectStep
	// Skipped are the commits the search skipped (their comparison
	// returned ErrSkip), in the order tried.
	Skipped []BisectSkip
	// First is the index of the first changed commit, when the search
	// named one; −1 otherwise. Lo and Hi bound the commits the search
	// narrowed to: the change entered after Commits[Lo] and at or before
	// Commits[Hi] (Hi == Lo+1 when named): any of Commits[Lo+1 … Hi] may
	// be the first changed one.
	First, Lo, Hi int
	// Why says why no commit was named: WhyNamed when one was.
	Why BisectWhy
}

// BisectSkip is a commit the search skipped.
type BisectSkip struct {
	// Index is its position in the commit list; Commit its hash.
	Index  int
	Commit string
	// Err is the comparer's error (wrapping ErrSkip).
	Err error
}

// BisectWhy is why a search ended.
type BisectWhy int

const (
	// WhyNamed: the first changed commit was found.
	WhyNamed BisectWhy = iota
	// WhyNoChange: the first comparison, bad against good, was not
	// changed in the search's direction: there is nothing to bisect.
	WhyNoChange
	// WhyUndecided: a step was undecided; Lo and Hi bound the range.
	WhyUndecided
	// WhyFailed: a comparison returned an error (Bisect returns it too);
	// Steps holds the steps before it, Lo and Hi the range so far.
	WhyFailed
	// WhySkipped: every commit between Lo and Hi was skipped, so the
	// first changed commit is one of Commits[Lo+1 … Hi] (git bisect's
	// "only skipped commits left to test").
	WhySkipped
	// WhyOutOfTests: the search ran its Tests comparisons before the
	// range was one commit: skipped commits made it compare off the
	// middle, and a further comparison would take the error rate past
	// Alpha. The first changed commit is one of Commits[Lo+1 … Hi].
	WhyOutOfTests
	// WhyInterrupted: the search's context ended during a comparison
	// (SIGINT, SIGTERM); Bisect returns the comparison's error, Steps the
	// steps before it, Lo and Hi the range so far.
	WhyInterrupted
)

// Bisect finds the first commit of commits (good first, bad last) that
// changed in direction d (slower, or faster) against good; c answers in
// d's terms, and d is recorded in the result for its words. It first
// compares the bad end with good: unless that changed, the search names
// nothing. Then it halves [lo, hi] as git bisect does, comparing the
// middle commit with the last good one (lo): changed moves hi, unchanged
// moves lo. An undecided step ends the search with the range so far. A
// candidate the comparer skips (ErrSkip: it does not build) is left out,
// and the commit nearest the middle that is not skipped is compared
// instead; when every commit between lo and hi is skipped, the search
// ends with the range (WhySkipped). Each of the at most
// 1 + ⌈log2 (len(commits)−1)⌉ comparisons is judged at 1 − alpha/Tests,
// whichever the direction; a search that skips may need more, and ends
// with the range instead (WhyOutOfTests). The good and bad ends cannot be
// skipped: an ErrSkip there ends the search (WhyFailed).
func Bisect(ctx context.Context, commits []string, c Comparer, alpha float64, d Direction) (*BisectResult, error) {
	if len(commits) < 2 {
		return nil, errors.New("history: bisect needs a good and a bad commit")
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, errors.New("history: bisect alpha must be in (0, 1)")
	}
	n := len(commits) - 1
	tests := 1 + bits.Len(uint(n-1)) // 1 + ⌈log2 n⌉
	r := &BisectResult{Commits: commits, Tests: tests, Alpha: alpha, Direction: d, First: -1, Lo: 0, Hi: n}
	conf := 1 - alpha/float64(tests)
	skipped := map[int]bool{}
	step := func(good, cand int) (StepOutcome, error) {
		res, err := c.Compare(ctx, commits[good], commits[cand], conf)
		if err != nil {
			return StepUndecided, err
		}
		r.Steps = append(r.Steps, BisectStep{Good: commits[good], Candidate: commits[cand],
			GoodIndex: good, CandidateIndex: cand, Confidence: conf, Result: res})
		return res.Outcome, nil
	}
	failed := func() BisectWhy {
		if ctx.Err() != nil {
			return WhyInterrupted
		}
		return WhyFailed
	}
	switch o, err := step(0, n); {
	case err != nil:
		r.Why = failed()
		return r, err
	case o == StepUndecided:
		r.Why = WhyUndecided
		return r, nil
	case o == StepUnchanged:
		r.Why = WhyNoChange
		return r, nil
	}
	for r.Hi-r.Lo > 1 {
		mid := middle(r.Lo, r.Hi, skipped)
		switch {
		case mid < 0:
			r.Why = WhySkipped
			return r, nil
		case len(r.Steps) >= tests:
			r.Why = WhyOutOfTests
			return r, nil
		}
		o, err := step(r.Lo, mid)
		if errors.Is(err, ErrSkip) && ctx.Err() == nil {
			skipped[mid] = true
			r.Skipped = append(r.Skipped, BisectSkip{Index: mid, Commit: commits[mid], Err: err})
			continue
		}
		if err != nil {
			r.Why = failed()
			return r, err
		}
		switch o {
		case StepChanged:
			r.Hi = mid
		case StepUnchanged:
			r.Lo = mid
		default:
			r.Why = WhyUndecided
			return r, nil
		}
	}
	r.First, r.Why = r.Hi, WhyNamed
	return r, nil
}

// middle returns the commit strictly between lo and hi nearest to their
// middle that is not skipped (the lower of two as near), −1 when every
// one is.
func middle(lo, hi int, skipped map[int]bool) int {
	m := lo + (hi-lo)/2
	for dist := 0; m-dist > lo || m+dist < hi; dist++ {
		for _, i := range []int{m - dist, m + dist} {
			if i > lo && i < hi && !skipped[i] {
				return i
			}
		}
	}
	return -1
}

// NaNStep is a StepResult with no numbers, for a comparer that has none.
func NaNStep(o StepOutcome) StepResult {
	return StepResult{Outcome: o, Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
}
