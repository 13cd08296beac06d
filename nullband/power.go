package nullband

import (
	"math"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// FewestRounds returns the fewest used rounds that give Judge a finite
// two-sided interval at confidence: with a null arm (the aligned-rank test,
// 3⁻ⁿ ≤ α/2) 4 at 95% and 5 at 98.75%; without (the signed-rank test) 6
// and 8. 0 for a confidence outside (0.5, 1).
func FewestRounds(confidence float64, nullArm bool) int {
	if !(confidence > 0.5 && confidence < 1) {
		return 0
	}
	if nullArm {
		return alignedMinRounds((1 - confidence) / 2)
	}
	return minRoundsFor((1 - confidence) / 2)
}

// roundsToDecide estimates the total rounds at which a fixed-sample
// interval would decide, if the estimate est (log) and the per-round scale
// sigma held: the fewer of the rounds for the (1−α) interval to exclude 0
// and for the (1−2α_eq) interval to fit inside ±L. used of total rounds were
// used; the estimate scales by total/used. −1 when unknown.
func roundsToDecide(est, sigma, alpha, alphaEq, L float64, used, need, total int) int {
	if !(sigma > 0) || math.IsInf(sigma, 0) || math.IsNaN(est) {
		return -1
	}
	best := math.Inf(1)
	if est != 0 {
		best = math.Pow(normQuantile(1-alpha/2)*sigma/est, 2)
	}
	if a := math.Abs(est); a < L {
		best = math.Min(best, math.Pow(normQuantile(1-alphaEq)*sigma/(L-a), 2))
	}
	best *= float64(total) / float64(used)
	if math.IsInf(best, 0) || best > 1e6 {
		return -1
	}
	return max(int(math.Ceil(best)), total+1, need)
}

// MDEAt returns the minimal detectable effect (a fraction, as Verdict.MDE)
// of a fixed-sample verdict with rounds used rounds, at the noise of s's
// ln(B/A): give it A/A samples (B a second instance of A). The per-round
// scale comes from s's interval; +Inf when s has too few rounds for one.
func MDEAt(s Samples, rounds int, opt Options) float64 {
	opt = opt.withDefaults(s.Null != nil)
	if opt.validate() != nil || s.check() != nil || rounds < 1 {
		return math.NaN()
	}
	lk := newLook(s, len(s.Base), opt)
	alpha := 1 - opt.Confidence
	return mdeAt(scale(lk, alpha), rounds, alpha)
}

// scale returns the per-round scale σ of ln(B/A) implied by the look's
// fixed-sample (1−α) interval: its half-width is about t·σ/√n, t the
// Student quantile with n−1 degrees of freedom (the small-sample widening
// of the rank interval follows it closely). +Inf without an interval.
func scale(lk *look, alpha float64) float64 {
	n := len(lk.d)
	var lo, hi float64
	if n < 2 {
		return math.Inf(1)
	}
	lo, hi = lk.test.fixedInterval(lk, alpha)
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return math.Inf(1)
	}
	return (hi - lo) / 2 / tQuantile(1-alpha/2, n-1) * math.Sqrt(float64(n))
}

// mdeAt returns the effect (a fraction) that a fixed-sample verdict of n
// used rounds detects with 80% power at per-round scale sigma:
// exp((t₁₋α/₂ + t₀.₈)·σ/√n) − 1 with n−1 degrees of freedom.
func mdeAt(sigma float64, n int, alpha float64) float64 {
	if math.IsInf(sigma, 0) || math.IsNaN(sigma) || n < 2 {
		return math.Inf(1)
	}
	return math.Expm1((tQuantile(1-alpha/2, n-1) + tQuantile(0.80, n-1)) * sigma / math.Sqrt(float64(n)))
}

// tQuantile is Student's t quantile function with df degrees of freedom.
func tQuantile(p float64, df int) float64 {
	return stats.InvCDF(stats.TDist{V: float64(df)})(p)
}

// summarize is benchmath.AssumeNothing.Summary, with NaNs for an empty
// sample instead of a panic.
func summarize(s *benchmath.Sample, confidence float64) benchmath.Summary {
	if len(s.Values) == 0 {
		return benchmath.Summary{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return benchmath.AssumeNothing.Summary(s, confidence)
}
