package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/traceplot"
	"github.com/gapbench/gapbench/nullband"
)

func init() {
	commands["interleave"] = command{
		summary: "run test binaries as A/B arms plus a null arm, interleaved per round, and judge B/A",
		run:     runInterleave,
	}
}

const interleaveUsage = `usage: decodegap interleave [flags] base=TARGET cand=TARGET [more=TARGET ...]

Runs every arm once per round, each run a separate process with -test.count=1,
in an order drawn afresh each round, for -rounds rounds. A null arm (a second
process of the first arm, the base) runs in every round and calibrates the
verdict: B/A is judged faster, slower, equivalent within ±-delta, or
undecided, and withheld when A'/A itself differs (the arms did not share the
host's conditions).

With -until-decided, rounds run until every judged metric is decided, at most
-max-rounds; the test spends its error rate over the repeated looks, so
stopping early does not inflate false alarms. The rounds used are reported.

TARGET is a test binary (./old.test) or a package directory (./pkg), which is
built first with 'go test -c' and run in its directory. Arguments after the
target, inside the same shell word, go to that arm only:
  'new=./pkg -work=110'

Results go to -o as Go benchmark format, one block per run as it finishes (an
interrupt loses nothing finished), with arm:, round: and screen: lines:
  go tool benchstat -col 'arm@(base cand null)' -ignore round,screen FILE
  go tool benchstat -col 'arm@(base cand null)' -ignore round,screen -filter screen:clean FILE
(the command prints these lines with the real arm names at the end)
At the end the verdict table is printed on stdout; progress goes to stderr.

Each run is its own process group. A run still going after -run-timeout is
stopped (SIGINT to its group, SIGKILL 2s later); a run that crashes, times
out, or prints no, malformed or duplicated results is lost: its cause is
written to the output file and shown on stderr, the rounds go on, and the
verdict lists every lost run. More than -max-failed lost runs stop the rounds.

Exit status: 0 when every run of every round ran, 1 when a run was lost (its
command line and output are shown), 2 for bad usage, 130 when interrupted.

flags:
`

// interleaveFlags are the command's settings.
type interleaveFlags struct {
	rounds    int
	seed      uint64
	out       string
	bench     string
	benchtime string
	plan      string // -plan: a plan file that sets benchtime and the rounds
	run       string
	units     string
	null      string
	lock      bool
	lockPath  string
	screen    bool
	plot      string
	timeout   time.Duration
	maxFailed int
	// untilDecided runs rounds until every verdict is decided, at most
	// maxRounds (nullband's sequential mode).
	untilDecided bool
	maxRounds    int
	delta        float64
	// json is -json: the verdict rows as JSON, when set; command names
	// the route in it ("interleave", "ort").
	json, command string
}

// options returns the verdict's options for these flags.
func (f interleaveFlags) options() nullband.Options {
	o := nullband.Options{Delta: f.delta}
	if f.untilDecided {
		o.MaxRounds = f.maxRounds
	}
	return o
}

// roundsFlag names the flag that sets the number of rounds.
func (f interleaveFlags) roundsFlag() string {
	if f.untilDecided {
		return "-max-rounds"
	}
	return "-rounds"
}

// maxRounds bounds -rounds, so that rounds × arms stays far inside an int.
const maxRounds = 1_000_000_000

// fewestRounds and fewestHolm are the fewest rounds that give a verdict
// with a null arm a 95% interval, and one at the strictest Holm level of an
// arm's three metrics (1.25%: the median weighs twice the others).
var fewestRounds, fewestHolm = nullband.FewestRounds(0.95, true), nullband.FewestRounds(1-0.05/4, true)

