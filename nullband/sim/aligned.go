package sim

// An experimental method, not shipped: the aligned-rank test of a randomized
// block design with three treatments (Hodges & Lehmann 1962; Hollander,
// Wolfe & Chicken §7.3), used as a two-sample test of B against the two
// instances of A. It uses A' as data where nullband.Judge uses it only as a
// check, and stays exact under exchangeability alone: with the arms' order
// drawn at random in each round, the labels B, A, A' are exchangeable within
// a round under "no difference", so given each round's set of three values,
// B's is uniformly one of them, independently across rounds.
//
// Per used round i the logs are aligned by the round's mean, all 3n aligned
// values ranked together (mid-ranks), and T = Σᵢ rank of B's aligned value.
// Given the rounds' rank triples, T's null distribution is the convolution of
// n discrete uniforms on three values each: exact (a DP over doubled ranks)
// up to alignedExactMax used rounds, normal above (the exact conditional mean
// and variance, continuity-corrected).
//
// The test of a shift θ subtracts θ from B's logs and re-aligns. B's aligned
// value is then uᵢ − 2θ/3 and the others' v + θ/3 (u, v: aligned at θ = 0),
// so the ranks change only where θ crosses a difference uᵢ − v (2n² of them):
// T(θ) = n(n+1)/2 + 2·#{(i, v) : uᵢ − v > θ} (doubled), T's null mean is
// n(3n+1) (doubled) for every θ, and the estimate where T equals it is the
// median of the 2n² differences. The interval {θ : not rejected} has its ends
// at differences: binary search over them (with the normal approximation,
// then exactly from where it ended).

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// alignedExactMax is the largest number of used rounds whose null
// distribution is computed exactly; above, the normal approximation.
const alignedExactMax = 100

// alignedConfig configures alignedJudge.
type alignedConfig struct {
	alpha    float64 // two-sided level of the difference test; TOST at alpha each side
	delta    float64 // equivalence margin (fraction)
	extreme  float64 // Extreme quarantine factor over the median spread; +Inf: none
	maxQ     float64 // largest share of complete rounds quarantined
	exactMax int     // exact null distribution up to this many used rounds
	interval bool    // also compute the estimate and the intervals
	// shiftScreen screens the rounds again for each equivalence test, on
	// the values with B shifted by the hypothesised θ = ∓ln(1+δ): only
	// then is the screen symmetric in the arms under that hypothesis.
	// False screens once, on the values as measured (as nullband.Judge).
	shiftScreen bool
}

func defaultAligned() alignedConfig {
	return alignedConfig{alpha: 0.05, delta: 0.02, extreme: 3, maxQ: 0.5, exactMax: alignedExactMax, shiftScreen: true}
}

// alignedResult is one judgement by the aligned-rank test. Logs are of B/A.
type alignedResult struct {
	Call              Call
	Used, Quarantined int
	TooMany           bool
	// Upper and Lower are P(T ≥ t) and P(T ≤ t) at θ = 0; P the two-sided
	// p-value.
	Upper, Lower, P float64
	// Estimate, [Lo, Hi] (the 1−α interval) and [EqLo, EqHi] (the 1−2α
	// interval) in logs; NaN unless the interval was asked for.
	Estimate, Lo, Hi, EqLo, EqHi float64
}

// Aligned3 is the aligned-rank test as a Method "aligned3": nullband.Judge's
// quarantine (a copy of its rule, alignedScreen), α = 0.05, δ = 2%, fixed
// rounds only. Faster or slower when the test of θ = 0 rejects two-sided at
// α; else equivalent when both one-sided tests at θ = ∓ln(1.02) reject at α
// (TOST); else undecided.
func Aligned3() Method {
	cfg := defaultAligned()
	return Method{Name: "aligned3", Fixed: func(t Trial) Call { return alignedJudge(t, cfg).Call }}
}

// aligned3NoQuarantine is Aligned3 without the Extreme quarantine (as
// nullband.Options.Extreme = +Inf).
func aligned3NoQuarantine() Method {
	cfg := defaultAligned()
	cfg.extreme = math.Inf(1)
	return Method{Name: "aligned3-noq", Fixed: func(t Trial) Call { return alignedJudge(t, cfg).Call }}
}

// aligned3OneScreen is Aligned3 screening once, on the values as measured,
// for every test (as nullband.Judge does).
func aligned3OneScreen() Method {
	cfg := defaultAligned()
	cfg.shiftScreen = false
	return Method{Name: "aligned3-onescreen", Fixed: func(t Trial) Call { return alignedJudge(t, cfg).Call }}
}

