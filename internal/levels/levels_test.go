package levels

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vadTruth is the model of the Silero VAD at a 2 ms gap that
// docs/noise-levels.md simulates: steps spread about ±37% inside a block
// (p90/p50 ≈ 1.6), blocks about ±15% between sessions, rounds ±10%.
var vadTruth = IssueTruth

// vadCost is make bench's 2 ms gap: a step of about 170 µs after its gap,
// about 0.1 s a block to open the session and warm up, five arms.
var vadCost = IssueCost

func TestEstimateRecoversTheLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	blocks := vadTruth.CalibrationRun(r, 60, 3, 600)
	c, err := Estimate(blocks)
	require.NoError(t, err)
	want := vadTruth.Components(600)
	assert.Equal(t, 180, c.Blocks)
	assert.Equal(t, 60, c.NRounds)
	assert.InDelta(t, 600, c.Steps, 1e-9)
	assert.InEpsilon(t, want.Within, c.Within, 0.25, "within")
	assert.InEpsilon(t, want.Between, c.Between, 0.3, "between")
	assert.InEpsilon(t, want.Rounds, c.Rounds, 0.5, "rounds")
	w, b, rr := c.Shares()
	assert.InDelta(t, 1, w+b+rr, 1e-12)
	assert.Greater(t, b, w, "the VAD's noise is between blocks")
}

func TestEstimateZeroesANegativeComponent(t *testing.T) {
	// Every round identical: no weather, so Rounds must be 0, not below.
	var blocks []Block
	for r := range 4 {
		blocks = append(blocks, Block{r, 100, 150, 500}, Block{r, 110, 160, 500}, Block{r, 90, 130, 500})
	}
	c, err := Estimate(blocks)
	require.NoError(t, err)
	assert.Zero(t, c.Rounds)
	assert.Greater(t, c.Between, 0.0)
}

// A part read as 0 says from how much: from 4 rounds of three blocks (8
// degrees of freedom) Between is not estimable and no MDE is built on it;
// from 10 rounds (20) its 0 is an estimate.
func TestEstimateMarksAZeroFromTooFewRounds(t *testing.T) {
	same := func(rounds int) []Block {
		var blocks []Block
		for r := range rounds {
			// Every block alike but for its round: Between reads 0.
			w := 1 + 0.01*float64(r%3)
			blocks = append(blocks, Block{r, 100 * w, 150 * w, 500}, Block{r, 100 * w, 150 * w, 500}, Block{r, 100 * w, 150 * w, 500})
		}
		return blocks
	}
	c, err := Estimate(same(4))
	require.NoError(t, err)
	assert.Zero(t, c.Between)
	assert.Equal(t, 8, c.BetweenDF)
	assert.Equal(t, 3, c.RoundsDF)
	assert.Equal(t, ZeroFromFew, c.BetweenZero)
	assert.Equal(t, NotZero, c.RoundsZero)
	assert.False(t, c.Estimable())
	assert.Equal(t, 10, c.RoundsForBetween())
	assert.True(t, math.IsInf(c.MDE(Plan{600, 1, 20}, 0.975), 1), "no MDE from a part not estimable")
	_, ok := c.Optimize(vadCost, 0.05, Limits{})
	assert.False(t, ok)

	c, err = Estimate(same(10))
	require.NoError(t, err)
	assert.Equal(t, 20, c.BetweenDF)
	assert.Equal(t, ZeroEstimated, c.BetweenZero)
	assert.True(t, c.Estimable())
	assert.False(t, math.IsInf(c.MDE(Plan{600, 1, 20}, 0.975), 0))

	// Rounds alike: the weather reads 0 from 3 degrees of freedom, which
	// the MDE does not use (it cancels in a round's ratio).
	var blocks []Block
	for r := range 4 {
		blocks = append(blocks, Block{r, 100, 150, 500}, Block{r, 110, 160, 500}, Block{r, 90, 130, 500})
	}
	c, err = Estimate(blocks)
	require.NoError(t, err)
	assert.Equal(t, ZeroFromFew, c.RoundsZero)
	assert.Equal(t, NotZero, c.BetweenZero)
	assert.True(t, c.Estimable())
	assert.Equal(t, "zero from too few", ZeroFromFew.String())
}

// The evidence for MinZeroDF: with Between as large as Within, a
// calibration of 4 rounds of three blocks reads Between as 0 in more than
// one run in ten; one of MinZeroDF degrees of freedom (10 rounds) in at
// most 5%. Seeded: the counts are the same on every run.
func TestZeroFromFewRoundsIsCommon(t *testing.T) {
	const steps, trials = 600, 400
	within := math.Pi / 2 * 0.37 * 0.37 / steps
	truth := Truth{StepSigma: 0.37, BetweenSigma: math.Sqrt(within), RoundSigma: 0.05}
	rate := func(rounds int) float64 {
		r := rand.New(rand.NewPCG(7, uint64(rounds)))
		zeros := 0
		for range trials {
			c, err := Estimate(truth.CalibrationRun(r, rounds, 3, steps))
			require.NoError(t, err)
			if c.Between == 0 {
				zeros++
			}
		}
		return float64(zeros) / trials
	}
	few, enough := rate(4), rate(MinZeroDF/2)
	t.Logf("Between = Within read as 0: %.1f%% of 4-round calibrations, %.1f%% of %d-round ones", 100*few, 100*enough, MinZeroDF/2)
	assert.Greater(t, few, 0.10)
	assert.LessOrEqual(t, enough, 0.05)
}

