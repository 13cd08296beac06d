package nullband

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"
)

// Verdict is the judgement of B against A in one run. Ratios are B/A (or
// A'/A); a ratio below 1 means B is faster. Its fields come in groups,
// each an embedded struct whose fields read as the Verdict's own
// (v.Ratio, v.MDE): the effect, equivalence, the null arm, power, the
// rounds, the family and benchstat's view.
type Verdict struct {
	// Outcome is what was decided; Reasons why not, or caveats.
	Outcome Outcome
	Reasons []Reason
	Effect
	Equivalence
	NullCheck
	Power
	RoundUse
	FamilyLevel
	Benchstat
}

// Effect is the effect test's estimate and interval of B/A.
type Effect struct {
	// Ratio is B/A estimated by the effect test (the aligned-rank estimate
	// against A and A', or Hodges–Lehmann of ln(B/A) without a null arm;
	// see the package documentation); Lo and Hi
	// bound its Confidence interval (0 and +Inf when there is none; in
	// sequential mode the repeated interval of the reported look).
	Ratio, Lo, Hi float64
	// Confidence is Options.Confidence.
	Confidence float64
	// P is the effect test's two-sided p-value at B/A = 1 (not adjusted
	// for sequential looks).
	P float64
}

// Equivalence is the interval that equivalence within ±Delta is judged on.
type Equivalence struct {
	// EqLo and EqHi bound the (1−2α_eq) interval that equivalence is
	// judged on (sequential: each side at its own spent level). Each
	// bound comes from the rounds its one-sided test keeps when screened
	// with B moved to that margin, which can differ from Rounds'
	// quarantine (the effect test's) by a round or two.
	EqLo, EqHi float64
	// EqConfidence is 1−α_eq (Options.EqConfidence, or Confidence when
	// unset).
	EqConfidence float64
	// Delta is Options.Delta.
	Delta float64
	// EqFloor is the fewest used rounds on which Equivalent may be
	// declared (Options.MinEqRounds; BelowEqFloor).
	EqFloor int
}

// NullCheck is the null arm A' against A, and B against A' where it
// matters.
type NullCheck struct {
	// NullRatio, NullLo, NullHi and NullP are A'/A's Hodges–Lehmann
	// estimate, signed-rank interval at NullConfidence = 1 − α/5 and
	// p-value; NaN without a null arm.
	NullRatio, NullLo, NullHi, NullP float64
	NullConfidence                   float64
	// VsNullLo and VsNullHi bound B/A' at the interval's level, over the
	// same rounds: computed only when NullShifted and B/A decided, which
	// then stands only if B/A' decides the same way; 0 otherwise.
	VsNullLo, VsNullHi float64
}

// Power is what the run could detect, and what would decide it.
type Power struct {
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
}

// RoundUse is the rounds judged: how many, which were set aside, and the
// looks.
type RoundUse struct {
	// Used and Quarantined count the rounds of Rounds.
	Used, Quarantined int
	// SpreadLimit is the Round.Spread beyond which a round is Extreme
	// (Options.Extreme × the median spread); NaN when the rule did not
	// apply (a null arm, fewer than 5 complete rounds, or a median spread
	// of 0).
	SpreadLimit float64
	// Rounds lists the rounds judged, in input order: all of them, or in
	// sequential mode those up to the reported look.
	Rounds []Round
	// Given is the number of rounds in Samples; Looks the number of
	// sequential looks made (0 in fixed mode).
	Given, Looks int
	// Unscreened is the outcome on every complete round (none set aside
	// as Contended or Extreme; fixed-sample at the look's levels) when
	// UnscreenedChecked: when rounds were set aside and the look said
	// Equivalent (or, without a null arm, anything decided). Judge keeps
	// the call only when the two agree (QuarantineChangesCall).
	Unscreened        Outcome
	UnscreenedChecked bool
}

// EqRegimeShare is the smallest share of rounds in which a regime of the
// candidate (slow in some sessions only) must be seen before Judge may
// call it equivalent: EqFloor's rounds see it at least once with the
// equivalence test's confidence.
const EqRegimeShare = 0.2

// EqFloor returns the default Options.MinEqRounds at eqConfidence: the
// fewest rounds n with (1 − EqRegimeShare)ⁿ ≤ 1 − eqConfidence (14 at
// 95%, 21 at 99%). 0 for a confidence outside (0, 1).
func EqFloor(eqConfidence float64) int {
	if !(eqConfidence > 0 && eqConfidence < 1) {
		return 0
	}
	return int(math.Ceil(math.Log(1-eqConfidence)/math.Log(1-EqRegimeShare) - 1e-9))
}

