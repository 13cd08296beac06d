package nullband

import (
	"math"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// verdict builds the Verdict of a look; looks counts sequential looks.
func (lk *look) verdict(s Samples, opt Options, looks int) Verdict {
	alpha := 1 - opt.Confidence
	L := math.Log1p(opt.Delta)
	v := Verdict{Outcome: lk.outcome}
	v.Confidence, v.EqConfidence, v.Delta, v.EqFloor = opt.Confidence, opt.EqConfidence, opt.Delta, opt.MinEqRounds
	v.Unscreened, v.UnscreenedChecked = lk.unscreened, lk.checked
	v.NullConfidence, v.Rounds, v.Given, v.Looks = 1-alpha/5, lk.rounds, len(s.Base), looks
	v.Used, v.Quarantined, v.SpreadLimit = len(lk.d), len(lk.rounds)-len(lk.d), lk.spreadLimit
	sum := lk.test.summary(lk, alpha)
	est := sum.est
	v.NeedRounds, v.P, v.EqLo, v.EqHi = sum.needRounds, sum.p, sum.eqLo, sum.eqHi
	kUp, kDown, kLo, kHi := sum.kUp, sum.kDown, sum.kLo, sum.kHi
	lo, hi := lk.test.bounds()
	v.Ratio, v.Lo, v.Hi = math.Exp(est), math.Exp(lo), math.Exp(hi)
	// With ties (quantised values) B/A = 1 can be one of the shifts where
	// the ranks change: the test there rejects while the shifts just past
	// it do not, and the interval is open at 1. Its end is then reported
	// as the next value past 1, so that Slower ⇔ Lo > 1 and Faster ⇔ Hi < 1.
	if lk.slower && !(v.Lo > 1) {
		v.Lo = math.Nextafter(1, 2)
	}
	if lk.faster && !(v.Hi < 1) {
		v.Hi = math.Nextafter(1, 0)
	}

	// The null arm: the same test on ln(A'/A), at the stricter α/5.
	v.NullRatio, v.NullLo, v.NullHi, v.NullP = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	nullShifted := false
	if s.Null != nil {
		wn := walsh(lk.nl)
		nlo, nhi := bounds(wn, critK(len(lk.nl), alpha/10))
		v.NullRatio, v.NullLo, v.NullHi = math.Exp(hl(wn)), math.Exp(nlo), math.Exp(nhi)
		v.NullP = signedRankP(lk.nl)
		nullShifted = nlo > 0 || nhi < 0
	}

	// The noise: a per-round scale from the fixed-sample interval.
	sigma := scale(lk, alpha)
	v.MDE = mdeAt(sigma, len(lk.d), alpha)
	se := sigma / math.Sqrt(float64(len(lk.d)))

	// A shifted null arm keeps a decided outcome only when B/A' (over the
	// same rounds, at the same index) decides it too: B then differs from
	// both instances of A. This only removes calls, so the error rates
	// stay those of B/A's test.
	withheld := false
	if nullShifted && lk.outcome != Undecided {
		vsNull := func(idx []int) []float64 { return walshOf(s.Candidate, s.Null, idx) }
		w2 := vsNull(lk.idx)
		lo2, _ := bounds(w2, kUp)
		_, hi2 := bounds(w2, kDown)
		v.VsNullLo, v.VsNullHi = math.Exp(lo2), math.Exp(hi2)
		switch lk.outcome {
		case Slower:
			withheld = !(lo2 > 0)
		case Faster:
			withheld = !(hi2 < 0)
		case Equivalent:
			withheld = !equivalent(vsNull(lk.lo.idx), vsNull(lk.hi.idx), kLo, kHi, L)
		}
	}

	guarded := lk.belowFloor || lk.changed
	if lk.belowFloor {
		v.Reasons = append(v.Reasons, BelowEqFloor)
	}
	if lk.changed {
		v.Reasons = append(v.Reasons, QuarantineChangesCall)
	}
	switch {
	case lk.tooMany:
		v.Outcome = Undecided
		v.Reasons = append(v.Reasons, TooManyQuarantined)
	case nullShifted && (lk.outcome == Undecided || withheld):
		v.Outcome = Undecided
		v.Reasons = append(v.Reasons, NullShifted)
	case nullShifted:
		v.Reasons = append(v.Reasons, NullShifted)
	case guarded:
	case lk.outcome == Undecided && (math.IsInf(lo, 0) || math.IsInf(hi, 0)):
		v.Reasons = append(v.Reasons, TooFewRounds)
		// In sequential mode a look spends less than α, and its
		// boundary can allow no interval at the fixed-sample minimum.
		v.NeedRounds = max(v.NeedRounds, len(lk.d)+1)
	case lk.outcome == Undecided:
		v.Reasons = append(v.Reasons, Straddles)
	}
	if (v.Outcome == Faster || v.Outcome == Slower) && lo > -L && hi < L {
		v.Reasons = append(v.Reasons, WithinDelta)
	}
	if s.Null == nil {
		v.Reasons = append(v.Reasons, NoNullArm)
	}
	if v.Outcome == Undecided && !lk.tooMany && !nullShifted && len(lk.d) > 0 {
		v.RoundsToDecide = roundsToDecide(est, se*math.Sqrt(float64(len(lk.d))), alpha, 1-opt.EqConfidence, L, len(lk.d), v.NeedRounds, len(lk.rounds))
		if lk.belowFloor && v.RoundsToDecide >= 0 {
			// Equivalence needs the floor's used rounds, scaled by
			// the rounds a used round costs.
			v.RoundsToDecide = max(v.RoundsToDecide, int(math.Ceil(float64(opt.MinEqRounds)*float64(len(lk.rounds))/float64(len(lk.d)))))
		}
	} else if v.Outcome == Undecided {
		v.RoundsToDecide = -1
	}

	// benchstat's view, and the regimes, over the rounds of this look.
	var a, b, a2 []float64
	var ua, ub, ua2 []float64
	for _, r := range lk.rounds {
		for _, p := range []struct {
			all *[]float64
			x   float64
		}{{&a, r.A}, {&b, r.B}, {&a2, r.Null}} {
			if !math.IsNaN(p.x) && !math.IsInf(p.x, 0) {
				*p.all = append(*p.all, p.x)
			}
		}
		if !r.Quarantined {
			ua, ub, ua2 = append(ua, r.A), append(ub, r.B), append(ua2, r.Null)
		}
	}
	if len(Regimes(ua, 0)) > 1 || len(Regimes(ub, 0)) > 1 || (s.Null != nil && len(Regimes(ua2, 0)) > 1) {
		v.Reasons = append(v.Reasons, Bimodal)
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	sa, sb, sn := benchmath.NewSample(a, th), benchmath.NewSample(b, th), benchmath.NewSample(a2, th)
	v.Base, v.Candidate, v.NullArm = summarize(sa, opt.Confidence), summarize(sb, opt.Confidence), summarize(sn, opt.Confidence)
	if len(a) > 0 && len(b) > 0 {
		v.Comparison = benchmath.AssumeNothing.Compare(sa, sb)
	} else {
		v.Comparison = benchmath.Comparison{P: 1, N1: len(a), N2: len(b), Alpha: alpha}
	}
	return v
}

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
