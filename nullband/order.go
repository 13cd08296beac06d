package nullband

import "math/rand/v2"

// Orders draws the run order of rounds rounds of n arms from seed: for each
// round a uniformly random permutation of 0..n-1, drawn again while it would
// start with the arm that ended the round before, so no arm runs twice in a
// row anywhere (with one arm that is impossible, and allowed). The same n,
// rounds and seed give the same orders. decodegap.Compare uses it for arms
// inside one process; package interleave draws the same orders one round at
// a time with NewOrder.
func Orders(n, rounds int, seed uint64) [][]int {
	o := NewOrder(n, seed)
	out := make([][]int, rounds)
	for i := range out {
		out[i] = o.Next()
	}
	return out
}

// Order draws the orders of Orders one round at a time, for a caller that
// does not know in advance how many rounds it will run. The k-th call of
// Next returns Orders(n, k, seed)[k-1].
type Order struct {
	r    *rand.Rand
	n    int
	last int // the arm that ended the previous round; -1 before the first
}

// NewOrder returns the order generator of n arms from seed.
func NewOrder(n int, seed uint64) *Order {
	return &Order{r: rand.New(rand.NewPCG(seed, 0x6e756c6c62616e64)), n: n, last: -1} // "nullband"
}

// Next returns the next round's order, a fresh slice the caller owns.
func (o *Order) Next() []int {
	perm := o.r.Perm(o.n)
	for o.n > 1 && perm[0] == o.last {
		perm = o.r.Perm(o.n)
	}
	if o.n > 0 {
		o.last = perm[o.n-1]
	}
	return perm
}
