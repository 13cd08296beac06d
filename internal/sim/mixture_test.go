package sim

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// mixtureTrials is the trials per cell of TestMixture:
// GAPBENCH_MIXTURE_SIM_TRIALS, or a few for CI.
func mixtureTrials() int {
	if n, err := strconv.Atoi(os.Getenv("GAPBENCH_MIXTURE_SIM_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 40
}

// A candidate slow in a share of its rounds, whose slow rounds the screen
// marks (the adversary of issue 33): the quarantine cannot hand the
// median row an "equivalent" by setting the slow rounds aside, and the
// family finds the regression.
func TestMixtureIsNotCertified(t *testing.T) {
	trials := mixtureTrials()
	for _, c := range []MixtureCell{{Effect: 0.10, Share: 0.35, Marked: true}, {Effect: 0.20, Share: 0.50, Marked: true}} {
		m := Mixture(1, trials, 30, c)
		t.Logf("e %g p %g: p50 eq %d, arm eq %d, any slower %d, faster %d of %d; quarantined %d of %d rounds",
			c.Effect, c.Share, m.P50Equivalent, m.ArmEquivalent, m.AnySlower, m.Faster, m.Trials, m.Quarantined, m.Rounds)
		assert.LessOrEqual(t, float64(m.P50Equivalent), 0.05*float64(trials)+MarginZ(0.05, trials, 1.96)*float64(trials)+1, "%+v", c)
		assert.GreaterOrEqual(t, float64(m.AnySlower), 0.7*float64(trials), "%+v", c)
		assert.Zero(t, m.Quarantined, "%+v: no round is set aside with a null arm", c)
		assert.LessOrEqual(t, m.Faster, 1, "%+v", c)
	}
}
