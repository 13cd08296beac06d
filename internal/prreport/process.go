package prreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
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
// Before a job's first round it calibrates the job (see calibrate): each
// leaf benchmark (the benchmark, or each of its sub-benchmarks) gets its
// own N, about Benchtime of CPU time a run. A job with sub-benchmarks
// runs each leaf as its own processes (-test.bench selecting it alone),
// its three arms in a row, the leaves in an order drawn each round: a
// 4-byte case and a 64 KiB case of one table-driven benchmark cannot share
// one N without one of them running far from Benchtime (1 µs a block
// instead of 100 ms). Every round then runs all three arms of a leaf with
// -test.benchtime=Nx, so the arms do the same work and no run repeats
// testing's ramp-up. A run that prints exactly one result gets a UnitCPU
// value beside its own.
type ProcessRunner struct {
	// Benchtime is the CPU time a run aims at (e.g. "100ms"), or "Nx" for
	// N iterations a run (every leaf the same N, all of a job's leaves in
	// one process); empty means 1s.
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

	leaves map[*Job][]leaf
}

// leaf is one leaf benchmark of a job and its iterations a run.
type leaf struct {
	// name is the leaf's full name as benchfmt reads it, without
	// "Benchmark" ("Hash/size=4-2"); pattern the -test.bench that runs it
	// alone, "" for the job's own (a benchmark without sub-benchmarks,
	// or -benchtime Nx).
	name, pattern string
	// n is the iterations of each run (-test.benchtime=Nx).
	n int
}

// RunRound implements RoundRunner.
func (p *ProcessRunner) RunRound(ctx context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	if p.leaves == nil {
		p.leaves = map[*Job][]leaf{}
	}
	if p.leaves[j] == nil {
		ls, err := p.calibrate(ctx, j)
		if err != nil {
			return nil, err
		}
		p.leaves[j] = ls
		if p.Log != nil {
			for _, l := range ls {
				name := j.Name
				if l.pattern != "" {
					name = l.name
				}
				fmt.Fprintf(p.Log, "%s %s: %d iterations a run (-test.benchtime=%dx)\n", shortPkg(j.Pkg), name, l.n, l.n)
			}
		}
	}
	ls := p.leaves[j]
	seed := p.Seed ^ fnv(j.Pkg+" "+j.Name) ^ uint64(round)*0x9e3779b97f4a7c15
	order := []int{0}
	if len(ls) > 1 {
		order = rand.New(rand.NewPCG(seed, uint64(len(ls)))).Perm(len(ls))
	}
	var out []*benchfmt.Result
	for _, i := range order {
		l := ls[i]
		s := seed
		if l.pattern != "" {
			s ^= fnv(l.name)
		}
		res, err := p.runLeaf(ctx, j, l, s)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			setFileConfig(r, interleave.KeyRound, strconv.Itoa(round))
			out = append(out, r)
		}
	}
	return out, nil
}

// runLeaf runs leaf l of j once in each arm, in an order drawn from seed.
func (p *ProcessRunner) runLeaf(ctx context.Context, j *Job, l leaf, seed uint64) ([]*benchfmt.Result, error) {
	bt := "-test.benchtime=" + strconv.Itoa(l.n) + "x"
	arm := func(a interleave.Arm, name string) interleave.Arm {
		a = withBench(a, l.pattern)
		a.Name = name
		a.Args = append(a.Args, bt)
		return a
	}
	arms := []interleave.Arm{arm(j.Base, ArmBase), arm(j.Head, ArmHead), arm(j.Base, ArmNull)}
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
		results := run.Results
		if l.pattern != "" {
			// The pattern may also match a leaf whose name is this one's
			// with a -N suffix; keep this leaf's own result.
			results = nil
			for _, res := range run.Results {
				if string(res.Name.Full()) == l.name {
					results = append(results, res)
				}
			}
			if len(results) == 0 {
				return nil, fmt.Errorf("prreport: %s: the %s run printed no result for %s", j.Name, run.Arm, l.name)
			}
		}
		if len(results) == 1 && rec.cpu[i] > 0 {
			// A decodegap benchmark reports its own cpu-ns/op (the
			// steady window's, per step): keep it, and add the
			// process's only where the benchmark has none.
			res := results[0]
			if _, has := res.Value(UnitCPU); !has {
				res.Values = append(res.Values, benchfmt.Value{Value: rec.cpu[i].Seconds() / float64(l.n+1), Unit: UnitCPU})
			}
		}
		out = append(out, results...)
	}
	return out, nil
}

