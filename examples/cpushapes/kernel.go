package cpushapes

import "sync/atomic"

// UnitRounds is the number of xorshift64 rounds of one unit of work (w = 1):
// about 100 µs of CPU on the 2-vCPU hosts this was written on (1.5 ns a
// round). The figure only sets the scale; every test compares CPU time with
// CPU time measured on the same host, never with this constant.
const UnitRounds = 67000

// sink keeps every kernel's result live, so the compiler keeps the loops.
// It is atomic because FanOut's goroutines add to it at once.
var sink atomic.Uint64

// Rounds returns the rounds of w units of work, rounded down; 0 for w ≤ 0.
func Rounds(w float64) int {
	if !(w > 0) {
		return 0
	}
	return int(w * UnitRounds)
}

// Spin runs rounds rounds of xorshift64 from seed and returns the final
// state: a deterministic, CPU-bound kernel with no memory traffic, whose
// time is proportional to rounds. rounds ≤ 0 returns seed.
func Spin(seed uint64, rounds int) uint64 {
	x := seed | 1
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// work does rounds rounds of the kernel and adds the result to sink.
func work(rounds int) { sink.Add(Spin(0x9e3779b97f4a7c15, rounds)) }
