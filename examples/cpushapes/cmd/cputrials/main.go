// Command cputrials runs the real-host trials of decodegap's CPU verdict
// (scripts/cpu-trials.sh builds what it needs and calls it): for each
// shape of examples/cpushapes, and for the zstd decoder at concurrency 4
// against 1, -trials runs of decodegap.Compare of arm B against arm A in a
// child test binary, each judged by the library itself (its JSON report,
// GAPBENCH_JSON, docs/guide/json.md), and counts how often the cpu-sec/op
// row called B more CPU, equivalent, undecided, or less CPU: the wrong
// direction, since B costs more (10% more work in the same shape; c4
// decodes the same stream on more goroutines). The equal-work pair,
// Inline against FanOut(2) of the same work, costs B what the goroutines
// cost besides the work; cputrials measures that ground truth in its own
// process (cpushapes.GroundTruthGap, at the trials' gap) and prints it
// beside the verdicts.
//
// The trials of the shapes go round-robin (trial 1 of every shape, then
// trial 2, ...), so that the host's weather spreads over them alike. The
// table, with the date, the commit and the exact command, is appended to
// -out (docs/cpu-trials.md): dated evidence, never rewritten.
//
//	go test -c -o /tmp/cpushapes.test ./examples/cpushapes
//	go test -c -o /tmp/zstd.test ./examples/zstd
//	go run ./examples/cpushapes/cmd/cputrials -cpushapes-test /tmp/cpushapes.test -zstd-test /tmp/zstd.test -trials 20
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/examples/cpushapes"
	"github.com/gapbench/gapbench/examples/zstd"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/runner"
)

// zstdShape is the name of the zstd case among -shapes.
const zstdShape = "zstd"

// unit is the row every trial is judged by.
const unit = "cpu-sec/op"

// config is the command line.
type config struct {
	shapesBin, zstdBin string
	shapes             []string
	trials             int
	benchtime          string
	count              int
	gap, zstdGap       time.Duration
	w, bWork           float64
	truthSteps         int
	out, keep, how     string
	timeout            time.Duration
}

func main() {
	var c config
	var shapes string
	flag.StringVar(&c.shapesBin, "cpushapes-test", "", "the test binary of examples/cpushapes (go test -c)")
	flag.StringVar(&c.zstdBin, "zstd-test", "", "the test binary of examples/zstd (go test -c); needed for the zstd shape")
	flag.StringVar(&shapes, "shapes", strings.Join(append(append([]string(nil), cpushapes.TrialShapes...), zstdShape), ","), "the shapes to try, comma-separated")
	flag.IntVar(&c.trials, "trials", 20, "trials per shape")
	flag.StringVar(&c.benchtime, "benchtime", "100x", "each trial's -test.benchtime: the steps of a block")
	flag.IntVar(&c.count, "count", 20, "each trial's -test.count: the most rounds (Compare stops once every verdict is decided)")
	flag.DurationVar(&c.gap, "gap", 500*time.Microsecond, "the shapes' hybrid gap")
	flag.DurationVar(&c.zstdGap, "zstd-gap", time.Millisecond, "the zstd trials' hybrid gap")
	flag.Float64Var(&c.w, "w", 1, "arm A's work in the shapes, in units of about 100 µs")
	flag.Float64Var(&c.bWork, "b-work", 1.1, "arm B's work over arm A's in the shapes")
	flag.IntVar(&c.truthSteps, "truth-steps", 1000, "steps of each ground-truth measurement (three per arm per shape)")
	flag.StringVar(&c.out, "out", "docs/cpu-trials.md", `the markdown file the table is appended to ("-": standard output only)`)
	flag.StringVar(&c.keep, "keep", "", "a folder to keep every trial's output in (default: a temporary one, removed)")
	flag.StringVar(&c.how, "how", "", "the command that ran this one, for the table's provenance (scripts/cpu-trials.sh passes its own)")
	flag.DurationVar(&c.timeout, "trial-timeout", 5*time.Minute, "the most one trial may take")
	flag.Parse()
	c.shapes = strings.Split(shapes, ",")
	if err := run(c, os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "cputrials:", err)
		os.Exit(1)
	}
}

// trialCase is one row of the table: how to run its trials and judge them.
type trialCase struct {
	shape  string
	vs     string // what B and A are, in words for the table
	bin    string
	args   []string // the child's arguments after the test flags
	bench  string   // -test.bench
	a, b   string   // the arms' names
	gap    time.Duration
	truthA decodegap.Opener
	truthB decodegap.Opener
}

// trial is one trial's outcome.
type trial struct {
	outcome      string // the row's outcome, or "lost"
	ratio        float64
	used         int
	load0, load1 float64
	wall         time.Duration
}

