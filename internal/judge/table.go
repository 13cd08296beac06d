// Package judge is the one path from measured rounds to verdict rows that
// every route takes (decodegap.Compare, decodegap interleave, ort,
// calibrate and pr): a rounds table (benchmark × unit × arm × round, with
// each block's contended and stall marks), one Policy (base, null arm,
// units and their weights, nullband's options) with one default, one
// judging procedure (Judge) and one sequential loop (Loop). The same table
// under the same policy gives the same rows whatever built it.
package judge

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// The benchfmt file keys a route writes beside each result: the arm, the
// round (from 1) and the contention screen's word ("contended" or
// "clean"). internal/interleave writes them.
const (
	KeyArm    = "arm"
	KeyRound  = "round"
	KeyScreen = "screen"
)

// UnitOutlier is decodegap's unit for the share of a block's step time
// made by steps at least 10× the median: a block with a value above 0
// held a stall (FromBenchfmt reads it as Block.Stall).
const UnitOutlier = "outlier-%"

// Block is what one block (one arm's run in one round) contributes to the
// table: its values and its marks.
type Block struct {
	// Values are the block's metrics in any benchfmt unit; Table.Add
	// tidies them (benchunit.Tidy). When a unit occurs twice, the first
	// value is kept (decodegap's own cpu-ns/op before a runner's
	// cpu-sec/op of the whole process).
	Values []benchfmt.Value
	// Contended is the contention screen's mark of the block.
	Contended bool
	// Stall is true when the block held a stall: a step of 10× its median
	// or more (decodegap's outlier-% above 0).
	Stall bool
}

// BlockOf returns the block of one benchfmt result: its values, the
// screen: key's mark, and its outlier-% as the stall mark.
func BlockOf(r *benchfmt.Result) Block {
	return Block{Values: r.Values, Contended: r.GetConfig(KeyScreen) == "contended", Stall: Stalled(r.Values)}
}

// StallFactor is how many times the median step the longest step must be
// for a block to hold a stall.
const StallFactor = 10

// Stalled reports whether a block's values show a stall: outlier-% above
// 0 (steps of StallFactor × the median or more inside the reported
// window), or a longest step anywhere in the run (max-ns/op, warm-up and
// transient included) of StallFactor × the median step (p50-ns/op) or
// more. Units are read tidied (benchunit.Tidy), so a benchfmt reader's
// values and decodegap's own give the same answer.
func Stalled(values []benchfmt.Value) bool {
	var maxStep, p50 float64
	for _, v := range values {
		unit := v.OrigUnit
		if unit == "" {
			unit = v.Unit
		}
		x, u := benchunit.Tidy(v.Value, unit)
		if v.OrigUnit != "" {
			x, u = v.Value, v.Unit // already tidied by the reader
		}
		switch u {
		case UnitOutlier:
			if x > 0 {
				return true
			}
		case "max-sec/op":
			maxStep = x
		case "p50-sec/op":
			p50 = x
		}
	}
	return p50 > 0 && maxStep >= StallFactor*p50
}

type cellKey struct {
	bench, unit, arm string
	round            int
}

type blockKey struct {
	bench, arm string
	round      int
}

// Table is the rounds table: values by benchmark, unit, arm and round,
// and each block's marks. The zero Table is empty and ready to use. Its
// orders are those of first appearance; rounds are kept sorted.
type Table struct {
	vals   map[cellKey]float64
	blocks map[blockKey]Block // marks only (Values dropped)
	// benches, units and arms list the names in order of first
	// appearance; rounds the round labels, ascending.
	benches, units, arms []string
	rounds               []int
}

