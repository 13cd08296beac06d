// Package report is the row model every verdict route writes its results
// as: one Row per benchmark, candidate arm and unit, plus the null arm's
// own row (the A/A check), holding numbers and enumerations only. The
// words are written by the renderers (internal/verdicttext's table, the
// pr report's Markdown, a JSON writer), each from the same rows.
//
// Rows are plain data: every field is exported and has a fixed meaning, so
// a JSON writer can write them as they are. Floats use NaN for "unknown"
// and +Inf for "unbounded" (encoding/json refuses both: a writer maps them
// to null or a string, and says so in its schema).
package report

import (
	"math"

	"github.com/gapbench/gapbench/nullband"
)

// Kind says what a row compares.
type Kind int

const (
	// Candidate is a candidate arm against the base: the verdict.
	Candidate Kind = iota
	// NullCheck is the null arm A' against the base A, two instances of
	// one configuration: the A/A check that calibrates every verdict
	// beside it. Its rows are judged as a family of their own (they never
	// change a candidate's verdict) and are never gated on.
	NullCheck
)

// String returns "candidate" or "null-check".
func (k Kind) String() string {
	if k == NullCheck {
		return "null-check"
	}
	return "candidate"
}

// Row is one verdict: Arm against Base on Unit in Bench.
type Row struct {
	// Bench is the benchmark's full name without "Benchmark" (benchfmt's
	// Name.Full, e.g. "Step-2"); Pkg its package when known ("").
	Bench, Pkg string
	// Arm is the arm judged (the candidate, or the null arm for a
	// NullCheck row) and Base the arm it is judged against.
	Arm, Base string
	// Unit is the tidied unit (benchunit.Tidy: "sec/op", "p50-sec/op",
	// "cpu-sec/op").
	Unit string
	// Kind is Candidate or NullCheck.
	Kind Kind
	// Weight is the unit's weight in its family (weighted Holm), and
	// Level the confidence the verdict's interval was judged at.
	Weight, Level float64
	// Verdict is nullband's verdict of the row.
	Verdict nullband.Verdict
	// Benchstat is benchstat's view of every round of the row, the view
	// `benchstat -col arm` prints for the same file: not the rounds of
	// the decision look, nor the family's level.
	Benchstat Benchstat
	// Stalled lists the labels of the rounds in which some arm's block
	// held a stall (a step of 10× the median or more); a round in which
	// some arms stalled and others not is offered to the quarantine as
	// foreign, like a round whose arms met different weather.
	Stalled []int
	// Relieved is true when the extreme-spread quarantine was lifted for
	// this row's family because it would have left some row with no
	// interval while rounds remained (see internal/judge).
	Relieved bool
	// Err is why the row has no verdict ("" when it has one); then
	// Verdict is the zero Verdict.
	Err string
}

// Benchstat is benchstat's own comparison of a row: the medians of every
// round's value of base and arm, and the Mann–Whitney U-test between them
// at benchstat's α of 0.05.
type Benchstat struct {
	// Base and Arm are the medians (in the row's unit), NaN when an arm
	// has no value; N the values of each.
	Base, Arm   float64
	BaseN, ArmN int
	// P is the U-test's p-value (NaN when it could not be computed) and
	// Alpha the level it is read at.
	P, Alpha float64
}

// Delta is benchstat's change Arm/Base − 1 (NaN when unknown).
func (b Benchstat) Delta() float64 {
	if !(b.Base > 0) || math.IsNaN(b.Arm) {
		return math.NaN()
	}
	return b.Arm/b.Base - 1
}

// Significant reports whether benchstat would print the delta (p ≤ α)
// rather than "~".
func (b Benchstat) Significant() bool { return b.P <= b.Alpha }

// Decided reports whether the row's verdict is decided: faster, slower or
// equivalent, with no error.
func (r Row) Decided() bool {
	return r.Err == "" && r.Verdict.Outcome != nullband.Undecided
}

// Checked reports whether the row is decided or its interval is finite
// (Verdict.Lo > 0 and Verdict.Hi < +Inf), with no error: for a NullCheck
// row, whether the A/A check ran, since a null arm that moved can be
// found only by an interval that excludes 1. Before a row has its used
// rounds (nullband.TooFewRounds: Verdict.NeedRounds) it has none.
func (r Row) Checked() bool {
	v := r.Verdict
	return r.Decided() || (r.Err == "" && v.Lo > 0 && v.Hi < math.Inf(1))
}

// Check is the state of a table's A/A check: its NullCheck rows.
type Check int

const (
	// NoCheck: no NullCheck row (no null arm).
	NoCheck Check = iota
	// CheckRan: every NullCheck row is Checked: a null arm that moved
	// could have been found.
	CheckRan
	// CheckNotRun: some NullCheck row is not Checked (too few used rounds
	// at its level, or an error): the run ended before the A/A check
	// could flag the host, and the verdicts beside it are not
	// calibrated by it.
	CheckNotRun
)

// String returns "none", "ran" or "not-run".
func (c Check) String() string {
	switch c {
	case CheckRan:
		return "ran"
	case CheckNotRun:
		return "not-run"
	}
	return "none"
}

// CheckOf returns the state of the A/A check of rows.
func CheckOf(rows []Row) Check {
	c := NoCheck
	for _, r := range rows {
		if r.Kind != NullCheck {
			continue
		}
		if !r.Checked() {
			return CheckNotRun
		}
		c = CheckRan
	}
	return c
}

// CPU reports whether the row's unit measures CPU time (a "cpu-" unit):
// its renderers word faster and slower as less and more CPU.
func (r Row) CPU() bool { return IsCPU(r.Unit) }

// IsCPU reports whether unit measures CPU time per op ("cpu-sec/op",
// "cpu-ns/op"), as opposed to wall time.
func IsCPU(unit string) bool {
	return len(unit) > 4 && unit[:4] == "cpu-"
}
