package main

import (
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
says which and waits), runs CMD with ARGS, releases the lock and exits with
CMD's exit status. A holder that died has released the lock already: its
successor takes over. 'decodegap interleave' takes the same lock.

Exit status: CMD's; 1 when the lock could not be taken (within -timeout) or
CMD could not start; 2 for bad usage.

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
		fmt.Fprintf(stderr, "decodegap lock: %v\n", err)
		return 1
	}
	defer l.Unlock()
	stop() // from here, signals go to the command as well as to us
	cmd := exec.Command(fl.Arg(0), fl.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	// Ignore the terminal's interrupt while the command runs: it gets it
	// too and decides; the lock is released when it exits.
	signal.Ignore(syscall.SIGINT)
	defer signal.Reset(syscall.SIGINT)
	err = cmd.Run()
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
