package sim

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"
)

// Call is what a method said about B against A in one trial.
type Call int

const (
	// Undecided: no call (also the old band rule's "unmeasurable").
	Undecided Call = iota
	// Faster: B below A.
	Faster
	// Slower: B above A.
	Slower
	// Equivalent: B within the method's equivalence margin of A (the old
	// band rule's "inside": no ±δ bound of its own).
	Equivalent
)

// String returns "undecided", "faster", "slower" or "equivalent".
func (c Call) String() string {
	switch c {
	case Undecided:
		return "undecided"
	case Faster:
		return "faster"
	case Slower:
		return "slower"
	case Equivalent:
		return "equivalent"
	}
	return fmt.Sprintf("Call(%d)", int(c))
}

// Method judges trials.
type Method struct {
	// Name identifies the method in tables ("verdict", "band", "utest").
	Name string
	// Fixed judges all rounds of t at once.
	Fixed func(t Trial) Call
	// Sequential judges t's prefixes, stopping when decided or at
	// maxRounds (≤ t.Rounds()); it returns the call and the rounds used.
	// Nil when the method has no sequential mode.
	Sequential func(t Trial, maxRounds int) (Call, int)
}

// UTest is benchstat's comparison: the Mann–Whitney U-test of A against B
// over every round (benchmath.AssumeNothing.Compare, α 0.05), unpaired, as
// `benchstat -col arm` does on an interleaved file; a significant result is
// faster or slower by the sign of median(B)/median(A)−1. It has no
// equivalence answer.
func UTest() Method {
	return Method{Name: "utest", Fixed: func(t Trial) Call {
		th := &benchmath.Thresholds{CompareAlpha: 0.05}
		a, b := benchmath.NewSample(t.A, th), benchmath.NewSample(t.B, th)
		c := benchmath.AssumeNothing.Compare(a, b)
		if c.P > c.Alpha { // benchstat prints "~" when P > α
			return Undecided
		}
		ma := benchmath.AssumeNothing.Summary(a, 0.95).Center
		mb := benchmath.AssumeNothing.Summary(b, 0.95).Center
		switch {
		case mb > ma:
			return Slower
		case mb < ma:
			return Faster
		}
		return Undecided
	}}
}

// OldBand is nullband.Judge's band rule as it was on main at commit
// 92a12bd: "outside" (faster or slower) when the median per-round B/A's 95%
// CI lies wholly outside the 5–95% band of per-round A'/A; "inside"
// (reported as Equivalent) when the median B/A lies inside a band no wider
// than ±10%; else unmeasurable (Undecided). See band.go.
func OldBand() Method {
	return Method{Name: "band", Fixed: func(t Trial) Call { return bandRule(t.A, t.B, t.Null) }}
}

// finiteSummary reports whether s has a finite confidence interval.
func finiteSummary(s benchmath.Summary) bool {
	return !math.IsNaN(s.Center) && !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi)
}

// Methods returns the suite's methods in report order.
func Methods() []Method { return []Method{Verdict(), OldBand(), UTest(), PairedT()} }
