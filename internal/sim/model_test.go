package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerateIsDeterministicAndEffectOnlyScalesB(t *testing.T) {
	for _, m := range Models() {
		t.Run(m.Name, func(t *testing.T) {
			t0 := m.Generate(7, 3, 20, 0)
			again := m.Generate(7, 3, 20, 0)
			assert.Equal(t, t0, again, "same seed, same trial")
			other := m.Generate(7, 4, 20, 0)
			assert.NotEqual(t, t0.A, other.A, "another trial index, other noise")
			t5 := m.Generate(7, 3, 20, 0.05)
			require.Equal(t, 20, t5.Rounds())
			for i := range t0.A {
				assert.Equal(t, t0.A[i], t5.A[i], "round %d: A does not depend on the effect", i)
				assert.Equal(t, t0.Null[i], t5.Null[i], "round %d: A' does not depend on the effect", i)
				assert.InDelta(t, 1.05, t5.B[i]/t0.B[i], 1e-12, "round %d: B carries the effect exactly", i)
				assert.Greater(t, t0.A[i], 0.0)
			}
		})
	}
}

// logSD returns the standard deviation of ln(x) over A's blocks of many
// trials of m, and the share of blocks above ratio×median.
func logSD(m Model, trials, rounds int) (sd float64) {
	var s, s2 float64
	n := 0
	for i := range trials {
		tr := m.Generate(1, i, rounds, 0)
		for _, x := range tr.A {
			l := math.Log(x)
			s += l
			s2 += l * l
			n++
		}
	}
	mean := s / float64(n)
	return math.Sqrt(s2/float64(n) - mean*mean)
}

func TestModelsHaveTheDocumentedNoise(t *testing.T) {
	p50, _ := ModelByName("lognormal-p50")
	assert.InDelta(t, 0.015, logSD(p50, 200, 20), 0.001, "lognormal-p50: σ 1.5%")
	wide, _ := ModelByName("lognormal-wide")
	assert.InDelta(t, 0.03, logSD(wide, 200, 20), 0.002, "lognormal-wide: σ 3%")
	weather, _ := ModelByName("weather")
	assert.InDelta(t, 0.10, logSD(weather, 200, 20), 0.01, "weather: the round factor dominates")

	out, _ := ModelByName("outliers")
	big, n := 0, 0
	for i := range 200 {
		for _, x := range out.Generate(1, i, 20, 0).A {
			n++
			if x > 1.6 {
				big++
			}
		}
	}
	assert.InDelta(t, 0.05, float64(big)/float64(n), 0.01, "outliers: 5% of blocks are 2–5×")

	burst, _ := ModelByName("burst")
	marked, late := 0, 0
	var sumEarly, sumLate float64
	for k := range 100 {
		tr := burst.Generate(1, k, 20, 0)
		require.Len(t, tr.Contended, 20)
		for i := range 20 {
			if i < 10 {
				assert.False(t, tr.Contended[i], "trial %d round %d: no burst in the first half", k, i)
				sumEarly += tr.A[i]
				continue
			}
			late++
			sumLate += tr.A[i]
			if tr.Contended[i] {
				marked++
			}
		}
	}
	assert.InDelta(t, 1.25, sumLate/sumEarly, 0.02, "the burst slows the second half by 10–40%, 25% on average")
	assert.InDelta(t, 0.6, float64(marked)/float64(late), 0.05, "the screen marks 60% of the burst rounds")

	drift, _ := ModelByName("drift")
	var first, last float64
	for i := range 200 {
		tr := drift.Generate(1, i, 10, 0)
		first += tr.A[0]
		last += tr.A[9]
	}
	assert.InDelta(t, 1.135, last/first, 0.01, "drift: +15% over the run (round 9 of 10 against round 0)")

	bi, _ := ModelByName("bimodal")
	tr := bi.Generate(1, 0, 40, 0)
	lo, hi := 0, 0
	for _, x := range tr.A {
		if x < 1.04 {
			lo++
		} else {
			hi++
		}
	}
	assert.Greater(t, lo, 5, "bimodal: both levels occur")
	assert.Greater(t, hi, 5)
}

func TestMarginIsTheBinomialHalfWidth(t *testing.T) {
	assert.InDelta(t, 0.0247, Margin(0.05, 300), 1e-4)
	assert.InDelta(t, 0.0098, Margin(0.5, 10000), 1e-4)
	assert.True(t, math.IsInf(Margin(0.5, 0), 1))
}
