package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/prreport"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

func init() {
	commands["bisect"] = command{
		summary: "find the first commit slower than a good one, with interleaved, null-calibrated comparisons",
		run:     runBisect,
	}
}

const bisectUsage = `usage: decodegap bisect -good REV -bad REV -bench REGEXP [-faster] [flags] [packages]

Finds the first commit between -good and -bad (git rev-list --first-parent)
where the benchmarks matching -bench are slower than at the last good
commit, or faster with -faster. Each step builds both commits' test
binaries in git worktrees and compares them as 'decodegap pr' does: base,
head and a null arm (a second process of base) in interleaved rounds,
judged by nullband until decided or out of -max-rounds or -budget.

The first step compares -bad with -good: unless it is slower (faster) by
more than half of -delta, no commit is named. Then each step halves the
range (git bisect's order), comparing the middle commit with the last
good one against a threshold: half of the change the first step measured
(Chromium Pinpoint's rule: a commit is bad when it carries more than half
of the range's change), or half of -delta when -delta is given. A step is
slower (faster) when its verdict is and its change exceeds the threshold;
not slower (not faster) when its interval lies below the threshold (its
upper end below 1 + threshold; with -faster its lower end above
1/(1 + threshold)), or it is equivalent within the threshold, or it moved
the other way; any other step is undecided and ends the search with the
range so far. With -delta given, the rule is the older one: a decided
step not slower by half of -delta is not slower, and an undecided one is
not slower when its interval excludes a change of -delta. The log and
the report say which threshold each step used (JSON Threshold,
ThresholdFrom). Each comparison runs until decided or out of rounds:
-max-rounds 0 (the default) sets them from -budget after every
benchmark's first round, as 'decodegap pr' does. A commit that does not build is
skipped (git bisect skip): its nearest neighbour is compared instead; when
only skipped commits are left, the report lists the candidates. The error
rate -alpha is split
evenly (Bonferroni) over the 1 + ⌈log2 n⌉ comparisons the search may need
for n commits, so the chance that any step's call is false, and so that a
wrong commit is named, is at most -alpha, in either direction.

Exit status: 0 (named or not: see the report); 2 for bad usage; 3 when
building or running failed; 130 when interrupted.

flags:
`

// bisectFlags are the settings of each comparison, shared with
// 'history detect -confirm'.
type bisectFlags struct {
	delta     judge.Delta
	alpha     float64
	units     string
	budget    time.Duration
	maxRounds int
	minRounds int
	benchtime string
	seed      uint64
	screen    bool
	lock      bool
	lockPath  string
	dir       string
	out       string
	// unitsSet is true when -bisect-unit was given (detect -confirm
	// otherwise judges each change's own unit).
	unitsSet bool
	// faster searches for a speed-up: bisect's -faster; detect -confirm
	// sets it per change point, from the change's sign.
	faster bool
	// deltaSet is true when -delta was given: every step's threshold is
	// then half of it, not half of the first step's change.
	deltaSet bool
}

// direction is the search's history.Direction.
func (f *bisectFlags) direction() history.Direction {
	if f.faster {
		return history.Faster
	}
	return history.Slower
}

// bisectFlagsInto adds the comparison flags to fs; seedName names the
// flag of the run orders' seed (detect's -seed is its permutations').
func bisectFlagsInto(fs *flag.FlagSet, seedName string) *bisectFlags {
	f := &bisectFlags{delta: 0.02}
	fs.Var(&f.delta, "delta", "equivalence `margin` of each comparison; the first step is slower above half of it; given, every step is (default: the later steps' threshold is half of the first step's change)")
	fs.Float64Var(&f.alpha, "alpha", 0.05, "error `rate` over the whole search (split over its comparisons, Bonferroni)")
	fs.StringVar(&f.units, "bisect-unit", "sec/op", "comma-separated `units` judged at each step (sec/op, cpu-sec/op …)")
	fs.DurationVar(&f.budget, "budget", 3*time.Minute, "wall-clock `time` of one comparison's rounds (building not counted)")
	fs.IntVar(&f.maxRounds, "max-rounds", 0, "most `rounds` of one comparison; 0 sets them from -budget after every benchmark's first round (the rounds it pays for, 6 to 100)")
	fs.IntVar(&f.minRounds, "min-rounds", 0, "first look of the sequential test, in `rounds`; 0 is the fewest that give an interval")
	fs.StringVar(&f.benchtime, "benchtime", "100ms", "CPU `time` of one run (calibrated to -test.benchtime=Nx), or Nx")
	fs.Uint64Var(&f.seed, seedName, 0, "`seed` of the run orders; 0 draws one")
	fs.BoolVar(&f.screen, "screen", true, "screen the host for contention over each run")
	fs.BoolVar(&f.lock, "lock", true, "hold the host lock while running (see 'decodegap lock')")
	fs.StringVar(&f.lockPath, "lock-path", hostmon.DefaultLockPath(), "host lock `file`")
	fs.StringVar(&f.dir, "C", "", "run in `dir` (the repository) instead of the current directory")
	fs.StringVar(&f.out, "o", "", "append every comparison's results as benchfmt to `file`")
	return f
}

