// Package radix sorts int64 values in linear time: a least-significant
// digit radix sort, a byte per pass, only as many passes as the largest
// value has bytes. Detect sorts its packed keys with it, and Run the
// latencies and gaps of a run it summarizes: on long series it is several
// times faster than a comparison sort (BenchmarkSort).
package radix

import (
	"math/bits"
	"slices"
)

// minLen is the length below which Sort uses slices.Sort: the passes'
// fixed cost (a 2 KiB count table to clear and sum per byte) is then not
// repaid.
const minLen = 256

// Sort sorts xs in increasing order, using buf (at least len(xs) values,
// left overwritten) as the other half of each pass. When xs holds a
// negative value, or buf is too short, or xs is short, it sorts with
// slices.Sort instead.
func Sort(xs, buf []int64) {
	n := len(xs)
	if n < minLen || len(buf) < n {
		slices.Sort(xs)
		return
	}
	var or int64
	for _, x := range xs {
		or |= x
	}
	if or < 0 {
		slices.Sort(xs)
		return
	}
	passes := (bits.Len64(uint64(or)) + 7) / 8
	// One count table, counted afresh at each pass: a table per pass would
	// put 16 KiB on the goroutine's stack, whose growth on a first call
	// costs more than the extra reads.
	var c [256]int
	src, dst := xs, buf[:n]
	for p := range passes {
		shift := 8 * p
		clear(c[:])
		for _, x := range src {
			c[byte(x>>shift)]++
		}
		if c[byte(src[0]>>shift)] == n {
			continue // every value has this byte: the pass would keep the order
		}
		sum := 0
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		for _, x := range src {
			d := byte(x >> shift)
			dst[c[d]] = x
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
}
