// Command decodegap is gapbench's command line.
//
// Usage:
//
//	decodegap <command> [flags] [args]
//
// Each command lives in its own file of this package and registers itself in
// commands from an init function; main only dispatches. Commands hold no logic
// that the library packages should own: they parse flags, call hostmon,
// nullband and decodegap, and print.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/gapbench/gapbench/internal/runner"
)

// command is one subcommand of decodegap.
type command struct {
	// summary is the one-line description shown by `decodegap help`.
	summary string
	// run runs the command with the arguments after its name; its return
	// value is the process exit status.
	run func(args []string, stdout, stderr io.Writer) int
}

// commands maps a subcommand's name to its implementation; each command's
// file adds itself from init.
var commands = map[string]command{}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the command named by args[0] and returns the exit status.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "decodegap: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

// interruptible returns a context that ends on SIGINT, SIGTERM or SIGHUP
// (runner.Signals, handled alike), and after d when d > 0; stop releases it.
func interruptible(d time.Duration) (ctx context.Context, stop func()) {
	ctx, stopSignals := runner.NotifyContext(context.Background())
	if d <= 0 {
		return ctx, stopSignals
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stopSignals() }
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: decodegap <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'decodegap <command> -h' for a command's flags.")
}
