// Package trials holds the benchmarks of scripts/verdict-trials.sh, the real-host
// trials of nullband's verdict: a pure-Go step of about 35 µs with a 100 µs
// hybrid gap, whose work a flag scales, measured across processes by
// `decodegap interleave` (BenchmarkStep) and in one process by
// decodegap.Compare (BenchmarkCompare).
//
//	go test -bench Compare -benchtime 2000x -count 10 ./examples/trials -args -cand-work 105
//
// runs a 5% slowdown of the candidate arm through Compare; the script
// drives both and counts the verdicts.
package trials

// BaseOps is the number of xorshift rounds Step does at work 100: about
// 35 µs at the median on the 2-vCPU hosts this was written on.
const BaseOps = 20000

// Step does work percent of BaseOps rounds of xorshift64 from a fixed seed
// and returns the final state, so that the compiler keeps the loop. Its time
// is proportional to work: 105 is 5% more than 100. work ≤ 0 does nothing.
func Step(work int) uint64 {
	x := uint64(0x9e3779b97f4a7c15)
	for range BaseOps * work / 100 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
