package interleave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// The benchfmt file configuration keys the Runner adds to every result.
const (
	// KeyArm is the arm's name: `go tool benchstat -col arm` compares arms.
	KeyArm = "arm"
	// KeyRound is the round number, from 1. Its value changes every
	// round, so benchstat needs `-ignore round` to pool rounds.
	KeyRound = "round"
	// KeyScreen is the host's contention verdict over the run: "clean",
	// "contended" or "unavailable" (ScreenResult.Verdict), so
	// `-filter screen:clean` keeps the runs in good weather.
	KeyScreen = "screen"
)

// ScreenResult is the host's contention verdict over the span of one run.
type ScreenResult struct {
	// Verdict is one word, the benchfmt value of screen:, usually
	// "clean", "contended" or "unavailable". Empty means "unavailable".
	Verdict string
	// Detail says why in words (the figures, or why no screen could be
	// taken). When non-empty it is written after the run's results as a
	// comment line that benchfmt readers skip.
	Detail string
}

// Screener screens the host over each run. Runner calls Begin just before a
// run's process starts and the function it returns just after the process
// exits; that function returns the verdict for the span between the two.
// childCPU is the CPU time (user + system, all its threads, from wait4's
// rusage) the run's process used, so that a screen that counts busy time not
// spent by this process can leave the child's out too; 0 when the process
// never started.
type Screener interface {
	Begin() (end func(childCPU time.Duration) ScreenResult)
}

// ScreenerFunc adapts a function to Screener.
type ScreenerFunc func() (end func(childCPU time.Duration) ScreenResult)

// Begin calls f.
func (f ScreenerFunc) Begin() func(time.Duration) ScreenResult { return f() }

// Runner runs a Plan: every run a separate process, one after the other, in
// the plan's order. It writes each run's results to Out as soon as that
// run's process has exited, so an interrupted Runner has lost nothing it
// finished.
type Runner struct {
	// Plan is what to run.
	Plan *Plan
	// Out receives Go benchmark format: every result a run printed, with
	// the file configuration keys KeyArm, KeyRound and KeyScreen added.
	// Each run's results reach Out in one Write per record once the run
	// has ended; give an *os.File to keep them on an interrupt.
	Out io.Writer
	// Progress, when non-nil, receives one line before each run: round
	// i/R, the arm, its place in the round, the time elapsed and the ETA.
	Progress io.Writer
	// Screener, when non-nil, screens the host over each run; nil writes
	// screen: unavailable with NoScreen as the detail.
	Screener Screener
	// NoScreen says why there is no Screener, for the detail line; empty
	// means "no contention screen was given".
	NoScreen string
	// Env is the environment of every run; nil means this process's.
	Env []string
	// Now returns the current time, for elapsed and ETA; nil means
	// time.Now.
	Now func() time.Time
	// OnRun, when non-nil, is called after each finished run, once its
	// results are in Out. Returning true stops the Runner after that run
	// (Run then returns no error): a caller that judges as it goes can
	// stop when it has its answer. The Run is the caller's to keep.
	OnRun func(Run) (stop bool)
}

// Run is one finished run.
type Run struct {
	// Round is the round number, from 1; Pos is the run's place in its
	// round, from 1.
	Round, Pos int
	// Arm is the arm's name.
	Arm string
	// Wall is the time from starting the process to its exit.
	Wall time.Duration
	// Screen is the host's verdict over the run.
	Screen ScreenResult
	// Results are the run's results as written to Out (the Runner keeps
	// no reference to them).
	Results []*benchfmt.Result
}

// RunError is a run whose process failed: it could not start, exited with
// a non-zero status, or printed no benchmark results.
type RunError struct {
	// Arm and Round locate the run.
	Arm   string
	Round int
	// Args and Dir are the command line and directory that were run.
	Args []string
	Dir  string
	// Err is the failure: the *exec.ExitError, the start error, or a
	// description when the process succeeded but printed no results.
	Err error
	// Output is the process's standard error, or its standard output when
	// standard error was empty (a failing test binary prints its failures
	// there): its first 5 and last 15 lines when longer than 21.
	Output string
}

