package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

func init() {
	commands["calibrate"] = command{
		summary: "run a benchmark as A/A and print the smallest effect a comparison could show here, now",
		run:     runCalibrate,
	}
}

const calibrateUsage = `usage: decodegap calibrate [flags] TARGET

Runs one benchmark as an A/A comparison: three processes of the same TARGET
per round (a, a second instance a2, and the null arm), interleaved in a fresh
order each round as 'decodegap interleave' runs them, for -rounds rounds.
Then prints, per benchmark and metric, the minimal detectable effect (MDE)
on this host now: the smallest B/A change that a comparison of that many
rounds would call faster or slower in 80% of runs, at the noise a2/a showed
(nullband.MDEAt). Run it before a comparison to know what it can show.

It also splits the median step's noise by level (within a block, between
blocks of one round, between rounds: each run of a, a2 and null is one
block) and prints the plan (steps per block × blocks × rounds) that reaches
-mde in the least time, and with -budget the one with the smallest MDE that
fits; -plan-out writes the plan for examples/vad/bench.sh (BENCH_PLAN).

TARGET is a test binary or a package directory (built with 'go test -c');
arguments after it inside the same shell word go to every run:
  decodegap calibrate -benchtime 2000x './examples/trials -work=100'

Each run is its own process group. A run still going after -run-timeout is
stopped; a run that crashes, times out or prints no or malformed results is
lost (named on stderr and in -o), and the rounds go on; more than
-max-failed lost runs stop them.

Exit status: 0 when every round ran, 1 when a run was lost, 2 for bad usage,
130 when interrupted.

flags:
`

// calibrateRounds are the round counts the MDE is printed for.
var calibrateRounds = []int{10, 20, 40}

func runCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, calibrateUsage); fs.PrintDefaults() }
	rounds := fs.Int("rounds", 20, fmt.Sprintf("number of A/A `rounds` to run (≥ %d give an MDE; the MDE at other round counts scales from these)", fewestRounds))
	seed := fs.Uint64("seed", 0, "`seed` of the per-round order; 0 draws one")
	out := fs.String("o", "", "also keep the runs' output (Go benchmark format) in `file`, which must not exist")
	bench := fs.String("bench", ".", "benchmark `regexp`, passed as -test.bench")
	benchtime := fs.String("benchtime", "", "passed as -test.benchtime when set (e.g. 2000x)")
	units := fs.String("unit", judge.DefaultUnitList, "comma-separated `units` to calibrate, those present")
	jsonPath := new(string)
	addJSONFlag(fs, jsonPath)
	lock := fs.Bool("lock", true, "hold the host lock while running (see 'decodegap lock')")
	lockPath := fs.String("lock-path", hostmon.DefaultLockPath(), "host lock `file`")
	screen := fs.Bool("screen", true, "screen the host over each run (the screen: line of -o)")
	var rf runFlags
	rf.register(fs, "run")
	lf := addLevelFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap calibrate: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'decodegap calibrate -h' for usage")
		return 2
	}
	if fs.NArg() != 1 {
		return usageErr("give one TARGET (a test binary or a package directory), e.g. ./examples/trials")
	}
	if *rounds < 1 {
		return usageErr("-rounds %d: need at least 1 (%d or more for an MDE)", *rounds, fewestRounds)
	}
	if err := rf.check(); err != nil {
		return usageErr("%v", err)
	}
	if err := lf.check(); err != nil {
		return usageErr("%v", err)
	}
	if err := checkBench(*bench, *benchtime); err != nil {
		return usageErr("%v", err)
	}
	fields := strings.Fields(fs.Arg(0))
	if len(fields) == 0 {
		return usageErr("TARGET is empty")
	}
	if *seed == 0 {
		*seed = rand.Uint64()
	}
	ctx, stop := interruptible(0)
	defer stop()

	program, dir, cleanup, err := calibrateProgram(ctx, fields[0], stderr)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "decodegap calibrate: interrupted while building; nothing was run\n")
			return 130
		}
		fmt.Fprintf(stderr, "decodegap calibrate: %v\n", err)
		return 1
	}
	defer cleanup()
	cmdArgs := []string{program, "-test.run=^$", "-test.bench=" + *bench, "-test.count=1"}
	if *benchtime != "" {
		cmdArgs = append(cmdArgs, "-test.benchtime="+*benchtime)
	}
	cmdArgs = append(cmdArgs, fields[1:]...)
	arms := []interleave.Arm{{Name: "a", Args: cmdArgs, Dir: dir}, {Name: "a2", Args: cmdArgs, Dir: dir}, {Name: "null", Args: cmdArgs, Dir: dir}}
	plan, err := interleave.NewPlan(arms, *rounds, *seed)
	if err != nil {
		return usageErr("%v", err)
	}

	var buf bytes.Buffer
	var sink io.Writer = &buf
	if *out != "" {
		file, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if err != nil {
			return usageErr("-o %s: %v", *out, err)
		}
		defer file.Close()
		sink = io.MultiWriter(&buf, file)
	}
	if *lock {
		unlock, code := holdHostLock(ctx, "calibrate", *lockPath, nil, 1, stderr)
		if code != 0 {
			return code
		}
		defer unlock()
	}
	fmt.Fprintf(stderr, "decodegap calibrate: %d runs (a, a2 and null × %d rounds, seed %d) of %s\n", plan.Runs(), *rounds, *seed, strings.Join(cmdArgs, " "))
	runs, status, ok := runCalibrateRounds(ctx, &interleave.Runner{Plan: plan, Out: sink, Progress: stderr}, rf, *screen, stderr)
	if !ok {
		return status
	}
	unitList := splitUnits(*units)
	rows, judged, err := calibrateRows(buf.Bytes(), unitList)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap calibrate: %v\n", err)
		if status == 130 {
			return status // interrupted: too little finished to judge
		}
		return 1
	}
	writeCalibration(stdout, rows, loadAverage())
	if code := reportLevels(runs, rows, lf, stdout, stderr); code != 0 {
		return code
	}
	if *jsonPath != "" {
		if err := writeJSONRows(*jsonPath, "calibrate", judged); err != nil {
			fmt.Fprintf(stderr, "decodegap calibrate: %v\n", err)
			return 1
		}
	}
	return status
}

