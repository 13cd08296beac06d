package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/verdicttext"
)

// The judging of interleave and ort: the rounds they ran, read back from
// their output file, judged by internal/judge under the one policy.

// policy returns the judging policy of interleave's and ort's flags: base
// is the first arm, -null the null arm, -unit the units, -delta the
// margin, sequential mode with -until-decided.
func (f interleaveFlags) policy(base string) (judge.Policy, error) {
	units, err := judge.ParseUnits(f.units)
	if err != nil {
		return judge.Policy{}, err
	}
	return judge.Policy{Base: base, Null: f.null, Units: units, Options: f.options()}, nil
}

// judgeResults judges every candidate arm in results against the base,
// calibrated by the null arm, in every unit of -unit, and the null arm's
// A/A rows.
func judgeResults(f interleaveFlags, arms []string, results []*benchfmt.Result) ([]report.Row, error) {
	p, err := f.policy(arms[0])
	if err != nil {
		return nil, err
	}
	rows, _, err := interleave.Judge(results, p)
	if !errors.Is(err, judge.ErrNothingToJudge) {
		return rows, err
	}
	var missing []string
	for _, a := range arms[1:] {
		if a == f.null {
			continue
		}
		if !slices.ContainsFunc(results, func(r *benchfmt.Result) bool { return r.GetConfig(interleave.KeyArm) == a }) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("nothing to judge: %s has no result of arm %s", f.out, strings.Join(missing, ", "))
	}
	return nil, fmt.Errorf("%s holds no %s values to judge: choose -unit from the units the benchmarks report", f.out, f.units)
}

// allDecided reports whether results so far decide every row (judge.Decided):
// the stop of -until-decided. No verdict yet, or an error, is not decided.
func allDecided(f interleaveFlags, arms []string, results []*benchfmt.Result) bool {
	rows, err := judgeResults(f, arms, results)
	return err == nil && judge.Decided(rows)
}

// writeTable writes the verdict table (internal/verdicttext): one row per
// row, the reasons under it, naming this command's flags. base and null
// name the base and null arms; rounds names the flag that sets the rounds.
func writeTable(w io.Writer, rows []report.Row, base, null, rounds string) error {
	return verdicttext.WriteRows(w, rows, verdicttext.Names{Base: base, Null: null, Rounds: rounds, MaxRounds: "-max-rounds", Delta: "-delta",
		Family: "every benchmark and arm's units (a p50- unit weighing twice the others)"})
}
