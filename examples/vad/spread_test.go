package vad

import (
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ortgo "github.com/yalue/onnxruntime_go"
	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// The -spread.* flags configure BenchmarkVADSpread, the instrument of
// docs/noise-levels.md: how much the median step of a block at a 2 ms gap
// moves from block to block, with each candidate cause of that spread
// switched on or off. scripts/spread.sh runs every candidate.
var (
	spreadOn      = flag.Bool("spread", false, "run BenchmarkVADSpread (block-to-block spread of the median step; scripts/spread.sh)")
	spreadHarness = flag.String("spread.harness", "compare", "compare: blocks are decodegap.Compare's (one arm, no null arm; -count blocks of -benchtime=Nx); bare: a plain loop with no harness")
	spreadGap     = flag.Duration("spread.gap", 2*time.Millisecond, "the gap before each step")
	spreadKind    = flag.String("spread.kind", "hybrid", "how the gap is spent: hybrid, sleep or busy (decodegap.GapKind)")
	spreadSession = flag.String("spread.session", "fresh", "fresh: a new ONNX Runtime session for each block; reused: one session for every block")
	spreadIntra   = flag.Int("spread.intra", 1, "ort.Options.IntraOpThreads")
	spreadSpin    = flag.String("spread.spin", "on", "ort.Options.Spinning: on or off")
	spreadArena   = flag.String("spread.arena", "default", "ort.Options.Arena: default, on or off")
	spreadDenorm  = flag.Bool("spread.denormal-zero", false, "set session.set_denormal_as_zero (flush denormal floats to zero)")
	spreadCPUs    = flag.String("spread.cpus", "", "confine to these CPUs (comma list): CompareConfig.Budget.CPUs, or sched_setaffinity of the loop's thread when bare")
	spreadPinStep = flag.Int("spread.pin-thread", -1, "pin the thread that calls the model (Compare's measuring thread) to this CPU after each session opens, leaving ONNX Runtime's pool threads free; -1: no")
)

// BenchmarkVADSpread measures the block-to-block spread of the Silero VAD's
// median step under the -spread.* flags. It runs only with -spread. With
// -spread.harness=compare each block is one round of decodegap.Compare with
// a single arm, reported as a BenchmarkVADSpread/arm=a line with p50-ns/op;
// with bare each block is a plain loop, reported as a
// BenchmarkVADSpread/bare line with p50-ns/op.
func BenchmarkVADSpread(b *testing.B) {
	if !*spreadOn {
		b.Skip("BenchmarkVADSpread measures the block-to-block spread for docs/noise-levels.md: pass -spread (scripts/spread.sh runs it)")
	}
	ort.Require(b)
	opts, err := spreadOptions()
	if err != nil {
		b.Fatal(err)
	}
	cpus, err := parseCPUs(*spreadCPUs)
	if err != nil {
		b.Fatal(err)
	}
	kind, ok := map[string]decodegap.GapKind{"hybrid": decodegap.GapHybrid, "sleep": decodegap.GapSleep, "busy": decodegap.GapBusy}[*spreadKind]
	if !ok {
		b.Fatalf("-spread.kind=%q: want hybrid, sleep or busy", *spreadKind)
	}
	open := spreadOpener(b, opts)
	if *spreadPinStep >= 0 {
		open = pinningOpener(open, *spreadPinStep)
	}
	switch *spreadHarness {
	case "compare":
		decodegap.Compare(b, decodegap.CompareConfig{
			Gap:       decodegap.Gap{Mean: *spreadGap, Kind: kind},
			Warmup:    warmup,
			Seed:      1,
			NoNullArm: true,
			Budget:    decodegap.Budget{CPUs: cpus},
		}, decodegap.Arm{Name: "a", Open: open})
	case "bare":
		if kind == decodegap.GapHybrid {
			b.Fatal("-spread.harness=bare spends the gap as sleep or busy: pass -spread.kind=sleep or busy")
		}
		b.Run("bare", func(b *testing.B) { bareBlocks(b, open, kind == decodegap.GapBusy, cpus) })
	default:
		b.Fatalf("-spread.harness=%q: want compare or bare", *spreadHarness)
	}
}

// spreadOptions returns the ort.Options the -spread.* flags name.
func spreadOptions() (ort.Options, error) {
	o := ort.Options{IntraOpThreads: *spreadIntra}
	switch *spreadSpin {
	case "on":
	case "off":
		o.Spinning = ort.SpinOff
	default:
		return o, fmt.Errorf("-spread.spin=%q: want on or off", *spreadSpin)
	}
	switch *spreadArena {
	case "default":
	case "on":
		o.Arena = ort.On
	case "off":
		o.Arena = ort.Off
	default:
		return o, fmt.Errorf("-spread.arena=%q: want default, on or off", *spreadArena)
	}
	if *spreadDenorm {
		o.Custom = func(so *ortgo.SessionOptions) error {
			return so.AddSessionConfigEntry("session.set_denormal_as_zero", "1")
		}
	}
	return o, nil
}

// parseCPUs parses a comma list of CPU numbers; "" is none.
func parseCPUs(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for f := range strings.SplitSeq(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 0 {
			return nil, fmt.Errorf("-spread.cpus=%q: want a comma list of CPU numbers", s)
		}
		cpus = append(cpus, c)
	}
	return cpus, nil
}

// reusedVAD is the one session of -spread.session=reused.
var reusedVAD *ort.VAD

// spreadOpener returns an Opener of VAD steps with opts: a fresh session
// each call, or with -spread.session=reused the same one every call (kept
// until the process exits).
func spreadOpener(b *testing.B, opts ort.Options) decodegap.Opener {
	switch *spreadSession {
	case "fresh":
		return func() (decodegap.Step, func() error, error) {
			v, err := ort.OpenVAD(ort.VADConfig{Options: opts})
			if err != nil {
				return nil, nil, err
			}
			return v.Step, v.Close, nil
		}
	case "reused":
		if reusedVAD == nil {
			v, err := ort.OpenVAD(ort.VADConfig{Options: opts})
			if err != nil {
				b.Fatal(err)
			}
			reusedVAD = v // kept until the process exits: -count calls the benchmark again
		}
		v := reusedVAD
		return func() (decodegap.Step, func() error, error) { return v.Step, nil, nil }
	}
	b.Fatalf("-spread.session=%q: want fresh or reused", *spreadSession)
	return nil
}

// bareBlocks runs -test.count blocks (b.N steps each after the warm-up) in
// a plain loop on one locked OS thread: the gap slept with clock_nanosleep
// or spun, each step timed with the monotonic clock, the block's median
// reported as p50-ns/op. It runs once whatever b.N testing picks first.
func bareBlocks(b *testing.B, open decodegap.Opener, busy bool, cpus []int) {
	if b.N == 1 {
		return // testing's probe run
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if len(cpus) > 0 {
		var set unix.CPUSet
		for _, c := range cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			b.Fatalf("sched_setaffinity %v: %v", cpus, err)
		}
	}
	lat := make([]int64, b.N)
	step, closeFn, err := open()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if closeFn != nil {
			_ = closeFn()
		}
	}()
	gapNs := spreadGap.Nanoseconds()
	for i := -warmup; i < b.N; i++ {
		if busy {
			end := time.Now().Add(*spreadGap)
			for time.Now().Before(end) {
			}
		} else {
			ts := unix.NsecToTimespec(gapNs)
			_ = unix.Nanosleep(&ts, nil)
		}
		t0 := time.Now()
		if err := step(); err != nil {
			b.Fatal(err)
		}
		if i >= 0 {
			lat[i] = int64(time.Since(t0))
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns/op")
}

// pinningOpener returns open with the calling thread pinned to cpu once
// the session is open: Compare calls Open on its locked measuring thread,
// so the steps run there; the pool threads the session started keep the
// affinity they were born with.
func pinningOpener(open decodegap.Opener, cpu int) decodegap.Opener {
	return func() (decodegap.Step, func() error, error) {
		step, closeFn, err := open()
		if err != nil {
			return nil, nil, err
		}
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			if closeFn != nil {
				_ = closeFn()
			}
			return nil, nil, fmt.Errorf("-spread.pin-thread=%d: sched_setaffinity: %w", cpu, err)
		}
		return step, closeFn, nil
	}
}