// runCalibrateRounds runs r's plan with the -run-timeout and -max-failed of
// rf, naming each lost run on stderr. It returns the exit status so far (0,
// 1 when a run was lost, 130 when interrupted) and ok true when what
// finished is to be judged.
func runCalibrateRounds(ctx context.Context, r *interleave.Runner, rf runFlags, screen bool, stderr io.Writer) (runs []interleave.Run, status int, ok bool) {
	r.Timeout, r.MaxFailed = rf.runnerTimeout(), rf.maxFailed
	r.OnRun = func(run interleave.Run) bool {
		if run.Err != nil {
			fmt.Fprintf(stderr, "decodegap calibrate: lost %s\n", lostLine(run.Err))
		}
		return false
	}
	r.Screener, r.NoScreen = screenerFor("calibrate", screen, stderr)
	runs, runErr := r.Run(ctx)
	if n := lostBlocks(runs); n > 0 {
		fmt.Fprintf(stderr, "decodegap calibrate: %d of %d runs lost; the MDE is from the rest\n", n, len(runs))
		status = 1
	}
	if runErr != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(stderr, "decodegap calibrate: more than -max-failed %d runs lost, so the rest were not run: %v\n", rf.maxFailed, runErr)
			return runs, 1, false
		}
		fmt.Fprintf(stderr, "decodegap calibrate: %v; judging the %d finished runs\n", runErr, len(runs))
		status = 130
	}
	return runs, status, true
}

// calibration is one benchmark and metric's A/A figures.
type calibration struct {
	benchmark, unit string
	// used and quarantined are the rounds the noise was measured on and
	// those left out (contended, extreme, missing).
	used, quarantined int
	// mde holds the MDE (a fraction; +Inf when unknown) at each of
	// calibrateRounds.
	mde []float64
	// verdict is a2 against a (A/A: equivalent or undecided, unless the
	// host moved), and check the null arm against a (the A/A check every
	// verdict table prints; the zero Verdict when it has none).
	verdict, check nullband.Verdict
}

// calibratePolicy is calibrate's judging policy: a2 judged against a,
// calibrated by the null arm, on units (internal/judge's one policy).
func calibratePolicy(units []string) judge.Policy {
	return judge.Policy{Base: "a", Null: "null", Units: units}
}