func runInterleave(args []string, stdout, stderr io.Writer) int {
	var f interleaveFlags
	fs := flag.NewFlagSet("interleave", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, interleaveUsage)
		fs.PrintDefaults()
	}
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap interleave: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'decodegap interleave -h' for usage")
		return 2
	}
	if fs.NArg() < 2 {
		return usageErr("give at least two arms, base first: old=./old.test new=./new.test (for an A/A check, the same target twice: a=./x.test b=./x.test)")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := applyPlan(f.plan, set, f.untilDecided, &f.benchtime, &f.rounds, &f.maxRounds); err != nil {
		return usageErr("%v", err)
	}
	if err := f.check(set); err != nil {
		return usageErr("%v", err)
	}
	if f.untilDecided {
		f.rounds = f.maxRounds
	}
	specs, err := parseArms(fs.Args(), f.null)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.seed == 0 {
		f.seed = rand.Uint64()
	}
	if f.out == "" {
		f.out = "interleave-" + time.Now().Format("20060102-150405") + ".txt"
	}

	ctx, stop := interruptible(0)
	defer stop()

	// Build package arms: each directory once.
	tmp, err := os.MkdirTemp("", "decodegap-interleave-")
	if err != nil {
		fmt.Fprintf(stderr, "decodegap interleave: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if code := buildArms(ctx, specs, tmp, stderr); code != 0 {
		return code
	}

	testArgs := []string{"-test.run=" + f.run, "-test.bench=" + f.bench, "-test.count=1"}
	if f.benchtime != "" {
		testArgs = append(testArgs, "-test.benchtime="+f.benchtime)
	}
	arms := make([]interleave.Arm, len(specs))
	for i, s := range specs {
		arms[i] = interleave.Arm{Name: s.name, Args: append(append([]string{s.program}, testArgs...), s.args...), Dir: s.dir}
	}
	plan, err := interleave.NewPlan(arms, f.rounds, f.seed)
	if err != nil {
		return usageErr("%v", err)
	}

	file, code := createOutput("interleave", f.out, usageErr, 1, stderr)
	if code != 0 {
		return code
	}
	defer file.Close()

	if f.lock {
		unlock, code := holdHostLock(ctx, "interleave", f.lockPath, file, 1, stderr)
		if code != 0 {
			return code
		}
		defer unlock()
	}

	if err := f.writeHeader(file, specs, arms); err != nil {
		fmt.Fprintf(stderr, "decodegap interleave: writing %s: %v\n", f.out, err)
		return 1
	}
	if f.untilDecided {
		fmt.Fprintf(stderr, "decodegap interleave: at most %d runs (%d arms × up to %d rounds, until every verdict is decided, seed %d) into %s\n", plan.Runs(), len(arms), f.rounds, f.seed, f.out)
	} else {
		fmt.Fprintf(stderr, "decodegap interleave: %d runs (%d arms × %d rounds, seed %d) into %s\n", plan.Runs(), len(arms), f.rounds, f.seed, f.out)
	}

	return f.runRounds(ctx, plan, arms, specs, file, stdout, stderr)
}

// check returns a usage error, naming the flag, for values out of range
// or flags that do not go together; set holds the flags given.
func (f *interleaveFlags) check(set map[string]bool) error {
	switch {
	case f.untilDecided && set["rounds"]:
		return fmt.Errorf("-rounds and -until-decided: give -max-rounds N instead of -rounds with -until-decided")
	case f.untilDecided && f.maxRounds == 0:
		return fmt.Errorf("-until-decided needs -max-rounds N, the most rounds to run (e.g. 40)")
	case !f.untilDecided && set["max-rounds"]:
		return fmt.Errorf("-max-rounds %d without -until-decided: use -rounds for a fixed number of rounds", f.maxRounds)
	case f.untilDecided && (f.maxRounds < fewestRounds || f.maxRounds > maxRounds):
		return fmt.Errorf("-max-rounds %d: need %d to %d (%d rounds give the first 95%% CI, %d for 2–3 units under Holm)", f.maxRounds, fewestRounds, maxRounds, fewestRounds, fewestHolm)
	case f.rounds < 1:
		return fmt.Errorf("-rounds %d: need at least 1 (%d or more for a verdict)", f.rounds, fewestRounds)
	case f.rounds > maxRounds:
		return fmt.Errorf("-rounds %d: at most %d", f.rounds, maxRounds)
	case !(f.delta > 0 && f.delta < 1):
		return fmt.Errorf("-delta %v: need a fraction between 0 and 1, e.g. 0.02 (±2%%)", f.delta)
	}
	if f.timeout < 0 {
		return fmt.Errorf("-run-timeout %v: must be ≥ 0 (0 means no limit)", f.timeout)
	}
	if f.maxFailed < 0 {
		return fmt.Errorf("-max-failed %d: must be ≥ 0 (0 stops at the first lost run)", f.maxFailed)
	}
	if err := checkBench(f.bench, f.benchtime); err != nil {
		return err
	}
	if err := checkUnits(f.units); err != nil {
		return err
	}
	if f.plot != "" {
		if _, err := traceplot.FormatOf(f.plot); err != nil {
			return fmt.Errorf("-plot %s: name the picture .svg or .png", f.plot)
		}
	}
	return nil
}

// register adds the interleave command's flags to fs.
func (f *interleaveFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.rounds, "rounds", 10, "number of `rounds`; the verdict needs ≥ 6 used rounds for a 95% CI, 7 when Holm judges 2–3 units together")
	fs.BoolVar(&f.untilDecided, "until-decided", false, "run rounds until every judged metric is decided (faster, slower or equivalent), at most -max-rounds; the test accounts for the repeated looks")
	fs.IntVar(&f.maxRounds, "max-rounds", 0, "with -until-decided, the most `rounds` to run")
	f.delta = 0.02
	fs.Var((*judge.Delta)(&f.delta), "delta", "equivalence `margin`, a percentage (2%) or a fraction (0.02): B/A within ±margin is equivalent")
	fs.Uint64Var(&f.seed, "seed", 0, "`seed` of the per-round order; 0 draws one (it is printed, and written to the output)")
	fs.StringVar(&f.out, "o", "", "output `file` (Go benchmark format); must not exist; default interleave-YYYYMMDD-HHMMSS.txt")
	fs.StringVar(&f.bench, "bench", ".", "benchmark `regexp`, passed as -test.bench")
	fs.StringVar(&f.benchtime, "benchtime", "", "passed as -test.benchtime when set (e.g. 1000x: the same work in every run)")
	fs.StringVar(&f.plan, "plan", "", planUsage)
	fs.StringVar(&f.run, "run", "^$", "test `regexp`, passed as -test.run: tests to run beside the benchmarks (^$ matches none)")
	fs.StringVar(&f.units, "unit", judge.DefaultUnitList, "comma-separated `units` to judge, those present (benchfmt's tidied units: ns/op is sec/op; p50-sec/op is decodegap.Run's median step, cpu-sec/op its CPU time per step)")
	fs.StringVar(&f.null, "null", "null", "`name` of the null arm")
	fs.BoolVar(&f.lock, "lock", true, "hold the host lock while running (see 'decodegap lock')")
	fs.StringVar(&f.lockPath, "lock-path", hostmon.DefaultLockPath(), "host lock `file`")
	fs.BoolVar(&f.screen, "screen", true, "screen the host for contention over each run (screen: line)")
	fs.DurationVar(&f.timeout, "run-timeout", 10*time.Minute, "stop a run still going after `duration` and count it lost; 0 means no limit (the flag every command that runs benchmarks shares)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "the old name of -run-timeout")
	fs.IntVar(&f.maxFailed, "max-failed", 3, "stop the rounds after more than `n` lost runs (crashed, timed out, no or malformed results)")
	addJSONFlag(fs, &f.json)
	f.command = "interleave"
	fs.StringVar(&f.plot, "plot", "", "also draw each verdict to `file` (.svg or .png): per-round ratios, the null band, the CI; with several verdicts, the candidate and unit are added to the name")
}

// buildArms builds each package arm's test binary into tmp, once per
// directory, and points the arm at it. It returns 0, or the exit status.
func buildArms(ctx context.Context, specs []armSpec, tmp string, stderr io.Writer) int {
	built := map[string]string{}
	for i := range specs {
		s := &specs[i]
		if !s.isPkg {
			continue
		}
		bin, ok := built[s.target]
		if !ok {
			bin = filepath.Join(tmp, fmt.Sprintf("arm%d.test", i))
			fmt.Fprintf(stderr, "building %s: go test -c -o %s %s\n", s.name, bin, s.target)
			cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
			cmd.Dir = s.target
			if out, err := cmd.CombinedOutput(); err != nil {
				if ctx.Err() != nil {
					fmt.Fprintf(stderr, "decodegap interleave: interrupted while building arm %s; nothing was run\n", s.name)
					return 130
				}
				fmt.Fprintf(stderr, "decodegap interleave: arm %s: go test -c in %s failed (%v):\n%s", s.name, s.target, err, out)
				return 1
			}
			if _, err := os.Stat(bin); err != nil {
				fmt.Fprintf(stderr, "decodegap interleave: arm %s: %s has no test files, so go test -c built nothing: give a package with a Benchmark in a _test.go file\n", s.name, s.target)
				return 1
			}
			built[s.target] = bin
		}
		s.program, s.dir = bin, s.target
	}

	return 0
}

// writeHeader writes the -o file's header: the rounds, the seed, the base
// and null arms and every arm's command. Comment lines that benchfmt
// readers skip.
func (f *interleaveFlags) writeHeader(w io.Writer, specs []armSpec, arms []interleave.Arm) error {
	var hdr bytes.Buffer
	rounds := fmt.Sprintf("%d rounds", f.rounds)
	if f.untilDecided {
		rounds = fmt.Sprintf("until decided, at most %d rounds", f.rounds)
	}
	fmt.Fprintf(&hdr, "# decodegap interleave: %s, seed %d, base %s, null %s = a second process of %s\n", rounds, f.seed, specs[0].name, f.null, specs[0].name)
	for _, a := range arms {
		fmt.Fprintf(&hdr, "# arm %s: %s", a.Name, strings.Join(a.Args, " "))
		if a.Dir != "" {
			fmt.Fprintf(&hdr, " (in %s)", a.Dir)
		}
		hdr.WriteByte('\n')
	}
	hdr.WriteByte('\n')
	_, err := w.Write(hdr.Bytes())
	return err
}

// runRounds runs plan's runs into file and judges them: the verdict table
// to stdout, lost runs named. It returns the exit status.
func (f *interleaveFlags) runRounds(ctx context.Context, plan *interleave.Plan, arms []interleave.Arm, specs []armSpec, file io.Writer, stdout, stderr io.Writer) int {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	var written []*benchfmt.Result // every result written, for -until-decided
	decidedAt := 0
	runner := &interleave.Runner{Plan: plan, Out: file, Progress: stderr, Timeout: runnerTimeout(f.timeout), MaxFailed: f.maxFailed,
		OnRun: func(r interleave.Run) bool {
			if r.Err != nil {
				fmt.Fprintf(stderr, "decodegap interleave: lost %s\n%v\n", lostLine(r.Err), r.Err)
			}
			written = append(written, r.Results...)
			if !f.untilDecided || r.Pos < len(arms) {
				return false
			}
			// The end of a round: stop when every verdict is decided.
			if !allDecided(*f, names, written) {
				return false
			}
			decidedAt = r.Round
			return true
		}}
	runner.Screener, runner.NoScreen = screenerFor("interleave", f.screen, stderr)

	runs, runErr := runner.Run(ctx)
	var lost []*interleave.RunError
	for _, r := range runs {
		if r.Err != nil {
			lost = append(lost, r.Err)
		}
	}
	status := 0
	if len(lost) > 0 {
		status = 1
	}
	finished := finishedRuns(len(runs)-len(lost), f.out)
	kept := finished
	if len(lost) > 0 {
		kept += fmt.Sprintf("; %d %s lost", len(lost), plural(len(lost), "run", "runs"))
	}
	var re *interleave.RunError
	switch {
	case runErr == nil:
		if len(lost) > 0 {
			fmt.Fprintf(stderr, "decodegap interleave: %s\n", kept)
		}
	case errors.As(runErr, &re):
		fmt.Fprintf(stderr, "decodegap interleave: %d %s lost, more than -max-failed %d, so the rest were not run; %s\n", len(lost), plural(len(lost), "run", "runs"), f.maxFailed, finished)
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "decodegap interleave: %v; %s\n", runErr, kept)
		status = 130
	default:
		fmt.Fprintf(stderr, "decodegap interleave: %v; %s\n", runErr, kept)
		return 1
	}
	if f.untilDecided && ctx.Err() == nil && runErr == nil {
		if decidedAt > 0 {
			fmt.Fprintf(stderr, "decodegap interleave: every verdict decided after %d of at most %d rounds (-max-rounds)\n", decidedAt, f.maxRounds)
		} else {
			fmt.Fprintf(stderr, "decodegap interleave: not every verdict decided within -max-rounds %d\n", f.maxRounds)
		}
	}
	if len(runs) == len(lost) {
		return status
	}
	if err := judgeFile(*f, names, stdout); err != nil {
		fmt.Fprintf(stderr, "decodegap interleave: %v\n", err)
		if status == 0 {
			status = 1
		}
	}
	if len(lost) > 0 {
		fmt.Fprintf(stdout, "\nlost runs (%d; their arm has no value in that round):\n", len(lost))
		for _, e := range lost {
			fmt.Fprintf(stdout, "  %s\n", lostLine(e))
		}
	}
	return status
}

