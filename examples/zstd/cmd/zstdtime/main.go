// Command zstdtime decodes the stream of examples/zstd -n times at
// decoder concurrency -c in a plain loop, and prints what the process's
// counters say a step cost: a process small enough to time whole.
//
//	/usr/bin/time -v go run ./examples/zstd/cmd/zstdtime -c 4 -n 20000
//
// (or build it first, so that /usr/bin/time times only the decoding
// process: go build -o /tmp/zstdtime ./examples/zstd/cmd/zstdtime).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gapbench/gapbench/examples/cpushapes"
	"github.com/gapbench/gapbench/examples/zstd"
)

func main() {
	c := flag.Int("c", 1, "the decoder's concurrency (WithDecoderConcurrency)")
	n := flag.Int("n", 20000, "streams to decode (each examples/zstd.StreamSize bytes in examples/zstd.Frames frames)")
	flag.Parse()
	if err := zstd.Check(*c); err != nil {
		fmt.Fprintln(os.Stderr, "zstdtime:", err)
		os.Exit(1)
	}
	t, err := cpushapes.GroundTruth(zstd.Open(*c), *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zstdtime:", err)
		os.Exit(1)
	}
	fmt.Printf("zstdtime: concurrency %d, %d streams: %.1f µs of CPU a stream by CLOCK_PROCESS_CPUTIME_ID, %.1f µs by getrusage (user %.1f, sys %.1f), %.1f µs of wall time\n",
		*c, t.N, t.ClockNs/1e3, t.RusageNs/1e3, t.UserNs/1e3, t.SysNs/1e3, t.WallNs/1e3)
}
