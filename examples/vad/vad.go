// Package vad is the real workload to copy: Silero VAD v5 run by ONNX Runtime
// at decode-like gaps, comparing the engine's thread and spinning options in
// interleaved rounds with decodegap.Compare, the null arm included.
//
// Silero VAD is a streaming model: one step feeds one 32 ms frame (512
// samples at 16 kHz) and the state the previous step returned. ONNX
// Runtime's intra-op pool keeps its threads between calls; with spinning on
// (ONNX Runtime's default) they busy-wait for the next call, with spinning
// off they block. Between back-to-back calls spinning costs nothing; across a
// 2 ms gap it may burn a core to save the wake-up. The benchmarks measure
// that trade: step latency (ns/op, p50-ns/op, p90-ns/op) against CPU per wall
// second (cpu/wall), arm by arm, round by round.
//
// From the repository root, `make bench` installs ONNX Runtime and the model
// (`make deps`), runs BenchmarkVAD and BenchmarkVADCensus and prints the
// benchstat table and the verdicts. By hand:
//
//	make deps
//	cd examples/vad
//	go test -run '^$' -bench 'BenchmarkVAD$' -benchtime=600x -count 8 | tee out.txt
//	go tool benchstat -col /arm out.txt
//
// The arms (Settings) are named so that `benchstat -col /arm` puts each in a
// column. The first, intra1-spin, is the base of every verdict and of
// benchstat's "vs base" columns, and the null arm is a second instance of it:
// one intra-op thread runs every operator on the calling thread, with no pool
// to wake or to spin, so it strays least from itself on a shared host and
// gives the narrowest null band. With one thread spinning has nothing to act
// on, so intra1-nospin against intra1-spin is a second A/A check. Before any
// arm is timed, Open checks that its outputs match the one-thread reference
// (Reference) within ort.DefaultTolerance.
package vad

import (
	"errors"
	"fmt"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// Reference is the configuration every arm's outputs are checked against
// before it is timed: one intra-op thread, which runs every operator on the
// calling thread in a fixed order.
var Reference = ort.Options{IntraOpThreads: 1}

// ParityFrames is the number of frames the parity check feeds to an arm and
// to the reference from a fresh state: 2 s of the synthetic clip, through
// speech and a pause.
const ParityFrames = 64

// Setting is one configuration compared: a name for the benchmark line and
// the ONNX Runtime session options.
type Setting struct {
	// Name is the arm's name, BenchmarkX/arm=Name: non-empty, without white
	// space or '/', and not "null".
	Name string
	// Options are the session options the arm opens its VAD with.
	Options ort.Options
}

// Settings are the arms BenchmarkVAD compares, the base first: 1 and 2
// intra-op threads, each with spinning on (ONNX Runtime's default) and off.
// intra2-spin is ONNX Runtime's default on a 2-core machine (one thread per
// core, spinning on).
var Settings = []Setting{
	{"intra1-spin", ort.Options{IntraOpThreads: 1, Spinning: ort.SpinOn}},
	{"intra1-nospin", ort.Options{IntraOpThreads: 1, Spinning: ort.SpinOff}},
	{"intra2-spin", ort.Options{IntraOpThreads: 2, Spinning: ort.SpinOn}},
	{"intra2-nospin", ort.Options{IntraOpThreads: 2, Spinning: ort.SpinOff}},
}

// Open returns an Opener of Silero VAD steps with opts on the clip
// ort.SynthAudio(seed, ort.SynthFrames). The first instance it opens is
// checked against Reference over ParityFrames frames before it is returned,
// so a configuration that computes something else is never timed: the error
// then names the output, the frame and both values (an *ort.ParityError).
// Later instances have the same options and are not checked again. The
// Opener is not safe for concurrent use: Compare opens one instance at a
// time.
func Open(opts ort.Options, seed uint64) decodegap.Opener {
	return openChecked(opts, seed, func(v *ort.VAD) error {
		if err := v.Parity(Reference, ParityFrames, ort.DefaultTolerance); err != nil {
			return fmt.Errorf("checking %v against the reference %v before timing: %w", opts, Reference, err)
		}
		return nil
	})
}

// openChecked is Open with the check as a parameter: check runs on the
// first instance opened and on every later one until it has passed once.
func openChecked(opts ort.Options, seed uint64, check func(*ort.VAD) error) decodegap.Opener {
	checked := false
	return func() (decodegap.Step, func() error, error) {
		v, err := ort.OpenVAD(ort.VADConfig{Options: opts, Seed: seed})
		if err != nil {
			return nil, nil, err
		}
		if !checked {
			if err := check(v); err != nil {
				return nil, nil, errors.Join(err, v.Close())
			}
			checked = true
		}
		return v.Step, v.Close, nil
	}
}

// Arms returns one decodegap.Arm per setting, in order, each opening with
// Open(s.Options, seed).
func Arms(settings []Setting, seed uint64) []decodegap.Arm {
	arms := make([]decodegap.Arm, len(settings))
	for i, s := range settings {
		arms[i] = decodegap.Arm{Name: s.Name, Open: Open(s.Options, seed)}
	}
	return arms
}
