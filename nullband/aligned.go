package nullband

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// The aligned-rank test of a randomized block design with three treatments
// (Hodges & Lehmann 1962; Hollander, Wolfe & Chicken §7.3), used as a
// two-sample test of B against the two instances of A. Per used round the
// logs of B, A and A' are aligned by the round's mean, all 3n aligned
// values are ranked together (mid-ranks, doubled to stay integers), and T
// is the sum of B's ranks. With the arms' order drawn at random in each
// round, the labels B, A, A' are exchangeable within a round under "no
// difference": given each round's three values, B's is uniformly one of
// them, independently across rounds. So given the rounds' rank triples,
// T's null distribution is the convolution of n discrete uniforms on three
// values: exact (a DP) up to exactMax used rounds, normal above.
//
// The test of a shift θ divides B by exp(θ) and aligns again. B's aligned
// value is then uᵢ − 2θ/3 and the others' v + θ/3 (u, v aligned at θ = 0),
// so the ranks change only where θ crosses a difference uᵢ − v: the
// interval's ends are such differences, found by binary search; the
// estimate, where T equals its null mean, is their median.

// aligned holds the used rounds' logs and scratch space.
type aligned struct {
	idx      []int     // the rounds, indices into Samples
	b, a, a2 []float64 // logs of B, A, A'
	vals     []alignedVal
	r        []int // doubled mid-ranks: r[3i] B's, r[3i+1] A's, r[3i+2] A''s
	dist     []float64
	next     []float64
	diffs    []float64 // sorted uᵢ − v, lazily
	normal   bool      // tails by the normal approximation whatever n
}

type alignedVal struct {
	v float64
	k int32
}

func newAligned(s Samples, idx []int) *aligned {
	n := len(idx)
	st := &aligned{idx: idx, b: make([]float64, n), a: make([]float64, n), a2: make([]float64, n),
		vals: make([]alignedVal, 3*n), r: make([]int, 3*n)}
	for j, i := range idx {
		st.b[j], st.a[j], st.a2[j] = math.Log(s.Candidate[i]), math.Log(s.Base[i]), math.Log(s.Null[i])
	}
	return st
}

func (st *aligned) n() int { return len(st.idx) }

// rank aligns every round at shift θ (θ subtracted from B's logs), sets
// st.r to the doubled mid-ranks of all 3n aligned values and returns T
// doubled.
func (st *aligned) rank(theta float64) int {
	for i := range st.n() {
		b := st.b[i] - theta
		m := (b + st.a[i] + st.a2[i]) / 3
		st.vals[3*i] = alignedVal{b - m, int32(3 * i)}
		st.vals[3*i+1] = alignedVal{st.a[i] - m, int32(3*i + 1)}
		st.vals[3*i+2] = alignedVal{st.a2[i] - m, int32(3*i + 2)}
	}
	slices.SortFunc(st.vals, func(x, y alignedVal) int { return cmp.Compare(x.v, y.v) })
	for p := 0; p < len(st.vals); {
		q := p
		for q+1 < len(st.vals) && st.vals[q+1].v == st.vals[p].v {
			q++
		}
		for j := p; j <= q; j++ {
			st.r[st.vals[j].k] = p + q + 2 // 2 × the mid-rank of positions p+1 … q+1
		}
		p = q + 1
	}
	t := 0
	for i := range st.n() {
		t += st.r[3*i]
	}
	return t
}

// tails returns P(T ≥ t) and P(T ≤ t) under the null at shift θ, t being
// the observed statistic there.
func (st *aligned) tails(theta float64) (upper, lower float64) {
	return st.tailsAt(st.rank(theta))
}

// tailsAt returns P(T ≥ t) and P(T ≤ t) under the null of the last rank.
func (st *aligned) tailsAt(t int) (upper, lower float64) {
	if st.normal || st.n() > exactMax {
		return normalTails(st.r, t)
	}
	return exactTails(st.r, t, &st.dist, &st.next)
}

