package nullband

import (
	"fmt"
	"math"
	mbits "math/bits"
	"math/rand/v2"
)

// Spending is the α-spending function of the sequential mode (Lan & DeMets
// 1983): how much of the error rate α may have been spent by information
// fraction t = rounds / Options.MaxRounds.
type Spending int

const (
	// Pocock spends α·ln(1 + (e−1)·t): nearly even over the looks, so a
	// clear effect stops early, at some cost in power at the last look.
	// It is the zero Spending.
	Pocock Spending = iota
	// OBrienFleming spends 2·(1 − Φ(z₁₋α/₂ / √t)) (two-sided; one-sided
	// with z₁₋α): almost nothing early, nearly all of α at the last look.
	OBrienFleming
)

// String returns "pocock" or "obrien-fleming".
func (s Spending) String() string {
	switch s {
	case Pocock:
		return "pocock"
	case OBrienFleming:
		return "obrien-fleming"
	}
	return fmt.Sprintf("Spending(%d)", int(s))
}

// spent returns the cumulative error rate spent by fraction t of total level
// a; sides is 2 for a two-sided test (a split over both tails), 1 for one.
func (s Spending) spent(a, t float64, sides int) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return a
	}
	if s == OBrienFleming {
		return float64(sides) * normSF(normQuantile(1-a/float64(sides))/math.Sqrt(t))
	}
	return a * math.Log(1+(math.E-1)*t)
}

// tail selects which W⁺ values cross a boundary.
type tail int

const (
	twoSided  tail = iota // W⁺ ≤ k−1 or W⁺ ≥ N+1−k
	lowerTail             // W⁺ ≤ k−1: the values lie below the hypothesised centre
	upperTail             // W⁺ ≥ N+1−k
)

// signs holds, for each Monte Carlo replicate, one random sign per round:
// bit i%64 of word i/64. A replicate's signs depend only on the seed and its
// index, so a prefix of rounds draws the same signs whatever the total.
type signs [][]uint64

func newSigns(reps, rounds int, seed uint64) signs {
	words := (rounds + 63) / 64
	s := make(signs, reps)
	for r := range s {
		g := rand.New(rand.NewPCG(seed, uint64(r)))
		s[r] = make([]uint64, words)
		for w := range s[r] {
			s[r][w] = g.Uint64()
		}
	}
	return s
}

// boundary computes, look by look, the critical indices kⱼ of a
// group-sequential signed-rank test of H₀: the values x[i]−shift are
// symmetric about 0.
//
// The null distribution is the sign-flip distribution conditional on the
// magnitudes |x[i]−shift|: replicate r gives round i the sign of bit i of
// sg[r], and its statistic at a look is the sum of the midranks (among the
// look's rounds) of the rounds it marks positive, zeros counting half their
// rank; the observed signs count as one more replicate. kⱼ is the largest
// index such that the share of replicates that have
// crossed a boundary by look j is at most the cumulative spend; crossing at
// look j means W⁺ ≤ kⱼ−1 (lower), W⁺ ≥ Nⱼ+1−kⱼ (upper) or either
// (two-sided), Nⱼ = mⱼ(mⱼ+1)/2. The interval [W₍kⱼ₎, W₍Nⱼ+1−kⱼ₎] of look j's
// Walsh averages excludes shift exactly when the data cross (with untied
// magnitudes).
type boundary struct {
	x       []float64
	shift   float64
	t       tail
	sg      signs
	alive   []bool
	crossed int
	rank2   []int    // twice the midrank, by round
	mask    []uint64 // rounds of the look whose sign flips
	stat    []int    // twice the distance to the edge, per replicate
	count   []int
}

func newBoundary(x []float64, shift float64, t tail, sg signs) *boundary {
	words := (len(x) + 63) / 64
	if len(sg) > 0 {
		words = len(sg[0])
	}
	// The observed signs join the replicates (as labels do in
	// newLabels): exchangeable with them under the null, they keep the
	// observed crossing probability within the spend.
	obs := make([]uint64, words)
	for i, v := range x {
		if v-shift > 0 {
			obs[i/64] |= 1 << (uint(i) % 64)
		}
	}
	sg = append(signs{obs}, sg...)
	b := &boundary{x: x, shift: shift, t: t, sg: sg, alive: make([]bool, len(sg)),
		rank2: make([]int, 64*words), mask: make([]uint64, words), stat: make([]int, len(sg))}
	for r := range b.alive {
		b.alive[r] = true
	}
	return b
}

// next returns the critical index of the next look, over rounds idx
// (indices into x), with cumulative spend spend.
func (b *boundary) next(idx []int, spend float64) int {
	m := len(idx)
	if m == 0 {
		return 0
	}
	reps := len(b.sg)
	y := make([]float64, m)
	for a, i := range idx {
		y[a] = b.x[i] - b.shift
	}
	ranks, _ := midranks(y)
	clear(b.mask)
	fixed := 0
	for a, i := range idx {
		b.rank2[i] = int(math.Round(2 * ranks[a]))
		if y[a] == 0 {
			fixed += b.rank2[i] / 2
		} else {
			b.mask[i/64] |= 1 << (uint(i) % 64)
		}
	}
	top := m * (m + 1) // twice N
	if cap(b.count) < top+1 {
		b.count = make([]int, top+1)
	}
	count := b.count[:top+1]
	clear(count)
	for r := range reps {
		if !b.alive[r] {
			continue
		}
		w := fixed
		for k, word := range b.sg[r] {
			bits := word & b.mask[k]
			for bits != 0 {
				w += b.rank2[k*64+mbits.TrailingZeros64(bits)]
				bits &= bits - 1
			}
		}
		var e int
		switch b.t {
		case twoSided:
			e = min(w, top-w)
		case lowerTail:
			e = w
		case upperTail:
			e = top - w
		}
		b.stat[r] = e
		count[e]++
	}
	// k is the largest index with #{e ≤ 2(k−1)} ≤ budget: find the
	// (budget+1)-th smallest e = v; then 2(k−1) < v.
	budget := int(math.Floor(spend*float64(reps)+1e-9)) - b.crossed
	limit := (top/2 + 1) / 2
	k := limit
	if budget < 0 {
		k = 0
	} else {
		seen := 0
		for v, c := range count {
			seen += c
			if seen > budget {
				k = (v + 1) / 2
				break
			}
		}
	}
	k = max(0, min(k, limit))
	for r := range reps {
		if b.alive[r] && b.stat[r] <= 2*(k-1) {
			b.alive[r] = false
			b.crossed++
		}
	}
	return k
}

// seqK returns the critical index of every look (see boundary).
func seqK(x []float64, shift float64, looks [][]int, spend []float64, t tail, sg signs) []int {
	b := newBoundary(x, shift, t, sg)
	ks := make([]int, len(looks))
	for j, idx := range looks {
		ks[j] = b.next(idx, spend[j])
	}
	return ks
}
