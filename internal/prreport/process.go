package prreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/interleave"
)

// UnitCPU is the unit of the CPU time per op that ProcessRunner adds: the
// run's process CPU time (user + system, all threads, from wait4) divided
// by the iterations it ran (N + 1: testing runs one probe iteration before
// the N of -test.benchtime=Nx). It includes the process's start, so it
// reads a change low by the start's share (the start is the same in both
// arms); it
// leaves out the time spent waiting for a CPU, which on a shared host is
// most of the noise of sec/op.
const UnitCPU = "cpu-sec/op"

// ProcessRunner runs each arm of a round as its own process with
// interleave's Runner (each run through internal/runner: its own process
// group, a parent-death signal, a per-run timeout), in an order drawn afresh
// each round. A round with a failed run returns that run's
// *interleave.RunError and no results.
//
// Before a job's first round it calibrates the job's N (see calibrate:
// about Benchtime of CPU time a run); every round then runs all three arms
// with -test.benchtime=Nx, so the arms do the same work and no run
// repeats testing's ramp-up. A run that prints exactly one result gets a UnitCPU
// value beside its own.
type ProcessRunner struct {
	// Benchtime is the CPU time a run aims at (e.g. "100ms"), or "Nx" for
	// N iterations a run; empty means 1s.
	Benchtime string
	// Seed seeds the per-round orders (with the job and round mixed in).
	Seed uint64
	// Screener and NoScreen are given to the Runner (see interleave.Runner).
	Screener interleave.Screener
	NoScreen string
	// Log, when non-nil, receives a line per calibration.
	Log io.Writer
	// Timeout bounds each run (see interleave.Runner.Timeout): 0 means
	// runner.DefaultTimeout, runner.NoTimeout none.
	Timeout time.Duration

	n map[*Job]int
}

// RunRound implements RoundRunner.
func (p *ProcessRunner) RunRound(ctx context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	if p.n == nil {
		p.n = map[*Job]int{}
	}
	if p.n[j] == 0 {
		n, err := p.calibrate(ctx, j)
		if err != nil {
			return nil, err
		}
		p.n[j] = n
		if p.Log != nil {
			fmt.Fprintf(p.Log, "%s %s: %d iterations a run (-test.benchtime=%dx)\n", shortPkg(j.Pkg), j.Name, n, n)
		}
	}
	n := p.n[j]
	bt := "-test.benchtime=" + strconv.Itoa(n) + "x"
	arm := func(a interleave.Arm, name string) interleave.Arm {
		a.Name = name
		a.Args = append(append([]string(nil), a.Args...), bt)
		return a
	}
	arms := []interleave.Arm{arm(j.Base, ArmBase), arm(j.Head, ArmHead), arm(j.Base, ArmNull)}
	seed := p.Seed ^ fnv(j.Pkg+" "+j.Name) ^ uint64(round)*0x9e3779b97f4a7c15
	plan, err := interleave.NewPlan(arms, 1, seed)
	if err != nil {
		return nil, err
	}
	rec := &cpuRecorder{inner: p.Screener, noScreen: p.NoScreen}
	r := &interleave.Runner{Plan: plan, Out: io.Discard, Screener: rec, Timeout: p.Timeout}
	runs, err := r.Run(ctx)
	if err != nil {
		return nil, err
	}
	if len(rec.cpu) != len(runs) {
		return nil, fmt.Errorf("prreport: %d runs but %d CPU times", len(runs), len(rec.cpu))
	}
	var out []*benchfmt.Result
	for i, run := range runs {
		if len(run.Results) == 1 && rec.cpu[i] > 0 {
			// A decodegap benchmark reports its own cpu-ns/op (the
			// steady window's, per step): keep it, and add the
			// process's only where the benchmark has none.
			res := run.Results[0]
			if _, has := res.Value(UnitCPU); !has {
				res.Values = append(res.Values, benchfmt.Value{Value: rec.cpu[i].Seconds() / float64(n+1), Unit: UnitCPU})
			}
		}
		for _, res := range run.Results {
			setFileConfig(res, interleave.KeyRound, strconv.Itoa(round))
			out = append(out, res)
		}
	}
	return out, nil
}

