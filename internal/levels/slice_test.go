package levels

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestChooseSlice(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name              string
		given             int
		gap               time.Duration
		open              bool
		arms, steps, less int
		turn              int
		why               SliceReason
	}{
		{"2ms: the trials' turn of 30", 0, 2 * ms, false, 5, 300, 5, 30, SliceLongGap},
		{"1ms: 60 steps", 0, ms, false, 3, 300, 5, 60, SliceLongGap},
		{"32ms: at least 10 steps", 0, 32 * ms, false, 3, 100, 2, 10, SliceLongGap},
		{"at least n/64", 0, 2 * ms, false, 3, 4000, 63, 63, SliceLongGap},
		{"just below 1ms", 0, 999 * time.Microsecond, false, 3, 300, 5, 0, WholeShortGap},
		{"gap 0", 0, 0, false, 3, 4000, 63, 0, WholeShortGap},
		{"open loop", 0, 2 * ms, true, 3, 300, 5, 0, WholeOpenLoop},
		{"one arm", 0, 2 * ms, false, 1, 300, 5, 0, WholeOneArm},
		{"59 steps: fewer than two turns", 0, 2 * ms, false, 3, 59, 1, 0, WholeShortBlock},
		{"60 steps: two turns", 0, 2 * ms, false, 3, 60, 1, 30, SliceLongGap},
		{"given", 7, 100 * time.Microsecond, false, 1, 300, 5, 7, SliceGiven},
		{"given: one step short of the block", 299, 2 * ms, false, 3, 300, 5, 299, SliceGiven},
		{"given: the block", 300, 2 * ms, false, 3, 300, 5, 300, SliceGivenBlock},
		{"given 1<<30 on 200-step blocks: clamped", 1 << 30, 2 * ms, false, 3, 200, 4, 200, SliceGivenBlock},
		{"whole given", -1, 2 * ms, false, 5, 300, 5, 0, WholeGiven},
	} {
		s := ChooseSlice(tc.given, tc.gap, tc.open, tc.arms, tc.steps, tc.less)
		assert.Equal(t, tc.turn, s.Turn, tc.name)
		assert.Equal(t, tc.why, s.Reason, tc.name)
		assert.Equal(t, tc.turn > 0, s.Sliced(), tc.name)
	}
	assert.Equal(t, "turn=30 reason=long-gap", ChooseSlice(0, 2*ms, false, 5, 300, 5).Config())
	assert.Equal(t, "turn=0 reason=short-gap", ChooseSlice(0, 0, false, 5, 300, 5).Config())
	assert.Equal(t, "turn=200 reason=given-block", ChooseSlice(1<<30, 0, false, 5, 200, 4).Config())
}

// TestSlicedRoundsToTheTarget simulates the choice of SliceGap: the
// rounds a comparison of 300-step blocks at a 2 ms gap needs for an MDE
// of 10% and 5% on the median (80% power, at the 99.2% first Holm level
// of a median row among three candidate arms), with the per-round spread
// of ln(b/a) measured by BenchmarkVADAlternate (docs/noise-levels.md):
// whole blocks ±20.8% (quiet) and ±18.5% (load 5), turns of 10 steps
// ±3.7% and ±4.6%; rounds' weather ±15%, which the pairing cancels.
// GAPBENCH_SLICE_SIM=1 prints the table; without it one row is checked.
//
//	GAPBENCH_SLICE_SIM=1 go test -run TestSlicedRoundsToTheTarget -v ./internal/levels
func TestSlicedRoundsToTheTarget(t *testing.T) {
	conf := 1 - 0.05*2/12
	cases := []struct {
		name   string
		spread float64 // σ of ln(b/a) a round
	}{{"whole blocks, quiet", 0.208}, {"whole blocks, load 5", 0.185}, {"turns, quiet", 0.037}, {"turns, load 5", 0.046}}
	trials := 400
	if os.Getenv("GAPBENCH_SLICE_SIM") == "" {
		cases, trials = []struct {
			name   string
			spread float64
		}{cases[0], cases[2]}, 100
	}
	need := map[string]int{}
	for _, c := range cases {
		tr := Truth{StepSigma: 0.3, BetweenSigma: c.spread / math.Sqrt2, RoundSigma: 0.15}
		p := Plan{Steps: 300, Blocks: 1}
		for _, target := range []float64{0.10, 0.05} {
			r, _ := tr.SimulatedRounds(p, target, conf, 8, 400, trials, 1)
			p.Rounds = 40
			t.Logf("%s (±%.1f%%): MDE %.0f%% at %d rounds; MDE at 40 rounds %.1f%%", c.name, 100*c.spread, 100*target, r, 100*tr.SimulatedMDE(p, conf, trials, 1))
			p.Rounds = 0
			need[fmt.Sprintf("%s %.2f", c.name, target)] = r
		}
	}
	assert.Greater(t, need["whole blocks, quiet 0.10"], 40, "whole blocks: 10% out of reach within 40 rounds")
	assert.LessOrEqual(t, need["turns, quiet 0.10"], 10, "turns: 10% within 10 rounds")
}
