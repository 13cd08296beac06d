package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An arm's three metrics, all unchanged: judged alone, some metric is
// called different in more than 5% of trials; as a Holm family, in at most
// 5% (within the binomial margin). Holm costs the real effect little power
// and equivalence nothing.
func TestFamilyHoldsTheAnyMetricRate(t *testing.T) {
	trials := 1000
	if testing.Short() || raceOn {
		trials = 300
	}
	for _, n := range []int{10, 20} {
		aa := Family(1, trials, n, 0)
		assert.Equal(t, trials, aa.Trials)
		rate := func(k int) float64 { return float64(k) / float64(trials) }
		alone := rate(aa.AnyAlone)
		t.Logf("%d rounds: any false call alone %.1f%%, Holm %.1f%%, weighted %.1f%%; p50 equivalent alone %d, Holm %d, weighted %d",
			n, 100*alone, 100*rate(aa.AnyHolm), 100*rate(aa.AnyWeighted), aa.EqAlone[1], aa.EqHolm[1], aa.EqWeighted[1])
		for _, x := range []struct {
			name string
			any  int
			eq   int
		}{{"Holm", aa.AnyHolm, aa.EqHolm[1]}, {"weighted", aa.AnyWeighted, aa.EqWeighted[1]}} {
			assert.LessOrEqual(t, rate(x.any), 0.05+MarginZ(0.05, trials, 1.96), "%s, %d rounds", x.name, n)
			assert.Greater(t, alone, rate(x.any), "%s, %d rounds: judged alone, three metrics raise more false calls", x.name, n)
			assert.GreaterOrEqual(t, x.eq, aa.EqAlone[1], "%s, %d rounds: equivalence at the nominal level", x.name, n)
		}

		five := Family(1, trials, n, 0.05)
		assert.GreaterOrEqual(t, five.SlowerWeighted[1], trials*9/10, "%d rounds: 5%% on p50 found under weighted Holm", n)
		assert.LessOrEqual(t, five.SlowerWeighted[1], five.SlowerAlone[1]+trials/100, "%d rounds", n)
		two := Family(1, trials, n, 0.02)
		assert.GreaterOrEqual(t, two.SlowerWeighted[1], two.SlowerHolm[1], "%d rounds: weighting p50 keeps it more power", n)
	}
}
