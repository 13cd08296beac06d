package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Trial counts: CI runs this package under the race detector, where one
// fixed-rounds verdict of 20 rounds costs about 5 ms and a sequential one of
// up to 40 rounds 100–200 ms. Every bound below carries the binomial margin
// for its trial count; cmd/verdictsim runs the same cases with thousands of
// trials for docs/verdict-accuracy.md.
const (
	trials     = 300
	seed       = 1
	powerCells = 200 // per cell of the power comparison with the U-test
)

func familyZ(k int) float64 { return FamilyZ(k) }

func marginZ(p float64, n int, z float64) float64 { return MarginZ(p, n, z) }

func TestVerdictFalsePositiveRateUnderEveryModel(t *testing.T) {
	models := Models()
	rounds := []int{10, 20}
	z := familyZ(len(models) * len(rounds))
	bound := 0.05 + marginZ(0.05, trials, z)
	for _, m := range models {
		for _, r := range rounds {
			c := Fixed(Case{Model: m, Effect: 0, Rounds: r, Trials: trials, Seed: seed}, Verdict())
			assert.LessOrEqual(t, c.Decisive(), bound, "%s, %d rounds, A/A: faster or slower in %.1f%% of %d trials (calls %v); target 5%% + margin %.1f",
				m.Name, r, 100*c.Decisive(), trials, c.Calls, 100*(bound-0.05))
		}
	}
}

func TestVerdictPowerTargets(t *testing.T) {
	for _, tc := range []struct {
		model  string
		effect float64
		rounds int
		goal   float64
		why    string
	}{
		{"lognormal-p50", 0.05, 10, 0.95, "5% more work: slower on p50 in ≥ 95% within 10 rounds"},
		{"lognormal-p50", 0.02, 20, 0.80, "2% more work: slower on p50 in ≥ 80% within 20 rounds"},
		{"outliers", 0.05, 20, 0.80, "5% more work: slower on the mean (heavy tails) in ≥ 80% within 20 rounds"},
	} {
		m, ok := ModelByName(tc.model)
		require.True(t, ok)
		c := Fixed(Case{Model: m, Effect: tc.effect, Rounds: tc.rounds, Trials: trials, Seed: seed}, Verdict())
		got := c.Rate(Slower)
		assert.GreaterOrEqual(t, got, tc.goal-Margin(tc.goal, trials), "%s: %s: slower in %.1f%% of %d (calls %v)", tc.model, tc.why, 100*got, trials, c.Calls)
		assert.Zero(t, c.Calls[Faster], "%s: never the wrong direction", tc.why)
	}
}

func equivalenceBound(sigma float64, n int) float64 { return EquivalenceBound(sigma, n, 0.02, 0.05) }

func TestVerdictEquivalenceOnHostLikeModels(t *testing.T) {
	// Which models can reach the target at all: a perfect test on 20
	// rounds of B, A and A' (its contrast ln B − ½(ln A + ln A') has σ
	// √1.5 times the per-block σ) at per-block σ 1.5% says equivalent in
	// over 99%; at σ 3% only in 56%, short of 80% for any method. The
	// bound crosses 80% at a per-block σ of about 2.5%.
	assert.InDelta(t, 0.995, equivalenceBound(math.Sqrt(1.5)*0.015, 20), 0.01)
	assert.InDelta(t, 0.56, equivalenceBound(math.Sqrt(1.5)*0.03, 20), 0.01)
	assert.InDelta(t, 0.80, equivalenceBound(math.Sqrt(1.5)*0.0247, 20), 0.01)

	models := Models()
	z := familyZ(len(models))
	for _, m := range models {
		if !m.HostLike {
			continue
		}
		c := Case{Model: m, Effect: 0, Rounds: 20, Trials: trials, Seed: seed}
		got := Fixed(c, Verdict()).Rate(Equivalent)
		switch m.Name {
		case "lognormal-p50", "weather", "drift":
			// Per-block σ ≤ 1.5% once the shared weather or the
			// drift cancels in the pair: the target applies.
			assert.GreaterOrEqual(t, got, 0.80-marginZ(0.80, trials, z), "%s: A/A equivalent (±2%%) within 20 rounds in %.1f%% of %d; target 80%%", m.Name, 100*got, trials)
		default:
			// Per-block σ 3% (lognormal-wide, outliers) or a burst
			// of 5% noise over half the rounds: 80% is out of reach
			// for any test (equivalenceBound), so the verdict must
			// do at least as well as the paired t-TOST, the best test
			// under normal noise, on the same trials.
			ref := Fixed(c, PairedT()).Rate(Equivalent)
			assert.GreaterOrEqual(t, got, ref-marginZ(math.Max(ref, 0.05), trials, z), "%s: verdict equivalent in %.1f%%, paired t-TOST in %.1f%%", m.Name, 100*got, 100*ref)
		}
	}
}

