package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/prreport"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

func init() {
	commands["pr"] = command{
		summary: "compare every benchmark between two revisions, interleaved, and write a pull-request report",
		run:     runPR,
	}
}

const prUsage = `usage: decodegap pr -base REF [-head REF] [flags] [packages]

Builds each package's test binary at REF and at the head (a git revision, or
the work tree as it is when -head is not given), finds every benchmark, and
runs each as three arms (base, head, and null: a second process of base) in
interleaved rounds, each run a separate process. A benchmark stops when its
verdict is decided; the rest share -budget, the undecided getting more
rounds. packages are 'go list' patterns, default ./...

Every row (benchmark × metric) ends faster, slower, equivalent within
±-delta, or undecided. Holm's procedure across rows keeps the chance of any
false faster/slower call at most -alpha.

Everything measured is appended to -o as Go benchmark format (arm:, round:,
screen: keys) as it runs:
  go tool benchstat -col 'arm@(base head null)' -ignore round,screen FILE
The report goes to stdout as text, and to -md as Markdown for a PR comment;
progress goes to stderr.

Each run is its own process group and dies with this command. A run still
going after -run-timeout, or when -budget runs out, is stopped (SIGINT to its
group, SIGKILL 2s later). A round with a failed run (a crash, a timeout, no
results) is lost and run again, up to -max-failed lost rounds per benchmark;
the next failure stops that benchmark, which is then not judged. The base is
built in a temporary git worktree, removed on every exit; a go.mod replace
with a relative directory outside the repository (replace x => ../x) is
read from the original module's directory.

With -fail-on, "Check passed" means every benchmark was judged and no row
was decided slower by more than the limit; a benchmark that failed or that
-budget left unrun fails the check ("Check failed: 2 benchmarks could not
be judged").

Exit status: 0; 1 when -fail-on failed the check (a decided slowdown, or a
benchmark the budget left unjudged); 2 for bad usage; 3 when building
failed or a benchmark's runs failed, at the base or the head (it is not
judged); 130 when interrupted.

flags:
`

// prFlags are the command's settings.
type prFlags struct {
	base, head string
	budget     time.Duration
	maxRounds  int
	minRounds  int
	alpha      float64
	delta      judge.Delta
	benchtime  string
	bench      string
	units      string
	out, md    string
	json       string // -json
	failOn     string
	seed       uint64
	lock       bool
	lockPath   string
	screen     bool
	shard      shardFlags // [shard hook] -shard, -run-id, -cpus (merge_shard.go)
	// run is -run-timeout and -max-failed.
	run runFlags
}

