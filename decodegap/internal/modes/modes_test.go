package modes

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sample draws n latencies (ns) from a mixture: each mode a normal of the
// given mean and a 3% spread, chosen with the given weights.
func sample(seed uint64, n int, means []float64, weights []float64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	xs := make([]int64, n)
	for i := range xs {
		u, k := rng.Float64(), 0
		for k < len(weights)-1 && u > weights[k] {
			u -= weights[k]
			k++
		}
		xs[i] = int64(means[k] * (1 + 0.03*rng.NormFloat64()))
	}
	slices.Sort(xs)
	return xs
}

func TestMValueTellsOneModeFromTwo(t *testing.T) {
	for seed := range uint64(20) {
		one := MValue(sample(seed, 2000, []float64{100e3}, []float64{1}))
		assert.Less(t, one, 2.8, "seed %d: one mode", seed)
		// The VAD's bimodal blocks: medians near 140 µs or near 215 µs.
		two := MValue(sample(seed, 2000, []float64{140e3, 215e3}, []float64{0.5, 0.5}))
		assert.GreaterOrEqual(t, two, Multimodal, "seed %d: two modes", seed)
		// The limit of the rule: a second mode of a fifth of the steps reads
		// 2 + 2×(0.2/0.8) = 2.5, under the threshold (the tail rows and
		// the mixture tests are for those).
		lopsided := MValue(sample(seed, 2000, []float64{140e3, 215e3}, []float64{0.8, 0.2}))
		assert.InDelta(t, 2.5, lopsided, 0.15, "seed %d: two modes, one of a fifth", seed)
		three := MValue(sample(seed, 3000, []float64{100e3, 150e3, 200e3}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}))
		assert.Greater(t, three, two-0.5, "seed %d: three modes read at least two's", seed)
	}
}

func TestMValueEdges(t *testing.T) {
	assert.True(t, math.IsNaN(MValue(make([]int64, MinValues-1))), "too few values")
	same := make([]int64, 100)
	for i := range same {
		same[i] = 5000
	}
	assert.Equal(t, 2.0, MValue(same), "one value: one mode")
	// A few far outliers (Tukey's fences) do not make a mode.
	xs := sample(3, 1000, []float64{100e3}, []float64{1})
	for i := range 5 {
		xs[len(xs)-1-i] = 5e6
	}
	slices.Sort(xs)
	assert.Less(t, MValue(xs), 2.8)
}
