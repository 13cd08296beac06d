package nullband

import "math"

// rankTest is one of Judge's two tests over a look's used rounds: the
// aligned-rank test of the three arms (alignedTest, with a null arm) or
// the signed-rank test of ln(B/A) (signedTest, without). Each decides the
// look's effect and equivalence tests (fixed, or a sequential boundary's
// look) and reports what Verdict shows of it. newRankTest is the one place
// that chooses.
type rankTest interface {
	// fixed sets lk's decisions at a fixed sample: two-sided α for the
	// effect, one-sided α_eq for each equivalence test.
	fixed(lk *look, alpha, alphaEq float64)
	// bounds returns the effect test's interval of ln(B/A) at the levels
	// of the look's decisions.
	bounds() (lo, hi float64)
	// summary returns the estimate and the figures beside it, at the
	// levels of the look's decisions.
	summary(lk *look, alpha float64) testSummary
	// fixedInterval returns the fixed-sample (1−α) interval of ln(B/A),
	// the one the per-round scale is read from.
	fixedInterval(lk *look, alpha float64) (lo, hi float64)
}

// testSummary is what a rankTest reports of a look.
type testSummary struct {
	est        float64 // the estimate of ln(B/A)
	p          float64 // two-sided p-value at B/A = 1
	eqLo, eqHi float64 // the equivalence interval of B/A: 0 and +Inf when open
	needRounds int     // the fewest used rounds that give an interval
	// kUp, kDown, kLo and kHi are signed-rank critical indices at the
	// test's levels, for B/A' over the same rounds.
	kUp, kDown, kLo, kHi int
}

// newRankTest returns the test for samples s over lk's rounds.
func newRankTest(s Samples, lk *look) rankTest {
	if s.Null != nil {
		return &alignedTest{st: newAligned(s, lk.idx), stLo: newAligned(s, lk.lo.idx), stHi: newAligned(s, lk.hi.idx)}
	}
	return &signedTest{w: walsh(lk.d), wLo: walshOf(s.Candidate, s.Base, lk.lo.idx), wHi: walshOf(s.Candidate, s.Base, lk.hi.idx)}
}

// signedTest is the signed-rank test of ln(B/A): critical indices of the
// sorted Walsh averages w for the interval's lower end (kUp: the upper
// tail's test) and upper end (kDown), and of wLo and wHi (the
// equivalence tests' rounds) for kLo and kHi.
type signedTest struct {
	w, wLo, wHi          []float64
	kUp, kDown, kLo, kHi int
}

func (t *signedTest) fixed(lk *look, alpha, alphaEq float64) {
	t.kUp = critK(len(lk.d), alpha/2)
	t.kDown = t.kUp
	t.kLo, t.kHi = critK(len(lk.lo.idx), alphaEq), critK(len(lk.hi.idx), alphaEq)
	t.decide(lk)
}

// decide sets lk's decisions from the test's indices.
func (t *signedTest) decide(lk *look) {
	lo, hi := t.bounds()
	lk.slower, lk.faster = lo > 0, hi < 0
	lk.eqLo = t.kLo >= 1 && t.kLo <= len(t.wLo) && t.wLo[t.kLo-1] > -lk.L
	lk.eqHi = t.kHi >= 1 && t.kHi <= len(t.wHi) && t.wHi[len(t.wHi)-t.kHi] < lk.L
}

func (t *signedTest) bounds() (lo, hi float64) {
	lo, _ = bounds(t.w, t.kUp)
	_, hi = bounds(t.w, t.kDown)
	return lo, hi
}

func (t *signedTest) summary(lk *look, alpha float64) testSummary {
	r := testSummary{est: hl(t.w), p: signedRankP(lk.d), eqLo: 0, eqHi: math.Inf(1),
		needRounds: minRoundsFor(alpha / 2), kUp: t.kUp, kDown: t.kDown, kLo: t.kLo, kHi: t.kHi}
	if t.kLo >= 1 && t.kLo <= len(t.wLo) {
		r.eqLo = math.Exp(t.wLo[t.kLo-1])
	}
	if t.kHi >= 1 && t.kHi <= len(t.wHi) {
		r.eqHi = math.Exp(t.wHi[len(t.wHi)-t.kHi])
	}
	return r
}

func (t *signedTest) fixedInterval(lk *look, alpha float64) (lo, hi float64) {
	return bounds(t.w, critK(len(lk.d), alpha/2))
}

// alignedTest is the aligned-rank test over the used rounds (st) and
// each equivalence test's rounds (stLo, stHi). The per-tail levels: levUp,
// levDown of the effect test, levLo, levHi of the equivalence tests; in
// sequential mode (seq) they follow from the critical values c… at the
// reported look (levels).
type alignedTest struct {
	st, stLo, stHi               *aligned
	levUp, levDown, levLo, levHi float64
	seq                          bool
	effDone                      bool // effLo, effHi hold bounds()
	effLo, effHi                 float64
	cUp, cDown, cLo, cHi         int
	// pUp and pDown are P(T ≥ t) and P(T ≤ t) at B/A = 1, once computed
	// (pDone).
	pUp, pDown float64
	pDone      bool
}

func (t *alignedTest) fixed(lk *look, alpha, alphaEq float64) {
	t.levUp, t.levDown, t.levLo, t.levHi = alpha/2, alpha/2, alphaEq, alphaEq
	t.pUp, t.pDown = t.st.tails(0)
	t.pDone = true
	lk.slower, lk.faster = t.pUp <= t.levUp, t.pDown <= t.levDown
	if !lk.slower && !lk.faster {
		upL, _ := t.stLo.tails(-lk.L)
		_, downL := t.stHi.tails(lk.L)
		lk.eqLo, lk.eqHi = upL <= t.levLo, downL <= t.levHi
	}
}

