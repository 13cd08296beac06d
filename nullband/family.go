package nullband

import (
	"errors"
	"fmt"
	"math"
)

// Family is the verdicts of a family of comparisons (every benchmark and
// metric of a pull request) under Holm's step-down procedure.
//
// Holm controls the family-wise error rate of the difference calls: the
// chance that one or more members whose B equals A are called faster or
// slower is at most Alpha, whatever the dependence between members (shared
// weather makes benchmarks run in the same minutes dependent). It is
// chosen over Benjamini–Hochberg because a pull-request check is read as
// "is anything flagged?": Holm bounds the chance of any false flag on every
// pull request, while BH bounds the expected share of false flags among
// the flagged and needs positive dependence; on a pull request that
// changes nothing the two coincide, and with the few real effects a pull
// request usually has, Holm loses little power (its k-th threshold is
// Alpha/(m−k+1) against BH's k·Alpha/m).
//
// The procedure acts on the decision, not on a p-value beside it: step s
// judges every member not yet called different with Options.Confidence =
// 1 − Alpha/(m−k), k the members called faster or slower in earlier steps,
// and stops when a step adds none. A member's CI, outcome, MDE and
// equivalence call all come from the one Judge at its final level (Levels),
// so the interval printed is the interval that decided. In sequential mode
// (Options.MaxRounds > 0) each member's test spends its level over its
// looks; raising a member's level after other rejections and re-judging
// its last look is α-recycling for group-sequential tests, which keeps the
// family-wise rate (Maurer and Bretz 2013, "Multiple testing in group
// sequential trials using graphical approaches", Stat. Biopharm. Res.
// 5(4)). A member stopped early (decided equivalent, or out of budget)
// is re-judged on the rounds it has.
//
// Equivalence is judged at the family's nominal level, whatever the step:
// Options.EqConfidence = 1 − Alpha (TOST on the 1 − 2·Alpha interval),
// unless the caller set it. An equivalence call says a member's change is
// within ±Delta, and each such call errs (the change is beyond ±Delta)
// with chance at most Alpha on its own; the family-wise guarantee is
// stated for the difference calls, the calls that raise an alarm.
type Family struct {
	// Verdicts holds one Verdict per member, in the order given.
	Verdicts []Verdict
	// Levels is the confidence each member's verdict was judged at:
	// 1 − Alpha/(m−k) for the k members called different before it (with
	// weights, 1 − Alpha·w/W; see JudgeWeighted).
	Levels []float64
	// Alpha is the family-wise error rate, 1 − Options.Confidence.
	Alpha float64
	// Steps is the number of Judge passes Holm's procedure took (≥ 1 for
	// a non-empty family).
	Steps int
}

// JudgeFamily judges every member with Judge under Holm's step-down
// procedure at family-wise error rate 1 − opt.Confidence (0.05 when
// opt.Confidence is 0); see Family. An empty family returns an empty
// Family.
func JudgeFamily(members []Samples, opt Options) (Family, error) {
	return JudgeWeighted(members, nil, opt)
}

// JudgeWeighted is JudgeFamily under the weighted Holm procedure (Holm
// 1979, section 4): at each step, member i not yet called different is
// judged at α·w_i/W, W being the sum of the weights of those members, so a
// member that matters more keeps more of α while the family-wise rate stays
// α. weights holds one positive weight per member; nil means equal
// weights, which is Holm's procedure.
func JudgeWeighted(members []Samples, weights []float64, opt Options) (Family, error) {
	if weights != nil && len(weights) != len(members) {
		return Family{}, fmt.Errorf("nullband: JudgeWeighted: %d weights for %d members", len(weights), len(members))
	}
	for i, w := range weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return Family{}, fmt.Errorf("nullband: JudgeWeighted: weight %d is %v: want a finite weight > 0", i, w)
		}
	}
	weight := func(i int) float64 {
		if weights == nil {
			return 1
		}
		return weights[i]
	}
	alpha := 0.05
	if opt.Confidence != 0 {
		alpha = 1 - opt.Confidence
	}
	if !(alpha > 0 && alpha < 1) {
		return Family{}, fmt.Errorf("nullband: JudgeFamily: Options.Confidence %v must be in (0, 1)", opt.Confidence)
	}
	m := len(members)
	f := Family{Verdicts: make([]Verdict, m), Levels: make([]float64, m), Alpha: alpha}
	if m == 0 {
		return f, nil
	}
	called := make([]bool, m)
	k := 0
	for {
		f.Steps++
		left := 0.0
		for i := range members {
			if !called[i] {
				left += weight(i)
			}
		}
		added := 0
		for i, s := range members {
			if called[i] {
				continue
			}
			o := opt
			o.Confidence = 1 - alpha*weight(i)/left
			if o.EqConfidence == 0 {
				o.EqConfidence = 1 - alpha
			}
			if o.Replicates == 0 {
				o.Replicates = FamilyReplicates(o.Confidence)
			}
			v, err := Judge(s, o)
			if err != nil {
				return Family{}, fmt.Errorf("nullband: JudgeFamily: member %d: %w", i, err)
			}
			v.FamilySize, v.FamilyAlpha = m, alpha
			f.Verdicts[i], f.Levels[i] = v, o.Confidence
			if v.Outcome == Faster || v.Outcome == Slower {
				called[i] = true
				added++
			}
		}
		k += added
		if added == 0 || k == m {
			return f, nil
		}
	}
}

// FamilyReplicates is the number of Monte Carlo sign-flip replicates
// JudgeFamily gives Judge (when Options.Replicates is 0) for a member
// judged at confidence: enough that about 20 replicates fall beyond the
// boundary, 20/(1 − confidence), and never fewer than Judge's default
// 4000. At the Bonferroni level of a large family the default leaves one
// or two replicates in the tail, and the boundary's noise then inflates
// the false-alarm rate (docs/ci-workflow-accuracy.md has the figures).
func FamilyReplicates(confidence float64) int {
	return max(4000, int(math.Ceil(20/(1-confidence))))
}

// ErrNoMembers is returned by BonferroniLevel for an empty family.
var ErrNoMembers = errors.New("nullband: a family needs at least one member")

// BonferroniLevel returns the confidence of each member's test at the
// first step of Holm's procedure for m members at family confidence
// confidence (0 means 0.95): 1 − (1 − confidence)/m. A runner that stops a
// member's rounds once it is decided judges its looks at this level, the
// lowest Holm uses; stopping a member early costs power, never error.
func BonferroniLevel(confidence float64, m int) (float64, error) {
	if m < 1 {
		return 0, ErrNoMembers
	}
	if confidence == 0 {
		confidence = 0.95
	}
	return 1 - (1-confidence)/float64(m), nil
}
