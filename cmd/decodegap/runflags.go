package main

import (
	"flag"
	"fmt"
	"time"

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
