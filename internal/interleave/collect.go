package interleave

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/gapbench/gapbench/nullband"
)

// Set is one benchmark's values in one unit for one candidate arm, arranged
// for nullband.Judge.
type Set struct {
	// Benchmark is the benchmark's full name without "Benchmark"
	// (benchfmt.Name.Full), e.g. "Step-2".
	Benchmark string
	// Unit is the tidied unit (benchunit.Tidy: ns/op becomes sec/op, also
	// for a value of 0, which benchfmt itself leaves in ns/op).
	Unit string
	// Candidate is the candidate arm's name.
	Candidate string
	// Samples holds one value per round for the base, the candidate and
	// the null arm, NaN where a round lacks one; Samples.Round labels
	// them with the KeyRound values, ascending.
	Samples nullband.Samples
}

// Collect arranges results that carry the KeyArm and KeyRound file keys (as
// a Runner writes them, read back with a benchfmt.Reader) into one Set per
// benchmark, unit and candidate arm: every arm that is neither base nor
// null. The order is that of first appearance. Results without both keys
// are skipped. Only units in units are kept; nil keeps all. When the
// results hold no arm but base and null, the null arm is the candidate (an
// A/A check of base against a second process of itself), without a null
// arm to calibrate it (Samples.Null is nil).
//
// It is an error for base or null to be missing from the results, and for a
// round to hold two results of one arm for one benchmark (a run with
// -test.count above 1).
func Collect(results []*benchfmt.Result, base, null string, units []string) ([]Set, error) {
	type key struct {
		bench, unit, arm string
		round            int
	}
	vals := map[key]float64{}
	var benches, unitOrder, arms []string
	var rounds []int
	seenArm := map[string]bool{}
	for _, res := range results {
		arm, rs := res.GetConfig(KeyArm), res.GetConfig(KeyRound)
		if arm == "" || rs == "" {
			continue
		}
		round, err := strconv.Atoi(rs)
		if err != nil {
			f, line := res.Pos()
			return nil, fmt.Errorf("%s:%d: round: %q is not a round number", f, line, rs)
		}
		bench := string(res.Name.Full())
		if !slices.Contains(benches, bench) {
			benches = append(benches, bench)
		}
		if !slices.Contains(rounds, round) {
			rounds = append(rounds, round)
		}
		if !seenArm[arm] {
			seenArm[arm] = true
			arms = append(arms, arm)
		}
		for _, v := range res.Values {
			// benchfmt leaves a value of exactly 0 in its original unit
			// (0 ns/op stays ns/op, not sec/op); tidy the unit here so
			// that a zero joins its unit's other values.
			factor, unit := benchunit.Tidy(1, v.Unit)
			value := v.Value * factor
			if units != nil && !slices.Contains(units, unit) {
				continue
			}
			if !slices.Contains(unitOrder, unit) {
				unitOrder = append(unitOrder, unit)
			}
			k := key{bench, unit, arm, round}
			if _, dup := vals[k]; dup {
				f, line := res.Pos()
				return nil, fmt.Errorf("%s:%d: round %d has two %s results of Benchmark%s for arm %s: run each arm once per round (-test.count=1)", f, line, round, unit, bench, arm)
			}
			vals[k] = value
		}
	}
	for _, need := range []string{base, null} {
		if !seenArm[need] {
			return nil, fmt.Errorf("no results for arm %q (arms seen: %v): the base and null arms must both be in the input", need, arms)
		}
	}
	slices.Sort(rounds)
	aa := len(arms) == 2 // base and null only
	var sets []Set
	for _, b := range benches {
		for _, u := range unitOrder {
			for _, c := range arms {
				if c == base || (c == null && !aa) {
					continue
				}
				s := Set{Benchmark: b, Unit: u, Candidate: c}
				found := false
				for _, r := range rounds {
					get := func(arm string) float64 {
						v, ok := vals[key{b, u, arm, r}]
						if !ok {
							return math.NaN()
						}
						found = found || arm == c
						return v
					}
					s.Samples.Round = append(s.Samples.Round, r)
					s.Samples.Base = append(s.Samples.Base, get(base))
					s.Samples.Candidate = append(s.Samples.Candidate, get(c))
					if !aa {
						s.Samples.Null = append(s.Samples.Null, get(null))
					}
				}
				if found {
					sets = append(sets, s)
				}
			}
		}
	}
	return sets, nil
}