// alignedJudge judges t.
func alignedJudge(t Trial, cfg alignedConfig) alignedResult {
	res := alignedResult{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), EqLo: math.NaN(), EqHi: math.NaN(), P: math.NaN()}
	used, complete, quarantined := alignedScreen(t, 0, cfg.extreme)
	res.Used, res.Quarantined = len(used), t.Rounds()-len(used)
	res.TooMany = complete > 0 && float64(quarantined) > cfg.maxQ*float64(complete)
	if res.TooMany || len(used) == 0 {
		return res
	}
	s := newAlignedState(t, used, len(used) <= cfg.exactMax)
	res.Upper, res.Lower = s.tails(0)
	res.P = math.Min(1, 2*math.Min(res.Upper, res.Lower))
	L := math.Log1p(cfg.delta)
	switch {
	case res.Upper <= cfg.alpha/2:
		res.Call = Slower
	case res.Lower <= cfg.alpha/2:
		res.Call = Faster
	default:
		// H₀ θ ≤ −L against θ > −L, and θ ≥ L against θ < L.
		up, down := s, s
		if cfg.shiftScreen {
			u, _, _ := alignedScreen(t, -L, cfg.extreme)
			up = newAlignedState(t, u, len(u) <= cfg.exactMax)
			u, _, _ = alignedScreen(t, L, cfg.extreme)
			down = newAlignedState(t, u, len(u) <= cfg.exactMax)
		}
		upL, loL := 1.0, 1.0
		if up.n > 0 {
			upL, _ = up.tails(-L)
		}
		if down.n > 0 {
			_, loL = down.tails(L)
		}
		if upL <= cfg.alpha && loL <= cfg.alpha {
			res.Call = Equivalent
		}
	}
	if cfg.interval {
		// Over the rounds of the screen at θ = 0, even with shiftScreen.
		res.Estimate = s.estimate()
		res.Lo, res.Hi = s.interval(cfg.alpha / 2)
		res.EqLo, res.EqHi = s.interval(cfg.alpha)
	}
	return res
}

