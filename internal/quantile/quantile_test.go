package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/perf/benchmath"
)

// Worked by hand from h = (n+1/3)p + 1/3 on 1-based positions.
func TestSortedByHand(t *testing.T) {
	s := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, tc := range []struct {
		p, want float64
	}{
		{0, 10},
		{0.5, 55},             // h = 5.5
		{0.9, 96.3333333333},  // h = 9.6333…: 90 + 0.6333…×10
		{0.25, 29.1666666667}, // h = 2.9166…
		{0.99, 100},           // h = 10.56: above n
		{1, 100},
		{0.05, 10}, // h = 0.85: below 1
		{-1, 10},   // clamped
		{2, 100},   // clamped
	} {
		assert.InDelta(t, tc.want, Sorted(s, tc.p), 1e-8, "p=%v", tc.p)
	}
	assert.Equal(t, 7.0, Sorted([]int64{7}, 0.9))
	assert.True(t, math.IsNaN(Sorted([]int64{}, 0.5)))
	assert.True(t, math.IsNaN(Sorted([]float64{1, 2}, math.NaN())))
}

// Type 8 is benchstat's median: on any sample, the median this package
// gives equals the center benchmath.AssumeNothing reports.
func TestMedianIsBenchstats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Exp(rng.NormFloat64())
		}
		s := benchmath.NewSample(slices.Clone(v), &benchmath.DefaultThresholds)
		want := benchmath.AssumeNothing.Summary(s, 0.95).Center
		assert.InDelta(t, want, Of(v, 0.5), 1e-12*want, "n=%d", n)
	}
}

func TestOfLeavesItsInputAlone(t *testing.T) {
	v := []int64{5, 1, 4, 2, 3}
	assert.Equal(t, 3.0, Of(v, 0.5))
	assert.Equal(t, []int64{5, 1, 4, 2, 3}, v)
}

// The rule is monotone in p and stays within the data.
func TestSortedIsMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]int64, 257)
	for i := range v {
		v[i] = rng.Int64N(1000)
	}
	slices.Sort(v)
	prev := math.Inf(-1)
	for p := 0.0; p <= 1; p += 0.001 {
		q := Sorted(v, p)
		assert.GreaterOrEqual(t, q, prev)
		assert.GreaterOrEqual(t, q, float64(v[0]))
		assert.LessOrEqual(t, q, float64(v[len(v)-1]))
		prev = q
	}
}
