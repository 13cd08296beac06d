package tail

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// directCDF sums the pmf term by term: the reference for binomCDF.
func directCDF(k, n int, p float64) float64 {
	sum := 0.0
	for i := 0; i <= k; i++ {
		c := 1.0
		for j := 0; j < i; j++ {
			c *= float64(n-j) / float64(j+1)
		}
		sum += c * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
	}
	return sum
}

func TestBinomCDFMatchesDirectSum(t *testing.T) {
	for _, n := range []int{1, 2, 7, 30, 100} {
		for _, p := range []float64{0.01, 0.5, 0.9, 0.99} {
			for k := -1; k <= n; k++ {
				want := 1.0
				if k < 0 {
					want = 0
				} else if k < n {
					want = directCDF(k, n, p)
				}
				assert.InDelta(t, want, binomCDF(k, n, p), 1e-12, "n=%d p=%v k=%d", n, p, k)
			}
		}
	}
	// Large n stays a probability and monotone.
	prev := 0.0
	for k := 9800; k <= 10000; k += 10 {
		c := binomCDF(k, 10000, 0.99)
		require.GreaterOrEqual(t, c, prev)
		require.LessOrEqual(t, c, 1.0)
		prev = c
	}
}

func TestMedianIntervalOf100IsTheTextbookRanks(t *testing.T) {
	lo, hi, ok := Interval(100, 0.5, 0.95)
	require.True(t, ok)
	assert.Equal(t, 40, lo)
	assert.Equal(t, 61, hi)
}

func TestNeedUpperForP99(t *testing.T) {
	assert.Equal(t, 299, NeedUpper(0.99, 0.95))
	r, ok := Upper(299, 0.99, 0.95)
	assert.True(t, ok)
	assert.Equal(t, 299, r, "at the minimum n only the maximum bounds p99")
	_, ok = Upper(298, 0.99, 0.95)
	assert.False(t, ok)
	assert.Equal(t, 299, NeedLower(0.01, 0.95))
	_, _, ok = Interval(NeedInterval(0.9, 0.95)-1, 0.9, 0.95)
	assert.False(t, ok)
	_, _, ok = Interval(NeedInterval(0.9, 0.95), 0.9, 0.95)
	assert.True(t, ok)
}

// The bounds cover the true quantile at least at the stated rate, within the
// binomial margin for the trial count, for distributions of different shape.
func TestCoverage(t *testing.T) {
	const trials = 2000
	dists := map[string]struct {
		draw func(*rand.Rand) float64
		// quantile is the distribution's true q-quantile.
		quantile func(q float64) float64
	}{
		"exponential": {func(r *rand.Rand) float64 { return r.ExpFloat64() }, func(q float64) float64 { return -math.Log1p(-q) }},
		"uniform":     {func(r *rand.Rand) float64 { return r.Float64() }, func(q float64) float64 { return q }},
		"pareto":      {func(r *rand.Rand) float64 { return math.Pow(1-r.Float64(), -1/1.5) }, func(q float64) float64 { return math.Pow(1-q, -1/1.5) }},
	}
	for name, d := range dists {
		for _, c := range []struct {
			n int
			q float64
		}{{500, 0.9}, {1000, 0.99}, {60, 0.5}} {
			rng := rand.New(rand.NewPCG(uint64(c.n), 7))
			truth := d.quantile(c.q)
			covered, upper := 0, 0
			xs := make([]float64, c.n)
			for range trials {
				for i := range xs {
					xs[i] = d.draw(rng)
				}
				sort.Float64s(xs)
				e := QuantileSorted(xs, c.q, 0.95)
				require.True(t, e.Known, "%s n=%d q=%v", name, c.n, c.q)
				if e.Lo <= truth && truth <= e.Hi {
					covered++
				}
				if j := (Objective{Q: c.q, Limit: truth, Confidence: 0.95}).Judge(xs); j.Upper >= truth {
					upper++
				}
			}
			margin := 3 * math.Sqrt(0.95*0.05/trials)
			assert.GreaterOrEqual(t, float64(covered)/trials, 0.95-margin, "%s n=%d q=%v two-sided", name, c.n, c.q)
			assert.GreaterOrEqual(t, float64(upper)/trials, 0.95-margin, "%s n=%d q=%v upper", name, c.n, c.q)
		}
	}
}

func TestObjectiveJudge(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1) // p99 ≈ 990
	}
	o := Objective{Q: 0.99, Confidence: 0.95}
	o.Limit = 1000
	j := o.Judge(xs)
	assert.Equal(t, Pass, j.Verdict)
	assert.LessOrEqual(t, j.Upper, 1000.0)
	o.Limit = 950
	assert.Equal(t, Fail, o.Judge(xs).Verdict)
	o.Limit = 990
	assert.Equal(t, Undecided, o.Judge(xs).Verdict, "the point estimate is at the limit: the bound straddles it")
	// Too few steps: never a pass from a point estimate.
	j = o.Judge(xs[:100])
	assert.Equal(t, Undecided, j.Verdict)
	assert.True(t, math.IsNaN(j.Upper))
	assert.Equal(t, 299, j.NeedPass)
	assert.Equal(t, "undecided", Undecided.String())
}

func TestQuantileEdgeCases(t *testing.T) {
	e := Quantile(nil, 0.9, 0.95)
	assert.False(t, e.Known)
	assert.True(t, math.IsNaN(e.Value))
	e = Quantile([]float64{3, 1, 2}, 0.5, 0.95)
	assert.Equal(t, 2.0, e.Value)
	assert.False(t, e.Known, "3 draws give no 95%% interval for the median")
	_, ok := Upper(10, 0, 0.95)
	assert.False(t, ok)
	_, ok = Upper(10, 0.5, 1)
	assert.False(t, ok)
}