// alignedScreen is the quarantine rule of nullband.Judge (nullband/verdict.go
// screen and newLook) over a trial with a null arm, on the values with B
// divided by exp(θ): it returns the indices of the used rounds, the number
// of complete rounds and of those quarantined as Contended or Extreme.
// Symmetric in A, A' and B·exp(−θ), so it keeps their exchangeability under
// the hypothesis θ.
func alignedScreen(t Trial, theta, extreme float64) (used []int, complete, quarantined int) {
	n := t.Rounds()
	spread := make([]float64, n)
	ok := make([]bool, n)
	var spreads, clear []float64
	for i := range n {
		lo, hi := math.Inf(1), math.Inf(-1)
		ok[i] = true
		for _, x := range []float64{t.A[i], t.B[i] * math.Exp(-theta), t.Null[i]} {
			if math.IsNaN(x) || math.IsInf(x, 0) || !(x > 0) {
				ok[i] = false
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if !ok[i] {
			continue
		}
		complete++
		spread[i] = math.Log(hi) - math.Log(lo)
		spreads = append(spreads, spread[i])
		if t.Contended == nil || !t.Contended[i] {
			clear = append(clear, spread[i])
		}
	}
	med, ref := math.NaN(), math.NaN()
	if len(spreads) >= 5 {
		sort.Float64s(spreads)
		med, ref = medianSorted(spreads), medianSorted(spreads)
		if len(clear) >= 3 {
			sort.Float64s(clear)
			ref = medianSorted(clear)
		}
	}
	const contendedFactor = 2 // nullband.ContendedFactor
	for i := range n {
		if !ok[i] {
			continue
		}
		q := t.Contended != nil && t.Contended[i] && !(ref > 0 && spread[i] <= contendedFactor*ref)
		if !q && med > 0 && !math.IsInf(extreme, 1) && spread[i] > extreme*med {
			q = true
		}
		if q {
			quarantined++
			continue
		}
		used = append(used, i)
	}
	return used, complete, quarantined
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// alignedState holds the used rounds' logs and scratch space.
type alignedState struct {
	n        int
	b, a, a2 []float64 // logs of B, A, A' of the used rounds
	exact    bool
	vals     []alignedVal
	r        []int // doubled mid-ranks: r[3i] B's, r[3i+1] A's, r[3i+2] A''s
	dist     []float64
	next     []float64
	diffs    []float64 // sorted uᵢ − v, lazily
}

type alignedVal struct {
	v float64
	k int32
}

func newAlignedState(t Trial, used []int, exact bool) *alignedState {
	n := len(used)
	s := &alignedState{n: n, exact: exact, b: make([]float64, n), a: make([]float64, n), a2: make([]float64, n),
		vals: make([]alignedVal, 3*n), r: make([]int, 3*n)}
	for j, i := range used {
		s.b[j], s.a[j], s.a2[j] = math.Log(t.B[i]), math.Log(t.A[i]), math.Log(t.Null[i])
	}
	return s
}

// rank aligns every round at shift θ (θ subtracted from B's logs) and sets
// s.r to the doubled mid-ranks of all 3n aligned values; it returns T
// doubled, Σ of B's.
func (s *alignedState) rank(theta float64) int {
	for i := range s.n {
		b := s.b[i] - theta
		m := (b + s.a[i] + s.a2[i]) / 3
		s.vals[3*i] = alignedVal{b - m, int32(3 * i)}
		s.vals[3*i+1] = alignedVal{s.a[i] - m, int32(3*i + 1)}
		s.vals[3*i+2] = alignedVal{s.a2[i] - m, int32(3*i + 2)}
	}
	slices.SortFunc(s.vals, func(x, y alignedVal) int { return cmp.Compare(x.v, y.v) })
	for p := 0; p < len(s.vals); {
		q := p
		for q+1 < len(s.vals) && s.vals[q+1].v == s.vals[p].v {
			q++
		}
		for j := p; j <= q; j++ {
			s.r[s.vals[j].k] = p + q + 2 // 2 × the mid-rank of positions p+1 … q+1
		}
		p = q + 1
	}
	t := 0
	for i := range s.n {
		t += s.r[3*i]
	}
	return t
}

// tails returns P(T ≥ t) and P(T ≤ t) under the null at shift θ, t being
// the observed statistic: exact or normal as s.exact says.
func (s *alignedState) tails(theta float64) (upper, lower float64) {
	t := s.rank(theta)
	if s.exact {
		return exactTails(s.r, t, &s.dist, &s.next)
	}
	return normalTails(s.r, t)
}

// exactTails returns P(T ≥ t) and P(T ≤ t) for T = Σᵢ Xᵢ, Xᵢ uniform on
// the triple r[3i:3i+3] (integers), independent. dist and next are scratch.
func exactTails(r []int, t int, dist, next *[]float64) (upper, lower float64) {
	n := len(r) / 3
	total := 0
	for i := range n {
		a, b, c := r[3*i], r[3*i+1], r[3*i+2]
		total += max(a, b, c) - min(a, b, c)
	}
	if cap(*dist) < total+1 {
		*dist, *next = make([]float64, total+1), make([]float64, total+1)
	}
	d, nx := (*dist)[:total+1], (*next)[:total+1]
	clear(d)
	d[0] = 1
	width, base := 0, 0
	for i := range n {
		a, b, c := r[3*i], r[3*i+1], r[3*i+2]
		lo := min(a, b, c)
		a, b, c = a-lo, b-lo, c-lo
		w := width + max(a, b, c)
		clear(nx[:w+1])
		for x, p := range d[:width+1] {
			if p == 0 {
				continue
			}
			p /= 3
			nx[x+a] += p
			nx[x+b] += p
			nx[x+c] += p
		}
		d, nx = nx, d
		width, base = w, base+lo
	}
	k := t - base
	for x, p := range d[:width+1] {
		if x >= k {
			upper += p
		}
		if x <= k {
			lower += p
		}
	}
	return math.Min(upper, 1), math.Min(lower, 1)
}

// normalTails is exactTails by the normal approximation with the exact mean
// and variance and a continuity correction of 1 (half the lattice step 2 of
// doubled ranks without ties).
func normalTails(r []int, t int) (upper, lower float64) {
	mean, v := 0.0, 0.0
	for i := range len(r) / 3 {
		a, b, c := float64(r[3*i]), float64(r[3*i+1]), float64(r[3*i+2])
		m := (a + b + c) / 3
		mean += m
		v += ((a-m)*(a-m) + (b-m)*(b-m) + (c-m)*(c-m)) / 3
	}
	if v == 0 {
		return 1, 1
	}
	sd := math.Sqrt(v)
	z := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) } // Φ
	return 1 - z((float64(t)-1-mean)/sd), z((float64(t) + 1 - mean) / sd)
}

// differences returns the sorted 2n² differences uᵢ − v (aligned at θ = 0).
func (s *alignedState) differences() []float64 {
	if s.diffs != nil {
		return s.diffs
	}
	u := make([]float64, s.n)
	v := make([]float64, 0, 2*s.n)
	for i := range s.n {
		m := (s.b[i] + s.a[i] + s.a2[i]) / 3
		u[i] = s.b[i] - m
		v = append(v, s.a[i]-m, s.a2[i]-m)
	}
	d := make([]float64, 0, 2*s.n*s.n)
	for _, x := range u {
		for _, y := range v {
			d = append(d, x-y)
		}
	}
	sort.Float64s(d)
	s.diffs = d
	return d
}

// estimate returns the shift at which T equals its null mean: the median of
// the differences.
func (s *alignedState) estimate() float64 { return medianSorted(s.differences()) }

// gap returns a shift inside gap k of the sorted differences d (k = 0 below
// all, k = len(d) above all, else between d[k−1] and d[k]).
func gap(d []float64, k int) float64 {
	switch {
	case k == 0:
		return d[0] - 1
	case k == len(d):
		return d[len(d)-1] + 1
	}
	return (d[k-1] + d[k]) / 2
}

// interval returns the ends of {θ : neither one-sided test at level a
// rejects}: θ below lo is rejected as too small (P(T ≥ t) ≤ a), above hi as
// too large. The ends are differences; −Inf or +Inf when no shift is
// rejected on that side. Binary search assumes the tails monotone in θ.
func (s *alignedState) interval(a float64) (lo, hi float64) {
	d := s.differences()
	N := len(d)
	tooSmall := func(k int) bool { up, _ := s.tails(gap(d, k)); return up > a }
	tooLarge := func(k int) bool { _, low := s.tails(gap(d, k)); return low <= a }
	// Search with the normal approximation, then exactly from there.
	exact := s.exact
	s.exact = false
	kLo, kHi := sort.Search(N+1, tooSmall), sort.Search(N+1, tooLarge)
	s.exact = exact
	if exact {
		kLo, kHi = searchNear(N+1, kLo, tooSmall), searchNear(N+1, kHi, tooLarge)
	}
	kHi--
	lo, hi = math.Inf(-1), math.Inf(1)
	if kLo > 0 {
		lo = d[kLo-1]
	}
	switch {
	case kHi < 0:
		hi = math.Inf(-1)
	case kHi < N:
		hi = d[kHi]
	}
	return lo, hi
}

// searchNear is sort.Search(m, pred) for a monotone pred (false, then
// true), starting from a guess k0 and galloping outward: about 2·log₂ of
// the guess's error calls of pred instead of log₂ m.
func searchNear(m, k0 int, pred func(int) bool) int {
	if m <= 0 {
		return 0
	}
	k0 = max(0, min(k0, m-1))
	var lo, hi int // pred(lo) false or lo = −1; pred(hi) true or hi = m
	if pred(k0) {
		hi = k0
		for step := 1; ; step *= 2 {
			lo = k0 - step
			if lo < 0 {
				lo = -1
				break
			}
			if !pred(lo) {
				break
			}
			hi = lo
		}
	} else {
		lo = k0
		for step := 1; ; step *= 2 {
			hi = k0 + step
			if hi >= m {
				hi = m
				break
			}
			if pred(hi) {
				break
			}
			lo = hi
		}
	}
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return pred(lo + 1 + i) })
}

// skewedModel is the A/A model of nullband's TestSkewedNoiseKeepsTheLevel
// (and commit 8dde13c): every block exp(N(0, 0.5%))·(1 + Exp(2%)),
// independent, arms in a random order per round. Not among Models.
func skewedModel() Model {
	return Model{
		Name:   "skewed",
		Sigma:  0.005,
		Params: "each block × exp(N(0, 0.5%))·(1 + Exp(mean 2%)), independent (right-skewed block times)",
		gen: func(r *rand.Rand, n int, e float64) Trial {
			return blocks(r, n, e, func(int, int) float64 { return math.Exp(0.005*r.NormFloat64()) * (1 + 0.02*r.ExpFloat64()) })
		},
	}
}
