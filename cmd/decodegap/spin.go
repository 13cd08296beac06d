package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/gapbench/gapbench/hostmon"
)

func init() {
	commands["spin"] = command{
		summary: "spin on one CPU at a duty cycle: a deterministic co-tenant for experiments",
		run:     runSpin,
	}
}

const spinUsage = `usage: decodegap spin -cpu N [-duty P] [-for D]

Runs a busy loop pinned to CPU N that spins P percent of every 10 ms and
sleeps the rest, for D (until interrupted when D is 0): a deterministic
co-tenant, in its own process, for a benchmark or 'decodegap host' to see.

Exit status: 0 when the spinner ran its time or was interrupted, 1 when it
could not be pinned to the CPU, 2 for bad usage.

flags:
`

func runSpin(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("spin", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, spinUsage); fl.PrintDefaults() }
	cpu := fl.Int("cpu", -1, "the `CPU` to spin on (required)")
	duty := fl.Float64("duty", 100, "duty cycle in `percent`, 0–100")
	dur := fl.Duration("for", 0, "how long to spin (0: until interrupted)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *cpu < 0 || fl.NArg() > 0 {
		fmt.Fprintln(stderr, "decodegap spin: -cpu N is required, and takes no arguments")
		fl.Usage()
		return 2
	}
	if !(*duty >= 0 && *duty <= 100) || *dur < 0 {
		fmt.Fprintf(stderr, "decodegap spin: -duty %g must be within 0–100 and -for %v not negative\n", *duty, *dur)
		return 2
	}
	ctx, stop := interruptible(*dur)
	defer stop()
	start := time.Now()
	s, err := hostmon.Spin(ctx, *cpu, *duty)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap spin: %v\n", err)
		return 1
	}
	until := "until interrupted"
	if *dur > 0 {
		until = "for " + dur.String()
	}
	fmt.Fprintf(stderr, "decodegap spin: spinning on CPU %d at %g%% duty %s\n", *cpu, *duty, until)
	s.Wait()
	fmt.Fprintf(stdout, "spun %v of %v on CPU %d (%g%% duty requested)\n",
		s.Spun().Round(time.Millisecond), time.Since(start).Round(time.Millisecond), *cpu, *duty)
	return 0
}
