package decodegap

import (
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"
)

// isLastCall reports whether testing will not call the benchmark function
// again after this call, so that Run logs once rather than once per call.
//
// testing calls a benchmark function first with b.N = 1, then, for
// -benchtime=Nx, once with b.N = N; for -benchtime=D it calls it with
// growing b.N until the timed duration reaches D (or b.N reaches 1e9). The
// log of every call is kept and printed together, so only the last call may
// speak. The time-based rule is read from b.Elapsed, which testing adds to
// after Run returns: a call judged last is last; a call that ends within
// microseconds of D may be judged not last and print nothing.
func isLastCall(b *testing.B) bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return true
	}
	return lastCall(f.Value.String(), b.N, b.Elapsed())
}

// lastCall is isLastCall's rule on plain values: benchtime as -benchtime
// prints it, the b.N of this call and the benchmark time elapsed so far.
func lastCall(benchtime string, n int, elapsed time.Duration) bool {
	if s, ok := strings.CutSuffix(benchtime, "x"); ok {
		want, err := strconv.Atoi(s)
		if err != nil {
			return true
		}
		if want <= 1 {
			return n == 1
		}
		return n == want
	}
	d, err := time.ParseDuration(benchtime)
	if err != nil {
		return true
	}
	return elapsed >= d || n >= 1e9
}