func runBisect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bisect", bisectUsage, stderr)
	good := fs.String("good", "", "a `revision` without the change (required)")
	bad := fs.String("bad", "", "a `revision` with the change (required)")
	bench := fs.String("bench", "", "`regexp` of the benchmarks to compare, as -test.bench takes it: 'Step' or, for one sub-benchmark, 'Step/gap=1ms' (required)")
	asJSON := fs.Bool("json", false, "write the search as JSON instead of text")
	f := bisectFlagsInto(fs, "seed")
	fs.BoolVar(&f.faster, "faster", false, "find the first commit that got faster (a speed-up) instead of slower")
	if st := parseFlags(fs, args); st >= 0 {
		return st
	}
	fs.Visit(func(fl *flag.Flag) { f.deltaSet = f.deltaSet || fl.Name == "delta" })
	bad2 := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap bisect: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'decodegap bisect -h' for usage")
		return 2
	}
	switch {
	case *good == "" || *bad == "":
		return bad2("-good and -bad are required: the revisions around the change")
	case history.OptionLike(*good) || history.OptionLike(*bad):
		return bad2("-good %q, -bad %q: a revision cannot start with '-' (git would read it as an option)", *good, *bad)
	case *bench == "":
		return bad2("-bench is required: the benchmarks to compare, e.g. -bench '^BenchmarkStep$'")
	case !(f.alpha > 0 && f.alpha < 0.5):
		return bad2("-alpha %v: want a rate in (0, 0.5), e.g. 0.05", f.alpha)
	case f.maxRounds < 0 || f.maxRounds == 1:
		return bad2("-max-rounds %d: want at least 2, or 0 to set them from -budget", f.maxRounds)
	case f.maxRounds == 0 && f.budget <= 0:
		return bad2("-max-rounds 0 sets the rounds from -budget, and -budget is %v (none): give one of them", f.budget)
	}
	sel, err := parseBenchSel(*bench)
	if err != nil {
		return bad2("-bench: %v", err)
	}
	ctx, stop := interruptible(0)
	defer stop()
	res, code := bisectOnce(ctx, f, *good, *bad, sel, fs.Args(), stderr)
	if res == nil {
		return code
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(bisectJSON(res, float64(f.delta)))
	} else {
		writeBisect(stdout, res, float64(f.delta))
	}
	return code
}

// bisectOnce runs one search between good and bad; it returns the
// result (nil when nothing ran) and the exit status.
func bisectOnce(ctx context.Context, f *bisectFlags, good, bad string, sel benchSel, pkgs []string, stderr io.Writer) (*history.BisectResult, int) {
	fail := func(format string, a ...any) (*history.BisectResult, int) {
		fmt.Fprintf(stderr, "decodegap bisect: "+format+"\n", a...)
		return nil, 3
	}
	commits, err := commitRange(f.dir, good, bad)
	var re *rangeError
	if errors.As(err, &re) {
		fmt.Fprintf(stderr, "decodegap bisect: %v\nrun 'decodegap bisect -h' for usage\n", err)
		return nil, 2
	}
	if err != nil {
		return fail("%v", err)
	}
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	if f.seed == 0 {
		f.seed = rand.Uint64()
	}
	c := &prComparer{f: f, bench: sel, pkgs: pkgs, log: stderr, half: math.NaN()}
	if f.out != "" {
		file, err := os.OpenFile(f.out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fail("-o: %v", err)
		}
		defer file.Close()
		c.out = file
	}
	if f.lock {
		unlock, code := holdHostLock(ctx, "bisect", f.lockPath, nil, 3, stderr)
		if code != 0 {
			return nil, code
		}
		defer unlock()
	}
	fmt.Fprintf(stderr, "decodegap bisect: %d commits after %s up to %s, the first %s one; seed %d\n", len(commits)-1, short(commits[0]), short(commits[len(commits)-1]), f.direction(), f.seed)
	res, err := history.Bisect(ctx, commits, c, f.alpha, f.direction())
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "decodegap bisect: interrupted")
			return res, 130
		}
		fmt.Fprintf(stderr, "decodegap bisect: %v\n", err)
		return res, 3
	}
	return res, 0
}

