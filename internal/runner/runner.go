// Package runner is gapbench's one process runner: every child benchmark
// process that interleave, ort, calibrate and pr start goes through Run (or,
// for a command that manages its child itself, through Start).
//
// Every child is
//   - the leader of its own process group, so that a signal or a kill
//     reaches whatever it starts, and Ctrl-C at the terminal reaches only
//     the parent, which decides;
//   - started with a parent-death signal (SIGKILL), so that a parent killed
//     outright (SIGKILL, OOM) does not leave it running;
//   - bounded by a per-run timeout, on by default (DefaultTimeout);
//   - stopped, when its context ends or its time is up, by SIGINT to its
//     group and SIGKILL Grace later; when the leader exits, whatever is left
//     in its group is killed, and Run returns only then.
//
// Run returns numbers and an Outcome, never sentences: the commands write
// the words.
//
// # The parent-death signal and threads
//
// Linux sends the parent-death signal when the thread that forked the
// child exits, not when the process does (go.dev/issue/27505). The Go
// runtime ends a thread only when a goroutine locked to it (LockOSThread)
// returns without unlocking; a child forked from such a thread would be
// killed long before its parent exits. Start therefore forks every child
// from one goroutine that locks itself to its thread and never returns, so
// the thread lives as long as the process and the signal means "the parent
// process died".
//
// The signal reaches the child only, not its own children; those are
// killed with the group when the parent is still alive to do it.
package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultTimeout is the per-run limit when Cmd.Timeout is 0.
const DefaultTimeout = 10 * time.Minute

// NoTimeout as Cmd.Timeout turns the per-run limit off.
const NoTimeout time.Duration = -1

// DefaultGrace is Cmd.Grace when 0: the time a group has between SIGINT and
// SIGKILL, and the time Run waits for the output pipes once the group is
// gone.
const DefaultGrace = 2 * time.Second

// DefaultMaxFailed is the lost runs a command goes on after, by default
// (its -max-failed flag).
const DefaultMaxFailed = 3

// Signals are the signals every command handles alike: each ends the
// command's context, and its runs are stopped (group killed, waited for)
// before it cleans up and exits.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// NotifyContext returns a context that ends at the first of Signals (see
// signal.NotifyContext); stop releases the signals.
func NotifyContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(parent, Signals...)
}

// Outcome is how a run ended.
type Outcome int

const (
	// OK: the process exited with status 0.
	OK Outcome = iota
	// Failed: the process exited with a non-zero status (Result.ExitCode).
	Failed
	// Signaled: the process was killed by a signal the runner did not
	// send (Result.Signal), e.g. a crash (SIGSEGV) or another user's kill.
	Signaled
	// TimedOut: the process was still going after Cmd.Timeout; its group
	// was stopped.
	TimedOut
	// Interrupted: the context ended while the process ran; its group
	// was stopped.
	Interrupted
	// StartFailed: the process could not be started (Result.Err).
	StartFailed
)

// String returns a stable identifier: "ok", "failed", "signaled",
// "timed-out", "interrupted" or "start-failed".
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Signaled:
		return "signaled"
	case TimedOut:
		return "timed-out"
	case Interrupted:
		return "interrupted"
	case StartFailed:
		return "start-failed"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Lost reports whether the run gave no usable result: every outcome but OK.
func (o Outcome) Lost() bool { return o != OK }

// Cmd is one child process to run.
type Cmd struct {
	// Args is the program and its arguments; Args[0] is looked up in PATH
	// as exec.Command does.
	Args []string
	// Dir is the working directory; empty means the parent's.
	Dir string
	// Env is the environment; nil means the parent's.
	Env []string
	// Stdin is the child's standard input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the child's output as it is written, each
	// from its own goroutine (give two writers, or a synchronized one); nil
	// discards it. Lines of any length pass through: the runner copies
	// bytes and never splits lines. Run returns after the last write.
	Stdout, Stderr io.Writer
	// Timeout bounds the run's wall time: 0 means DefaultTimeout,
	// NoTimeout (or any negative value) none.
	Timeout time.Duration
	// Grace is the time between SIGINT and SIGKILL when the run is
	// stopped; 0 means DefaultGrace.
	Grace time.Duration
}

// Result is how a run ended, in numbers.
type Result struct {
	// Outcome is how it ended.
	Outcome Outcome
	// ExitCode is the exit status for OK and Failed; -1 otherwise.
	ExitCode int
	// Signal is the signal that killed the process for Signaled (and the
	// one that ended it, SIGINT or SIGKILL, for TimedOut and
	// Interrupted); 0 when it exited.
	Signal syscall.Signal
	// Err is the start error for StartFailed, and a read error of the
	// output pipes otherwise (nil when none).
	Err error
	// Pid is the child's process id (and its group's id); 0 when it never
	// started.
	Pid int
	// Wall is the time from the start to the exit; CPU the child's own
	// user + system time (all its threads, from wait4), not its children's.
	Wall, CPU time.Duration
	// Timeout is the limit the run had (0 when none).
	Timeout time.Duration
}

// Start starts cmd as the leader of a new process group with the parent-death
// signal SIGKILL, forked from a thread that lives as long as the process (see
// the package comment). Fields of cmd.SysProcAttr that the caller set (such
// as Foreground and Ctty) are kept. The caller must Wait for cmd; Run does all
// of this and more.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawnOnce.Do(func() {
		spawn = make(chan spawnReq)
		go spawner()
	})
	done := make(chan error, 1)
	spawn <- spawnReq{cmd, done}
	return <-done
}