// parsePRFlags parses args; it returns the exit status when the command
// must stop (help or bad usage) and ok false.
func parsePRFlags(args []string, stderr io.Writer) (f prFlags, pkgs []string, status int, ok bool) {
	fs := flag.NewFlagSet("pr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, prUsage); fs.PrintDefaults() }
	f.delta = 0.02
	fs.StringVar(&f.base, "base", "", "base git `revision` (required), e.g. origin/main")
	fs.StringVar(&f.head, "head", "", "head git `revision`; empty compares the work tree as it is")
	fs.DurationVar(&f.budget, "budget", 20*time.Minute, "wall-clock `time` the rounds may take, shared across benchmarks (building is not counted); 0 for none")
	fs.IntVar(&f.maxRounds, "max-rounds", 0, "most `rounds` of one benchmark (the sequential test spends its error rate over these); 0 sets them from -budget after the first round: the rounds it pays for if every benchmark ran them all, 6 to 100 (30 with -shard)")
	fs.IntVar(&f.minRounds, "min-rounds", 0, "first look of the sequential test, in `rounds`; 0 is the fewest that give an interval")
	fs.Float64Var(&f.alpha, "alpha", 0.05, "family-wise error `rate` of the faster/slower calls across all rows (Holm)")
	fs.Var(&f.delta, "delta", "equivalence `margin`, a percentage (2%) or a fraction (0.02): equivalent means within ±margin")
	fs.StringVar(&f.benchtime, "benchtime", "100ms", "CPU `time` of one run (calibration runs set each leaf benchmark's iterations N, then every run of it is -test.benchtime=Nx; each sub-benchmark runs alone), or Nx (every leaf N, all in one run)")
	fs.StringVar(&f.bench, "bench", ".", "only benchmarks whose name matches this `regexp`")
	fs.StringVar(&f.units, "unit", judge.DefaultUnitList, "comma-separated `units` to judge, those a benchmark reports (ns/op is sec/op; cpu-sec/op is decodegap.Run's cpu-ns/op, else the run's process CPU time per op; p50-sec/op is decodegap.Run's median step)")
	fs.StringVar(&f.out, "o", "", "benchmark output `file` (must not exist); default pr-YYYYMMDD-HHMMSS.txt")
	fs.StringVar(&f.md, "md", "", "also write the report as Markdown to `file` (for a pull-request comment)")
	addJSONFlag(fs, &f.json)
	fs.StringVar(&f.failOn, "fail-on", "", "exit 1 when a row is decided slower by more than this, e.g. 'slower>3%' (undecided rows never fail)")
	fs.Uint64Var(&f.seed, "seed", 0, "`seed` of the run orders; 0 draws one (it is written to -o)")
	fs.BoolVar(&f.lock, "lock", true, "hold the host lock while running (see 'decodegap lock')")
	fs.StringVar(&f.lockPath, "lock-path", hostmon.DefaultLockPath(), "host lock `file`")
	fs.BoolVar(&f.screen, "screen", true, "screen the host for contention over each run (screen: line; contended rounds are quarantined)")
	f.run.register(fs, "run")
	f.shard.add(fs) // [shard hook]
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, nil, 0, false
		}
		return f, nil, 2, false
	}
	bad := func(format string, a ...any) (prFlags, []string, int, bool) {
		fmt.Fprintf(stderr, "decodegap pr: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'decodegap pr -h' for usage")
		return f, nil, 2, false
	}
	switch {
	case f.base == "":
		return bad("-base is required: the revision to compare against, e.g. -base origin/main")
	case history.OptionLike(f.base) || history.OptionLike(f.head):
		return bad("-base %q, -head %q: a revision cannot start with '-' (git would read it as an option)", f.base, f.head)
	case f.maxRounds < 0 || f.maxRounds == 1:
		return bad("-max-rounds %d: want at least 2 (30 or so for 2%% effects), or 0 to set them from -budget", f.maxRounds)
	case f.maxRounds == 0 && f.budget == 0 && !f.shard.shard.Sharded():
		return bad("-max-rounds 0 sets the rounds from -budget, and -budget is 0 (none): give one of them")
	case f.minRounds < 0 || (f.maxRounds > 0 && f.minRounds > f.maxRounds):
		return bad("-min-rounds %d: want 0 … -max-rounds (%d)", f.minRounds, f.maxRounds)
	case !(f.alpha > 0 && f.alpha < 0.5):
		return bad("-alpha %v: want a rate in (0, 0.5), e.g. 0.05", f.alpha)
	case f.budget < 0:
		return bad("-budget %v: want ≥ 0", f.budget)
	}
	if _, err := prreport.ParseFailOn(f.failOn); err != nil {
		return bad("-fail-on %v", err)
	}
	if err := f.run.check(); err != nil {
		return bad("%v", err)
	}
	if err := checkBenchtime(f.benchtime); err != nil {
		return bad("-benchtime %v", err)
	}
	if _, err := regexp.Compile(f.bench); err != nil {
		return bad("-bench: %v", err)
	}
	if f.maxRounds == 0 && f.shard.shard.Sharded() {
		f.maxRounds = 30 // a shard runs its share of a fixed total in full
	}
	if msg := f.shard.check(f); msg != "" { // [shard hook]
		return bad("%s", msg)
	}
	pkgs = fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	return f, pkgs, 0, true
}