// Add files one block of arm in round (a label ≥ 1) of benchmark bench.
// It is an error to add a second block for the same benchmark, arm and
// round.
func (t *Table) Add(bench, arm string, round int, b Block) error {
	if t.vals == nil {
		t.vals, t.blocks = map[cellKey]float64{}, map[blockKey]Block{}
	}
	bk := blockKey{bench, arm, round}
	if _, dup := t.blocks[bk]; dup {
		return fmt.Errorf("round %d has two results of Benchmark%s for arm %s: run each arm once per round (-test.count=1)", round, bench, arm)
	}
	t.blocks[bk] = Block{Contended: b.Contended, Stall: b.Stall}
	addName(&t.benches, bench)
	addName(&t.arms, arm)
	if i, found := slices.BinarySearch(t.rounds, round); !found {
		t.rounds = slices.Insert(t.rounds, i, round)
	}
	for _, v := range b.Values {
		// benchfmt leaves a value of exactly 0 in its original unit
		// (0 ns/op stays ns/op); tidy here so a zero joins its unit.
		factor, unit := benchunit.Tidy(1, v.Unit)
		k := cellKey{bench, unit, arm, round}
		if _, ok := t.vals[k]; ok {
			continue
		}
		t.vals[k] = v.Value * factor
		addName(&t.units, unit)
	}
	return nil
}

func addName(list *[]string, s string) {
	if !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// FromBenchfmt builds a table from results that carry the arm: and round:
// file keys (as internal/interleave's runner writes them); results
// without both are skipped. The error names the result's file and line.
func FromBenchfmt(results []*benchfmt.Result) (*Table, error) {
	t := &Table{}
	for _, r := range results {
		if err := t.AddResult(r); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// AddResult files one benchfmt result by its arm: and round: keys (a
// result without both is skipped).
func (t *Table) AddResult(r *benchfmt.Result) error {
	arm, rs := r.GetConfig(KeyArm), r.GetConfig(KeyRound)
	if arm == "" || rs == "" {
		return nil
	}
	round, err := strconv.Atoi(rs)
	if err != nil || round < 1 {
		f, line := r.Pos()
		return fmt.Errorf("%s:%d: round: %q is not a round number", f, line, rs)
	}
	if err := t.Add(string(r.Name.Full()), arm, round, BlockOf(r)); err != nil {
		f, line := r.Pos()
		return fmt.Errorf("%s:%d: %w", f, line, err)
	}
	return nil
}

// Benchmarks, Units and Arms list the table's names in order of first
// appearance; Rounds its round labels, ascending. The caller must not
// modify them.
func (t *Table) Benchmarks() []string { return t.benches }

// Units lists the tidied units, in order of first appearance.
func (t *Table) Units() []string { return t.units }

// Arms lists the arms, in order of first appearance.
func (t *Table) Arms() []string { return t.arms }

// Rounds lists the round labels, ascending.
func (t *Table) Rounds() []int { return t.rounds }

// Value returns the value of bench, unit, arm and round, NaN when the
// table has none.
func (t *Table) Value(bench, unit, arm string, round int) float64 {
	v, ok := t.vals[cellKey{bench, unit, arm, round}]
	if !ok {
		return math.NaN()
	}
	return v
}

// Has reports whether arm has some value of unit in bench.
func (t *Table) Has(bench, unit, arm string) bool {
	for _, r := range t.rounds {
		if _, ok := t.vals[cellKey{bench, unit, arm, r}]; ok {
			return true
		}
	}
	return false
}

// marks returns the marks of arm's block in round, and whether it ran.
func (t *Table) marks(bench, arm string, round int) (Block, bool) {
	b, ok := t.blocks[blockKey{bench, arm, round}]
	return b, ok
}

// roundMarks says, for one round of bench and the arms judged together,
// whether the arms did not share the weather: some of the blocks that ran
// were marked (screened contended, or holding a stall) and others not.
// All marked is shared weather, which pairing within the round cancels.
// stall reports whether some block held a stall.
func (t *Table) roundMarks(bench string, round int, arms []string) (unshared, stall bool) {
	n, ran := 0, 0
	for _, a := range arms {
		b, ok := t.marks(bench, a, round)
		if !ok {
			continue
		}
		ran++
		if b.Contended || b.Stall {
			n++
		}
		stall = stall || b.Stall
	}
	return n > 0 && n < ran, stall
}
