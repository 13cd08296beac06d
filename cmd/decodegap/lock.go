package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/gapbench/gapbench/hostmon"
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
the lock and exits with CMD's exit status. SIGINT and SIGTERM sent to
decodegap lock (Ctrl-C at the terminal) are passed on to CMD's process group;
CMD decides what to do, and the lock is released when it exits. A holder that
died has released the lock already: its successor takes over.
'decodegap interleave' takes the same lock.

Exit status: CMD's (128+N when a signal N ended it); 1 when the lock could
not be taken (within -timeout) or CMD could not start; 2 for bad usage; 130
when interrupted while waiting for the lock.

flags:
`

func runLock(args []string, stdout, stderr io.Writer) int {
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
	// From here SIGINT and SIGTERM go to the command: caught (not
	// ignored, which the command would inherit across exec) and passed on
	// to its process group.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	stop()
	cmd := exec.Command(fl.Arg(0), fl.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = syscall.Kill(-cmd.Process.Pid, sig.(syscall.Signal))
			continue
		case err = <-done:
		}
		break
	}
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