func runPR(args []string, stdout, stderr io.Writer) int {
	f, pkgs, status, ok := parsePRFlags(args, stderr)
	if !ok {
		return status
	}
	failOn, _ := prreport.ParseFailOn(f.failOn)
	benchRE := regexp.MustCompile(f.bench)
	if f.seed == 0 {
		f.seed = rand.Uint64()
	}
	if f.out == "" {
		f.out = "pr-" + time.Now().Format("20060102-150405") + ".txt"
	}
	if _, err := os.Stat(f.out); err == nil {
		fmt.Fprintf(stderr, "decodegap pr: -o %s: the file exists; give another name, or remove it\n", f.out)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap pr: "+format+"\n", a...)
		return 3
	}
	ctx, stop := interruptible(0)
	defer stop()
	if code := f.shard.confine(stderr); code != 0 { // [shard hook] -cpus
		return code
	}

	build, err := prreport.Prepare(ctx, prreport.BuildConfig{Base: f.base, Head: f.head, Patterns: pkgs, Log: stderr})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "decodegap pr: interrupted while building; nothing was run")
			return 130
		}
		return fail("%v", err)
	}
	defer build.Close()

	jobs, unjudged := prJobs(build, benchRE)
	if len(jobs) == 0 {
		return fail("no benchmark matching -bench %q in %s at both revisions", f.bench, strings.Join(pkgs, " "))
	}

	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap pr: "+format+"\n", a...)
		return 2
	}
	file, code := createOutput("pr", f.out, usage, 3, stderr)
	if code != 0 {
		return code
	}
	defer file.Close()

	if f.lock {
		unlock, code := holdHostLock(ctx, "pr", f.lockPath, file, 3, stderr)
		if code != 0 {
			return code
		}
		defer unlock()
	}

	maxRounds := fmt.Sprintf("max %d rounds", f.maxRounds)
	if f.maxRounds == 0 {
		maxRounds = "max rounds from the budget"
	}
	fmt.Fprintf(file, "# decodegap pr: base %s, head %s, seed %d, %d benchmarks, budget %v, %s, -benchtime %s\n\n",
		describeSide(build.Base), describeSide(build.Head), f.seed, len(jobs), f.budget, maxRounds, f.benchtime)
	fmt.Fprintf(stderr, "decodegap pr: %d benchmarks in %d packages, budget %v, results into %s\n", len(jobs), len(build.Packages), f.budget, f.out)

	runner := &prreport.ProcessRunner{Seed: f.seed, Benchtime: f.benchtime, Log: stderr, Timeout: f.run.runnerTimeout()}
	runner.Screener, runner.NoScreen = screenerFor("pr", f.screen, stderr)
	units := splitUnits(f.units)
	opt := nullband.Options{Confidence: 1 - f.alpha, Delta: float64(f.delta), MaxRounds: f.maxRounds, MinRounds: f.minRounds}
	sched := &prreport.Scheduler{Jobs: jobs, Runner: runner, Options: f.shard.options(opt), Units: units,
		Budget: f.budget, MaxFailed: f.run.maxFailed, Out: file, Progress: stderr} // [shard hook] options: a shard's share in full

	w0 := startWeather()
	revs := &prreport.RevisionRunner{Inner: runner, Base: build.Base, Head: build.Head}
	sched.Runner = f.shard.wrap(revs, build, w0.host) // [shard hook]
	runErr := sched.Run(ctx)
	host := w0.end(sched.Runs, sched.Contended, f.screen && runner.Screener != nil)
	status = 0
	if sched.BudgetCut {
		fmt.Fprintf(stderr, "decodegap pr: -budget %v ran out during a round, which was stopped and dropped\n", f.budget)
	}
	if runErr != nil {
		if ctx.Err() == nil {
			return fail("%v", runErr)
		}
		fmt.Fprintf(stderr, "decodegap pr: interrupted after %d runs; judging what finished (in %s)\n", sched.Runs, f.out)
		status = 130
	}
	if f.shard.shard.Sharded() { // [shard hook] a shard's rounds are judged by decodegap merge
		return f.shard.finish(file, host, sched, f.budget, status, stdout, stderr, f.out)
	}

	return f.report(build, jobs, unjudged, sched, host, failOn, status, stdout, stderr)
}