// withBench returns a with its -test.bench argument set to pattern
// (pattern "" leaves a as it is). The Args are a fresh slice.
func withBench(a interleave.Arm, pattern string) interleave.Arm {
	args := append([]string(nil), a.Args...)
	if pattern != "" {
		set := false
		for i, x := range args {
			if strings.HasPrefix(x, "-test.bench=") {
				args[i], set = "-test.bench="+pattern, true
			}
		}
		if !set {
			args = append(args, "-test.bench="+pattern)
		}
	}
	a.Args = args
	return a
}

// leafPattern is the -test.bench pattern that selects the leaf benchmark
// printed as name alone: each level anchored and quoted, the trailing -N
// (GOMAXPROCS, or part of the name at GOMAXPROCS=1) optional.
func leafPattern(name string) string {
	procs := ""
	if i := strings.LastIndexByte(name, '-'); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		name, procs = name[:i], name[i:]
	}
	levels := strings.Split(name, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l)
		if i == len(levels)-1 && procs != "" {
			levels[i] += "(" + regexp.QuoteMeta(procs) + ")?"
		}
		levels[i] += "$"
	}
	return strings.Join(levels, "/")
}

// calibrate returns j's leaves with their iterations a run. Benchtime
// "Nx" gives N to the job as one leaf, nothing run. A duration runs j's
// base once at it (testing picks each leaf's N0 from wall time); a
// benchmark with one result is one leaf, run with the job's own
// arguments; one with several (sub-benchmarks) has a leaf for each that
// the head has too (a run of the head at 1x lists them; a sub-benchmark
// at one side only is logged and not judged), each run alone. Each
// leaf's N is then set from the process CPU time c of a run at N ops:
// N = N × Benchtime / c, up to three times (at least N0, at most
// 50 × N0), so a run's CPU time, not its wall time, is about Benchtime
// even when the host is busy, and the process start stays small beside
// the work.
func (p *ProcessRunner) calibrate(ctx context.Context, j *Job) ([]leaf, error) {
	if n, ok := strings.CutSuffix(p.Benchtime, "x"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("benchtime %q: want a duration or Nx with N ≥ 1", p.Benchtime)
		}
		return []leaf{{n: v}}, nil
	}
	bt := p.Benchtime
	if bt == "" {
		bt = "1s"
	}
	d, err := time.ParseDuration(bt)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("benchtime %q: want a duration or Nx with N ≥ 1", p.Benchtime)
	}
	results := func(runs []interleave.Run) []*benchfmt.Result {
		var out []*benchfmt.Result
		for _, r := range runs {
			out = append(out, r.Results...)
		}
		return out
	}
	runs, _, err := p.calibrationRun(ctx, j.Base, bt)
	if err != nil {
		return nil, err
	}
	first := results(runs)
	if len(first) == 0 || first[0].Iters < 1 {
		return nil, errors.New("the calibration run reported no iterations")
	}
	if len(first) == 1 {
		n, err := p.cpuN(ctx, j.Base, first[0].Iters, d)
		return []leaf{{name: string(first[0].Name.Full()), n: n}}, err
	}
	runs, _, err = p.calibrationRun(ctx, j.Head, "1x")
	if err != nil {
		return nil, err
	}
	atHead := map[string]bool{}
	for _, r := range results(runs) {
		atHead[string(r.Name.Full())] = true
	}
	var leaves []leaf
	seen := map[string]bool{}
	for _, r := range first {
		name := string(r.Name.Full())
		if seen[name] {
			continue
		}
		seen[name] = true
		if !atHead[name] {
			if p.Log != nil {
				fmt.Fprintf(p.Log, "%s %s: at base only, not judged\n", shortPkg(j.Pkg), name)
			}
			continue
		}
		l := leaf{name: name, pattern: leafPattern("Benchmark" + name)}
		if l.n, err = p.cpuN(ctx, withBench(j.Base, l.pattern), max(r.Iters, 1), d); err != nil {
			return nil, err
		}
		leaves = append(leaves, l)
	}
	if len(leaves) == 0 {
		return nil, errors.New("no sub-benchmark is at both the base and the head")
	}
	return leaves, nil
}

// calibrationRun runs arm a once at -test.benchtime=benchtime and
// returns its runs and process CPU time.
func (p *ProcessRunner) calibrationRun(ctx context.Context, a interleave.Arm, benchtime string) ([]interleave.Run, time.Duration, error) {
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

// cpuN returns the iterations of a run of arm a that take about d of
// process CPU time, from n0 (testing's N at d of wall time). The
// process's start is part of each CPU time read, so N = N₀ × d / c falls
// short while the start is a large share of c: repeat until a run's CPU
// time reaches 80% of d (at most 3 times; N at most 50 × n0).
func (p *ProcessRunner) cpuN(ctx context.Context, a interleave.Arm, n0 int, d time.Duration) (int, error) {
	n := n0
	for range 3 {
		_, cpu, err := p.calibrationRun(ctx, a, strconv.Itoa(n)+"x")
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