// exactTails returns P(T ≥ t) and P(T ≤ t) for T = Σᵢ Xᵢ, Xᵢ uniform on
// the triple r[3i:3i+3] (integers), independent. dist and next are scratch.
func exactTails(r []int, t int, dist, next *[]float64) (upper, lower float64) {
	n := len(r) / 3
	total, odd := 0, 0
	for i := range n {
		a, b, c := r[3*i], r[3*i+1], r[3*i+2]
		lo := min(a, b, c)
		total += max(a, b, c) - lo
		odd |= (a - lo) | (b - lo) | (c - lo)
	}
	// Without ties every offset within a triple is even (doubled ranks):
	// the DP then runs on half the width.
	step := 2 - odd&1
	total /= step
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
		a, b, c = (a-lo)/step, (b-lo)/step, (c-lo)/step
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
	// T = base + step·x: T ≥ t ⇔ x ≥ ⌈(t−base)/step⌉, T ≤ t ⇔ x ≤ ⌊(t−base)/step⌋.
	up, down := ceilDiv(t-base, step), floorDiv(t-base, step)
	for x, p := range d[:width+1] {
		if x >= up {
			upper += p
		}
		if x <= down {
			lower += p
		}
	}
	return math.Min(upper, 1), math.Min(lower, 1)
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int) int { return -floorDiv(-a, b) }

// normalTails is exactTails by the normal approximation with the exact mean
// and variance and a continuity correction of 1 (half the lattice step of
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
	return normSF((float64(t) - 1 - mean) / sd), normSF((mean - float64(t) - 1) / sd)
}

// differences returns the sorted 2n² differences uᵢ − v (aligned at θ = 0).
func (st *aligned) differences() []float64 {
	if st.diffs != nil {
		return st.diffs
	}
	n := st.n()
	u := make([]float64, n)
	v := make([]float64, 0, 2*n)
	for i := range n {
		m := (st.b[i] + st.a[i] + st.a2[i]) / 3
		u[i] = st.b[i] - m
		v = append(v, st.a[i]-m, st.a2[i]-m)
	}
	d := make([]float64, 0, 2*n*n)
	for _, x := range u {
		for _, y := range v {
			d = append(d, x-y)
		}
	}
	sort.Float64s(d)
	st.diffs = d
	return d
}

// estimate returns the shift at which T equals its null mean: the median of
// the differences; NaN without rounds.
func (st *aligned) estimate() float64 { return median(st.differences()) }

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

// interval returns the ends of {θ : neither one-sided test rejects}: θ
// below lo is rejected as too small (P(T ≥ t) ≤ aUp), above hi as too large
// (P(T ≤ t) ≤ aDown). The ends are differences; −Inf or +Inf when no
// shift is rejected on that side (a level of 0 rejects none). The search
// assumes the tails monotone in θ, which they are up to ties.
func (st *aligned) interval(aUp, aDown float64) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if st.n() == 0 {
		return lo, hi
	}
	d := st.differences()
	N := len(d)
	tooSmall := func(k int) bool { up, _ := st.tails(gap(d, k)); return up > aUp }
	tooLarge := func(k int) bool { _, low := st.tails(gap(d, k)); return low <= aDown }
	if aUp > 0 {
		switch k := searchTails(st, N+1, tooSmall); {
		case k > N:
			lo = math.Inf(1) // every shift rejected as too small (a level of 1)
		case k > 0:
			lo = d[k-1]
		}
	}
	if aDown > 0 {
		switch k := searchTails(st, N+1, tooLarge) - 1; {
		case k < 0:
			hi = math.Inf(-1)
		case k < N:
			hi = d[k]
		}
	}
	return lo, hi
}

// searchTails is sort.Search(m, pred) for a pred built on st.tails: with
// the normal approximation first, then exactly, galloping from there.
func searchTails(st *aligned, m int, pred func(int) bool) int {
	if st.n() > exactMax {
		return sort.Search(m, pred)
	}
	return searchNear(m, sortNormal(st, m, pred), pred)
}

