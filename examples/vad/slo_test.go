package vad

import (
	"flag"
	"fmt"
	"testing"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// slo enables BenchmarkVADCapacity, whose search runs for minutes.
var slo = flag.Bool("slo", false, "run BenchmarkVADCapacity (an arrival-rate search per session count)")

// CapacitySessions are the session counts BenchmarkVADCapacity sizes.
var CapacitySessions = []int{1, 2, 4}

// BenchmarkVADCapacity answers the question an operator sizing a VAD
// service asks: how many frames per second can each of 1, 2 and 4
// concurrent sessions (streams) send before p99 response time, queueing
// included, exceeds one frame (32 ms)? Each session is one Silero VAD
// instance with one intra-op thread and no spinning, serving its own
// open-loop arrival stream; decodegap.SearchRate brackets and bisects the
// per-session rate, each probe a sub-benchmark of -benchtime=Nx steps per
// session. Real time is one frame per 32 ms (31.25/s) per session. It runs
// only with -slo:
//
//	go test -run '^$' -bench VADCapacity -benchtime=3s ./examples/vad -args -slo
func BenchmarkVADCapacity(b *testing.B) {
	if !*slo {
		b.Skip("BenchmarkVADCapacity searches arrival rates for minutes: pass -slo to run it")
	}
	ort.Require(b)
	opts := ort.Options{IntraOpThreads: 1, Spinning: ort.SpinOff}
	for _, n := range CapacitySessions {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			cfg := decodegap.RunConfig{
				Gap:      decodegap.Gap{Shape: decodegap.GapExponential},
				Sessions: n,
				Warmup:   warmup,
				SLO:      decodegap.SLO{Percentile: 99, Limit: RealtimeGap},
			}
			decodegap.SearchRate(b, cfg, Open(opts, 1), decodegap.Rates{Start: 250, Tolerance: 0.05, MaxProbes: 16})
		})
	}
}