func run(c config, argv []string) error {
	cases, err := casesOf(c)
	if err != nil {
		return err
	}
	if c.trials < 1 {
		return fmt.Errorf("-trials %d: want >= 1", c.trials)
	}
	dir := c.keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "cputrials."); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	ctx, stop := runner.NotifyContext(context.Background())
	defer stop()

	truth := make([]float64, len(cases))
	for i, tc := range cases {
		truth[i] = groundTruthRatio(tc, c.truthSteps)
		fmt.Fprintf(os.Stderr, "cputrials: %s: ground truth B/A %.3f (GroundTruthGap at %v, median of 3)\n", tc.shape, truth[i], tc.gap)
	}
	results := make([][]trial, len(cases))
	start := time.Now()
	for k := range c.trials {
		for i, tc := range cases {
			if err := ctx.Err(); err != nil {
				return err
			}
			tdir := filepath.Join(dir, fmt.Sprintf("%s.%02d", tc.shape, k+1))
			t := runTrial(ctx, c, tc, tdir)
			results[i] = append(results[i], t)
			fmt.Fprintf(os.Stderr, "cputrials: %s trial %d/%d: %s %s B/A %.3f (%d rounds, %.1fs, load %.1f–%.1f); elapsed %v\n",
				tc.shape, k+1, c.trials, unit, words(t.outcome), t.ratio, t.used, t.wall.Seconds(), t.load0, t.load1, time.Since(start).Round(time.Second))
		}
	}
	md := table(c, argv, cases, truth, results, time.Since(start))
	fmt.Print(md)
	if c.out == "-" {
		return nil
	}
	f, err := os.OpenFile(c.out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, "\n"+md); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// casesOf returns the trials' cases in -shapes order.
func casesOf(c config) ([]trialCase, error) {
	var out []trialCase
	for _, s := range c.shapes {
		if s == zstdShape {
			if c.zstdBin == "" {
				return nil, errors.New("the zstd shape needs -zstd-test (go test -c ./examples/zstd)")
			}
			out = append(out, trialCase{shape: s, vs: "c4 vs c1 (same stream, 4 decoder goroutines)", bin: c.zstdBin,
				bench: "^BenchmarkZstdConcurrency$", args: []string{"-gap", c.zstdGap.String()}, a: "c1", b: "c4", gap: c.zstdGap,
				truthA: zstd.Open(1), truthB: zstd.Open(4)})
			continue
		}
		if c.shapesBin == "" {
			return nil, fmt.Errorf("the %s shape needs -cpushapes-test (go test -c ./examples/cpushapes)", s)
		}
		bWork := c.bWork
		vs := fmt.Sprintf("w=%g vs w=%g", c.w*bWork, c.w)
		if s == "inline-vs-fanout2" {
			bWork = 1 // the same work in two shapes
			vs = fmt.Sprintf("FanOut(2, %g) vs Inline(%g)", c.w, c.w)
		}
		a, b, err := cpushapes.TrialArms(s, c.w, bWork)
		if err != nil {
			return nil, err
		}
		out = append(out, trialCase{shape: s, vs: vs, bin: c.shapesBin, bench: "^BenchmarkTrial$",
			args: []string{"-shape", s, "-w", fmtFloat(c.w), "-b-work", fmtFloat(bWork), "-gap", c.gap.String()},
			a:    "a", b: "b", gap: c.gap, truthA: a.Open, truthB: b.Open})
	}
	return out, nil
}

// groundTruthRatio measures B/A by GroundTruthGap at the case's gap,
// alternating A and B three times, and returns the median (NaN when a
// measurement failed).
func groundTruthRatio(tc trialCase, n int) float64 {
	var rs []float64
	for range 3 {
		a, err := cpushapes.GroundTruthGap(tc.truthA, n, tc.gap)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cputrials: %s: ground truth of A: %v\n", tc.shape, err)
			return math.NaN()
		}
		b, err := cpushapes.GroundTruthGap(tc.truthB, n, tc.gap)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cputrials: %s: ground truth of B: %v\n", tc.shape, err)
			return math.NaN()
		}
		rs = append(rs, b.ClockNs/a.ClockNs)
	}
	return median(rs)
}

// runTrial runs one trial in dir and reads its verdict.
func runTrial(ctx context.Context, c config, tc trialCase, dir string) (t trial) {
	t = trial{outcome: "lost", ratio: math.NaN(), load0: load1()}
	defer func() { t.load1 = load1() }()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "cputrials: %v\n", err)
		return t
	}
	stdout, err1 := os.Create(filepath.Join(dir, "stdout.txt"))
	stderr, err2 := os.Create(filepath.Join(dir, "stderr.txt"))
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintf(os.Stderr, "cputrials: %v\n", err)
		return t
	}
	defer stdout.Close()
	defer stderr.Close()
	args := append([]string{tc.bin, "-test.run", "^$", "-test.bench", tc.bench,
		"-test.benchtime", c.benchtime, "-test.count", strconv.Itoa(c.count)}, tc.args...)
	fmt.Fprintf(stdout, "# %s\n", strings.Join(args, " "))
	r := runner.Run(ctx, runner.Cmd{Args: args, Dir: dir, Env: append(os.Environ(), decodegap.JSONEnv+"="+dir),
		Stdout: stdout, Stderr: stderr, Timeout: c.timeout})
	t.wall = r.Wall
	if r.Outcome.Lost() {
		fmt.Fprintf(os.Stderr, "cputrials: %s: the child ended %s (exit %d): see %s\n", tc.shape, r.Outcome, r.ExitCode, dir)
		return t
	}
	row, err := cpuRow(dir, tc)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cputrials: %s: %v (see %s)\n", tc.shape, err, dir)
		return t
	}
	t.outcome, t.ratio, t.used = row.Outcome, float64(row.Ratio), row.Used
	return t
}

