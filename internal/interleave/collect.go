package interleave

import (
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
)

// Judge judges results that carry the KeyArm, KeyRound and KeyScreen file
// keys (as a Runner writes them, read back with a benchfmt.Reader) under
// policy p: the rounds table (judge.FromBenchfmt) judged by internal/judge,
// the one judge of every route. It also returns the table. Results without
// both the arm and round keys are skipped.
//
// Every arm that is neither p's base nor its null arm is a candidate;
// when the results hold only the base and the null arm (an A/A check of
// base against a second process of itself), the rows are the null arm's
// A/A rows (report.NullCheck).
//
// It is an error for base or null to be missing from the results, and
// for a round to hold two results of one arm for one benchmark (a run
// with -test.count above 1).
func Judge(results []*benchfmt.Result, p judge.Policy) ([]report.Row, *judge.Table, error) {
	t, err := judge.FromBenchfmt(results)
	if err != nil {
		return nil, nil, err
	}
	rows, err := judge.Judge(t, p)
	return rows, t, err
}
