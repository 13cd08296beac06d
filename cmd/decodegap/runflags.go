package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/gapbench/gapbench/internal/atomicfile"
	"github.com/gapbench/gapbench/internal/levels"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/runner"
)

// runFlags is the flag group of every command that runs benchmark processes
// (interleave, ort, calibrate, pr): the per-run timeout and the lost runs
// it goes on after. Each run is started by internal/runner.
type runFlags struct {
	// timeout is -run-timeout: 0 means no limit.
	timeout time.Duration
	// maxFailed is -max-failed.
	maxFailed int
}

// register adds -run-timeout and -max-failed to fs; what names a lost run
// in the command's help ("run", "block").
func (r *runFlags) register(fs *flag.FlagSet, what string) {
	fs.DurationVar(&r.timeout, "run-timeout", runner.DefaultTimeout, fmt.Sprintf("stop a %s still going after `duration` (SIGINT to its process group, SIGKILL 2s later) and count it lost; 0 means no limit", what))
	fs.IntVar(&r.maxFailed, "max-failed", runner.DefaultMaxFailed, fmt.Sprintf("go on past up to `n` lost %ss (crashed, timed out, no or malformed results); the one after stops the command", what))
}

// check returns a usage error for values out of range, naming the flag.
func (r runFlags) check() error {
	if r.timeout < 0 {
		return fmt.Errorf("-run-timeout %v: must be ≥ 0 (0 means no limit)", r.timeout)
	}
	if r.maxFailed < 0 {
		return fmt.Errorf("-max-failed %d: must be ≥ 0 (0 stops at the first lost run)", r.maxFailed)
	}
	return nil
}

// runnerTimeout is -run-timeout as internal/runner reads it.
func (r runFlags) runnerTimeout() time.Duration { return runnerTimeout(r.timeout) }

// runnerTimeout maps a flag's "0 means no limit" to runner.NoTimeout.
func runnerTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return runner.NoTimeout
	}
	return d
}

// checkBench returns a usage error, naming the flag, when -bench is not a
// regular expression or -benchtime (when set) is neither a duration nor
// Nx: caught before any run, not as every run lost.
func checkBench(bench, benchtime string) error {
	if _, err := regexp.Compile(bench); err != nil {
		return fmt.Errorf("-bench %q: not a regular expression: %v", bench, err)
	}
	if benchtime != "" {
		if err := checkBenchtime(benchtime); err != nil {
			return fmt.Errorf("-benchtime %v", err)
		}
	}
	return nil
}

// checkUnits returns a usage error, naming the flag, for a -unit list with
// an empty unit.
func checkUnits(units string) error {
	for _, u := range strings.Split(units, ",") {
		if strings.TrimSpace(u) == "" {
			return fmt.Errorf("-unit %q: an empty unit; give comma-separated units, e.g. sec/op,p50-sec/op", units)
		}
	}
	return nil
}

// addJSONFlag adds -json to fs: the verdict rows as JSON (internal/report's
// schema, docs/guide/json.md) written to *path when it is set.
func addJSONFlag(fs *flag.FlagSet, path *string) {
	fs.StringVar(path, "json", "", "also write the verdict rows as JSON to `file` (schema "+report.Schema+", docs/guide/json.md)")
}

// writeJSONRows writes rows as command's JSON report to path (writeAtomic).
func writeJSONRows(path, command string, rows []report.Row) error {
	return writeJSONReport(path, command, nil, rows)
}

// writeJSONReport is writeJSONRows with the revisions compared (pr,
// merge; nil for none).
func writeJSONReport(path, command string, rev *report.Revisions, rows []report.Row) error {
	if err := writeAtomic(path, func(w io.Writer) error { return report.WriteJSONRevisions(w, command, time.Now(), rev, rows) }); err != nil {
		return fmt.Errorf("-json %s: %w", path, err)
	}
	return nil
}

// writeAtomic writes a report to path (atomicfile.Write: beside it,
// renamed over it).
func writeAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}

// planUsage is the help text of -plan, which interleave and ort share.
const planUsage = "a plan `file` from 'decodegap calibrate -plan-out': its steps set -benchtime Nx, its rounds × blocks the rounds (-rounds, or -max-rounds with -until-decided)"

// applyPlan reads the plan file path (-plan; "" does nothing) and sets
// benchtime to its steps ("Nx") and the rounds to its rounds × blocks:
// *maxRounds with until (-until-decided), else *rounds. set holds the
// flags given: -plan with -benchtime, -rounds or -max-rounds is a usage
// error, as is a file that is not a plan.
func applyPlan(path string, set map[string]bool, until bool, benchtime *string, rounds, maxRounds *int) error {
	if path == "" {
		return nil
	}
	for _, name := range []string{"benchtime", "rounds", "max-rounds"} {
		if set[name] {
			return fmt.Errorf("-plan %s and -%s: the plan sets the steps per block and the rounds; give one or the other", path, name)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("-plan: %v", err)
	}
	defer f.Close()
	p, err := levels.ReadPlan(f)
	if err != nil {
		return fmt.Errorf("-plan %s: %v (write one with decodegap calibrate -plan-out)", path, err)
	}
	*benchtime = fmt.Sprintf("%dx", p.Steps)
	if until {
		*maxRounds = p.Rounds * p.Blocks
	} else {
		*rounds = p.Rounds * p.Blocks
	}
	return nil
}
