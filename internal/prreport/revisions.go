package prreport

import (
	"context"

	"golang.org/x/perf/benchfmt"
)

// RevisionRunner adds the two revisions compared to every result of
// Inner, as the file keys KeyPRBase and KeyPRHead (DescribeTree's
// values), so that an output file says which commits it compared: the
// same for every result of one comparison, so benchstat's tables are not
// split by them, and `history add` files each arm's results under its
// own commit.
type RevisionRunner struct {
	Inner      RoundRunner
	Base, Head Tree
}

// RunRound implements RoundRunner.
func (r *RevisionRunner) RunRound(ctx context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	res, err := r.Inner.RunRound(ctx, j, round)
	for _, x := range res {
		setFileConfig(x, KeyPRBase, DescribeTree(r.Base))
		setFileConfig(x, KeyPRHead, DescribeTree(r.Head))
	}
	return res, err
}
