package nullband

import (
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exact distribution equals a count over all 2ⁿ sign patterns.
func TestSignedRankCDFMatchesEnumeration(t *testing.T) {
	for n := 1; n <= 12; n++ {
		top := n * (n + 1) / 2
		count := make([]float64, top+1)
		for mask := range uint(1) << n {
			w := 0
			for m := mask; m != 0; m &= m - 1 {
				w += bits.TrailingZeros(m) + 1
			}
			count[w]++
		}
		cdf := signedRankCDF(n)
		require.Len(t, cdf, top+1)
		acc := 0.0
		for w := range count {
			acc += count[w]
			assert.InDelta(t, acc/math.Pow(2, float64(n)), cdf[w], 1e-15, "n=%d w=%d", n, w)
		}
	}
}

// Critical values of the Wilcoxon signed-rank statistic, from the standard
// table (e.g. Hollander, Wolfe & Chicken, table A.4; reject when W ≤ T):
// critK returns T+1.
func TestCritKTable(t *testing.T) {
	twoSided05 := map[int]int{6: 0, 7: 2, 8: 3, 9: 5, 10: 8, 11: 10, 12: 13, 13: 17, 14: 21, 15: 25,
		16: 29, 17: 34, 18: 40, 19: 46, 20: 52, 25: 89, 30: 137}
	for n, T := range twoSided05 {
		assert.Equal(t, T+1, critK(n, 0.025), "n=%d, two-sided 5%%", n)
	}
	oneSided05 := map[int]int{5: 0, 6: 2, 7: 3, 8: 5, 9: 8, 10: 10, 15: 30, 20: 60}
	for n, T := range oneSided05 {
		assert.Equal(t, T+1, critK(n, 0.05), "n=%d, one-sided 5%%", n)
	}
	for n := 1; n <= 5; n++ {
		assert.Zero(t, critK(n, 0.025), "no 95%% interval from %d values", n)
	}
	assert.Equal(t, 6, minRoundsFor(0.025))
	assert.Equal(t, 5, minRoundsFor(0.05))
	// The normal approximation above exactMax joins the exact values.
	assert.InDelta(t, float64(critK(exactMax, 0.025)), float64(critK(exactMax+1, 0.025)), 60)
	assert.Greater(t, critK(exactMax+1, 0.025), critK(exactMax, 0.025))
	assert.Zero(t, critK(10, 0))
}

// Hollander, Wolfe & Chicken, Example 3.1 (Hamilton depression scale,
// before and after): V = 40, exact p = 20/512, Hodges–Lehmann 0.46.
func TestSignedRankKnownExample(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	assert.InDelta(t, 20.0/512, signedRankP(d), 1e-12)
	w := walsh(d)
	require.Len(t, w, 45)
	assert.InDelta(t, 0.46, hl(w), 1e-12)
	lo, hi := bounds(w, critK(len(d), 0.025))
	assert.InDelta(t, 0.010, lo, 1e-12)
	assert.InDelta(t, 0.786, hi, 1e-12)

	// All positive: the most extreme W⁺, p = 2/2ⁿ; symmetric in sign.
	pos := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	assert.InDelta(t, 2.0/1024, signedRankP(pos), 1e-15)
	neg := make([]float64, len(pos))
	for i := range pos {
		neg[i] = -pos[i]
	}
	assert.Equal(t, signedRankP(pos), signedRankP(neg))
	assert.Equal(t, 1.0, signedRankP([]float64{0, 0, 0}), "zeros are dropped")
	// Ties: the normal approximation with tie correction, still symmetric.
	tied := []float64{1, 1, 1, -1, 2, 2, 3, 3, 3, 4}
	flip := make([]float64, len(tied))
	for i := range tied {
		flip[i] = -tied[i]
	}
	assert.InDelta(t, signedRankP(tied), signedRankP(flip), 1e-15)
	assert.Less(t, signedRankP(tied), 0.05)
}

func TestMidranks(t *testing.T) {
	r, ties := midranks([]float64{-3, 1, 2, -2, 5})
	assert.Equal(t, []float64{4, 1, 2.5, 2.5, 5}, r)
	assert.Equal(t, 6.0, ties) // one pair: 2³−2
}

// The interval narrows like 1/√n: from 10 to 40 rounds of the same noise
// its width roughly halves, and never grows.
func TestIntervalNarrowsWithRounds(t *testing.T) {
	var prev float64 = math.Inf(1)
	widths := map[int]float64{}
	for _, n := range []int{10, 20, 40, 80} {
		sum := 0.0
		for seed := range uint64(30) {
			v, err := Judge(synth(seed, n, 0.10, 0.02, 1.0), Options{})
			require.NoError(t, err)
			sum += math.Log(v.Hi) - math.Log(v.Lo)
		}
		widths[n] = sum / 30
		assert.Less(t, widths[n], prev, "n=%d", n)
		prev = widths[n]
	}
	assert.InDelta(t, 0.5, widths[40]/widths[10], 0.12)
	assert.InDelta(t, 0.5, widths[80]/widths[20], 0.12)
}
