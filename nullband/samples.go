package nullband

import "fmt"

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
	// round's blocks contended and others not. A round whose blocks were
	// all contended is not marked: the arms shared that weather, which
	// pairing within the round cancels. Without a null arm a marked round
	// is quarantined when its spread shows it (over ContendedFactor times
	// the unmarked rounds' median spread; every marked round when fewer
	// than 5 rounds are complete). With a null arm the marks set no round
	// aside: a mark that follows the candidate's slow blocks would set
	// aside the difference being judged, and the aligned ranks bound what
	// one round can move.
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
	// BelowEqFloor: the tests said equivalent on fewer used rounds than
	// Verdict.EqFloor (Options.MinEqRounds), too few to have seen a
	// regime of the candidate in EqRegimeShare of its rounds (undecided).
	BelowEqFloor
	// QuarantineChangesCall: rounds were set aside (Contended or Extreme)
	// and judging every complete round gives another outcome
	// (Verdict.Unscreened): the call rests on the rounds left out
	// (undecided).
	QuarantineChangesCall
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
	case BelowEqFloor:
		return "below-eq-floor"
	case QuarantineChangesCall:
		return "quarantine-changes-call"
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
	// ContendedFactor times the unmarked rounds' median spread (without a
	// null arm only).
	Contended
	// Extreme: the round's spread (Round.Spread) exceeds Options.Extreme
	// times the median spread of the complete rounds (without a null arm
	// only).
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
	// (all arms). Without a null arm the contended and extreme rules act
	// on it; with one it is reported only (see Samples.Contended). NaN
	// for an incomplete round.
	Spread float64
	// Quarantined rounds are left out of the test; Cause says why.
	Quarantined bool
	Cause       Cause
}