// Error names the arm, the round, the command line and the failure, followed
// by the process's output (see Output).
func (e *RunError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "arm %s, round %d: %s", e.Arm, e.Round, shellQuote(e.Args))
	if e.Dir != "" {
		fmt.Fprintf(&b, " (in %s)", e.Dir)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Output != "" {
		b.WriteString("; its output:\n" + e.Output)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *RunError) Unwrap() error { return e.Err }

// Run runs the plan and returns the finished runs. Before each round it
// writes the round's order to Out as a comment line
// ("# round 3 order new null old") that benchfmt readers skip. It stops
// when OnRun says so, at the first
// failing run with a *RunError, and when ctx is done: the process running
// then is sent an interrupt (and killed 2 s later), its partial output is
// dropped, and the error wraps ctx.Err(). The runs returned, and written to
// Out, are every run that finished.
func (r *Runner) Run(ctx context.Context) ([]Run, error) {
	if r.Plan == nil || r.Out == nil {
		return nil, errors.New("interleave: Runner needs a Plan and an Out")
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	w := benchfmt.NewWriter(r.Out)
	start := now()
	total := r.Plan.Runs()
	var runs []Run
	for round, order := range r.Plan.Orders() {
		line := fmt.Sprintf("# round %d order %s\n", round, r.Plan.OrderString(order))
		if _, err := io.WriteString(r.Out, line); err != nil {
			return runs, fmt.Errorf("interleave: writing the order of round %d: %w", round, err)
		}
		for pi, ai := range order {
			arm := r.Plan.Arms[ai]
			done := len(runs)
			if r.Progress != nil {
				el := now().Sub(start)
				eta := "unknown"
				if done > 0 {
					eta = fmtDur(time.Duration(float64(el) / float64(done) * float64(total-done)))
				}
				fmt.Fprintf(r.Progress, "round %d/%d  arm %s (%d/%d)  elapsed %s  ETA %s\n",
					round, r.Plan.Rounds, arm.Name, pi+1, len(order), fmtDur(el), eta)
			}
			run, err := r.runOne(ctx, arm, round, pi+1)
			if err != nil {
				if ctx.Err() != nil {
					return runs, fmt.Errorf("interrupted in round %d, arm %s, after %d of %d runs: %w", round, arm.Name, done, total, ctx.Err())
				}
				return runs, err
			}
			for _, res := range run.Results {
				if err := w.Write(res); err != nil {
					return runs, fmt.Errorf("interleave: writing results of arm %s, round %d: %w", arm.Name, round, err)
				}
			}
			if run.Screen.Detail != "" {
				line := fmt.Sprintf("# round %d arm %s screen %s: %s\n", round, arm.Name, run.Screen.Verdict, oneLine(run.Screen.Detail))
				if _, err := io.WriteString(r.Out, line); err != nil {
					return runs, fmt.Errorf("interleave: writing the screen line of arm %s, round %d: %w", arm.Name, round, err)
				}
			}
			runs = append(runs, run)
			if r.OnRun != nil && r.OnRun(run) {
				return runs, nil
			}
		}
	}
	return runs, nil
}

// runOne runs one arm once and returns its results with the keys set.
func (r *Runner) runOne(ctx context.Context, arm Arm, round, pos int) (Run, error) {
	cmd := exec.CommandContext(ctx, arm.Args[0], arm.Args[1:]...)
	cmd.Dir = arm.Dir
	cmd.Env = r.Env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	end := func(time.Duration) ScreenResult {
		d := r.NoScreen
		if d == "" {
			d = "no contention screen was given"
		}
		return ScreenResult{Verdict: "unavailable", Detail: d}
	}
	if r.Screener != nil {
		end = r.Screener.Begin()
	}
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var childCPU time.Duration
	if cmd.ProcessState != nil {
		childCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	screen := end(childCPU)
	if screen.Verdict == "" {
		screen.Verdict = "unavailable"
	}
	screen.Verdict = strings.Join(strings.Fields(screen.Verdict), "-")

	fail := func(err error) (Run, error) {
		out := headTail(stderr.String(), 5, 15)
		if strings.TrimSpace(out) == "" {
			out = headTail(stdout.String(), 5, 15)
		}
		return Run{}, &RunError{Arm: arm.Name, Round: round, Args: arm.Args, Dir: arm.Dir, Err: err, Output: out}
	}
	if err != nil {
		return fail(err)
	}

	run := Run{Round: round, Pos: pos, Arm: arm.Name, Wall: wall, Screen: screen}
	rd := benchfmt.NewReader(bytes.NewReader(stdout.Bytes()), arm.Name)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue // unit metadata and malformed lines stay the child's business
		}
		res = res.Clone()
		setFileConfig(res, KeyArm, arm.Name)
		setFileConfig(res, KeyRound, strconv.Itoa(round))
		setFileConfig(res, KeyScreen, screen.Verdict)
		run.Results = append(run.Results, res)
	}
	if err := rd.Err(); err != nil {
		return fail(fmt.Errorf("reading its output: %w", err))
	}
	if len(run.Results) == 0 {
		return fail(errors.New("it exited 0 but printed no benchmark results: check that the benchmark pattern (-test.bench) matches a benchmark in it"))
	}
	return run, nil
}

// setFileConfig sets a file configuration key of res (benchfmt's SetConfig
// sets internal keys, which a Writer does not print). res must not have had
// its config index built (a fresh Clone has not).
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

// headTail returns the first head and the last tail lines of s, with a
// line saying how many were left out between them: the cause of a failure
// is often first (a flag error before the usage text), its context last.
func headTail(s string, head, tail int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > head+tail+1 {
		mid := fmt.Sprintf("[… %d lines left out]", len(lines)-head-tail)
		lines = append(append(lines[:head:head], mid), lines[len(lines)-tail:]...)
	}
	return strings.Join(lines, "\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fmtDur rounds d for a person: 850ms, 12.3s, 4m05s.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// shellQuote joins args so that a shell would split them back.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