// TestVerdictPowerAtLeastTheUTest compares the verdict with benchstat's
// U-test on the same trials, for every model and effect ≥ 2%, at 10 and 20
// rounds. The two judge the same data, so the test is on the discordant
// trials (McNemar): the U-test right where the verdict is not (u) against the
// reverse (v); the verdict falls short when u − v > z·√(u + v). At 200 trials
// a cell this test sees shortfalls of about 5 points and more; the 2000-trial
// cells of docs/verdict-accuracy.md also show the smaller ones (about 1 point
// at large effects, where the null arm's own significance vetoes ~1% of
// trials, and 1.5–3.5 points on lognormal-p50 at 2%).
func TestVerdictPowerAtLeastTheUTest(t *testing.T) {
	models := Models()
	effects := []float64{0.02, 0.05, 0.10}
	rounds := []int{10, 20}
	z := familyZ(len(models) * len(effects) * len(rounds))
	for _, m := range models {
		for _, e := range effects {
			for _, r := range rounds {
				name := fmt.Sprintf("%s/%g%%/%d", m.Name, 100*e, r)
				c := Case{Model: m, Effect: e, Rounds: r, Trials: powerCells, Seed: seed}
				u, v := discordant(c, UTest(), Verdict())
				if m.Name == "bimodal" {
					// TARGET NOT MET (issue 9; docs/verdict-accuracy.md
					// has the figures): with per-process levels 5–15%
					// apart the U-test's unpaired ranks beat tests of
					// per-round ratios at 2% and 5% (the paired t-test
					// falls short too). What is asserted here is a
					// guard against getting worse, not the target: the
					// verdict makes at least half the U-test's right
					// calls, and no more wrong-direction calls.
					cu, cv := Fixed(c, UTest()), Fixed(c, Verdict())
					assert.GreaterOrEqual(t, cv.Rate(Slower), 0.5*cu.Rate(Slower), "%s: verdict slower in %v, U-test %v", name, cv.Calls, cu.Calls)
					assert.LessOrEqual(t, cv.Calls[Faster], cu.Calls[Faster]+2, "%s: wrong direction", name)
					continue
				}
				if m.Name == "outliers" {
					// TARGET NOT MET since issue 33: with the null arm
					// no round is set aside for its values (an extreme
					// spread also marks a candidate's slow regime), so
					// a block 2–5× slow stays and moves its round's
					// aligned ranks; the U-test's unpaired ranks lose
					// less to it (docs/verdict-accuracy.md has the
					// figures). Asserted: a guard against getting
					// worse, at least 3/4 of the U-test's right calls
					// and no more wrong-direction calls.
					cu, cv := Fixed(c, UTest()), Fixed(c, Verdict())
					assert.GreaterOrEqual(t, cv.Rate(Slower), 0.75*cu.Rate(Slower), "%s: verdict slower in %v, U-test %v", name, cv.Calls, cu.Calls)
					assert.LessOrEqual(t, cv.Calls[Faster], cu.Calls[Faster]+2, "%s: wrong direction", name)
					continue
				}
				assert.LessOrEqual(t, float64(u-v), z*math.Sqrt(float64(u+v)), "%s: the U-test right and the verdict not in %d of %d trials, the reverse in %d", name, u, powerCells, v)
			}
		}
	}
}

// discordant judges c's trials by both methods and counts the trials where
// only a, and only b, made the right call.
func discordant(c Case, a, b Method) (onlyA, onlyB int) {
	want := Target(c.Effect)
	for i := range c.Trials {
		tr := c.Model.Generate(c.seed(), i, c.Rounds, c.Effect)
		ra, rb := a.Fixed(tr) == want, b.Fixed(tr) == want
		switch {
		case ra && !rb:
			onlyA++
		case rb && !ra:
			onlyB++
		}
	}
	return onlyA, onlyB
}

// TestVerdictEquivalenceAtTheMargin: with B/A exactly 1.02 or 1/1.02,
// "equivalent within ±2%" is wrong, and TOST allows it in at most 5% of
// trials. The burst model quarantines many rounds; screening them once, as
// measured, called equivalent in 7.5% of these trials (each one-sided test
// must screen with B moved to its margin).
func TestVerdictEquivalenceAtTheMargin(t *testing.T) {
	const n = 1500
	bound := 0.05 + marginZ(0.05, n, familyZ(len(MarginEffects)))
	m, ok := ModelByName("burst")
	require.True(t, ok)
	for _, e := range MarginEffects {
		c := Fixed(Case{Model: m, Effect: e, Rounds: 20, Trials: n, Seed: seed}, Verdict())
		assert.LessOrEqual(t, c.Rate(Equivalent), bound, "burst, B/A %.4f, 20 rounds: equivalent in %.1f%% of %d trials (calls %v); TOST's level 5%% + margin %.1f",
			1+e, 100*c.Rate(Equivalent), n, c.Calls, 100*(bound-0.05))
	}
}
