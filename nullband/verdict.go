package nullband

import "golang.org/x/perf/benchmath"

// Verdict is the judgement of B against A in one run. Ratios are B/A (or
// A'/A); a ratio below 1 means B is faster.
type Verdict struct {
	// Outcome is what was decided; Reasons why not, or caveats.
	Outcome Outcome
	Reasons []Reason
	// Ratio is B/A estimated by the effect test (the aligned-rank estimate
	// against A and A', or Hodges–Lehmann of ln(B/A) without a null arm;
	// see the package documentation); Lo and Hi
	// bound its Confidence interval (0 and +Inf when there is none; in
	// sequential mode the repeated interval of the reported look).
	Ratio, Lo, Hi float64
	// EqLo and EqHi bound the (1−2α_eq) interval that equivalence is
	// judged on (sequential: each side at its own spent level). Each
	// bound comes from the rounds its one-sided test keeps when screened
	// with B moved to that margin, which can differ from Rounds'
	// quarantine (the effect test's) by a round or two.
	EqLo, EqHi float64
	// Confidence is Options.Confidence; EqConfidence is 1−α_eq
	// (Options.EqConfidence, or Confidence when unset).
	Confidence, EqConfidence float64
	// FamilySize is the number of members of the family this verdict was
	// judged in by JudgeFamily (Holm), and FamilyAlpha the family-wise
	// error rate of its difference calls; 0 for a verdict judged alone.
	FamilySize  int
	FamilyAlpha float64
	// P is the effect test's two-sided p-value at B/A = 1 (not adjusted
	// for sequential looks).
	P float64
	// NullRatio, NullLo, NullHi and NullP are A'/A's Hodges–Lehmann
	// estimate, signed-rank interval at NullConfidence = 1 − α/5 and
	// p-value; NaN without a null arm.
	NullRatio, NullLo, NullHi, NullP float64
	NullConfidence                   float64
	// VsNullLo and VsNullHi bound B/A' at the interval's level, over the
	// same rounds: computed only when NullShifted and B/A decided, which
	// then stands only if B/A' decides the same way; 0 otherwise.
	VsNullLo, VsNullHi float64
	// Delta is Options.Delta.
	Delta float64
	// MDE is the smallest |B/A − 1| that a fixed-sample test at this
	// noise and this many used rounds detects with 80% power; +Inf when
	// there is no interval.
	MDE float64
	// RoundsToDecide estimates the total rounds at which the interval
	// would decide if the estimate and the noise held: 0 when decided,
	// −1 when unknown (too few rounds, null shifted, too many quarantined).
	RoundsToDecide int
	// NeedRounds is the fewest used rounds giving a finite interval (in
	// sequential mode, with TooFewRounds, at least one more than Used: a
	// look's spent level can need more than the fixed-sample minimum).
	NeedRounds int
	// Used and Quarantined count the rounds of Rounds.
	Used, Quarantined int
	// SpreadLimit is the Round.Spread beyond which a round is Extreme
	// (Options.Extreme × the median spread); NaN when the rule did not
	// apply (fewer than 5 complete rounds, or a median spread of 0).
	SpreadLimit float64
	// Rounds lists the rounds judged, in input order: all of them, or in
	// sequential mode those up to the reported look.
	Rounds []Round
	// Given is the number of rounds in Samples; Looks the number of
	// sequential looks made (0 in fixed mode).
	Given, Looks int
	// Base, Candidate and NullArm are benchstat's view of the finite
	// values of Rounds: median and interval (benchmath.AssumeNothing),
	// in the samples' unit.
	Base, Candidate, NullArm benchmath.Summary
	// Comparison is benchstat's Mann–Whitney U-test of A against B over
	// those values, at α = 1 − Confidence.
	Comparison benchmath.Comparison
}

// Has reports whether r is among v.Reasons.
func (v Verdict) Has(r Reason) bool {
	for _, x := range v.Reasons {
		if x == r {
			return true
		}
	}
	return false
}

// Judge judges Samples s: B against A, calibrated by A'. See the package
// documentation for the method. It returns an error only for malformed
// input or Options.
func Judge(s Samples, opt Options) (Verdict, error) {
	opt = opt.withDefaults(s.Null != nil)
	if err := opt.validate(); err != nil {
		return Verdict{}, err
	}
	if err := s.check(); err != nil {
		return Verdict{}, err
	}
	n := len(s.Base)
	alpha, alphaEq := 1-opt.Confidence, 1-opt.EqConfidence
	if opt.MaxRounds == 0 {
		lk := newLook(s, n, opt)
		lk.test.fixed(lk, alpha, alphaEq)
		lk.decide()
		return lk.verdict(s, opt, 0), nil
	}

	// Sequential: replay the looks up to the last round given, stopping
	// at the first that decides.
	last := min(n, opt.MaxRounds)
	if last < opt.MinRounds {
		v := newLook(s, last, opt).verdict(s, opt, 0)
		v.Reasons = append(v.Reasons, Continuing)
		return v, nil
	}
	seq := newSequential(s, last, opt)
	looks := 0
	for m := opt.MinRounds; ; m = min(m+opt.Every, opt.MaxRounds) {
		lk := newLook(s, m, opt)
		looks++
		t := float64(m) / float64(opt.MaxRounds)
		seq.look(lk, opt.Spending.spent(alpha, t, 2), opt.Spending.spent(alphaEq, t, 1))
		lk.decide()
		if lk.outcome != Undecided || m == last || min(m+opt.Every, opt.MaxRounds) > last {
			v := lk.verdict(s, opt, looks)
			if v.Outcome == Undecided && m < opt.MaxRounds && !v.Has(NullShifted) && !v.Has(TooManyQuarantined) {
				v.Reasons = append(v.Reasons, Continuing)
			}
			return v, nil
		}
	}
}
