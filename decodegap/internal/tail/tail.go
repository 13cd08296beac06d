// Package tail gives distribution-free confidence bounds for a quantile of a
// sample, from its order statistics, and judges a latency objective from the
// bound rather than the point estimate.
//
// The method is the binomial one (Hahn & Meeker, Statistical Intervals,
// 2nd ed., §5.2; the rule MLPerf LoadGen's early stopping rests on): for n
// independent draws of a continuous variable with q-quantile ξ, the number of
// draws below ξ is Binomial(n, q), so the r-th smallest draw X₍ᵣ₎ satisfies
// P(X₍ᵣ₎ ≥ ξ) = P(Binomial(n, q) ≤ r−1). Nothing is assumed about the
// distribution's shape. Steps of one run are not independent (a stall spans
// several), so a bound is as good as the run's steps are close to
// independent; the caller reports them as such.
//
// Ranks are 1-based: rank 1 is the smallest value. Functions return numbers
// and a bool; the words are the caller's.
package tail

import (
	"math"
	"sort"

	"github.com/gapbench/gapbench/internal/quantile"
)

// binomCDF returns P(Binomial(n, p) ≤ k). It sums the shorter tail outward
// from k with the pmf's ratio recurrence, stopping once terms are negligible,
// so the cost is about √n terms whatever n is. k < 0 gives 0, k ≥ n gives 1.
func binomCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	logPMF := func(i int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(i + 1))
		c, _ := math.Lgamma(float64(n - i + 1))
		return a - b - c + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p)
	}
	odds := p / (1 - p)
	mode := int(float64(n+1) * p)
	if k < mode {
		// Lower tail: pmf(i−1) = pmf(i) · i / ((n−i+1) · odds).
		t := math.Exp(logPMF(k))
		sum := 0.0
		for i := k; i >= 0 && t > 0; i-- {
			sum += t
			if t < sum*1e-17 {
				break
			}
			t *= float64(i) / (float64(n-i+1) * odds)
		}
		return math.Min(sum, 1)
	}
	// Upper tail from k+1: pmf(i+1) = pmf(i) · (n−i)/(i+1) · odds.
	t := math.Exp(logPMF(k + 1))
	sum := 0.0
	for i := k + 1; i <= n && t > 0; i++ {
		sum += t
		if t < sum*1e-17 {
			break
		}
		t *= float64(n-i) / float64(i+1) * odds
	}
	return math.Max(0, 1-sum)
}

// Upper returns the smallest rank r such that X₍ᵣ₎ is an upper confidence
// bound for the q-quantile at level conf: P(ξ_q ≤ X₍ᵣ₎) ≥ conf. ok is false
// when n draws are too few for any bound (see NeedUpper). q and conf must lie
// in (0, 1).
func Upper(n int, q, conf float64) (rank int, ok bool) {
	if !valid(q, conf) || n < 1 {
		return 0, false
	}
	// Start near the normal approximation and walk: the CDF is monotone in r.
	r := int(math.Floor(float64(n)*q)) + 1
	r = max(1, min(r, n))
	for r > 1 && binomCDF(r-2, n, q) >= conf {
		r--
	}
	for r <= n && binomCDF(r-1, n, q) < conf {
		r++
	}
	if r > n {
		return 0, false
	}
	return r, true
}

// Lower returns the largest rank l such that X₍ₗ₎ is a lower confidence
// bound for the q-quantile at level conf: P(X₍ₗ₎ ≤ ξ_q) ≥ conf. ok is false
// when n draws are too few (see NeedLower).
func Lower(n int, q, conf float64) (rank int, ok bool) {
	if !valid(q, conf) || n < 1 {
		return 0, false
	}
	// P(X₍ₗ₎ ≤ ξ) = P(Binomial(n, q) ≥ l) = 1 − CDF(l−1).
	l := int(math.Ceil(float64(n) * q))
	l = max(1, min(l, n))
	for l < n && 1-binomCDF(l, n, q) >= conf {
		l++
	}
	for l >= 1 && 1-binomCDF(l-1, n, q) < conf {
		l--
	}
	if l < 1 {
		return 0, false
	}
	return l, true
}

// Interval returns ranks lo < hi with P(X₍lo₎ ≤ ξ_q ≤ X₍hi₎) ≥ conf, each
// side at level (1+conf)/2 (equal tails). ok is false when n is too few.
func Interval(n int, q, conf float64) (lo, hi int, ok bool) {
	if !valid(q, conf) {
		return 0, 0, false
	}
	side := (1 + conf) / 2
	lo, okLo := Lower(n, q, side)
	hi, okHi := Upper(n, q, side)
	if !okLo || !okHi {
		return 0, 0, false
	}
	return lo, hi, true
}