// rangeError is commitRange's error for a -good and -bad that bound no
// commits: one commit, reversed, or on different lines. It is a usage
// error of bisect (exit 2).
type rangeError struct{ msg string }

func (e *rangeError) Error() string { return e.msg }

// commitRange lists good and the first-parent commits after it up to
// bad, oldest first.
func commitRange(dir, good, bad string) ([]string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
			}
			return "", err
		}
		return strings.TrimSpace(string(out)), nil
	}
	for _, r := range []struct{ flag, rev string }{{"-good", good}, {"-bad", bad}} {
		if history.OptionLike(r.rev) {
			return nil, fmt.Errorf("%s %q: a revision cannot start with '-' (git would read it as an option)", r.flag, r.rev)
		}
	}
	g, err := git("rev-parse", "--verify", good+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("-good %q: %w", good, err)
	}
	b, err := git("rev-parse", "--verify", bad+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("-bad %q: %w", bad, err)
	}
	if g == b {
		return nil, &rangeError{fmt.Sprintf("-good %q and -bad %q are one commit (%s): give a -good without the change and a -bad with it", good, bad, short(g))}
	}
	list, err := git("rev-list", "--reverse", "--first-parent", "--ancestry-path", g+".."+b)
	if err != nil {
		return nil, err
	}
	if list == "" {
		if _, err := git("merge-base", "--is-ancestor", b, g); err == nil {
			return nil, &rangeError{fmt.Sprintf("-good %q (%s) comes after -bad %q (%s): swap them", good, short(g), bad, short(b))}
		}
		return nil, &rangeError{fmt.Sprintf("-bad %s is not a descendant of -good %s: no commits between them", short(b), short(g))}
	}
	return append([]string{g}, strings.Fields(list)...), nil
}

func short(c string) string { return c[:min(10, len(c))] }

// benchSel is a -bench pattern split as testing splits -test.bench: top
// matches the top-level benchmarks' names (each becomes a job), and sub
// ("" or "/…", the rest of the pattern) is passed on to each job's
// -test.bench, so a job can be one sub-benchmark. prreport.ProcessRunner
// runs each leaf the pattern selects on its own, with its own N.
type benchSel struct {
	pattern string
	top     *regexp.Regexp
	sub     string
}

// parseBenchSel splits pattern at its first '/' outside brackets and
// parentheses (testing's rule) and checks every level compiles.
func parseBenchSel(pattern string) (benchSel, error) {
	sel := benchSel{pattern: pattern}
	levels := splitBenchRegexp(pattern)
	if len(levels) > 1 && slices.ContainsFunc(levels, func(l string) bool { return len(splitBenchAt(l, '|')) > 1 }) {
		// testing reads A|B/x as "A, or B/x"; one job per top-level
		// benchmark cannot say that.
		return sel, fmt.Errorf("%q: a '|' outside parentheses with a '/' means \"A, or B/x\" to go test; write (A|B)/x, or bisect each benchmark on its own", pattern)
	}
	for _, l := range levels {
		if _, err := regexp.Compile(l); err != nil {
			return sel, err
		}
	}
	sel.top = regexp.MustCompile(levels[0])
	if len(levels) > 1 {
		sel.sub = "/" + strings.Join(levels[1:], "/")
	}
	return sel, nil
}

// testBench is the -test.bench flag of the job of top-level benchmark
// name.
func (s benchSel) testBench(name string) string {
	return "-test.bench=^" + regexp.QuoteMeta(name) + "$" + s.sub
}

// splitBenchRegexp splits s at each '/' that is not inside [...] or
// (...) and not escaped, as testing does with -test.bench.
func splitBenchRegexp(s string) []string { return splitBenchAt(s, '/') }

