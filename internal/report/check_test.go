package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/nullband"
)

func TestCheckOf(t *testing.T) {
	bounded := nullband.Verdict{Outcome: nullband.Undecided}
	bounded.Lo, bounded.Hi = 0.95, 1.06
	open := nullband.Verdict{Outcome: nullband.Undecided}
	open.Lo, open.Hi = 0, math.Inf(1)
	eq := open
	eq.Outcome = nullband.Equivalent
	cand := Row{Kind: Candidate, Verdict: nullband.Verdict{Outcome: nullband.Slower}}
	assert.Equal(t, NoCheck, CheckOf([]Row{cand}))
	assert.Equal(t, CheckRan, CheckOf([]Row{cand, {Kind: NullCheck, Verdict: bounded}, {Kind: NullCheck, Verdict: eq}}))
	assert.Equal(t, CheckNotRun, CheckOf([]Row{cand, {Kind: NullCheck, Verdict: bounded}, {Kind: NullCheck, Verdict: open}}))
	assert.Equal(t, CheckNotRun, CheckOf([]Row{{Kind: NullCheck, Verdict: bounded, Err: "boom"}}), "an error checks nothing")
	assert.Equal(t, CheckNotRun, CheckOf([]Row{{Kind: Candidate, Verdict: open}, {Kind: NullCheck, Verdict: open}}))
	assert.Equal(t, "not-run", CheckNotRun.String())
}