// finishedRuns says where the n runs that finished are, or, when none
// did, that out holds no result.
func finishedRuns(n int, out string) string {
	switch n {
	case 0:
		return "no run finished, so " + out + " holds no result"
	case 1:
		return "the 1 finished run is in " + out
	}
	return fmt.Sprintf("the %d finished runs are in %s", n, out)
}

// lostLine says in one line which run was lost and why, naming the flag
// that bounds it.
func lostLine(e *interleave.RunError) string {
	head := fmt.Sprintf("round %d arm %s: ", e.Round, e.Arm)
	if e.Cause == interleave.TimedOut {
		return head + fmt.Sprintf("timed out: still running after -run-timeout %v, so it was stopped", e.Timeout)
	}
	msg := e.Err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	words := map[interleave.Cause]string{
		interleave.StartFailed: "could not start",
		interleave.Exited:      "failed",
		interleave.NoResults:   "no results",
		interleave.Malformed:   "malformed result",
		interleave.Duplicate:   "duplicated result",
	}[e.Cause]
	if words == "" {
		words = e.Cause.String()
	}
	return head + words + ": " + msg
}

// judgeFile reads the output file back, judges every candidate arm against
// the base and the null band, and prints the verdict table.
func judgeFile(f interleaveFlags, arms []string, stdout io.Writer) error {
	base := arms[0]
	data, err := os.ReadFile(f.out)
	if err != nil {
		return err
	}
	rd := benchfmt.NewReader(bytes.NewReader(data), f.out)
	var results []*benchfmt.Result
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			results = append(results, r.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	rows, err := judgeResults(f, arms, results)
	if err != nil {
		return err
	}
	if err := writeTable(stdout, rows, base, f.null, f.roundsFlag()); err != nil {
		return err
	}
	if f.json != "" {
		if err := writeJSONRows(f.json, f.command, rows); err != nil {
			return err
		}
	}
	if f.plot != "" {
		paths := plotPaths(f.plot, rows)
		for i, row := range rows {
			path := paths[i]
			if err := traceplot.Verdict(verdictData(row, base), path); err != nil {
				return fmt.Errorf("-plot %s: %v", f.plot, err)
			}
			fmt.Fprintf(stdout, "verdict picture: %s\n", path)
		}
	}
	ignore := "round,screen"
	if pkgsDiffer(results) {
		ignore += ",pkg"
	}
	// benchstat compares against the first column; name the order, or the
	// arm that happened to run first would be the base.
	col := fmt.Sprintf("'arm@(%s)'", strings.Join(arms, " "))
	fmt.Fprintf(stdout, "\nbenchstat: go tool benchstat -col %s -ignore %s %s\n", col, ignore, f.out)
	fmt.Fprintf(stdout, "clean runs only: go tool benchstat -col %s -ignore %s -filter screen:clean %s\n", col, ignore, f.out)
	return nil
}

// plotPaths returns the -plot file of each row: the flag's value itself
// built from different packages), which benchstat would otherwise split
// into separate tables.
func pkgsDiffer(results []*benchfmt.Result) bool {
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.GetConfig("pkg")] = true
	}
	return len(seen) > 1
}