// NeedUpper returns the fewest draws for which Upper has a bound:
// 1 − q^n ≥ conf, so n ≥ ln(1−conf)/ln(q). p99 at 95% needs 299.
func NeedUpper(q, conf float64) int {
	if !valid(q, conf) {
		return 0
	}
	return int(math.Ceil(math.Log1p(-conf)/math.Log(q) - 1e-9))
}

// NeedLower returns the fewest draws for which Lower has a bound:
// 1 − (1−q)^n ≥ conf.
func NeedLower(q, conf float64) int {
	if !valid(q, conf) {
		return 0
	}
	return int(math.Ceil(math.Log1p(-conf)/math.Log1p(-q) - 1e-9))
}

// NeedInterval returns the fewest draws for which Interval has bounds.
func NeedInterval(q, conf float64) int {
	if !valid(q, conf) {
		return 0
	}
	side := (1 + conf) / 2
	return max(NeedUpper(q, side), NeedLower(q, side))
}

func valid(q, conf float64) bool {
	return q > 0 && q < 1 && conf > 0 && conf < 1
}

// Estimate is a quantile of a sample with its distribution-free bounds, in
// the sample's unit.
type Estimate struct {
	// Q is the quantile in (0, 1); Confidence the level of [Lo, Hi].
	Q, Confidence float64
	// Value is the point estimate by gapbench's one percentile rule
	// (internal/quantile), so it equals the run's pN-ns/op.
	Value float64
	// Lo and Hi bound the true quantile at Confidence; NaN when the sample
	// is too small for that side (Known is then false).
	Lo, Hi float64
	// Known reports whether both bounds exist.
	Known bool
	// N is the sample size; Need the fewest draws that give both bounds.
	N, Need int
}

// Quantile estimates the q-quantile of xs with its bounds at conf. xs need
// not be sorted; it is not modified.
func Quantile(xs []float64, q, conf float64) Estimate {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return QuantileSorted(s, q, conf)
}

// QuantileSorted is Quantile on an ascending sample of any number type,
// without copying or converting it.
func QuantileSorted[T quantile.Number](s []T, q, conf float64) Estimate {
	e := Estimate{Q: q, Confidence: conf, N: len(s), Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Need: NeedInterval(q, conf)}
	if len(s) == 0 || !valid(q, conf) {
		return e
	}
	e.Value = quantile.Sorted(s, q)
	lo, hi, ok := Interval(len(s), q, conf)
	if ok {
		e.Lo, e.Hi, e.Known = float64(s[lo-1]), float64(s[hi-1]), true
	}
	return e
}

// Verdict is the outcome of a latency objective.
type Verdict int

const (
	// Undecided: the bound at this many steps straddles the limit, or the
	// sample is too small for the bound needed. Verdict's zero value.
	Undecided Verdict = iota
	// Pass: the upper confidence bound of the quantile is at or under the limit.
	Pass
	// Fail: the lower confidence bound of the quantile is over the limit.
	Fail
)

// String returns "undecided", "pass" or "fail".
func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return "undecided"
}

// Objective is a latency objective: the Q-quantile at most Limit, judged at
// Confidence from the bound, never the point estimate.
type Objective struct {
	Q, Limit, Confidence float64
}

// Judgement is an objective judged on one sample.
type Judgement struct {
	Verdict Verdict
	// Upper and Lower are the one-sided bounds at the objective's level,
	// NaN when the sample is too small for them.
	Upper, Lower float64
	// N is the sample size; NeedPass the fewest draws for an upper bound to
	// exist at all (a pass is impossible with fewer).
	N, NeedPass int
}

// Judge judges o on the ascending sample s.
func (o Objective) Judge(s []float64) Judgement {
	j := Judgement{Upper: math.NaN(), Lower: math.NaN(), N: len(s), NeedPass: NeedUpper(o.Q, o.Confidence)}
	if r, ok := Upper(len(s), o.Q, o.Confidence); ok {
		j.Upper = s[r-1]
	}
	if l, ok := Lower(len(s), o.Q, o.Confidence); ok {
		j.Lower = s[l-1]
	}
	switch {
	case j.Upper <= o.Limit: // NaN compares false
		j.Verdict = Pass
	case j.Lower > o.Limit:
		j.Verdict = Fail
	}
	return j
}