// calibrate returns j's iterations per run. Benchtime "Nx" gives N. A
// duration runs j's base once at it (testing picks N0 from wall time),
// then at Nx (N from N0) to read the process CPU time c of N ops, and sets
// N = N × Benchtime / c, up to three times (at least N0, at most 50 × N0),
// so a run's CPU time, not its wall time, is about Benchtime even when the
// host is busy, and the process start stays small beside the work.
func (p *ProcessRunner) calibrate(ctx context.Context, j *Job) (int, error) {
	if n, ok := strings.CutSuffix(p.Benchtime, "x"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return 0, fmt.Errorf("benchtime %q: want a duration or Nx with N ≥ 1", p.Benchtime)
		}
		return v, nil
	}
	bt := p.Benchtime
	if bt == "" {
		bt = "1s"
	}
	d, err := time.ParseDuration(bt)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("benchtime %q: want a duration or Nx with N ≥ 1", p.Benchtime)
	}
	run := func(benchtime string) ([]interleave.Run, time.Duration, error) {
		a := j.Base
		a.Name = "calibrate"
		a.Args = append(append([]string(nil), a.Args...), "-test.benchtime="+benchtime)
		plan, err := interleave.NewPlan([]interleave.Arm{a}, 1, 0)
		if err != nil {
			return nil, 0, err
		}
		rec := &cpuRecorder{noScreen: "calibration run"}
		runs, err := (&interleave.Runner{Plan: plan, Out: io.Discard, Screener: rec, Timeout: p.Timeout}).Run(ctx)
		var cpu time.Duration
		if len(rec.cpu) > 0 {
			cpu = rec.cpu[0]
		}
		return runs, cpu, err
	}
	runs, _, err := run(bt)
	if err != nil {
		return 0, err
	}
	n0 := 0
	for _, r := range runs {
		for _, res := range r.Results {
			if n0 == 0 || res.Iters < n0 {
				n0 = res.Iters
			}
		}
	}
	if n0 < 1 {
		return 0, errors.New("the calibration run reported no iterations")
	}
	// The process's start is part of each CPU time read, so N = N₀ × d / c
	// falls short while the start is a large share of c: repeat until a
	// run's CPU time reaches 80% of d (at most 3 times).
	n := n0
	for range 3 {
		_, cpu, err := run(strconv.Itoa(n) + "x")
		if err != nil {
			return 0, err
		}
		if cpu <= 0 || float64(cpu) >= 0.8*float64(d) {
			break
		}
		n = min(max(int(math.Ceil(float64(n)*float64(d)/float64(cpu))), n), 50*n0)
	}
	return n, nil
}

// cpuRecorder is a Screener that records each run's process CPU time and
// passes the screen on to inner (or says none was taken).
type cpuRecorder struct {
	inner    interleave.Screener
	noScreen string
	cpu      []time.Duration
}

// Begin implements interleave.Screener.
func (c *cpuRecorder) Begin() func(time.Duration) interleave.ScreenResult {
	var end func(time.Duration) interleave.ScreenResult
	if c.inner != nil {
		end = c.inner.Begin()
	}
	return func(cpu time.Duration) interleave.ScreenResult {
		c.cpu = append(c.cpu, cpu)
		if end == nil {
			d := c.noScreen
			if d == "" {
				d = "no contention screen was given"
			}
			return interleave.ScreenResult{Verdict: "unavailable", Detail: d}
		}
		return end(cpu)
	}
}

// fnv is the 64-bit FNV-1a hash of s.
func fnv(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// setFileConfig sets the value of a file configuration key of res that
// res already has (as the Runner's results have round:), or appends it to
// a fresh result.
func setFileConfig(res *benchfmt.Result, key, value string) {
	for i := range res.Config {
		if res.Config[i].Key == key {
			res.Config[i].Value = []byte(value)
			res.Config[i].File = true
			return
		}
	}
	res.Config = append(res.Config, benchfmt.Config{Key: key, Value: []byte(value), File: true})
}
