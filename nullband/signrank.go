package nullband

import (
	"math"
	"sort"
	"sync"
)

// exactMax is the largest number of values for which the signed-rank null
// distribution is computed exactly; above it the normal approximation is
// used (its error in a tail probability is then far below 1e-3).
const exactMax = 100

// cdfCache holds signedRankCDF results by n.
var cdfCache sync.Map

// signedRankCDF returns cdf with cdf[t] = P(W⁺ ≤ t), t = 0…n(n+1)/2, the
// exact null distribution of the Wilcoxon signed-rank statistic W⁺ (sum of
// the ranks of the positive values) for n untied non-zero values symmetric
// about 0. The result is shared: do not modify it.
func signedRankCDF(n int) []float64 {
	if v, ok := cdfCache.Load(n); ok {
		return v.([]float64)
	}
	top := n * (n + 1) / 2
	p := make([]float64, top+1)
	p[0] = 1
	sum := 0
	for i := 1; i <= n; i++ {
		sum += i
		// Rank i is positive or not with probability ½ each; descending t
		// keeps p[t-i] from this step's start (a 0/1 knapsack).
		for t := sum; t >= 0; t-- {
			add := 0.0
			if t >= i {
				add = p[t-i]
			}
			p[t] = (p[t] + add) / 2
		}
	}
	for t := 1; t <= top; t++ {
		p[t] += p[t-1]
	}
	v, _ := cdfCache.LoadOrStore(n, p)
	return v.([]float64)
}

// critK returns the largest k ≥ 0 with P(W⁺ ≤ k−1) ≤ a under the null, for n
// values: the order statistic of the Walsh averages that bounds a one-sided
// (1−a) interval, so [W₍k₎, W₍N+1−k₎] is a two-sided (1−2a) interval
// (Hollander & Wolfe, ch. 3). k = 0 means no finite bound at this level. k
// never exceeds (N+1)/2, N = n(n+1)/2.
func critK(n int, a float64) int {
	if n < 1 || !(a > 0) {
		return 0
	}
	top := n * (n + 1) / 2
	limit := (top + 1) / 2
	var k int
	if n <= exactMax {
		cdf := signedRankCDF(n)
		for k < limit && cdf[k] <= a*(1+1e-9) {
			k++
		}
	} else {
		sd := math.Sqrt(float64(n) * float64(n+1) * float64(2*n+1) / 24)
		k = int(math.Floor(float64(top)/2 - normQuantile(1-a)*sd + 0.5))
		k = max(0, min(k, limit))
	}
	return k
}

// minRoundsFor returns the fewest values whose (1−2a) signed-rank interval
// is finite (6 for a = 0.025).
func minRoundsFor(a float64) int {
	for n := 1; n <= 1000; n++ {
		if critK(n, a) >= 1 {
			return n
		}
	}
	return math.MaxInt
}

// walsh returns the n(n+1)/2 Walsh averages (xᵢ+xⱼ)/2, i ≤ j, sorted.
func walsh(x []float64) []float64 {
	w := make([]float64, 0, len(x)*(len(x)+1)/2)
	for i, a := range x {
		for _, b := range x[i:] {
			w = append(w, (a+b)/2)
		}
	}
	sort.Float64s(w)
	return w
}

// hl returns the Hodges–Lehmann estimate, the median of sorted Walsh
// averages w; NaN when w is empty.
func hl(w []float64) float64 {
	if len(w) == 0 {
		return math.NaN()
	}
	return median(w)
}

// bounds returns [W₍k₎, W₍N+1−k₎] of sorted Walsh averages w, or (−Inf,
// +Inf) for k < 1.
func bounds(w []float64, k int) (lo, hi float64) {
	if k < 1 || k > len(w) {
		return math.Inf(-1), math.Inf(1)
	}
	return w[k-1], w[len(w)-k]
}

// midranks returns the ranks (1-based, ties averaged) of |x|, and the tie
// correction Σ(t³−t) over groups of tied magnitudes.
func midranks(x []float64) (ranks []float64, tieSum float64) {
	n := len(x)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) < math.Abs(x[idx[b]]) })
	ranks = make([]float64, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && math.Abs(x[idx[j]]) == math.Abs(x[idx[i]]) {
			j++
		}
		r := float64(i+j+1) / 2 // mean of ranks i+1 … j
		for _, k := range idx[i:j] {
			ranks[k] = r
		}
		if t := float64(j - i); t > 1 {
			tieSum += t*t*t - t
		}
		i = j
	}
	return ranks, tieSum
}

// signedRankP returns the two-sided p-value of the Wilcoxon signed-rank test
// of x against a centre of 0. Zeros are dropped (Wilcoxon's convention).
// Exact when the rest are untied and at most exactMax; otherwise the normal
// approximation with tie correction and continuity correction. 1 for no
// non-zero values.
func signedRankP(x []float64) float64 {
	nz := make([]float64, 0, len(x))
	for _, v := range x {
		if v != 0 && !math.IsNaN(v) {
			nz = append(nz, v)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	ranks, tieSum := midranks(nz)
	wp := 0.0
	for i, v := range nz {
		if v > 0 {
			wp += ranks[i]
		}
	}
	top := float64(n*(n+1)) / 2
	if tieSum == 0 && n <= exactMax {
		cdf := signedRankCDF(n)
		w := int(math.Round(wp))
		lower := cdf[w]
		upper := 1.0
		if w > 0 {
			upper = 1 - cdf[w-1]
		}
		return math.Min(1, 2*math.Min(lower, upper))
	}
	sd := math.Sqrt((float64(n)*float64(n+1)*float64(2*n+1) - tieSum/2) / 24)
	if sd == 0 {
		return 1
	}
	dev := math.Max(0, math.Abs(wp-top/2)-0.5)
	return math.Min(1, 2*normSF(dev/sd))
}

// normQuantile is the standard normal quantile function Φ⁻¹(p).
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// normSF is the standard normal upper tail 1 − Φ(x).
func normSF(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) }

// median of sorted s; NaN when empty.
func median(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
