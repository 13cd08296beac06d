// Package edivisive finds change points in one series with E-Divisive
// means (Matteson & James, "A Nonparametric Approach for Multiple Change
// Point Analysis of Multivariate Data", JASA 2014) and its permutation
// test, as MongoDB's signal-processing-algorithms (Daly et al., ICPE 2020)
// and Hunter / Apache Otava (Fleming et al., ICPE 2023) use it for
// performance histories.
//
// # Method
//
// For a segment [a, b) and a split τ, with X = x[a:τ] (m points) and
// Y = x[τ:b] (n points), the divergence is
//
//	Ê = 2/(mn) Σ|Xi−Yj| − 1/C(m,2) Σ_{i<j}|Xi−Xj| − 1/C(n,2) Σ_{i<j}|Yi−Yj|
//
// (the energy distance with exponent α = 1) and the statistic is
// Q̂ = mn/(m+n) · Ê. The search is hierarchical: the best split of every
// segment bounded by the change points found so far is computed, the one
// with the largest Q̂ is the candidate, and the permutation test decides
// it: each segment is shuffled Permutations times and the largest Q̂ over
// all shuffled segments is recorded; the p-value is
// (1 + #{shuffled Q̂ ≥ Q̂}) / (Permutations + 1). A candidate with
// p ≤ PValue is a change point and the search goes on; the first that is
// not ends it.
//
// # Settings
//
// The defaults are MongoDB's published ones (signal_processing_algorithms
// default_implementation: pvalue 0.05, 100 permutations, a fixed seed).
// MongoDB's calculator weighs the within-sample sums by the other side's
// length (a quirk kept for compatibility there); this package uses the
// paper's weights. Hunter/Otava additionally split long series into
// windows of 50 points and replaced the permutation test by a Student t
// test at p ≤ 0.001; this package keeps the permutation test over the
// whole series (a history of a few hundred commits takes milliseconds).
package edivisive

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
)

// Options are the method's settings; the zero value means the defaults.
type Options struct {
	// PValue is the largest permutation p-value of a change point; 0
	// means 0.05.
	PValue float64
	// Permutations is the number of shuffles of the permutation test; 0
	// means 100.
	Permutations int
	// MinSize is the fewest points on either side of a split; 0 means 2
	// (the fewest for which the within-sample term is defined).
	MinSize int
	// Seed seeds the shuffles; the same series, options and seed give the
	// same change points.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.PValue == 0 {
		o.PValue = 0.05
	}
	if o.Permutations == 0 {
		o.Permutations = 100
	}
	if o.MinSize < 2 {
		o.MinSize = 2
	}
	return o
}

// ChangePoint is a split found significant.
type ChangePoint struct {
	// Index is the first point after the change: x[Index-1] is before it,
	// x[Index] after it.
	Index int
	// Q is the statistic Q̂ of the split within its segment.
	Q float64
	// P is the permutation p-value at the step it was accepted.
	P float64
	// Order is the step (0, 1, …) at which the search accepted it.
	Order int
}

// Detect returns the change points of x in index order. It returns an
// error for a NaN or infinite value; a series shorter than 2·MinSize has
// none.
func Detect(x []float64, opt Options) ([]ChangePoint, error) {
	return DetectContext(context.Background(), x, opt)
}

// DetectContext is Detect stopped by ctx: it returns ctx's error, and no
// change points, within one shuffle of ctx being done.
func DetectContext(ctx context.Context, x []float64, opt Options) ([]ChangePoint, error) {
	opt = opt.withDefaults()
	if !(opt.PValue > 0 && opt.PValue < 1) || opt.Permutations < 1 {
		return nil, errors.New("edivisive: Options.PValue must be in (0, 1) and Permutations ≥ 1")
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("edivisive: the series holds a NaN or an infinite value")
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	var found []ChangePoint
	bounds := []int{0, len(x)}
	memo := map[[2]int]split{}
	buf := make([]float64, len(x))
	for step := 0; ; step++ {
		best := split{tau: -1}
		for i := 0; i+1 < len(bounds); i++ {
			key := [2]int{bounds[i], bounds[i+1]}
			s, ok := memo[key]
			if !ok {
				s = bestSplit(x[key[0]:key[1]], opt.MinSize)
				if s.tau >= 0 {
					s.tau += key[0]
				}
				memo[key] = s
			}
			if s.tau >= 0 && (best.tau < 0 || s.q > best.q) {
				best = s
			}
		}
		if best.tau < 0 {
			break
		}
		higher := 0
		for r := 0; r < opt.Permutations; r++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			maxQ := math.Inf(-1)
			for i := 0; i+1 < len(bounds); i++ {
				seg := buf[:bounds[i+1]-bounds[i]]
				copy(seg, x[bounds[i]:bounds[i+1]])
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
				if s := bestSplit(seg, opt.MinSize); s.tau >= 0 && s.q > maxQ {
					maxQ = s.q
				}
			}
			if maxQ >= best.q {
				higher++
			}
		}
		p := float64(1+higher) / float64(opt.Permutations+1)
		if p > opt.PValue {
			break
		}
		found = append(found, ChangePoint{Index: best.tau, Q: best.q, P: p, Order: step})
		bounds = append(bounds, best.tau)
		slices.Sort(bounds)
	}
	slices.SortFunc(found, func(a, b ChangePoint) int { return a.Index - b.Index })
	return found, nil
}

// split is a segment's best split: tau (−1 when the segment is too short)
// and its Q̂.
type split struct {
	tau int
	q   float64
}

// bestSplit returns the τ in [minSize, len(x)−minSize] that maximises Q̂,
// in O(len(x)²).
func bestSplit(x []float64, minSize int) split {
	n := len(x)
	if n < 2*minSize {
		return split{tau: -1}
	}
	// within[i][j] sums are kept as running totals: cross is Σ|Xi−Yj|,
	// wx Σ_{i<j<τ}|Xi−Xj|, wy Σ_{τ≤i<j}|Yi−Yj|.
	var cross, wx, wy float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			wy += math.Abs(x[i] - x[j])
		}
	}
	best := split{tau: -1, q: math.Inf(-1)}
	for tau := 1; tau <= n-minSize; tau++ {
		// Move x[tau-1] from Y to X.
		v := x[tau-1]
		var toX, toY float64
		for i := 0; i < tau-1; i++ {
			toX += math.Abs(v - x[i])
		}
		for j := tau; j < n; j++ {
			toY += math.Abs(v - x[j])
		}
		// v's distances to the old X were cross terms; to the rest of Y
		// were within-Y terms.
		cross += toY - toX
		wx += toX
		wy -= toY
		if tau < minSize {
			continue
		}
		m, k := float64(tau), float64(n-tau)
		e := 2*cross/(m*k) - wx/(m*(m-1)/2) - wy/(k*(k-1)/2)
		if q := m * k / (m + k) * e; q > best.q {
			best = split{tau: tau, q: q}
		}
	}
	return best
}