func TestEstimateRefuses(t *testing.T) {
	_, err := Estimate([]Block{{0, 1, 2, 10}, {0, 1, 2, 10}, {1, 1, 2, 10}})
	assert.ErrorIs(t, err, ErrTooFew)
	_, err = Estimate([]Block{{0, 2, 1, 10}})
	assert.ErrorContains(t, err, "P50 ≤ P90")
}

func TestMDEMatchesTheClosedForm(t *testing.T) {
	// exp((t(0.9875,9)+t(0.8,9))·0.1/√10) − 1 with t quantiles 2.685 and 0.883.
	assert.InDelta(t, math.Expm1((2.6850+0.8834)*0.1/math.Sqrt(10)), MDEAt(0.1, 10, 0.975), 2e-4)
	assert.True(t, math.IsInf(MDEAt(0.1, 1, 0.975), 1))
}

// TestOptimizeShortensBlocksWhenTheNoiseIsBetweenThem pins the plan's
// logic: when blocks differ far more than their steps' sampling noise, the
// plan takes the shortest blocks allowed; when the steps are the noise, it
// takes long ones.
func TestOptimizeShortensBlocksWhenTheNoiseIsBetweenThem(t *testing.T) {
	l := Limits{}
	p, ok := vadTruth.Components(600).Optimize(vadCost, 0.10, l)
	require.True(t, ok)
	assert.Equal(t, 256, p.Steps, "%v", p)
	stepsNoise := Truth{StepSigma: 1.5, BetweenSigma: 0.005}
	q, ok := stepsNoise.Components(600).Optimize(vadCost, 0.05, l)
	require.True(t, ok)
	assert.Greater(t, q.Steps, 2*p.Steps, "%v", q)
	assert.LessOrEqual(t, stepsNoise.Components(600).MDE(q, 0.975), 0.05)
}

func TestOptimizeSaysWhenNoPlanReaches(t *testing.T) {
	p, ok := vadTruth.Components(600).Optimize(vadCost, 0.001, Limits{MaxRounds: 20})
	assert.False(t, ok)
	assert.Equal(t, 20, p.Rounds)
}

func TestForBudget(t *testing.T) {
	c := vadTruth.Components(600)
	p, ok := c.ForBudget(vadCost, 360, Limits{})
	require.True(t, ok)
	assert.LessOrEqual(t, vadCost.Seconds(p), 360.0)
	fixed := Plan{Steps: 600, Blocks: 1, Rounds: int(360 / vadCost.Seconds(Plan{600, 1, 1}))}
	assert.Less(t, c.MDE(p, 0.975), c.MDE(fixed, 0.975))
	_, ok = c.ForBudget(vadCost, 1, Limits{})
	assert.False(t, ok)
}

func TestPlanFileRoundTrip(t *testing.T) {
	p := Plan{Steps: 256, Blocks: 2, Rounds: 31}
	var buf bytes.Buffer
	require.NoError(t, p.WriteFile(&buf))
	q, err := ReadPlan(&buf)
	require.NoError(t, err)
	assert.Equal(t, p, q)
	for in, want := range map[string]string{
		"nope\n":                              "header",
		planHeader + "\nsteps 10\nblocks 1\n": "no rounds line",
		planHeader + "\nsteps 10\nblocks 1\nrounds 0\n":        "line 4: rounds",
		planHeader + "\nsteps 10\nblocks 1\nrounds 3\nfoo 1\n": "unknown key",
	} {
		_, err := ReadPlan(strings.NewReader(in))
		var pe *PlanError
		require.True(t, errors.As(err, &pe), in)
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, "600 steps × 1 block × 10 rounds", Plan{600, 1, 10}.String())
}

// TestCalibratedPlanSavesTime is the simulation of docs/noise-levels.md:
// calibrate a plan from a simulated A/A run (3 blocks a round, 20 rounds of
// 600 steps), then simulate comparisons under the true model and count the
// rounds each plan needs to reach the MDE target. The calibrated plan must
// take less time than today's fixed 600 steps × 1 block.
func TestCalibratedPlanSavesTime(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates thousands of comparisons")
	}
	for _, c := range []struct {
		name   string
		truth  Truth
		cost   Cost
		target float64
		ratio  float64 // the least saving accepted
	}{
		{"issue", IssueTruth, IssueCost, 0.10, 1.5},
		{"measured", MeasuredTruth, MeasuredCost, 0.15, 1.3},
	} {
		t.Run(c.name, func(t *testing.T) {
			sv, ok := SimulateSavings(c.truth, c.cost, c.target, 0.975, 600, 400, 7)
			require.True(t, ok)
			t.Logf("MDE %.0f%%: calibrated %v: %.0f s; fixed %v: %.0f s; ratio fixed/calibrated %.2f",
				100*c.target, sv.Calibrated, sv.CalibratedSeconds, sv.Fixed, sv.FixedSeconds, sv.FixedSeconds/sv.CalibratedSeconds)
			assert.Less(t, sv.CalibratedSeconds, sv.FixedSeconds)
			assert.Greater(t, sv.FixedSeconds/sv.CalibratedSeconds, c.ratio)
		})
	}
}