// report judges the jobs and writes the report: text to stdout, -json and
// -md files. It returns the exit status.
func (f prFlags) report(build *prreport.Build, jobs []*prreport.Job, unjudged []prreport.Unjudged, sched *prreport.Scheduler,
	host prreport.Host, failOn *prreport.FailOn, status int, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap pr: "+format+"\n", a...)
		return 3
	}
	rows, un, err := prreport.JudgeJobs(jobs, sched.Policy())
	if err != nil {
		return fail("%v", err)
	}
	rep := prreport.Report{
		Base: prreport.Side{Ref: build.Base.Ref, Commit: build.Base.Commit},
		Head: prreport.Side{Ref: build.Head.Ref, Commit: build.Head.Commit, Dirty: build.Head.Dirty},
		Rows: rows, Unjudged: append(unjudged, un...),
		Alpha: f.alpha, Delta: float64(f.delta),
		Budget: f.budget, Elapsed: sched.Elapsed(), MaxRounds: sched.Options.MaxRounds,
		Host:  host,
		Names: verdicttext.Names{Rounds: "-budget", MaxRounds: "-max-rounds", Delta: "-delta"},
	}
	if status == 0 { // an interrupted run was stopped by neither limit
		rep.Stops = sched.Stops()
	}
	if rep.Stops.Budget == 0 && rep.Stops.Capped > 0 {
		// More rounds come from -max-rounds: the budget was left over.
		rep.Names.Rounds = "-max-rounds"
	}
	if err := prreport.WriteText(stdout, rep, failOn); err != nil {
		return fail("%v", err)
	}
	if f.json != "" {
		if err := writeJSONReport(f.json, "pr", rep.Revisions(), rep.Rows); err != nil {
			return fail("%v", err)
		}
	}
	fmt.Fprintf(stdout, "\nbenchstat: go tool benchstat -col 'arm@(base head null)' -ignore round,screen %s\n", f.out)
	if f.md != "" {
		if err := writeAtomic(f.md, func(w io.Writer) error { return prreport.WriteMarkdown(w, rep, failOn) }); err != nil {
			return fail("-md: %v", err)
		}
	}
	return prStatus(status, jobs, rows, rep.Unjudged, failOn, stderr)
}

// splitUnits splits a comma-separated -unit list, dropping empty items.
func splitUnits(s string) []string {
	var units []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			units = append(units, u)
		}
	}
	return units
}

// prJobs makes a Job of every benchmark at both sides that benchRE
// matches, and lists those at one side only as unjudged.
func prJobs(build *prreport.Build, benchRE *regexp.Regexp) ([]*prreport.Job, []prreport.Unjudged) {
	testArgs := []string{"-test.run=^$", "-test.count=1"}
	var jobs []*prreport.Job
	var unjudged []prreport.Unjudged
	for _, p := range build.Packages {
		for _, name := range p.Benchmarks {
			if !benchRE.MatchString(name) {
				continue
			}
			bench := "-test.bench=^" + regexp.QuoteMeta(name) + "$"
			jobs = append(jobs, &prreport.Job{Pkg: p.ImportPath, Name: name,
				Base: interleave.Arm{Name: prreport.ArmBase, Args: append([]string{p.BaseBin, bench}, testArgs...), Dir: p.BaseDir},
				Head: interleave.Arm{Name: prreport.ArmHead, Args: append([]string{p.HeadBin, bench}, testArgs...), Dir: p.HeadDir}})
		}
		for _, n := range p.OnlyBase {
			unjudged = append(unjudged, prreport.Unjudged{Pkg: p.ImportPath, Name: n, Why: prreport.UnjudgedOnlyBase})
		}
		for _, n := range p.OnlyHead {
			unjudged = append(unjudged, prreport.Unjudged{Pkg: p.ImportPath, Name: n, Why: prreport.UnjudgedOnlyHead})
		}
	}
	return jobs, unjudged
}