// SpawnerFunc is the function name of the goroutine Start leaves running
// for the life of the process, for goleak:
//
//	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(runner.SpawnerFunc))
const SpawnerFunc = "github.com/gapbench/gapbench/internal/runner.spawner"

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawn     chan spawnReq
)

// spawner forks every child from one locked thread; it never returns, so
// the thread never exits (see the package comment).
func spawner() {
	runtime.LockOSThread()
	for r := range spawn {
		r.done <- r.cmd.Start()
	}
}

// Run runs c to its end and returns how it ended. It returns only when the
// process has exited, whatever was left in its group has been sent SIGKILL,
// and its output has been written to c.Stdout and c.Stderr (or Grace has
// passed since the exit, when a process that left the group still holds the
// pipes).
//
// When ctx ends or the timeout passes, the group is sent SIGINT, and
// SIGKILL Grace later if the leader is still there.
func Run(ctx context.Context, c Cmd) Result {
	res := Result{ExitCode: -1}
	if len(c.Args) == 0 {
		res.Outcome, res.Err = StartFailed, errors.New("runner: Cmd.Args is empty")
		return res
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	switch {
	case c.Timeout == 0:
		res.Timeout = DefaultTimeout
	case c.Timeout > 0:
		res.Timeout = c.Timeout
	}
	if err := ctx.Err(); err != nil {
		res.Outcome, res.Err = Interrupted, err
		return res
	}
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = c.Dir, c.Env, c.Stdin
	// The runner's own pipes, not exec's copying goroutines: Wait then
	// returns when the process exits, even if a process that left the
	// group still holds them.
	var pipes [2]*os.File
	var copies sync.WaitGroup
	var readErr [2]error
	for i, w := range []io.Writer{c.Stdout, c.Stderr} {
		if w == nil {
			continue
		}
		r, pw, err := os.Pipe()
		if err != nil {
			closeAll(pipes[:])
			res.Outcome, res.Err = StartFailed, err
			return res
		}
		pipes[i] = r
		if i == 0 {
			cmd.Stdout = pw
		} else {
			cmd.Stderr = pw
		}
	}
	t0 := time.Now()
	err := Start(cmd)
	for _, w := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok {
			f.Close()
		}
	}
	if err != nil {
		closeAll(pipes[:])
		res.Outcome, res.Err = StartFailed, err
		return res
	}
	res.Pid = cmd.Process.Pid
	for i, w := range []io.Writer{c.Stdout, c.Stderr} {
		if pipes[i] == nil {
			continue
		}
		copies.Go(func() {
			_, err := io.Copy(w, pipes[i])
			if !errors.Is(err, os.ErrClosed) {
				readErr[i] = err
			}
		})
	}
	stopped, sig := supervise(ctx, res.Pid, res.Timeout, grace)
	waitErr := cmd.Wait()
	res.Wall = time.Since(t0)
	if st := cmd.ProcessState; st != nil {
		res.CPU = st.UserTime() + st.SystemTime()
	}
	// The copies end when every writer has gone; a process that left the
	// group may still hold the pipes: stop reading after grace.
	read := make(chan struct{})
	go func() { copies.Wait(); close(read) }()
	select {
	case <-read:
	case <-time.After(grace):
		closeAll(pipes[:])
		<-read
	}
	closeAll(pipes[:])
	res.Err = errors.Join(readErr[0], readErr[1])
	res.Outcome, res.ExitCode, res.Signal = outcome(cmd.ProcessState, waitErr, stopped, sig)
	return res
}

// outcome classifies the exit.
func outcome(st *os.ProcessState, waitErr error, stopped Outcome, sig syscall.Signal) (Outcome, int, syscall.Signal) {
	var ws syscall.WaitStatus
	if st != nil {
		ws, _ = st.Sys().(syscall.WaitStatus)
	}
	if stopped != OK {
		if ws.Signaled() {
			sig = ws.Signal()
		}
		return stopped, -1, sig
	}
	switch {
	case ws.Signaled():
		return Signaled, -1, ws.Signal()
	case waitErr != nil || ws.ExitStatus() != 0:
		return Failed, ws.ExitStatus(), 0
	}
	return OK, 0, 0
}

// supervise waits for pid to exit, stopping its group when ctx ends or
// timeout passes; it returns how it was stopped (OK when it was not) and
// the last signal sent. When it returns, pid has exited (not yet reaped)
// and what was left of its group has been sent SIGKILL.
func supervise(ctx context.Context, pid int, timeout, grace time.Duration) (Outcome, syscall.Signal) {
	exited := make(chan struct{})
	go func() {
		// Wait for the exit without reaping: while the leader is a
		// zombie its process group ID cannot be reused, so the group can
		// be killed safely after it exits.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		close(exited)
	}()
	var expire <-chan time.Time
	if timeout > 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		expire = tm.C
	}
	how := OK
	var sig syscall.Signal
	select {
	case <-exited:
	case <-ctx.Done():
		how = Interrupted
	case <-expire:
		how = TimedOut
	}
	if how != OK {
		sig = syscall.SIGINT
		_ = unix.Kill(-pid, unix.SIGINT)
		select {
		case <-exited:
		case <-time.After(grace):
			sig = syscall.SIGKILL
			_ = unix.Kill(-pid, unix.SIGKILL)
			<-exited
		}
	}
	// Whatever is left of the group is an orphan of the run.
	_ = unix.Kill(-pid, unix.SIGKILL)
	return how, sig
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