// FamilyLevel is the family a verdict was judged in.
type FamilyLevel struct {
	// FamilySize is the number of members of the family this verdict was
	// judged in by JudgeFamily (Holm), and FamilyAlpha the family-wise
	// error rate of its difference calls; 0 for a verdict judged alone.
	FamilySize  int
	FamilyAlpha float64
}

// Benchstat is benchstat's view of the same rounds.
type Benchstat struct {
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
	d := newDesign(s, opt)
	for m := d.first; ; m = d.next(m) {
		lk := newLook(s, m, opt)
		d.decide(lk, m)
		if d.final(lk, m) {
			return d.finish(lk.verdict(s, opt, d.looks)), nil
		}
	}
}

// design is the plan of Judge's looks: one look at every round (a fixed
// sample: MaxRounds 0), or sequential looks from MinRounds every Every
// rounds up to the last round given (at most MaxRounds), stopping at the
// first that decides. A sequential run given fewer rounds than MinRounds
// gets one look at them that decides nothing (tooFew).
type design struct {
	s              Samples
	opt            Options
	alpha, alphaEq float64
	first, last    int
	seq            sequentialTest // nil for a fixed sample or tooFew
	tooFew         bool
	looks          int // sequential looks made so far
}

func newDesign(s Samples, opt Options) *design {
	n := len(s.Base)
	d := &design{s: s, opt: opt, alpha: 1 - opt.Confidence, alphaEq: 1 - opt.EqConfidence, first: n, last: n}
	switch {
	case opt.MaxRounds == 0:
	case min(n, opt.MaxRounds) < opt.MinRounds:
		d.tooFew, d.first, d.last = true, min(n, opt.MaxRounds), min(n, opt.MaxRounds)
	default:
		d.last = min(n, opt.MaxRounds)
		d.first = opt.MinRounds
		d.seq = newSequential(s, d.last, opt)
	}
	return d
}

// next returns the round of the look after the one at m.
func (d *design) next(m int) int { return min(m+d.opt.Every, d.opt.MaxRounds) }

// decide makes the look's decisions at m rounds.
func (d *design) decide(lk *look, m int) {
	alpha, alphaEq := d.alpha, d.alphaEq
	switch {
	case d.tooFew:
	case d.seq == nil:
		lk.test.fixed(lk, d.alpha, d.alphaEq)
	default:
		d.looks++
		t := float64(m) / float64(d.opt.MaxRounds)
		alpha, alphaEq = d.opt.Spending.spent(d.alpha, t, 2), d.opt.Spending.spent(d.alphaEq, t, 1)
		d.seq.look(lk, alpha, alphaEq)
	}
	lk.decide()
	lk.guard(d.s, d.opt, alpha, alphaEq)
}

// final reports whether the look at m is the one Judge reports.
func (d *design) final(lk *look, m int) bool {
	return d.seq == nil || lk.outcome != Undecided || m == d.last || d.next(m) > d.last
}

// finish adds Continuing to the reported verdict of a sequential run
// that can go on.
func (d *design) finish(v Verdict) Verdict {
	switch {
	case d.tooFew:
		v.Reasons = append(v.Reasons, Continuing)
	case d.seq != nil && v.Outcome == Undecided &&
		len(v.Rounds) < d.opt.MaxRounds && !v.Has(NullShifted) && !v.Has(TooManyQuarantined):
		v.Reasons = append(v.Reasons, Continuing)
	}
	return v
}

