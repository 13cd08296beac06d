package nullband

import "math/rand/v2"

// Orders draws the run order of rounds rounds of n arms from seed: for each
// round a uniformly random permutation of 0..n-1, drawn again while it would
// start with the arm that ended the round before, so no arm runs twice in a
// row anywhere (with one arm that is impossible, and allowed). The same n,
// rounds and seed give the same orders. NewPlan uses it for processes;
// decodegap.Compare uses it for arms inside one process.
func Orders(n, rounds int, seed uint64) [][]int {
	r := rand.New(rand.NewPCG(seed, 0x6e756c6c62616e64)) // "nullband"
	out := make([][]int, rounds)
	last := -1
	for i := range rounds {
		perm := r.Perm(n)
		for n > 1 && perm[0] == last {
			perm = r.Perm(n)
		}
		out[i] = perm
		last = perm[n-1]
	}
	return out
}