// prStatus is the exit status once the report is out: status (130 when
// interrupted) unless it is 0; then 3 when a benchmark's runs failed, 1
// when the -fail-on check failed, 0 otherwise.
func prStatus(status int, jobs []*prreport.Job, rows []prreport.Row, un []prreport.Unjudged, failOn *prreport.FailOn, stderr io.Writer) int {
	if status != 0 {
		return status
	}
	failed := 0
	for _, j := range jobs {
		if j.Err != nil {
			failed++
		}
	}
	switch {
	case failed > 0:
		fmt.Fprintf(stderr, "decodegap pr: %d of %d %s could not be judged: %s runs failed (exit status 3)\n",
			failed, len(jobs), plural(len(jobs), "benchmark", "benchmarks"), plural(failed, "its", "their"))
		return 3
	case failOn != nil && (len(failOn.Failing(rows)) > 0 || len(prreport.Unjudgeable(un)) > 0):
		return 1
	}
	return 0
}

// checkBenchtime returns an error unless s is a duration > 0 or Nx with
// N ≥ 1, as -test.benchtime reads it.
func checkBenchtime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if v, err := strconv.Atoi(n); err == nil && v >= 1 {
			return nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return nil
	}
	return fmt.Errorf("%q: want a duration (100ms) or Nx with N ≥ 1 (2000x)", s)
}

func describeSide(t prreport.Tree) string {
	switch {
	case t.Ref == "" && t.Dirty:
		return "work tree (uncommitted changes)"
	case t.Ref == "":
		return "work tree"
	}
	return fmt.Sprintf("%s (%s)", t.Ref, t.Commit)
}

// weather holds the host's state at the start of the rounds.
type weather struct {
	host     prreport.Host
	sampler  *hostmon.Sampler
	snap     *hostmon.Snapshot
	proc     *procfs.FS
	children time.Duration
}

// startWeather reads the CPU model, the topology and a first snapshot;
// figures it cannot read stay NaN.
func startWeather() *weather {
	w := &weather{host: prreport.Host{Load1Start: math.NaN(), Load1End: math.NaN(),
		ForeignBusyPct: math.NaN(), StealPct: math.NaN(), PSISomePct: math.NaN()}}
	fs, err := hostFS()
	if err != nil {
		return w
	}
	if pfs, err := procfs.NewFS(fs.ProcRoot()); err == nil {
		w.proc = &pfs
		if ci, err := pfs.CPUInfo(); err == nil && len(ci) > 0 {
			w.host.CPU = strings.Join(strings.Fields(ci[0].ModelName), " ")
		}
		if la, err := pfs.LoadAvg(); err == nil {
			w.host.Load1Start = la.Load1
		}
	}
	if topo, err := fs.Topology(); err == nil {
		w.host.Online, w.host.Cores = len(topo.Online), len(topo.Cores)
	}
	if s, err := hostmon.NewSampler(fs, nil, nil); err == nil {
		w.sampler, w.snap = s, s.Snapshot()
	}
	w.children = childCPU()
	return w
}

// end takes the last snapshot and fills the contention figures over the
// run, leaving the benchmark processes' CPU time out of foreign busy.
func (w *weather) end(runs, contended int, screened bool) prreport.Host {
	h := w.host
	h.Runs, h.Contended = runs, contended
	if !screened {
		h.Contended = -1
	}
	if w.sampler == nil {
		return h
	}
	sp := withoutChild(hostmon.Between(w.snap, w.sampler.Snapshot()), childCPU()-w.children)
	set := func(dst *float64, f hostmon.Figure) {
		if f.Available() {
			*dst = f.Value
		}
	}
	if w.proc != nil {
		if la, err := w.proc.LoadAvg(); err == nil {
			h.Load1End = la.Load1
		}
	}
	set(&h.ForeignBusyPct, sp.ForeignBusyPct)
	set(&h.StealPct, sp.StealPct)
	set(&h.PSISomePct, sp.PSISomePct)
	return h
}

// childCPU is the CPU time of this process's waited-for children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
