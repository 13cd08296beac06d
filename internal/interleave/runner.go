package interleave

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/runner"
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

// Runner runs a Plan: every run a separate process in its own process
// group, one after the other, in the plan's order. It writes each run's
// results to Out as soon as that run's process has exited, so an interrupted
// or failing Runner has lost nothing it finished.
type Runner struct {
	// Plan is what to run.
	Plan *Plan
	// Out receives Go benchmark format: every result a run printed, with
	// the file configuration keys KeyArm, KeyRound and KeyScreen added,
	// and comment lines (which benchfmt readers skip) for each round's
	// order, a screen's detail and a failed run's cause. Each run's
	// results reach Out once the run has ended; give an *os.File to keep
	// them on an interrupt.
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
	// Timeout bounds each run's wall time: a run still going after it
	// is stopped (see Grace) and fails with cause TimedOut. 0 means
	// runner.DefaultTimeout; runner.NoTimeout (any negative value) no
	// limit.
	Timeout time.Duration
	// Grace is how long a run's process group has to exit after SIGINT
	// (on a timeout or when the context ends) before it is sent SIGKILL;
	// 0 means 2 s.
	Grace time.Duration
	// MaxFailed is the number of failed runs the Runner goes on after;
	// the failure after that stops it. 0 stops it at the first.
	MaxFailed int
	// OnRun, when non-nil, is called after each run ends, failed or not,
	// once its results (or its failure's comment line) are in Out.
	// Returning true stops the Runner after that run (Run then returns no
	// error): a caller that judges as it goes can stop when it has its
	// answer. The Run is the caller's to keep.
	OnRun func(Run) (stop bool)
}

// Run is one run that ended, with its results or its failure.
type Run struct {
	// Round is the round number, from 1; Pos is the run's place in its
	// round, from 1.
	Round, Pos int
	// Arm is the arm's name.
	Arm string
	// Wall is the time from starting the process to its exit.
	Wall time.Duration
	// Exit is how the process ended, in numbers (runner.Result): its
	// outcome, exit code or signal, pid and CPU time.
	Exit runner.Result
	// Screen is the host's verdict over the run.
	Screen ScreenResult
	// Results are the run's results as written to Out (the Runner keeps
	// no reference to them); empty when the run failed.
	Results []*benchfmt.Result
	// Err is why the run failed; nil when it did not.
	Err *RunError
}

// Cause says why a run failed.
type Cause int

const (
	// StartFailed: the program could not be started.
	StartFailed Cause = iota + 1
	// Exited: the process exited with a non-zero status, or was killed
	// by a signal that the Runner did not send.
	Exited
	// TimedOut: the run was still going after Runner.Timeout and was
	// stopped.
	TimedOut
	// NoResults: the process exited 0 but printed no benchmark result.
	NoResults
	// Malformed: a result line does not parse, is too long to read, or
	// holds a value that is not a finite number.
	Malformed
	// Duplicate: the run printed two results of one benchmark.
	Duplicate
)

// String returns a stable identifier: "start-failed", "exited",
// "timed-out", "no-results", "malformed" or "duplicate".
func (c Cause) String() string {
	switch c {
	case StartFailed:
		return "start-failed"
	case Exited:
		return "exited"
	case TimedOut:
		return "timed-out"
	case NoResults:
		return "no-results"
	case Malformed:
		return "malformed"
	case Duplicate:
		return "duplicate"
	}
	return "cause(" + strconv.Itoa(int(c)) + ")"
}

