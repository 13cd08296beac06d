package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seqTrials is the trial count of the sequential tests: a sequential verdict
// replays every look and costs 20–100 fixed ones (far more under the race
// detector), so these tests judge fewer trials, with the margins that go
// with them.
func seqTrials() int {
	if raceOn {
		return 30
	}
	return 200
}

func TestVerdictSequentialFalsePositiveRate(t *testing.T) {
	models := Models()
	n := seqTrials()
	z := familyZ(len(models))
	bound := 0.05 + marginZ(0.05, n, z)
	for _, m := range models {
		c := Sequential(Case{Model: m, Effect: 0, Rounds: 20, Trials: n, Seed: seed}, Verdict())
		assert.LessOrEqual(t, c.Decisive(), bound, "%s, sequential up to 20 rounds, A/A: faster or slower in %.1f%% of %d (calls %v)", m.Name, 100*c.Decisive(), n, c.Calls)
		assert.GreaterOrEqual(t, c.MeanRounds(), 4.0, "%s: no look before 4 rounds (3⁻⁴ ≤ 2.5%%)", m.Name)
		assert.LessOrEqual(t, c.MeanRounds(), 20.0, "%s: no round past Options.MaxRounds", m.Name)
	}
}

func TestVerdictSequentialStopsEarlyOnClearEffects(t *testing.T) {
	m, ok := ModelByName("lognormal-p50")
	require.True(t, ok)
	n := seqTrials()
	c := Sequential(Case{Model: m, Effect: 0.10, Rounds: 40, Trials: n, Seed: seed}, Verdict())
	assert.Equal(t, n, c.Calls[Slower], "a 10%% effect: always slower (calls %v)", c.Calls)
	assert.LessOrEqual(t, c.MeanRounds(), 10.0, "decided within 10 of 40 rounds")
}