// cpuRow reads the JSON reports in dir and returns the candidate row of
// arm tc.b against tc.a on unit.
func cpuRow(dir string, tc trialCase) (report.JSONRow, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		return report.JSONRow{}, fmt.Errorf("no JSON report in %s (%s)", dir, decodegap.JSONEnv)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return report.JSONRow{}, err
		}
		d, err := report.ReadJSON(f)
		f.Close()
		if err != nil {
			return report.JSONRow{}, fmt.Errorf("%s: %w", name, err)
		}
		for _, r := range d.Rows {
			if r.Kind == "candidate" && r.Arm == tc.b && r.Base == tc.a && r.Unit == unit {
				if r.Error != "" {
					return report.JSONRow{}, fmt.Errorf("the %s row of %s has no verdict: %s", unit, tc.b, r.Error)
				}
				return r, nil
			}
		}
	}
	return report.JSONRow{}, fmt.Errorf("no %s row of arm %s against %s", unit, tc.b, tc.a)
}

// table renders the trials as markdown.
func table(c config, argv []string, cases []trialCase, truth []float64, results [][]trial, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## B against A on `%s`: real-host trials (%s)\n\n", unit, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Commit %s; %d %s a shape, round-robin over the shapes; %s in all.\n", commit(), c.trials, plural(c.trials, "trial"), took.Round(time.Second))
	if c.how != "" {
		fmt.Fprintf(&b, "\n    %s\n", c.how)
	}
	fmt.Fprintf(&b, "\n    %s\n\n", strings.Join(argv, " "))
	fmt.Fprintf(&b, "Each trial is one child test binary (`-test.run '^$' -test.benchtime %s -test.count %d`, "+
		"`BenchmarkTrial` of examples/cpushapes at a %v gap, or `BenchmarkZstdConcurrency` of examples/zstd at %v), "+
		"decodegap.Compare with its null arm, judged by the library (%s, docs/guide/json.md); the row is B's `%s` against A. "+
		"B costs more in every row (see the ground truth), so *less CPU* is the wrong direction. "+
		"Ground truth: B/A by cpushapes.GroundTruthGap in the driver's process at the same gap (median of 3). "+
		"Load: the 1-minute load average before and after each trial.\n\n",
		c.benchtime, c.count, c.gap, c.zstdGap, decodegap.JSONEnv, unit)
	b.WriteString("| shape | B vs A | trials | more CPU | equivalent | undecided | **less CPU** | lost | median B/A | ground truth B/A | median rounds | load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, tc := range cases {
		n := map[string]int{}
		var ratios, rounds []float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, t := range results[i] {
			n[t.outcome]++
			if t.outcome != "lost" {
				ratios = append(ratios, t.ratio)
				rounds = append(rounds, float64(t.used))
			}
			lo, hi = math.Min(lo, math.Min(t.load0, t.load1)), math.Max(hi, math.Max(t.load0, t.load1))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | **%d** | %d | %s | %s | %s | %.1f–%.1f |\n",
			tc.shape, tc.vs, len(results[i]), n["slower"], n["equivalent"], n["undecided"], n["faster"], n["lost"],
			fmtRatio(median(ratios)), fmtRatio(truth[i]), fmtRounds(median(rounds)), lo, hi)
	}
	return b.String()
}

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// words names an outcome of a cpu- row as the verdict table does.
func words(outcome string) string {
	switch outcome {
	case "slower":
		return "more CPU"
	case "faster":
		return "LESS CPU"
	}
	return outcome
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.3f", x)
}

func fmtRounds(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// load1 returns the host's 1-minute load average, NaN when it cannot be
// read.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// commit returns HEAD's short hash, with "+dirty" for uncommitted changes
// to tracked files, or "unknown" outside a git work tree.
func commit() string {
	git := func(args ...string) (string, bool) {
		var out bytes.Buffer
		r := runner.Run(context.Background(), runner.Cmd{Args: append([]string{"git"}, args...), Stdout: &out, Timeout: 30 * time.Second})
		return strings.TrimSpace(out.String()), !r.Outcome.Lost()
	}
	c, ok := git("rev-parse", "--short", "HEAD")
	if !ok || c == "" {
		return "unknown"
	}
	if st, ok := git("status", "--porcelain", "--untracked-files=no"); ok && st != "" {
		c += "+dirty"
	}
	return c
}
