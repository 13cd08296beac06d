package nullband

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Samples holds one metric, in one unit, for the arms measured in the same
// interleaved rounds: the baseline A, the candidate B and the null arm A' (a
// second, independent instance of A). Index i of every slice is round i. A
// missing measurement is NaN. Lower values are better ("faster").
type Samples struct {
	// Round labels the rounds (e.g. the benchfmt round: key). Nil means
	// 1, 2, 3, …; otherwise the length of Base.
	Round []int
	// Base is A, the configuration the candidate is judged against.
	Base []float64
	// Candidate is B, the configuration being judged.
	Candidate []float64
	// Null is A', a second instance of A in the same rounds. Nil means no
	// null arm: the verdict stands, without the calibration check.
	Null []float64
	// Contended, when non-nil (length of Base), marks rounds whose arms did
	// not share the weather: the contention screen found some of the
	// round's blocks contended and others not. A marked round is
	// quarantined when its spread shows it (over ContendedFactor times the
	// unmarked rounds' median spread; every marked round when fewer than 5
	// rounds are complete). A round whose blocks were all contended is not marked: the
	// arms shared that weather, which pairing within the round cancels.
	Contended []bool
}

// Outcome is what a verdict decided.
type Outcome int

const (
	// Undecided is the zero Outcome: Verdict.Reasons says why.
	Undecided Outcome = iota
	// Faster means B/A's confidence interval lies wholly below 1.
	Faster
	// Slower means B/A's confidence interval lies wholly above 1.
	Slower
	// Equivalent means B/A's (1−2α_eq) interval lies wholly inside
	// [1/(1+Delta), 1+Delta] and its (1−α) interval holds 1 (α_eq is
	// 1 − Options.EqConfidence, α unless set).
	Equivalent
)