// Options configures Judge. The zero Options is valid: 95%, δ = 2%, fixed
// sample.
type Options struct {
	// Confidence is 1−α, the level of the interval that decides faster or
	// slower; equivalence uses the (1−2α) interval (TOST) unless
	// EqConfidence is set. Zero means 0.95.
	Confidence float64
	// EqConfidence, when set, is 1−α_eq for the equivalence test alone: it
	// is judged on the (1−2α_eq) interval. JudgeFamily sets it to the
	// family's nominal level while raising Confidence for Holm's
	// procedure. Zero means Confidence.
	EqConfidence float64
	// Delta is the equivalence margin as a fraction: B/A within
	// [1/(1+Delta), 1+Delta]. Zero means 0.02.
	Delta float64
	// MaxQuarantined is the largest share of complete rounds that may be
	// quarantined (Contended or Extreme: without a null arm only) before
	// the verdict is undecided. Zero means 0.5; 1 never gives up.
	MaxQuarantined float64
	// MaxRounds > 0 selects sequential mode: Judge looks after every round
	// from MinRounds to MaxRounds and stops at the first decided look,
	// spending α over the looks (Spending). Zero judges all rounds once.
	MaxRounds int
	// MinRounds is the first look in sequential mode; zero means the
	// fewest rounds that give a finite interval (at 95%: 4 with a null
	// arm, 6 without), or MaxRounds
	// when that is fewer.
	MinRounds int
	// Spending is the α-spending function of sequential mode.
	Spending Spending
	// Every is the number of rounds between sequential looks after the
	// first (the last look is always at MaxRounds). Zero means 1.
	Every int
	// Extreme is the factor over the median spread beyond which a round is
	// quarantined as Extreme, without a null arm (with one, no round is
	// set aside for its values). Zero means 3; +Inf never quarantines.
	Extreme float64
	// MinEqRounds is the fewest used rounds on which Equivalent may be
	// declared (below it: Undecided, BelowEqFloor). Zero means
	// EqFloor(EqConfidence): 14 at 95%.
	MinEqRounds int
	// Replicates is the number of Monte Carlo permutation replicates
	// behind the sequential boundaries. Zero means 4000.
	Replicates int
	// Seed seeds those replicates (deterministic for a given Seed).
	Seed uint64
}

// withDefaults fills in the zero fields; threeArm says the samples have a
// null arm (the aligned-rank test, whose fewest rounds differ).
func (o Options) withDefaults(threeArm bool) Options {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.EqConfidence == 0 {
		o.EqConfidence = o.Confidence
	}
	if o.Delta == 0 {
		o.Delta = 0.02
	}
	if o.MaxQuarantined == 0 {
		o.MaxQuarantined = 0.5
	}
	if o.Extreme == 0 {
		o.Extreme = 3
	}
	if o.Replicates == 0 {
		o.Replicates = 4000
	}
	if o.Every == 0 {
		o.Every = 1
	}
	if o.MinEqRounds == 0 {
		o.MinEqRounds = EqFloor(o.EqConfidence)
	}
	if o.MinRounds == 0 {
		o.MinRounds = minRoundsFor((1 - o.Confidence) / 2)
		if threeArm {
			o.MinRounds = alignedMinRounds((1 - o.Confidence) / 2)
		}
		if o.MaxRounds > 0 && o.MinRounds > o.MaxRounds {
			// Too few rounds for any interval at this level: the one
			// look, at MaxRounds, says so (TooFewRounds).
			o.MinRounds = o.MaxRounds
		}
	}
	return o
}

func (o Options) validate() error {
	switch {
	case !(o.Confidence > 0.5 && o.Confidence < 1):
		return fmt.Errorf("nullband: Options.Confidence %v: want a value in (0.5, 1), e.g. 0.95", o.Confidence)
	case !(o.EqConfidence > 0.5 && o.EqConfidence < 1):
		return fmt.Errorf("nullband: Options.EqConfidence %v: want a value in (0.5, 1), or 0 for Confidence", o.EqConfidence)
	case !(o.Delta > 0):
		return fmt.Errorf("nullband: Options.Delta %v: want a fraction > 0, e.g. 0.02", o.Delta)
	case !(o.MaxQuarantined > 0 && o.MaxQuarantined <= 1):
		return fmt.Errorf("nullband: Options.MaxQuarantined %v: want a share in (0, 1]", o.MaxQuarantined)
	case !(o.Extreme > 1):
		return fmt.Errorf("nullband: Options.Extreme %v: want a factor > 1", o.Extreme)
	case o.MaxRounds < 0, o.Replicates < 0, o.Every < 0, o.MinEqRounds < 0:
		return fmt.Errorf("nullband: Options.MaxRounds %d, Replicates %d, Every %d, MinEqRounds %d: want ≥ 0", o.MaxRounds, o.Replicates, o.Every, o.MinEqRounds)
	case o.MaxRounds > 0 && (o.MinRounds < 1 || o.MinRounds > o.MaxRounds):
		return fmt.Errorf("nullband: Options.MinRounds %d: want 1 … MaxRounds (%d)", o.MinRounds, o.MaxRounds)
	case o.Spending != Pocock && o.Spending != OBrienFleming:
		return fmt.Errorf("nullband: Options.Spending %v: unknown", o.Spending)
	}
	return nil
}