// sortNormal runs sort.Search(m, pred) with st's tails computed by the
// normal approximation.
func sortNormal(st *aligned, m int, pred func(int) bool) int {
	st.normal = true
	defer func() { st.normal = false }()
	return sort.Search(m, pred)
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

// alignedMinRounds returns the fewest untied rounds with P(T at its
// extreme) = 3⁻ⁿ ≤ a: the fewest that give a finite (1−2a) interval (4 for
// a = 0.025).
func alignedMinRounds(a float64) int {
	n := 1
	for math.Pow(3, -float64(n)) > a*(1+1e-9) && n < 1000 {
		n++
	}
	return n
}

// labels holds, for each Monte Carlo replicate, which of a round's three
// values plays B (0 B's own, 1 A's, 2 A”s), by round. Replicate 0 is the
// observed labelling (all 0): under "no difference" it is exchangeable with
// the random ones, so a boundary that lets at most ⌊spend·(reps+1)⌋ of all
// reps+1 paths cross lets the observed one cross with probability at most
// spend. (Leaving it out lets about one replicate's worth more through at
// every look: 2.9% instead of 2.5% a tail over 27 looks with 4000
// replicates.) A replicate's labels depend only on the seed and its index,
// so a prefix of rounds draws the same labels whatever the total.
type labels [][]uint8

func newLabels(reps, rounds int, seed uint64) labels {
	l := make(labels, reps+1)
	l[0] = make([]uint8, rounds)
	for r := 1; r < len(l); r++ {
		g := rand.New(rand.NewPCG(seed, uint64(r-1)))
		l[r] = make([]uint8, rounds)
		for i := range l[r] {
			l[r][i] = uint8(g.IntN(3))
		}
	}
	return l
}

// rankBoundary computes, look by look, the critical value of one tail of a
// group-sequential aligned-rank test. The null distribution is the label
// permutation distribution conditional on the looks' values: replicate r's
// statistic at a look is the sum of the doubled ranks its labels pick. The
// critical value cⱼ is the least extreme value such that the share of
// replicates that have crossed by look j (T ≥ cⱼ upper, T ≤ cⱼ lower) is
// at most the cumulative spend.
type rankBoundary struct {
	upper   bool
	lab     labels
	alive   []bool
	crossed int
	stat    []int
	count   []int
}

func newRankBoundary(lab labels, upper bool) *rankBoundary {
	b := &rankBoundary{upper: upper, lab: lab, alive: make([]bool, len(lab)), stat: make([]int, len(lab))}
	for r := range b.alive {
		b.alive[r] = true
	}
	return b
}

// noCross is a critical value no statistic reaches on either tail.
const noCross = math.MaxInt / 4

// next returns the critical value (doubled) of the next look over st, which
// must have been ranked at the boundary's shift, with cumulative spend
// spend. An upper boundary of noCross (lower −noCross) lets nothing cross.
func (b *rankBoundary) next(st *aligned, spend float64) int {
	reps := len(b.lab)
	alive, lo, hi := 0, math.MaxInt, math.MinInt
	for r := range reps {
		if !b.alive[r] {
			continue
		}
		t := 0
		lr := b.lab[r]
		for a, i := range st.idx {
			t += st.r[3*a+int(lr[i])]
		}
		if !b.upper {
			t = -t
		}
		b.stat[r] = t
		alive++
		lo, hi = min(lo, t), max(hi, t)
	}
	budget := int(math.Floor(spend*float64(reps)+1e-9)) - b.crossed
	c := noCross
	switch {
	case budget < 0:
	case budget >= alive:
		c = -noCross
	default:
		// The (budget+1)-th largest value v must not cross: c = v+1.
		// The values are integers within 6n² of each other: count them.
		if cap(b.count) < hi-lo+1 {
			b.count = make([]int, hi-lo+1)
		}
		count := b.count[:hi-lo+1]
		clear(count)
		for r := range reps {
			if b.alive[r] {
				count[b.stat[r]-lo]++
			}
		}
		seen := 0
		for v := hi - lo; v >= 0; v-- {
			seen += count[v]
			if seen > budget {
				c = lo + v + 1
				break
			}
		}
	}
	for r := range reps {
		if b.alive[r] && b.stat[r] >= c {
			b.alive[r] = false
			b.crossed++
		}
	}
	if !b.upper {
		return -c
	}
	return c
}
