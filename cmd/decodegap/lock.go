package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/runner"
)

func init() {
	commands["lock"] = command{
		summary: "run a command under the host lock, so benchmark runs on one host take turns",
		run:     runLock,
	}
}

const lockUsage = `usage: decodegap lock [-path P] [-timeout D] -- CMD [ARGS...]

Takes the host lock (an exclusive flock on P; while another process holds it,
says which and waits), runs CMD with ARGS in its own process group, releases
the lock and exits with CMD's exit status. When standard input is the
terminal, CMD's group is given the terminal's foreground (so CMD can read
it and Ctrl-C reaches it directly), and decodegap lock takes it back when
CMD ends. SIGINT, SIGTERM and SIGHUP sent to decodegap lock are passed on to
CMD's process group; CMD decides what to do. When CMD ends, whatever is left
in its group is killed, and only then is the lock released. If decodegap
lock itself is killed (SIGKILL), CMD is killed too (a parent-death signal),
and a watcher process (decodegap again, in a session of its own, holding
the lock) kills
what is left in CMD's group and releases the lock when the group is gone;
CMD holds the lock too (its descriptor is inherited). A process that CMD
moved out of its group is not watched.
A holder that died has released the lock already: its successor takes over.
'decodegap interleave', 'ort', 'calibrate' and 'pr' take the same lock.

Exit status: CMD's (128+N when a signal N ended it); 1 when the lock could
not be taken (within -timeout) or CMD could not start; 2 for bad usage; 130
when interrupted while waiting for the lock.

flags:
`

func runLock(args []string, stdout, stderr io.Writer) int {
	if os.Getenv(lockWatchEnv) != "" {
		return runLockWatch()
	}
	if os.Getenv(lockGateEnv) != "" {
		return runLockGate(args, stderr)
	}
	fl := flag.NewFlagSet("lock", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, lockUsage); fl.PrintDefaults() }
	path := fl.String("path", hostmon.DefaultLockPath(), "host lock `file`")
	timeout := fl.Duration("timeout", 0, "give up waiting for the lock after this `duration` (0: wait forever)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "decodegap lock: no command to run: give it after --, e.g. decodegap lock -- go test -bench .")
		fl.Usage()
		return 2
	}
	if *timeout < 0 {
		fmt.Fprintf(stderr, "decodegap lock: -timeout %v: must be ≥ 0 (0 waits for the lock for ever)\n", *timeout)
		return 2
	}
	ctx, stop := interruptible(*timeout)
	defer stop()
	l, err := hostmon.Lock(ctx, *path, stderr)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			fmt.Fprintf(stderr, "decodegap lock: interrupted while waiting for the host lock %s; nothing was run\n", *path)
			return 130
		}
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 1
	}
	defer l.Unlock()
	// From here the signals go to the command: caught (not ignored,
	// which the command would inherit across exec) and passed on to its
	// process group.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, runner.Signals...)
	defer signal.Stop(sigs)
	stop()
	watch, err := startLockWatch(l.File())
	if err != nil {
		fmt.Fprintf(stderr, "decodegap lock: no watcher for the command's group (%v): if decodegap lock is killed, what the command started may outlive it\n", err)
	}
	defer watch.end()
	cmd, gate, err := watch.command(fl.Args())
	if err != nil {
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 1
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	// The command holds the lock too, so that the lock outlives
	// decodegap lock until the command is gone.
	cmd.ExtraFiles = append([]*os.File{l.File()}, cmd.ExtraFiles...)
	tty, fg := foregroundTTY()
	if fg {
		cmd.SysProcAttr = &syscall.SysProcAttr{Foreground: true, Ctty: tty}
	}
	if err := runner.Start(cmd); err != nil {
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 1
	}
	if fg {
		defer takeForeground(tty)
	}
	pid := cmd.Process.Pid
	// The watcher learns the command's group before the command runs:
	// the gate holds it until then (a kill in between would otherwise
	// leave the watcher no group to kill).
	watch.watch(pid)
	gate.open()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
			continue
		case err = <-done:
		}
		break
	}
	// Whatever the command left in its group goes before the lock does.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if exit.ExitCode() < 0 {
			return 128 + int(exit.Sys().(syscall.WaitStatus).Signal())
		}
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 1
	}
	return 0
}

// lockWatchEnv, in decodegap lock's environment, makes it the watcher of
// startLockWatch.
const lockWatchEnv = "DECODEGAP_LOCK_WATCH"

// lockWatch is the watcher of the command's process group: this program
// again, in a session of its own, holding the lock file (descriptor 3) and
// the read end of a pipe (descriptor 4) whose write end only this process
// holds. It is started before the command, and told the command's group
// (watch) once it runs. When this process ends normally, end tells the
// watcher so and it exits. When this process is killed outright, the pipe
// closes without a word: the watcher kills the group (the command's own
// children, which the command's parent-death signal does not reach) and
// holds the lock until no process of the group runs (at most 5 s).
type lockWatch struct {
	pw *os.File
	w  *exec.Cmd
}

// startLockWatch starts the watcher. A test binary (a name ending in
// .test, running the command in-process) starts none: it returns nil.
func startLockWatch(lock *os.File) (*lockWatch, error) {
	self, err := os.Executable()
	if err != nil || strings.HasSuffix(self, ".test") {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	w := exec.Command(self, "lock")
	w.Env = append(os.Environ(), lockWatchEnv+"=1")
	w.ExtraFiles = []*os.File{lock, pr}
	// Its own session: no terminal signal reaches it, and no
	// parent-death signal either (it must outlive this process).
	w.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = w.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return nil, err
	}
	return &lockWatch{pw: pw, w: w}, nil
}

