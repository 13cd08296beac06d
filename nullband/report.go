package nullband

import (
	"math"

	"golang.org/x/perf/benchmath"
)

// verdict builds the Verdict of a look; looks counts sequential looks.
func (lk *look) verdict(s Samples, opt Options, looks int) Verdict {
	alpha := 1 - opt.Confidence
	L := math.Log1p(opt.Delta)
	v := Verdict{
		Outcome: lk.outcome, Confidence: opt.Confidence, EqConfidence: opt.EqConfidence, Delta: opt.Delta,
		NullConfidence: 1 - alpha/5, Rounds: lk.rounds, Given: len(s.Base), Looks: looks,
		Used: len(lk.d), Quarantined: len(lk.rounds) - len(lk.d), SpreadLimit: lk.spreadLimit,
	}
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

	switch {
	case lk.tooMany:
		v.Outcome = Undecided
		v.Reasons = append(v.Reasons, TooManyQuarantined)
	case nullShifted && (lk.outcome == Undecided || withheld):
		v.Outcome = Undecided
		v.Reasons = append(v.Reasons, NullShifted)
	case nullShifted:
		v.Reasons = append(v.Reasons, NullShifted)
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