// RunError is a run that failed.
type RunError struct {
	// Arm, Round and Pos locate the run.
	Arm        string
	Round, Pos int
	// Args and Dir are the command line and directory that were run.
	Args []string
	Dir  string
	// Cause says what went wrong; Err says it in detail: the
	// *exec.ExitError, the start error, the timeout, or the line at
	// fault.
	Cause Cause
	Err   error
	// Line is the line of the run's standard output at fault (from 1)
	// for Malformed and Duplicate; 0 otherwise.
	Line int
	// Timeout is the limit a TimedOut run exceeded.
	Timeout time.Duration
	// Output is the process's standard error, or its standard output
	// when standard error was empty (a failing test binary prints its
	// failures there): its first 5 and last 15 lines when longer than 21,
	// each line shortened to 200 bytes and quoted when it is not text.
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

// Run runs the plan and returns every run that ended, failed ones included
// (with Err set). Before each round it writes the round's order to Out as a
// comment line ("# round 3 order new null old"); after a failed run, its
// cause ("# round 3 arm new lost: timed-out: …").
//
// It stops when OnRun says so, after more than MaxFailed failed runs (the
// error is the last *RunError), and when ctx is done: the run going then is
// stopped (its process group sent SIGINT, then SIGKILL after Grace), its
// partial output is dropped, and the error wraps ctx.Err().
//
// Every run's process is the leader of its own process group; when the
// process exits, or is stopped, whatever is left in its group (a child it
// started and did not wait for) is killed, so no run leaves a process
// behind unless it leaves its group.
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
	failed := 0
	for round, order := range r.Plan.Orders() {
		line := fmt.Sprintf("# round %d order %s\n", round, r.Plan.OrderString(order))
		if _, err := io.WriteString(r.Out, line); err != nil {
			return runs, fmt.Errorf("interleave: writing the order of round %d: %w", round, err)
		}
		for pi, ai := range order {
			arm := r.Plan.Arms[ai]
			done := len(runs)
			if ctx.Err() != nil {
				return runs, fmt.Errorf("interrupted before round %d, arm %s, after %d of %d runs: %w", round, arm.Name, done, total, ctx.Err())
			}
			if r.Progress != nil {
				el := now().Sub(start)
				eta := "unknown"
				if done > 0 {
					eta = durfmt.Elapsed(time.Duration(float64(el) / float64(done) * float64(total-done)))
				}
				fmt.Fprintf(r.Progress, "round %d/%d  arm %s (%d/%d)  elapsed %s  ETA %s\n",
					round, r.Plan.Rounds, arm.Name, pi+1, len(order), durfmt.Elapsed(el), eta)
			}
			run, interrupted := r.runOne(ctx, arm, round, pi+1)
			if interrupted {
				return runs, fmt.Errorf("interrupted in round %d, arm %s, after %d of %d runs: %w", round, arm.Name, done, total, ctx.Err())
			}
			if run.Err != nil {
				failed++
				line := fmt.Sprintf("# round %d arm %s lost: %s: %s\n", round, arm.Name, run.Err.Cause, oneLine(run.Err.Err.Error()))
				if _, err := io.WriteString(r.Out, line); err != nil {
					return runs, fmt.Errorf("interleave: writing the failure of arm %s, round %d: %w", arm.Name, round, err)
				}
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
			if run.Err != nil && failed > r.MaxFailed {
				return runs, run.Err
			}
		}
	}
	return runs, nil
}

// runOne runs one arm once. interrupted reports that ctx ended while it
// ran; the Run is then to be dropped.
func (r *Runner) runOne(ctx context.Context, arm Arm, round, pos int) (run Run, interrupted bool) {
	run = Run{Round: round, Pos: pos, Arm: arm.Name}
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
	var stdout outputReader
	var stderr outputReader
	stdout.keep = true
	fail := func(cause Cause, line int, err error) {
		out := stderr.tail.String()
		if strings.TrimSpace(out) == "" {
			out = stdout.tail.String()
		}
		run.Err = &RunError{Arm: arm.Name, Round: round, Pos: pos, Args: arm.Args, Dir: arm.Dir,
			Cause: cause, Err: err, Line: line, Output: out}
	}
	finish := func(childCPU time.Duration) {
		s := end(childCPU)
		if s.Verdict == "" {
			s.Verdict = "unavailable"
		}
		s.Verdict = strings.Join(strings.Fields(s.Verdict), "-")
		run.Screen = s
	}

	// The streams go through pipes to their readers, which split lines of
	// any length.
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	var readers sync.WaitGroup
	readers.Go(func() { stdout.read(outR) })
	readers.Go(func() { stderr.read(errR) })
	res := runner.Run(ctx, runner.Cmd{Args: arm.Args, Dir: arm.Dir, Env: r.Env,
		Stdout: outW, Stderr: errW, Timeout: r.Timeout, Grace: r.Grace})
	outW.Close()
	errW.Close()
	readers.Wait()
	run.Wall = res.Wall
	run.Exit = res
	finish(res.CPU)
	switch res.Outcome {
	case runner.Interrupted:
		return run, true
	case runner.StartFailed:
		fail(StartFailed, 0, res.Err)
		return run, false
	case runner.TimedOut:
		fail(TimedOut, 0, fmt.Errorf("still running after the timeout of %v, so its process group was stopped", res.Timeout))
		run.Err.Timeout = res.Timeout
		return run, false
	case runner.Failed:
		fail(Exited, 0, fmt.Errorf("exit status %d", res.ExitCode))
		return run, false
	case runner.Signaled:
		fail(Exited, 0, fmt.Errorf("signal: %s", unix.SignalName(res.Signal)))
		return run, false
	}
	results, cause, line, err := parseResults(&stdout, arm.Name)
	if err != nil {
		fail(cause, line, err)
		return run, false
	}
	for _, res := range results {
		setFileConfig(res, KeyArm, arm.Name)
		setFileConfig(res, KeyRound, strconv.Itoa(round))
		setFileConfig(res, KeyScreen, run.Screen.Verdict)
	}
	run.Results = results
	return run, false
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

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