// lockGateEnv, in decodegap lock's environment, makes it the gate of the
// command (runLockGate).
const lockGateEnv = "DECODEGAP_LOCK_GATE"

// lockGate is the write end of the pipe the gate waits on; nil when the
// command runs without a gate.
type lockGate struct{ r, w *os.File }

// open lets the command run, and closes this process's ends of the pipe.
func (g *lockGate) open() {
	if g != nil {
		g.r.Close()
		g.w.Write([]byte{1})
		g.w.Close()
	}
}

// command returns the command to start for args. With a watcher it is this
// program as the gate (runLockGate), which execs args once open is called,
// so that the watcher knows the group before anything of the command runs;
// the gate's pipe is its second extra file (after the lock's).
func (l *lockWatch) command(args []string) (*exec.Cmd, *lockGate, error) {
	if l == nil {
		return exec.Command(args[0], args[1:]...), nil, nil
	}
	if _, err := exec.LookPath(args[0]); err != nil {
		return nil, nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, append([]string{"lock", "--"}, args...)...)
	cmd.Env = append(os.Environ(), lockGateEnv+"=1")
	cmd.ExtraFiles = []*os.File{r}
	return cmd, &lockGate{r: r, w: w}, nil
}

// runLockGate waits for the gate to open (a byte on descriptor 4), then
// becomes the command args (after "--"), its environment without the gate's
// variable. Its descriptor 3 is the lock, which the command inherits.
func runLockGate(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	gate := os.NewFile(4, "decodegap lock gate")
	var b [1]byte
	if n, _ := gate.Read(b[:]); n != 1 {
		return 1 // decodegap lock ended before the command was to run
	}
	gate.Close()
	if len(args) == 0 {
		return 2
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 127
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, lockGateEnv+"=") {
			env = append(env, e)
		}
	}
	err = syscall.Exec(path, args, env)
	fmt.Fprintf(stderr, "decodegap lock: %s: %v\n", args[0], err)
	return 126
}

// watch tells the watcher the command's process group.
func (l *lockWatch) watch(pgid int) {
	if l != nil {
		fmt.Fprintf(l.pw, "%d\n", pgid)
	}
}

// end tells the watcher that this process ended normally, and waits for it.
func (l *lockWatch) end() {
	if l != nil {
		fmt.Fprintln(l.pw, "done")
		l.pw.Close()
		l.w.Wait()
	}
}

// runLockWatch is the watcher (lockWatch).
func runLockWatch() int {
	signal.Ignore(runner.Signals...)
	in := bufio.NewScanner(os.NewFile(4, "decodegap lock"))
	g := 0
	for in.Scan() {
		if in.Text() == "done" {
			return 0 // decodegap lock ended normally and killed the group itself
		}
		g, _ = strconv.Atoi(in.Text())
	}
	if g <= 1 {
		return 0 // killed before the command ran
	}
	// Killed: kill the group until no process of it runs (a zombie, one
	// the kernel is ending, runs nothing).
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-g, syscall.SIGKILL) == nil && groupRuns(g) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}

// groupRuns reports whether a process of group g exists that is neither a
// zombie nor exiting (PF_EXITING); true when /proc cannot be read.
func groupRuns(g int) bool {
	procs, err := procfs.AllProcs()
	if err != nil {
		return true
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err == nil && st.PGRP == g && st.State != "Z" && st.State != "X" && st.Flags&0x4 == 0 {
			return true
		}
	}
	return false
}

// foregroundTTY returns standard input's descriptor and true when it is a
// terminal whose foreground process group is this process's: the command
// can then be given the foreground.
func foregroundTTY() (int, bool) {
	fd := int(os.Stdin.Fd())
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		return -1, false
	}
	return fd, pgrp == unix.Getpgrp()
}

// takeForeground gives the terminal's foreground back to this process's
// group. A background process that calls tcsetpgrp is sent SIGTTOU, which
// would stop it, unless it ignores the signal: ignore it for the call.
func takeForeground(tty int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(tty, unix.TIOCSPGRP, unix.Getpgrp())
}

// holdHostLock takes the host lock at path for the command name
// ("interleave"), waiting while another process holds it. On success code
// is 0 and unlock releases it. Otherwise it says why on stderr and returns
// the exit status: 130 when ctx was interrupted during the wait, failCode
// when the lock could not be taken. out, when not nil, is the output file
// the command created for the run: nothing was run, so it is closed and
// removed.
func holdHostLock(ctx context.Context, name, path string, out *os.File, failCode int, stderr io.Writer) (unlock func(), code int) {
	l, err := hostmon.Lock(ctx, path, stderr)
	if err == nil {
		return func() { l.Unlock() }, 0
	}
	if out != nil {
		out.Close()
		os.Remove(out.Name())
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "decodegap %s: interrupted while waiting for the host lock %s; nothing was run\n", name, path)
		return nil, 130
	}
	fmt.Fprintf(stderr, "decodegap %s: taking the host lock %s: %v (or run with -lock=false)\n", name, path, err)
	return nil, failCode
}

// createOutput creates the command's benchfmt output file at path, which must
// not exist yet. On failure it returns the exit status: usage's when the
// file exists, failCode otherwise, having said why on stderr.
func createOutput(name, path string, usage func(string, ...any) int, failCode int, stderr io.Writer) (*os.File, int) {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err == nil {
		return file, 0
	}
	if errors.Is(err, os.ErrExist) {
		return nil, usage("-o %s: the file exists; give another name, or remove it", path)
	}
	fmt.Fprintf(stderr, "decodegap %s: -o: %v\n", name, err)
	return nil, failCode
}