// splitBenchAt splits s at each sep that is not inside [...] or (...)
// and not escaped.
func splitBenchAt(s string, sep byte) []string {
	var out []string
	cs, cp, start := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			cs++
		case ']':
			if cs--; cs < 0 {
				cs = 0
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
		case sep:
			if cs == 0 && cp == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// prComparer compares two commits as 'decodegap pr' does, through
// internal/prreport's exported build, runner and judging.
type prComparer struct {
	f     *bisectFlags
	bench benchSel
	pkgs  []string
	log   io.Writer
	out   io.Writer
	step  int
	// half is HalfChange of the first step once it was changed (NaN
	// before): the later steps' threshold unless -delta was given.
	half float64
}

// noMatch is the error of a step with no benchmark matching sel at both
// good and cand: it names the revision that lacks the ones the other has
// (it said "at both" when they were at good).
func noMatch(b *prreport.Build, sel benchSel, pkgs []string, good, cand string) error {
	var atGood, atCand []string
	for _, pk := range b.Packages {
		for _, n := range pk.OnlyBase {
			if sel.top.MatchString(n) {
				atGood = append(atGood, n)
			}
		}
		for _, n := range pk.OnlyHead {
			if sel.top.MatchString(n) {
				atCand = append(atCand, n)
			}
		}
	}
	where := strings.Join(pkgs, " ")
	switch {
	case len(atGood) > 0:
		return fmt.Errorf("-bench %q matches %s in %s at %s (good) but no benchmark at %s (the candidate): the candidate lacks it", sel.pattern, strings.Join(atGood, ", "), where, short(good), short(cand))
	case len(atCand) > 0:
		return fmt.Errorf("-bench %q matches %s in %s at %s (the candidate) but no benchmark at %s (good): good lacks it", sel.pattern, strings.Join(atCand, ", "), where, short(cand), short(good))
	}
	return fmt.Errorf("no benchmark matching -bench %q in %s at %s (good) or at %s (the candidate)", sel.pattern, where, short(good), short(cand))
}

// Compare implements history.Comparer.
func (p *prComparer) Compare(ctx context.Context, good, cand string, conf float64) (history.StepResult, error) {
	p.step++
	fmt.Fprintf(p.log, "decodegap bisect: step %d: %s (candidate) against %s (good) at %.2f%% confidence\n", p.step, short(cand), short(good), conf*100)
	build, err := prreport.Prepare(ctx, prreport.BuildConfig{Dir: p.f.dir, Base: good, Head: cand, Patterns: p.pkgs, Log: p.log})
	if err != nil {
		// A candidate that does not build is skipped (git bisect skip).
		var be *prreport.BuildError
		if errors.As(err, &be) && be.Side == "head" && ctx.Err() == nil {
			fmt.Fprintf(p.log, "decodegap bisect: step %d: %s does not build: skipped\n", p.step, short(cand))
			return history.StepResult{}, fmt.Errorf("%w: %w", history.ErrSkip, err)
		}
		return history.StepResult{}, err
	}
	defer build.Close()
	testArgs := []string{"-test.run=^$", "-test.count=1"}
	var jobs []*prreport.Job
	for _, pk := range build.Packages {
		for _, name := range pk.Benchmarks {
			if !p.bench.top.MatchString(name) {
				continue
			}
			bench := p.bench.testBench(name)
			jobs = append(jobs, &prreport.Job{Pkg: pk.ImportPath, Name: name,
				Base: interleave.Arm{Name: prreport.ArmBase, Args: append([]string{pk.BaseBin, bench}, testArgs...), Dir: pk.BaseDir},
				Head: interleave.Arm{Name: prreport.ArmHead, Args: append([]string{pk.HeadBin, bench}, testArgs...), Dir: pk.HeadDir}})
		}
	}
	if len(jobs) == 0 {
		return history.StepResult{}, noMatch(build, p.bench, p.pkgs, good, cand)
	}
	runner := &prreport.ProcessRunner{Seed: p.f.seed + uint64(p.step), Benchtime: p.f.benchtime, Log: p.log}
	if p.f.screen {
		if sc, why := newScreener(); sc != nil {
			runner.Screener = sc
		} else {
			runner.NoScreen = why
		}
	} else {
		runner.NoScreen = "screening turned off (-screen=false)"
	}
	rule := stepRule{changed: float64(p.f.delta) / 2, excluded: float64(p.f.delta), from: history.ThresholdDelta}
	margin := float64(p.f.delta)
	if p.step > 1 && !p.f.deltaSet && p.half > 0 {
		// Half of the range's change decides; it is also the margin a
		// step is equivalent within, so a good middle stops early.
		rule = stepRule{changed: p.half, excluded: p.half, strict: true, from: history.ThresholdHalfChange}
		margin = p.half
	}
	fmt.Fprintf(p.log, "decodegap bisect: step %d: threshold %s\n", p.step, thresholdWords(rule.changed, rule.from, p.f.direction()))
	opt := nullband.Options{Confidence: conf, Delta: margin, MaxRounds: p.f.maxRounds, MinRounds: p.f.minRounds}
	sched := &prreport.Scheduler{Jobs: jobs, Runner: &prreport.RevisionRunner{Inner: runner, Base: build.Base, Head: build.Head}, Options: opt, Units: splitList(p.f.units),
		Budget: p.f.budget, Out: p.out, Progress: p.log}
	if err := sched.Run(ctx); err != nil {
		return history.StepResult{}, err
	}
	rows, un, err := prreport.JudgeJobs(jobs, sched.Policy())
	if err != nil {
		return history.StepResult{}, err
	}
	for _, u := range un {
		if u.Err != nil {
			return history.StepResult{}, fmt.Errorf("%s %s: %w", u.Pkg, u.Name, u.Err)
		}
	}
	rounds := 0
	for _, j := range jobs {
		rounds = max(rounds, j.Rounds)
	}
	res := classifyRows(rows, rule, rounds, p.f.direction())
	res.MaxRounds = sched.Options.MaxRounds
	if p.step == 1 && res.Outcome == history.StepChanged {
		p.half = history.HalfChange(res, p.f.direction())
	}
	return res, nil
}

// stepRule is how classifyRows calls a step: changed when a row is
// decided in the search's direction with a change above changed (a
// fraction); an undecided row is no obstacle when its interval excludes
// a change of excluded. strict (the half-change rule) makes a row
// decided in the direction but by less than changed an obstacle too,
// unless its interval lies below changed.
type stepRule struct {
	changed, excluded float64
	strict            bool
	from              history.ThresholdSource
}

// classifyRows turns a comparison's rows into a step in direction d
// under rule. For Slower: changed when any row is decided slower with
// B/A − 1 above rule.changed; unchanged when no row is and every row is
// decided otherwise or, undecided, has its interval's upper end below
// 1 + rule.excluded (a slowdown of that size is excluded: all a bisect
// needs to move on); undecided otherwise. Under a strict rule (the half
// change), a row decided slower by less than rule.changed is unchanged
// only when its interval's upper end is below 1 + rule.changed, and an
// equivalent row (within ±rule.changed) always is. For Faster, the
// mirror image on the ratio's log scale: A/B − 1 above rule.changed (B/A
// below 1/(1 + rule.changed)); an interval's lower end above
// 1/(1 + rule.excluded). The numbers are those of the changed row that
// changed most, or else of the row nearest to changed.
func classifyRows(rows []prreport.Row, rule stepRule, rounds int, d history.Direction) history.StepResult {
	res := history.NaNStep(history.StepUnchanged)
	res.Rounds, res.Threshold, res.ThresholdFrom = rounds, rule.changed, rule.from
	// toward maps a ratio to how far it moved in d's direction (> 1:
	// changed that way), so one comparison serves both directions.
	toward := func(ratio float64) float64 {
		if d == history.Faster {
			return 1 / ratio
		}
		return ratio
	}
	want, far := nullband.Slower, func(v nullband.Verdict) float64 { return v.Hi }
	if d == history.Faster {
		want, far = nullband.Faster, func(v nullband.Verdict) float64 { return v.Lo }
	}
	best := math.Inf(-1)
	var details []string
	for _, r := range rows {
		if r.Kind == report.NullCheck {
			continue // the A/A check: never a step's answer
		}
		v := r.Verdict
		details = append(details, fmt.Sprintf("%s %s: %s, B/A %.3f", r.Bench, r.Unit, v.Outcome, v.Ratio))
		changed := v.Outcome == want && toward(v.Ratio)-1 > rule.changed
		obstacle := v.Outcome == nullband.Undecided && !(toward(far(v)) < 1+rule.excluded)
		if rule.strict && v.Outcome == want && !changed {
			obstacle = !(toward(far(v)) < 1+rule.changed)
		}
		switch {
		case changed:
			if res.Outcome != history.StepChanged || toward(v.Ratio) > toward(res.Ratio) {
				res.Outcome, res.Ratio, res.Lo, res.Hi = history.StepChanged, v.Ratio, v.Lo, v.Hi
			}
			continue
		case obstacle && res.Outcome == history.StepUnchanged:
			res.Outcome = history.StepUndecided
		}
		if res.Outcome != history.StepChanged && toward(v.Ratio) > best {
			best = toward(v.Ratio)
			res.Ratio, res.Lo, res.Hi = v.Ratio, v.Lo, v.Hi
		}
	}
	res.Detail = strings.Join(details, "; ")
	return res
}