// armSpec is one parsed name=TARGET [args] argument.
type armSpec struct {
	name, target string
	args         []string
	isPkg        bool
	// program and dir are what runs: the binary (built for a package) and
	// its directory ("" for the current one).
	program, dir string
}

// parseArms parses the arm arguments and appends the null arm, a copy of the
// first.
func parseArms(args []string, null string) ([]armSpec, error) {
	var specs []armSpec
	seen := map[string]bool{null: true}
	for _, a := range args {
		name, rest, ok := strings.Cut(a, "=")
		fields := strings.Fields(rest)
		if !ok || name == "" || strings.ContainsAny(name, " \t") || len(fields) == 0 {
			return nil, fmt.Errorf("arm %q: write name=TARGET, e.g. new=./new.test or new=./pkg", a)
		}
		if seen[name] {
			if name == null {
				return nil, fmt.Errorf("arm %q: %q is the null arm's name; rename the arm, or the null arm with -null", a, name)
			}
			return nil, fmt.Errorf("arm %q: two arms are named %q; give each its own name", a, name)
		}
		seen[name] = true
		s := armSpec{name: name, target: fields[0], args: fields[1:]}
		for _, x := range s.args {
			if strings.HasPrefix(x, "-test.count") || strings.HasPrefix(x, "--test.count") {
				return nil, fmt.Errorf("arm %q: interleave runs each arm once per run (-test.count=1); use -rounds for more samples", a)
			}
		}
		st, err := os.Stat(s.target)
		switch {
		case err != nil:
			return nil, fmt.Errorf("arm %s: %v: TARGET must be a test binary or a package directory", name, err)
		case st.IsDir():
			s.isPkg = true
			abs, err := filepath.Abs(s.target)
			if err != nil {
				return nil, err
			}
			s.target = abs
		case st.Mode()&0o111 == 0:
			return nil, fmt.Errorf("arm %s: %s is not executable: build it with go test -c -o %s, or give the package directory", name, s.target, s.target)
		default:
			abs, err := filepath.Abs(s.target)
			if err != nil {
				return nil, err
			}
			s.program = abs
		}
		specs = append(specs, s)
	}
	n := specs[0]
	n.name = null
	return append(specs, n), nil
}