// calibrateRows judges the A/A output: a2 against a, with the null arm,
// and the MDE at each of calibrateRounds, on the rounds as a comparison's
// verdict sees them (the screen's contended marks included).
func calibrateRows(data []byte, units []string) ([]calibration, []report.Row, error) {
	rd := benchfmt.NewReader(bytes.NewReader(data), "calibrate")
	var results []*benchfmt.Result
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			results = append(results, r.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		return nil, nil, err
	}
	rows, t, err := interleave.Judge(results, calibratePolicy(units))
	if errors.Is(err, judge.ErrNothingToJudge) {
		return nil, nil, fmt.Errorf("the runs printed no %s values: choose -unit from the units the benchmark reports", strings.Join(units, ", "))
	}
	if err != nil {
		return nil, nil, err
	}
	checks := map[[2]string]nullband.Verdict{}
	for _, r := range rows {
		if r.Kind == report.NullCheck {
			checks[[2]string{r.Bench, r.Unit}] = r.Verdict
		}
	}
	var out []calibration
	for _, r := range rows {
		if r.Kind != report.Candidate || r.Arm != "a2" {
			continue
		}
		if r.Err != "" {
			return nil, nil, errors.New(r.Err)
		}
		smp := t.Samples(r.Bench, r.Unit, "a", "a2", "null")
		row := calibration{benchmark: r.Bench, unit: r.Unit, used: r.Verdict.Used, quarantined: r.Verdict.Quarantined,
			verdict: r.Verdict, check: checks[[2]string{r.Bench, r.Unit}]}
		for _, n := range calibrateRounds {
			row.mde = append(row.mde, nullband.MDEAt(smp, n, nullband.Options{}))
		}
		out = append(out, row)
	}
	return out, rows, nil
}

// metricName is the short name of a tidied unit in the summary line.
func metricName(unit string) string {
	switch unit {
	case "sec/op":
		return "mean"
	case "p50-sec/op":
		return "p50"
	case "cpu-sec/op":
		return "cpu"
	}
	return strings.TrimSuffix(unit, "/op")
}

// mdePct formats an MDE fraction as a percentage.
func mdePct(x float64) string {
	switch {
	case math.IsInf(x, 1) || math.IsNaN(x):
		return "unknown"
	case x < 0.1:
		return report.Fixed(100*x, 1) + "%"
	}
	return report.Fixed(100*x, 0) + "%"
}

// writeCalibration prints the table and one summary line per benchmark.
func writeCalibration(w io.Writer, rows []calibration, load string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "benchmark\tmetric\trounds used\tquarantined")
	for _, n := range calibrateRounds {
		fmt.Fprintf(tw, "\tMDE at %d", n)
	}
	fmt.Fprint(tw, "\ta2/a verdict\tnull/a (A/A check)\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d", r.benchmark, r.unit, r.used, r.quarantined)
		for _, m := range r.mde {
			fmt.Fprintf(tw, "\t%s", mdePct(m))
		}
		fmt.Fprintf(tw, "\t%s\t%s\n", verdicttext.Outcome(r.verdict.Outcome, r.unit), verdicttext.Outcome(r.check.Outcome, r.unit))
	}
	tw.Flush()
	var bench string
	var parts []string
	flush := func() {
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s: %s\n", bench, strings.Join(parts, "; "))
		}
		parts = nil
	}
	for _, r := range rows {
		if r.benchmark != bench {
			flush()
			bench = r.benchmark
		}
		var at []string
		for i, m := range r.mde {
			s := mdePct(m) + " at " + strconv.Itoa(calibrateRounds[i])
			if i == 0 {
				s += " rounds"
			}
			at = append(at, s)
		}
		parts = append(parts, metricName(r.unit)+": "+strings.Join(at, ", "))
	}
	flush()
	fmt.Fprintf(w, "MDE: the smallest change a comparison of that many rounds calls faster or slower in 80%% of runs at the noise of these rounds (a2 against a; rounds quarantined as a comparison would, left out)")
	if load != "" {
		fmt.Fprintf(w, "; load average at the end: %s", load)
	}
	fmt.Fprintln(w)
}

// loadAverage returns /proc/loadavg's three figures, or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// calibrateProgram returns the program to run for target: the binary
// itself, or a package directory built with go test -c into a temporary
// directory that cleanup removes.
func calibrateProgram(ctx context.Context, target string, stderr io.Writer) (program, dir string, cleanup func(), err error) {
	cleanup = func() {}
	st, err := os.Stat(target)
	if err != nil {
		return "", "", cleanup, fmt.Errorf("TARGET %v: give a test binary or a package directory", err)
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return "", "", cleanup, err
	}
	if !st.IsDir() {
		if st.Mode()&0o111 == 0 {
			return "", "", cleanup, fmt.Errorf("%s is not executable: build it with go test -c, or give the package directory", target)
		}
		return abs, "", cleanup, nil
	}
	tmp, err := os.MkdirTemp("", "decodegap-calibrate-")
	if err != nil {
		return "", "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	bin := filepath.Join(tmp, "calibrate.test")
	fmt.Fprintf(stderr, "building: go test -c -o %s %s\n", bin, target)
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
	cmd.Dir = abs
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", cleanup, fmt.Errorf("go test -c in %s failed (%v):\n%s", target, err, b)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", "", cleanup, fmt.Errorf("%s has no test files, so go test -c built nothing: give a package with a Benchmark in a _test.go file", target)
	}
	return bin, abs, cleanup, nil
}
