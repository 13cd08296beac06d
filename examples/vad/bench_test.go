package vad

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/nullband"
)

// realtime enables BenchmarkVADRealtime, which paces steps at 32 ms.
var realtime = flag.Bool("realtime", false, "run BenchmarkVADRealtime (steps 32 ms apart: N of -benchtime=Nx × 32 ms per arm per round)")

// Gaps are the decode-like gaps BenchmarkVAD compares the arms at: none
// (what a plain b.N loop measures), 100 µs (a busy server between calls) and
// 2 ms (long enough for a blocked pool thread to be descheduled). bench.sh
// selects them by name (-bench '^BenchmarkVAD$/^gap=2ms$'): change both.
var Gaps = []time.Duration{0, 100 * time.Microsecond, 2 * time.Millisecond}

// RealtimeGap is the pace of real use: one 32 ms frame of audio every 32 ms.
const RealtimeGap = 32 * time.Millisecond

// warmup is the number of steps each block runs before it records: a fresh
// session's first calls allocate and page in the model.
const warmup = 32

// BenchmarkVAD compares Settings at each of Gaps, in interleaved rounds with
// the null arm (decodegap.Compare): one line per arm per round,
// BenchmarkVAD/gap=G/arm=NAME, and at the end of each gap's output the
// order used and every arm's verdict against intra1-spin. -count is the
// number of rounds, N of -benchtime=Nx the steps per block:
//
//	go test -run '^$' -bench 'BenchmarkVAD$' -benchtime=600x -count 8 | tee out.txt
//	go tool benchstat -col /arm out.txt
func BenchmarkVAD(b *testing.B) {
	ort.Require(b)
	for _, g := range Gaps {
		b.Run(fmt.Sprintf("gap=%v", g), func(b *testing.B) {
			compareAt(b, g)
		})
	}
}

// BenchmarkVADRealtime is BenchmarkVAD at real-time pace, 32 ms between
// steps. It runs only with -realtime, since a block of -benchtime=Nx lasts
// N × 32 ms: with -benchtime=100x -count 5, 5 arms take 80 s.
//
//	go test -run '^$' -bench 'BenchmarkVADRealtime' -realtime -benchtime=100x -count 5
func BenchmarkVADRealtime(b *testing.B) {
	if !*realtime {
		b.Skipf("BenchmarkVADRealtime paces steps %v apart, so each arm's block of -benchtime=Nx takes N × %v per round: pass -realtime to run it", RealtimeGap, RealtimeGap)
	}
	ort.Require(b)
	b.Run(fmt.Sprintf("gap=%v", RealtimeGap), func(b *testing.B) {
		compareAt(b, RealtimeGap)
	})
}

// sliceFlag is CompareConfig.Slice for every gap of BenchmarkVAD.
var sliceFlag = flag.Int("vad.slice", 0, "CompareConfig.Slice: the arms of a round take turns of this many recorded steps (0: Compare chooses, turns at gaps of 1ms or more; -1: each arm's block runs whole)")

// budgetFlag is CompareConfig.TimeBudget for each gap of BenchmarkVAD.
var budgetFlag = flag.Duration("vad.budget", 0, "CompareConfig.TimeBudget: each gap's rounds stop once every verdict is decided, -count rounds ran, or this budget cannot pay for another round (0: no budget)")

// deltaFlag is CompareConfig.Verdict.Delta for every gap of BenchmarkVAD.
var deltaFlag judge.Delta

func init() {
	flag.Var(&deltaFlag, "vad.delta", "CompareConfig.Verdict.Delta: the margin of \"equivalent\" (5%: within ±5%); unset, nullband's ±2%")
}

// compareAt runs Settings at gap g in interleaved rounds.
// With -vad.truth the arms are the ground truth's (truthArms).
func compareAt(b *testing.B, g time.Duration) {
	arms := Arms(Settings, 0)
	if *truthFlag != "" {
		fracs, err := parseTruth(*truthFlag)
		if err != nil {
			b.Fatal(err)
		}
		arms = truthArms(b, g, fracs)
	}
	decodegap.Compare(b, decodegap.CompareConfig{
		Gap:        decodegap.Gap{Mean: g},
		Warmup:     warmup,
		Seed:       1,
		Slice:      *sliceFlag,
		TimeBudget: *budgetFlag,
		Verdict:    nullband.Options{Delta: float64(deltaFlag)},
	}, arms...)
}

// BenchmarkVADCensus runs the 2-thread arm at a 2 ms gap with spinning on
// and off under decodegap.Run, which takes the thread census: Run opens the
// VAD after it has listed the process's threads, so ONNX Runtime's intra-op
// pool thread is attributed to "setup/open", and the log says where the CPU
// of the steady window went. RunConfig.Parity checks the
// outputs against Reference before anything is timed.
//
//	go test -run '^$' -bench 'BenchmarkVADCensus' -benchtime=1000x
func BenchmarkVADCensus(b *testing.B) {
	ort.Require(b)
	for _, spin := range []ort.Spinning{ort.SpinOn, ort.SpinOff} {
		b.Run("spin="+spin.String(), func(b *testing.B) {
			opts := ort.Options{IntraOpThreads: 2, Spinning: spin}
			var vad *ort.VAD
			decodegap.Run(b, decodegap.RunConfig{
				Gap:    decodegap.Gap{Mean: 2 * time.Millisecond},
				Warmup: warmup,
				Parity: func() error { return vad.Parity(Reference, ParityFrames, ort.DefaultTolerance) },
			}, func() (decodegap.Step, func() error, error) {
				v, err := ort.OpenVAD(ort.VADConfig{Options: opts})
				if err != nil {
					return nil, nil, err
				}
				vad = v
				return v.Step, v.Close, nil
			})
		})
	}
}
