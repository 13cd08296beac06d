// Package quantile is gapbench's one percentile rule, used by every figure
// that names a percentile: decodegap's p50/p90/p99-ns/op, the trace
// pictures, and any quantile the verdicts take of the same data.
//
// The rule is Hyndman and Fan's type 8 ("Sample quantiles in statistical
// packages", The American Statistician 50(4), 1996): with the n values
// sorted, x[1] ≤ … ≤ x[n], the p-quantile is at the 1-based position
// h = (n + 1/3)·p + 1/3, interpolated linearly between x[⌊h⌋] and
// x[⌊h⌋+1], and clamped to x[1] below position 1 and to x[n] above n.
//
// Why type 8: it is the rule benchstat's own median uses
// (go-moremath's stats.Sample.Quantile, under x/perf/benchmath), so a median
// gapbench prints and a median benchstat prints of the same values agree;
// Hyndman and Fan recommend it because its estimates are approximately
// median-unbiased whatever the distribution; and unlike nearest rank
// (type 1) it moves continuously with p and with the data, so a p90 does not
// jump by a whole order statistic when one sample is added. Its values are
// in general not observed values: a p90 of integer nanoseconds may have a
// fraction.
package quantile

import (
	"math"
	"slices"
)

// Number is an element type the rule accepts.
type Number interface {
	~int | ~int32 | ~int64 | ~float32 | ~float64
}

// Sorted returns the p-quantile of s by the package's rule (Hyndman–Fan
// type 8). s must be sorted in increasing order and hold no NaN; it is not
// modified. p is a fraction (0.9 for the 90th percentile), clamped to
// [0, 1]. Sorted returns NaN for an empty s or a NaN p. It takes constant
// time.
func Sorted[T Number](s []T, p float64) float64 {
	n := len(s)
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	p = min(max(p, 0), 1)
	h := (float64(n)+1.0/3)*p + 1.0/3 // 1-based position
	if h <= 1 {
		return float64(s[0])
	}
	if h >= float64(n) {
		return float64(s[n-1])
	}
	k, f := math.Modf(h)
	lo, hi := float64(s[int(k)-1]), float64(s[int(k)])
	return lo + f*(hi-lo)
}

// Of returns the p-quantile of v by the package's rule; it sorts a copy, so
// v is left as it is. See Sorted for p and the empty case.
func Of[T Number](v []T, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return Sorted(s, p)
}