// levels sets the per-tail levels of a sequential look from its critical
// values: the null probability, at the look, of reaching each.
func (t *alignedTest) levels(L float64) {
	if !t.seq {
		return
	}
	lev := func(st *aligned, theta float64, c int, upper bool) float64 {
		e := c // the critical value as an upper tail's
		if !upper {
			e = -c
		}
		switch e {
		case noCross:
			return 0
		case -noCross:
			return 1
		}
		st.rank(theta)
		u, l := st.tailsAt(c)
		if upper {
			return u
		}
		return l
	}
	t.levUp, t.levDown = lev(t.st, 0, t.cUp, true), lev(t.st, 0, t.cDown, false)
	t.levLo, t.levHi = lev(t.stLo, -L, t.cLo, true), lev(t.stHi, L, t.cHi, false)
}

func (t *alignedTest) bounds() (lo, hi float64) {
	if !t.effDone {
		t.effLo, t.effHi = t.st.interval(t.levUp, t.levDown)
		t.effDone = true
	}
	return t.effLo, t.effHi
}

func (t *alignedTest) summary(lk *look, alpha float64) testSummary {
	t.levels(lk.L)
	r := testSummary{needRounds: alignedMinRounds(alpha / 2), est: t.st.estimate(), eqLo: 0, eqHi: math.Inf(1)}
	if !t.pDone {
		t.pUp, t.pDown = t.st.tails(0)
	}
	r.p = math.Min(1, 2*math.Min(t.pUp, t.pDown))
	if lo, _ := t.stLo.interval(t.levLo, 0); !math.IsInf(lo, 0) {
		r.eqLo = math.Exp(lo)
	}
	if _, hi := t.stHi.interval(0, t.levHi); !math.IsInf(hi, 0) {
		r.eqHi = math.Exp(hi)
	}
	n := len(lk.idx)
	r.kUp, r.kDown = critK(n, t.levUp), critK(n, t.levDown)
	r.kLo, r.kHi = critK(len(lk.lo.idx), t.levLo), critK(len(lk.hi.idx), t.levHi)
	return r
}

func (t *alignedTest) fixedInterval(lk *look, alpha float64) (lo, hi float64) {
	if !t.seq && t.levUp == alpha/2 && t.levDown == alpha/2 {
		return t.bounds() // a fixed look's own interval
	}
	// At a sequential look's spent levels Student's t no longer follows
	// the rank interval's width: the fixed-sample one.
	return t.st.interval(alpha/2, alpha/2)
}

// sequentialTest is a rank test's sequential boundaries over the looks of
// one Judge call: look decides lk at the α spent so far by the effect test
// (spentEff, two-sided) and by each equivalence test (spentEq).
type sequentialTest interface {
	look(lk *look, spentEff, spentEq float64)
}

// newSequential returns the boundaries for samples s, with looks up to
// round last: label-permutation boundaries with a null arm, sign-flip
// boundaries without (the choice newRankTest makes for each look).
func newSequential(s Samples, last int, opt Options) sequentialTest {
	if s.Null != nil {
		return newAlignedSeq(last, opt)
	}
	return newSignedSeq(s, last, math.Log1p(opt.Delta), opt)
}

// signedSeq is the sequential signed-rank test of ln(B/A), for samples
// without a null arm: sign-flip boundaries (see boundary).
type signedSeq struct{ eff, lo, hi *boundary }

func newSignedSeq(s Samples, last int, L float64, opt Options) *signedSeq {
	// d holds ln(B/A) by round; a round's value does not depend on the
	// look, only whether it is used does.
	d := make([]float64, last)
	for i := range last {
		d[i] = math.Log(s.Candidate[i] / s.Base[i])
	}
	sg := newSigns(opt.Replicates, last, opt.Seed)
	return &signedSeq{eff: newBoundary(d, 0, twoSided, sg), lo: newBoundary(d, -L, upperTail, sg), hi: newBoundary(d, L, lowerTail, sg)}
}

func (q *signedSeq) look(lk *look, spentEff, spentEq float64) {
	t := lk.test.(*signedTest)
	t.kUp = q.eff.next(lk.idx, spentEff)
	t.kDown = t.kUp
	t.kLo, t.kHi = q.lo.next(lk.lo.idx, spentEq), q.hi.next(lk.hi.idx, spentEq)
	t.decide(lk)
}

// alignedSeq is the sequential aligned-rank test: label-permutation
// boundaries (see rankBoundary), each tail of the effect test spending
// half its α, each equivalence test its own.
type alignedSeq struct{ up, down, lo, hi *rankBoundary }

func newAlignedSeq(last int, opt Options) *alignedSeq {
	lab := newLabels(opt.Replicates, last, opt.Seed)
	return &alignedSeq{up: newRankBoundary(lab, true), down: newRankBoundary(lab, false),
		lo: newRankBoundary(lab, true), hi: newRankBoundary(lab, false)}
}

func (q *alignedSeq) look(lk *look, spentEff, spentEq float64) {
	t := lk.test.(*alignedTest)
	t.seq = true
	r := t.st.rank(0)
	t.cUp, t.cDown = q.up.next(t.st, spentEff/2), q.down.next(t.st, spentEff/2)
	lk.slower, lk.faster = r >= t.cUp, r <= t.cDown
	r = t.stLo.rank(-lk.L)
	t.cLo = q.lo.next(t.stLo, spentEq)
	lk.eqLo = r >= t.cLo
	r = t.stHi.rank(lk.L)
	t.cHi = q.hi.next(t.stHi, spentEq)
	lk.eqHi = r <= t.cHi
}