// String returns "undecided", "faster", "slower" or "equivalent".
func (o Outcome) String() string {
	switch o {
	case Undecided:
		return "undecided"
	case Faster:
		return "faster"
	case Slower:
		return "slower"
	case Equivalent:
		return "equivalent"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Reason says why a verdict is undecided, or is a caveat beside a decided
// outcome. Its String is a stable identifier.
type Reason int

const (
	// TooFewRounds: fewer used rounds than Verdict.NeedRounds, the fewest
	// that give a finite interval at this confidence (undecided).
	TooFewRounds Reason = iota + 1
	// Straddles: the interval holds 1 and reaches past ±Delta (undecided).
	Straddles
	// NullShifted: A'/A is itself significant at level α/5 (its
	// NullConfidence interval excludes 1): the arms did not share the
	// weather. A decided outcome stands only when B/A' decides it too
	// (Verdict.VsNullLo, VsNullHi): a caveat then, else undecided.
	NullShifted
	// TooManyQuarantined: more than Options.MaxQuarantined of the complete
	// rounds were quarantined (undecided).
	TooManyQuarantined
	// WithinDelta: faster or slower, and the interval lies inside
	// [1/(1+Delta), 1+Delta]: real but smaller than the margin (caveat).
	WithinDelta
	// Bimodal: an arm's used values fall in more than one regime (see
	// Regimes); the ranks still hold, the medians mean less (caveat).
	Bimodal
	// NoNullArm: Samples.Null is nil, the calibration was not checked
	// (caveat).
	NoNullArm
	// Continuing: sequential mode, undecided before Options.MaxRounds
	// (undecided; more rounds may decide).
	Continuing
)

// String returns the reason's identifier, e.g. "too-few-rounds".
func (r Reason) String() string {
	switch r {
	case TooFewRounds:
		return "too-few-rounds"
	case Straddles:
		return "straddles"
	case NullShifted:
		return "null-shifted"
	case TooManyQuarantined:
		return "too-many-quarantined"
	case WithinDelta:
		return "within-delta"
	case Bimodal:
		return "bimodal"
	case NoNullArm:
		return "no-null-arm"
	case Continuing:
		return "continuing"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Cause says why a round was quarantined; the zero Cause means it was not.
type Cause int

const (
	// Missing: a value is NaN or infinite.
	Missing Cause = iota + 1
	// NonPositive: a value is ≤ 0, so it has no logarithm.
	NonPositive
	// Contended: Samples.Contended marks the round and its spread is over
	// ContendedFactor times the unmarked rounds' median spread.
	Contended
	// Extreme: the round's spread (Round.Spread) exceeds Options.Extreme
	// times the median spread of the complete rounds.
	Extreme
)

// String returns the cause's identifier, e.g. "extreme"; "" for none.
func (c Cause) String() string {
	switch c {
	case 0:
		return ""
	case Missing:
		return "missing"
	case NonPositive:
		return "non-positive"
	case Contended:
		return "contended"
	case Extreme:
		return "extreme"
	}
	return fmt.Sprintf("Cause(%d)", int(c))
}

// Round is one round as Judge saw it.
type Round struct {
	// Label is the round's label (Samples.Round, or its 1-based index).
	Label int
	// A, B and Null are the round's values (Null NaN without a null arm).
	A, B, Null float64
	// Ratio is B/A and NullRatio A'/A.
	Ratio, NullRatio float64
	// Spread is max − min of the natural logarithms of the round's values
	// (all arms): symmetric in the arms. NaN for an incomplete round.
	Spread float64
	// Quarantined rounds are left out of the test; Cause says why.
	Quarantined bool
	Cause       Cause
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
	// quarantined (Contended or Extreme) before the verdict is undecided.
	// Zero means 0.5; 1 never gives up.
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
	// quarantined as Extreme. Zero means 3; +Inf never quarantines.
	Extreme float64
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
	case o.MaxRounds < 0, o.Replicates < 0, o.Every < 0:
		return fmt.Errorf("nullband: Options.MaxRounds %d, Replicates %d, Every %d: want ≥ 0", o.MaxRounds, o.Replicates, o.Every)
	case o.MaxRounds > 0 && (o.MinRounds < 1 || o.MinRounds > o.MaxRounds):
		return fmt.Errorf("nullband: Options.MinRounds %d: want 1 … MaxRounds (%d)", o.MinRounds, o.MaxRounds)
	case o.Spending != Pocock && o.Spending != OBrienFleming:
		return fmt.Errorf("nullband: Options.Spending %v: unknown", o.Spending)
	}
	return nil
}

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
	L := math.Log1p(opt.Delta)
	if opt.MaxRounds == 0 {
		lk := newLook(s, n, opt)
		if lk.st != nil {
			lk.fixedAligned(alpha, alphaEq)
		} else {
			lk.kUp = critK(len(lk.d), alpha/2)
			lk.kDown = lk.kUp
			lk.kLo, lk.kHi = critK(len(lk.lo.idx), alphaEq), critK(len(lk.hi.idx), alphaEq)
			lk.signedTests()
		}
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
	var seq interface {
		look(lk *look, spentEff, spentEq float64)
	}
	if s.Null != nil {
		seq = newAlignedSeq(last, opt)
	} else {
		seq = newSignedSeq(s, last, L, opt)
	}
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

// signedSeq is the sequential signed-rank test of ln(B/A), for samples
// without a null arm: sign-flip boundaries (see boundary).
type signedSeq struct{ eff, lo, hi *boundary }

func newSignedSeq(s Samples, last int, L float64, opt Options) *signedSeq {
	// d holds ln(B/A) by round; a round's value does not depend on the
	// look, only whether it is used does.
	d := make([]float64, last)
	for i := range last {
		d[i] = math.Log(s.Candidate[i] / s.Base[i])
	}
	sg := newSigns(opt.Replicates, last, opt.Seed)
	return &signedSeq{eff: newBoundary(d, 0, twoSided, sg), lo: newBoundary(d, -L, upperTail, sg), hi: newBoundary(d, L, lowerTail, sg)}
}

func (q *signedSeq) look(lk *look, spentEff, spentEq float64) {
	lk.kUp = q.eff.next(lk.idx, spentEff)
	lk.kDown = lk.kUp
	lk.kLo, lk.kHi = q.lo.next(lk.lo.idx, spentEq), q.hi.next(lk.hi.idx, spentEq)
	lk.signedTests()
}

// alignedSeq is the sequential aligned-rank test: label-permutation
// boundaries (see rankBoundary), each tail of the effect test spending
// half its α, each equivalence test its own.
type alignedSeq struct{ up, down, lo, hi *rankBoundary }

func newAlignedSeq(last int, opt Options) *alignedSeq {
	lab := newLabels(opt.Replicates, last, opt.Seed)
	return &alignedSeq{up: newRankBoundary(lab, true), down: newRankBoundary(lab, false),
		lo: newRankBoundary(lab, true), hi: newRankBoundary(lab, false)}
}

func (q *alignedSeq) look(lk *look, spentEff, spentEq float64) {
	lk.seq = true
	t := lk.st.rank(0)
	lk.cUp, lk.cDown = q.up.next(lk.st, spentEff/2), q.down.next(lk.st, spentEff/2)
	lk.slower, lk.faster = t >= lk.cUp, t <= lk.cDown
	t = lk.stLo.rank(-lk.L)
	lk.cLo = q.lo.next(lk.stLo, spentEq)
	lk.eqLo = t >= lk.cLo
	t = lk.stHi.rank(lk.L)
	lk.cHi = q.hi.next(lk.stHi, spentEq)
	lk.eqHi = t <= lk.cHi
}

func (s Samples) check() error {
	n := len(s.Base)
	if n == 0 {
		return errors.New("nullband: Samples.Base is empty")
	}
	if len(s.Candidate) != n || (s.Null != nil && len(s.Null) != n) ||
		(s.Round != nil && len(s.Round) != n) || (s.Contended != nil && len(s.Contended) != n) {
		return fmt.Errorf("nullband: Samples lengths differ: Base %d, Candidate %d, Null %d, Round %d, Contended %d",
			n, len(s.Candidate), len(s.Null), len(s.Round), len(s.Contended))
	}
	return nil
}

// look is the state of the test after the first m rounds.
type look struct {
	m           int
	L           float64 // ln(1+δ)
	rounds      []Round
	spreadLimit float64
	idx         []int     // indices of used rounds
	d, nl       []float64 // their ln(B/A) and ln(A'/A)
	// complete counts rounds with every value finite and positive;
	// quarantined those of them quarantined (Contended or Extreme).
	complete, quarantined int
	tooMany               bool
	// lo and hi are the rounds of the equivalence tests: each screens
	// the rounds with B moved to its margin (see eqSide).
	lo, hi eqSide

	// Without a null arm, the signed-rank test of d: critical indices of
	// the Walsh averages w for the interval's lower end (kUp: the upper
	// tail's test) and upper end (kDown), and for the equivalence tests.
	w                    []float64 // sorted Walsh averages of d
	kUp, kDown, kLo, kHi int
	// With a null arm, the aligned-rank test over the used rounds (st)
	// and each equivalence test's rounds (stLo, stHi). The per-tail
	// levels: levUp, levDown of the effect test, levLo, levHi of the
	// equivalence tests; in sequential mode (seq) they follow from the
	// critical values c… at the reported look (levels).
	st, stLo, stHi               *aligned
	levUp, levDown, levLo, levHi float64
	seq                          bool
	effDone                      bool // effLo, effHi hold effBounds
	effLo, effHi                 float64
	cUp, cDown, cLo, cHi         int
	// pUp and pDown are P(T ≥ t) and P(T ≤ t) at B/A = 1, once computed
	// (pDone).
	pUp, pDown float64
	pDone      bool
	// The tests' decisions: B/A above 1, below 1, above 1/(1+δ), below
	// 1+δ.
	slower, faster, eqLo, eqHi bool
	outcome                    Outcome
}

// signedTests sets the decisions of the signed-rank test from its indices.
func (lk *look) signedTests() {
	lo, hi := lk.effBounds()
	lk.slower, lk.faster = lo > 0, hi < 0
	lk.eqLo = lk.kLo >= 1 && lk.kLo <= len(lk.lo.w) && lk.lo.w[lk.kLo-1] > -lk.L
	lk.eqHi = lk.kHi >= 1 && lk.kHi <= len(lk.hi.w) && lk.hi.w[len(lk.hi.w)-lk.kHi] < lk.L
}

// fixedAligned runs the aligned-rank tests of a fixed sample.
func (lk *look) fixedAligned(alpha, alphaEq float64) {
	lk.levUp, lk.levDown, lk.levLo, lk.levHi = alpha/2, alpha/2, alphaEq, alphaEq
	lk.pUp, lk.pDown = lk.st.tails(0)
	lk.pDone = true
	lk.slower, lk.faster = lk.pUp <= lk.levUp, lk.pDown <= lk.levDown
	if !lk.slower && !lk.faster {
		upL, _ := lk.stLo.tails(-lk.L)
		_, downL := lk.stHi.tails(lk.L)
		lk.eqLo, lk.eqHi = upL <= lk.levLo, downL <= lk.levHi
	}
}

// levels sets the per-tail levels of a sequential aligned-rank look from
// its critical values: the null probability, at the look, of reaching each.
func (lk *look) levels() {
	if !lk.seq {
		return
	}
	lev := func(st *aligned, theta float64, c int, upper bool) float64 {
		e := c // the critical value as an upper tail's
		if !upper {
			e = -c
		}
		switch e {
		case noCross:
			return 0
		case -noCross:
			return 1
		}
		st.rank(theta)
		u, l := st.tailsAt(c)
		if upper {
			return u
		}
		return l
	}
	lk.levUp, lk.levDown = lev(lk.st, 0, lk.cUp, true), lev(lk.st, 0, lk.cDown, false)
	lk.levLo, lk.levHi = lev(lk.stLo, -lk.L, lk.cLo, true), lev(lk.stHi, lk.L, lk.cHi, false)
}

// effBounds returns the effect test's interval of ln(B/A).
func (lk *look) effBounds() (lo, hi float64) {
	if lk.st != nil {
		if !lk.effDone {
			lk.effLo, lk.effHi = lk.st.interval(lk.levUp, lk.levDown)
			lk.effDone = true
		}
		return lk.effLo, lk.effHi
	}
	lo, _ = bounds(lk.w, lk.kUp)
	_, hi = bounds(lk.w, lk.kDown)
	return lo, hi
}

// eqSide is one equivalence test's rounds. The test of "B/A is 1+δ"
// (or 1/(1+δ)) screens the rounds with B divided by 1+δ (or multiplied):
// under that hypothesis those values, not B's, are exchangeable with A's,
// so only that screen is symmetric in the arms. Screening the values as
// measured drops rounds by how far B strays from A, which narrows the
// interval around 0 and, at the margin, called "equivalent" in 8% of
// nullband/sim's burst trials at 20–40 rounds, over the 5% a one-sided
// test may.
type eqSide struct {
	idx     []int     // indices of the rounds this test uses
	w       []float64 // sorted Walsh averages of their ln(B/A) (signed-rank test)
	tooMany bool      // its screen quarantined over MaxQuarantined
}

// newEqSide screens the first m rounds of s with B multiplied by f.
func newEqSide(s Samples, m int, opt Options, f float64) eqSide {
	moved := s
	moved.Candidate = make([]float64, m)
	for i := range m {
		moved.Candidate[i] = s.Candidate[i] * f
	}
	rounds, _ := screen(moved, m, opt.Extreme)
	var e eqSide
	e.idx, _, _, e.tooMany = kept(rounds, opt.MaxQuarantined)
	return e
}

// kept returns the indices of the rounds the screen kept, the complete
// rounds (every value finite and positive), those of them quarantined
// (Contended or Extreme), and whether those are over maxQuarantined of
// the complete ones.
func kept(rounds []Round, maxQuarantined float64) (idx []int, complete, quarantined int, tooMany bool) {
	for i, r := range rounds {
		if r.Cause != Missing && r.Cause != NonPositive {
			complete++
		}
		if r.Quarantined {
			if r.Cause == Contended || r.Cause == Extreme {
				quarantined++
			}
			continue
		}
		idx = append(idx, i)
	}
	return idx, complete, quarantined, complete > 0 && float64(quarantined) > maxQuarantined*float64(complete)
}

// equivalent reports whether both one-sided tests reject at their
// critical indices: ln(B/A) above −L on lo's rounds and below L on hi's.
func equivalent(lo, hi []float64, kLo, kHi int, L float64) bool {
	return kLo >= 1 && kHi >= 1 && kLo <= len(lo) && kHi <= len(hi) && lo[kLo-1] > -L && hi[len(hi)-kHi] < L
}

// newLook screens the first m rounds and collects the used rounds' logs.
func newLook(s Samples, m int, opt Options) *look {
	lk := &look{m: m}
	lk.rounds, lk.spreadLimit = screen(s, m, opt.Extreme)
	lk.idx, lk.complete, lk.quarantined, lk.tooMany = kept(lk.rounds, opt.MaxQuarantined)
	for _, i := range lk.idx {
		lk.d = append(lk.d, math.Log(lk.rounds[i].Ratio))
		lk.nl = append(lk.nl, math.Log(lk.rounds[i].NullRatio))
	}
	lk.L = math.Log1p(opt.Delta)
	lk.lo, lk.hi = newEqSide(s, m, opt, math.Exp(lk.L)), newEqSide(s, m, opt, math.Exp(-lk.L))
	if s.Null != nil {
		lk.st, lk.stLo, lk.stHi = newAligned(s, lk.idx), newAligned(s, lk.lo.idx), newAligned(s, lk.hi.idx)
	} else {
		lk.w = walsh(lk.d)
		lk.lo.w, lk.hi.w = walshOf(s.Candidate, s.Base, lk.lo.idx), walshOf(s.Candidate, s.Base, lk.hi.idx)
	}
	return lk
}

// walshOf returns the sorted Walsh averages of ln(num/den) over rounds idx.
func walshOf(num, den []float64, idx []int) []float64 {
	d := make([]float64, len(idx))
	for a, i := range idx {
		d[a] = math.Log(num[i] / den[i])
	}
	return walsh(d)
}

// decide sets the outcome from the look's tests.
func (lk *look) decide() {
	lk.outcome = Undecided
	switch {
	case lk.tooMany:
	case lk.slower:
		lk.outcome = Slower
	case lk.faster:
		lk.outcome = Faster
	case !lk.lo.tooMany && !lk.hi.tooMany && lk.eqLo && lk.eqHi:
		lk.outcome = Equivalent
	}
}

// verdict builds the Verdict of a look; looks counts sequential looks.
func (lk *look) verdict(s Samples, opt Options, looks int) Verdict {
	alpha := 1 - opt.Confidence
	L := math.Log1p(opt.Delta)
	v := Verdict{
		Outcome: lk.outcome, Confidence: opt.Confidence, EqConfidence: opt.EqConfidence, Delta: opt.Delta,
		NullConfidence: 1 - alpha/5, Rounds: lk.rounds, Given: len(s.Base), Looks: looks,
		Used: len(lk.d), Quarantined: len(lk.rounds) - len(lk.d), SpreadLimit: lk.spreadLimit,
	}
	var est float64
	kUp, kDown, kLo, kHi := lk.kUp, lk.kDown, lk.kLo, lk.kHi // of the signed-rank test
	v.EqLo, v.EqHi = 0, math.Inf(1)
	if lk.st != nil {
		lk.levels()
		v.NeedRounds = alignedMinRounds(alpha / 2)
		est = lk.st.estimate()
		if !lk.pDone {
			lk.pUp, lk.pDown = lk.st.tails(0)
		}
		v.P = math.Min(1, 2*math.Min(lk.pUp, lk.pDown))
		if lo, _ := lk.stLo.interval(lk.levLo, 0); !math.IsInf(lo, 0) {
			v.EqLo = math.Exp(lo)
		}
		if _, hi := lk.stHi.interval(0, lk.levHi); !math.IsInf(hi, 0) {
			v.EqHi = math.Exp(hi)
		}
		// The signed-rank indices at the same levels, for B/A'.
		n := len(lk.idx)
		kUp, kDown, kLo, kHi = critK(n, lk.levUp), critK(n, lk.levDown), critK(len(lk.lo.idx), lk.levLo), critK(len(lk.hi.idx), lk.levHi)
	} else {
		v.NeedRounds = minRoundsFor(alpha / 2)
		est = hl(lk.w)
		v.P = signedRankP(lk.d)
		if kLo >= 1 && kLo <= len(lk.lo.w) {
			v.EqLo = math.Exp(lk.lo.w[kLo-1])
		}
		if kHi >= 1 && kHi <= len(lk.hi.w) {
			v.EqHi = math.Exp(lk.hi.w[len(lk.hi.w)-kHi])
		}
	}
	lo, hi := lk.effBounds()
	v.Ratio, v.Lo, v.Hi = math.Exp(est), math.Exp(lo), math.Exp(hi)
	// With ties (quantised values) B/A = 1 can be one of the shifts where
	// the ranks change: the test there rejects while the shifts just past
	// it do not, and the interval is open at 1. Its end is then reported
	// as the next value past 1, so that Slower ⇔ Lo > 1 and Faster ⇔ Hi < 1.
	if lk.slower && !(v.Lo > 1) {
		v.Lo = math.Nextafter(1, 2)
	}
	if lk.faster && !(v.Hi < 1) {
		v.Hi = math.Nextafter(1, 0)
	}

	// The null arm: the same test on ln(A'/A), at the stricter α/5.
	v.NullRatio, v.NullLo, v.NullHi, v.NullP = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	nullShifted := false
	if s.Null != nil {
		wn := walsh(lk.nl)
		nlo, nhi := bounds(wn, critK(len(lk.nl), alpha/10))
		v.NullRatio, v.NullLo, v.NullHi = math.Exp(hl(wn)), math.Exp(nlo), math.Exp(nhi)
		v.NullP = signedRankP(lk.nl)
		nullShifted = nlo > 0 || nhi < 0
	}

	// The noise: a per-round scale from the fixed-sample interval.
	sigma := scale(lk, alpha)
	v.MDE = mdeAt(sigma, len(lk.d), alpha)
	se := sigma / math.Sqrt(float64(len(lk.d)))

	// A shifted null arm keeps a decided outcome only when B/A' (over the
	// same rounds, at the same index) decides it too: B then differs from
	// both instances of A. This only removes calls, so the error rates
	// stay those of B/A's test.
	withheld := false
	if nullShifted && lk.outcome != Undecided {
		vsNull := func(idx []int) []float64 { return walshOf(s.Candidate, s.Null, idx) }
		w2 := vsNull(lk.idx)
		lo2, _ := bounds(w2, kUp)
		_, hi2 := bounds(w2, kDown)
		v.VsNullLo, v.VsNullHi = math.Exp(lo2), math.Exp(hi2)
		switch lk.outcome {
		case Slower:
			withheld = !(lo2 > 0)
		case Faster:
			withheld = !(hi2 < 0)
		case Equivalent:
			withheld = !equivalent(vsNull(lk.lo.idx), vsNull(lk.hi.idx), kLo, kHi, L)
		}
	}

	switch {
	case lk.tooMany:
		v.Outcome = Undecided
		v.Reasons = append(v.Reasons, TooManyQuarantined)
	case nullShifted && (lk.outcome == Undecided || withheld):
		v.Outcome = Undecided
		v.Reasons = append(v.Reasons, NullShifted)
	case nullShifted:
		v.Reasons = append(v.Reasons, NullShifted)
	case lk.outcome == Undecided && (math.IsInf(lo, 0) || math.IsInf(hi, 0)):
		v.Reasons = append(v.Reasons, TooFewRounds)
		// In sequential mode a look spends less than α, and its
		// boundary can allow no interval at the fixed-sample minimum.
		v.NeedRounds = max(v.NeedRounds, len(lk.d)+1)
	case lk.outcome == Undecided:
		v.Reasons = append(v.Reasons, Straddles)
	}
	if (v.Outcome == Faster || v.Outcome == Slower) && lo > -L && hi < L {
		v.Reasons = append(v.Reasons, WithinDelta)
	}
	if s.Null == nil {
		v.Reasons = append(v.Reasons, NoNullArm)
	}
	if v.Outcome == Undecided && !lk.tooMany && !nullShifted && len(lk.d) > 0 {
		v.RoundsToDecide = roundsToDecide(est, se*math.Sqrt(float64(len(lk.d))), alpha, 1-opt.EqConfidence, L, len(lk.d), v.NeedRounds, len(lk.rounds))
	} else if v.Outcome == Undecided {
		v.RoundsToDecide = -1
	}

	// benchstat's view, and the regimes, over the rounds of this look.
	var a, b, a2 []float64
	var ua, ub, ua2 []float64
	for _, r := range lk.rounds {
		for _, p := range []struct {
			all *[]float64
			x   float64
		}{{&a, r.A}, {&b, r.B}, {&a2, r.Null}} {
			if !math.IsNaN(p.x) && !math.IsInf(p.x, 0) {
				*p.all = append(*p.all, p.x)
			}
		}
		if !r.Quarantined {
			ua, ub, ua2 = append(ua, r.A), append(ub, r.B), append(ua2, r.Null)
		}
	}
	if len(Regimes(ua, 0)) > 1 || len(Regimes(ub, 0)) > 1 || (s.Null != nil && len(Regimes(ua2, 0)) > 1) {
		v.Reasons = append(v.Reasons, Bimodal)
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	sa, sb, sn := benchmath.NewSample(a, th), benchmath.NewSample(b, th), benchmath.NewSample(a2, th)
	v.Base, v.Candidate, v.NullArm = summarize(sa, opt.Confidence), summarize(sb, opt.Confidence), summarize(sn, opt.Confidence)
	if len(a) > 0 && len(b) > 0 {
		v.Comparison = benchmath.AssumeNothing.Compare(sa, sb)
	} else {
		v.Comparison = benchmath.Comparison{P: 1, N1: len(a), N2: len(b), Alpha: alpha}
	}
	return v
}

// FewestRounds returns the fewest used rounds that give Judge a finite
// two-sided interval at confidence: with a null arm (the aligned-rank test,
// 3⁻ⁿ ≤ α/2) 4 at 95% and 5 at 98.75%; without (the signed-rank test) 6
// and 8. 0 for a confidence outside (0.5, 1).
func FewestRounds(confidence float64, nullArm bool) int {
	if !(confidence > 0.5 && confidence < 1) {
		return 0
	}
	if nullArm {
		return alignedMinRounds((1 - confidence) / 2)
	}
	return minRoundsFor((1 - confidence) / 2)
}

// roundsToDecide estimates the total rounds at which a fixed-sample
// interval would decide, if the estimate est (log) and the per-round scale
// sigma held: the fewer of the rounds for the (1−α) interval to exclude 0
// and for the (1−2α_eq) interval to fit inside ±L. used of total rounds were
// used; the estimate scales by total/used. −1 when unknown.
func roundsToDecide(est, sigma, alpha, alphaEq, L float64, used, need, total int) int {
	if !(sigma > 0) || math.IsInf(sigma, 0) || math.IsNaN(est) {
		return -1
	}
	best := math.Inf(1)
	if est != 0 {
		best = math.Pow(normQuantile(1-alpha/2)*sigma/est, 2)
	}
	if a := math.Abs(est); a < L {
		best = math.Min(best, math.Pow(normQuantile(1-alphaEq)*sigma/(L-a), 2))
	}
	best *= float64(total) / float64(used)
	if math.IsInf(best, 0) || best > 1e6 {
		return -1
	}
	return max(int(math.Ceil(best)), total+1, need)
}

// screen returns the first m rounds of s with their ratios, spreads and
// quarantine. The rule is symmetric in the arms: swapping A and B (or A and
// A') in any round changes no round's quarantine.
func screen(s Samples, m int, extreme float64) (rounds []Round, limit float64) {
	rounds, limit = make([]Round, m), math.NaN()
	var spreads, clear []float64 // of the complete rounds; of those not marked
	for i := range m {
		r := Round{Label: i + 1, A: s.Base[i], B: s.Candidate[i], Null: math.NaN(), Spread: math.NaN()}
		if s.Round != nil {
			r.Label = s.Round[i]
		}
		vals := []float64{r.A, r.B}
		if s.Null != nil {
			r.Null = s.Null[i]
			vals = append(vals, r.Null)
		}
		r.Ratio, r.NullRatio = r.B/r.A, r.Null/r.A
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range vals {
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0):
				r.Cause = Missing
			case !(x > 0) && r.Cause == 0:
				r.Cause = NonPositive
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if r.Cause == 0 {
			r.Spread = math.Log(hi) - math.Log(lo)
			spreads = append(spreads, r.Spread)
			if s.Contended == nil || !s.Contended[i] {
				clear = append(clear, r.Spread)
			}
		}
		r.Quarantined = r.Cause != 0
		rounds[i] = r
	}
	// A round the screen marks is quarantined when its values show the
	// weather its arms did not share: a spread over ContendedFactor times
	// the median spread of the unmarked rounds (of all complete rounds
	// when fewer than 3 are unmarked; every marked round when fewer than 5
	// are complete).
	med, ref := math.NaN(), math.NaN()
	if len(spreads) >= 5 {
		sort.Float64s(spreads)
		med, ref = median(spreads), median(spreads)
		if len(clear) >= 3 {
			sort.Float64s(clear)
			ref = median(clear)
		}
	}
	for i := range rounds {
		r := &rounds[i]
		if !r.Quarantined && s.Contended != nil && s.Contended[i] && !(ref > 0 && r.Spread <= ContendedFactor*ref) {
			r.Quarantined, r.Cause = true, Contended
		}
	}
	if med > 0 && !math.IsInf(extreme, 1) {
		limit = extreme * med
		for i := range rounds {
			if r := &rounds[i]; !r.Quarantined && r.Spread > limit {
				r.Quarantined, r.Cause = true, Extreme
			}
		}
	}
	return rounds, limit
}

// ContendedFactor is the factor over the median spread of the unmarked
// rounds beyond which a round Samples.Contended marks is quarantined. A marked round whose arms'
// values lie as close as most rounds' did not meet weather that moved them,
// and stays: on a host at the edge of the screen's threshold, most rounds
// are marked, and quarantining them all left too few rounds to decide.
const ContendedFactor = 2

// MDEAt returns the minimal detectable effect (a fraction, as Verdict.MDE)
// of a fixed-sample verdict with rounds used rounds, at the noise of s's
// ln(B/A): give it A/A samples (B a second instance of A). The per-round
// scale comes from s's interval; +Inf when s has too few rounds for one.
func MDEAt(s Samples, rounds int, opt Options) float64 {
	opt = opt.withDefaults(s.Null != nil)
	if opt.validate() != nil || s.check() != nil || rounds < 1 {
		return math.NaN()
	}
	lk := newLook(s, len(s.Base), opt)
	alpha := 1 - opt.Confidence
	return mdeAt(scale(lk, alpha), rounds, alpha)
}

// scale returns the per-round scale σ of ln(B/A) implied by the look's
// fixed-sample (1−α) interval: its half-width is about t·σ/√n, t the
// Student quantile with n−1 degrees of freedom (the small-sample widening
// of the rank interval follows it closely). +Inf without an interval.
func scale(lk *look, alpha float64) float64 {
	n := len(lk.d)
	var lo, hi float64
	if n < 2 {
		return math.Inf(1)
	}
	switch {
	case lk.st != nil && !lk.seq && lk.levUp == alpha/2 && lk.levDown == alpha/2:
		lo, hi = lk.effBounds() // a fixed look's own interval
	case lk.st != nil:
		// At a sequential look's spent levels Student's t no longer
		// follows the rank interval's width: the fixed-sample one.
		lo, hi = lk.st.interval(alpha/2, alpha/2)
	default:
		lo, hi = bounds(lk.w, critK(n, alpha/2))
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return math.Inf(1)
	}
	return (hi - lo) / 2 / tQuantile(1-alpha/2, n-1) * math.Sqrt(float64(n))
}

// mdeAt returns the effect (a fraction) that a fixed-sample verdict of n
// used rounds detects with 80% power at per-round scale sigma:
// exp((t₁₋α/₂ + t₀.₈)·σ/√n) − 1 with n−1 degrees of freedom.
func mdeAt(sigma float64, n int, alpha float64) float64 {
	if math.IsInf(sigma, 0) || math.IsNaN(sigma) || n < 2 {
		return math.Inf(1)
	}
	return math.Expm1((tQuantile(1-alpha/2, n-1) + tQuantile(0.80, n-1)) * sigma / math.Sqrt(float64(n)))
}

// tQuantile is Student's t quantile function with df degrees of freedom.
func tQuantile(p float64, df int) float64 {
	return stats.InvCDF(stats.TDist{V: float64(df)})(p)
}

// summarize is benchmath.AssumeNothing.Summary, with NaNs for an empty
// sample instead of a panic.
func summarize(s *benchmath.Sample, confidence float64) benchmath.Summary {
	if len(s.Values) == 0 {
		return benchmath.Summary{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return benchmath.AssumeNothing.Summary(s, confidence)
}
