package interleave

// BaseOps is the number of xorshift rounds Step does at work=100.
const BaseOps = 20000

// Step does work percent of BaseOps rounds of xorshift64 from a fixed seed
// and returns the final state (so the compiler cannot drop the loop) and the
// number of rounds done. Its time is proportional to work: 110 is 10% more
// than 100. work ≤ 0 does nothing.
func Step(work int) (state uint64, rounds int) {
	x := uint64(0x9e3779b97f4a7c15)
	n := BaseOps * work / 100
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x, max(n, 0)
}
