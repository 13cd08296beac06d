// Package cpucost is the arithmetic of cpu-ns/op: the CPU time a span of
// steps cost the process, from counters read at the span's boundaries
// only, never around a step.
//
// # The definition
//
// A span's CPU is the process's CPU clock (CLOCK_PROCESS_CPUTIME_ID: every
// thread, those that exited within the span too) over the span, less the
// harness's own: the gaps (what the loop thread spent sleeping and
// spinning, measured by the gap Waiter), the counter snapshots (the loop
// thread's clock around each), and the loop's bookkeeping per step (a
// constant the caller measures once per process with a step that does
// nothing). What is left is everything the arm's work costs the process:
// the loop thread's time in the step, the step's goroutines on whatever
// thread they ran, threads the step or its open started (and those that
// exited), goroutines the open left running, cgo pools, and the runtime
// work the steps cause (GC marking, the scheduler's hand-offs).
//
// # Turns
//
// When several arms' instances are open at once and take turns (a sliced
// round), the process's clock over one arm's turn also holds what the
// other instances burn meanwhile. An interval of the arm's own turn
// counts the process's CPU less the harness's and less the CPU of the
// threads the other arms' opens created (read per thread, schedstat); an
// interval in which other arms ran (Foreign) counts only the CPU of the
// threads this arm's open created (a pool that spins into the next turn).
// What remains mixed is the work of goroutines that another arm's open
// left running on the runtime's shared threads, which the kernel cannot
// tell apart: it lands in the turn it runs in.
//
// # Numbers and reasons
//
// The package returns numbers and an enumerated [Reason] when a figure is
// unavailable; it writes no sentence and allocates nothing.
package cpucost

import "math"

// Interval is the change of the counters between two consecutive
// readings. All times are CPU nanoseconds.
type Interval struct {
	// Process is the process's CPU clock over the interval; User and Sys
	// its getrusage split (µs precision, the kernel's tick-based split).
	Process, User, Sys int64
	// Loop is the loop thread's own clock over the interval; LoopOK is
	// false when either reading was not of that thread (or unread).
	Loop   int64
	LoopOK bool
	// Harness is the harness's own CPU within the interval (the gaps, the
	// snapshots); HarnessUser the part of it in user code (the spins).
	Harness, HarnessUser int64
	// Steps is the number of steps recorded in the interval (0 in a
	// foreign one).
	Steps int
	// Foreign marks an interval in which other arms took their turns
	// (a sliced round).
	Foreign bool
	// Own and Others are the CPU of the threads this arm's open created
	// and of those the other open arms' opens created (turns only);
	// ThreadsOK is false when the thread list could not be read at both
	// ends.
	Own, Others int64
	ThreadsOK   bool
}

// Reason says why a span's CPU is unavailable; Available when it is not.
type Reason int

const (
	// Available: the figure was read in the definition.
	Available Reason = iota
	// NoSteps: the span holds no recorded step.
	NoSteps
	// NoThreadList: a turn's figure needs the threads' own clocks (to
	// leave the other arms' threads out) and the thread list was not read.
	NoThreadList
	// Negative: the harness's own CPU exceeds what the process spent by
	// more than a rounding: a reading is wrong, and no figure is given.
	Negative
)

// String names the reason as the log's key says it.
func (r Reason) String() string {
	switch r {
	case Available:
		return "available"
	case NoSteps:
		return "no-steps"
	case NoThreadList:
		return "no-thread-list"
	case Negative:
		return "harness-exceeds-process"
	}
	return "unknown"
}

// Cost is the arm's CPU over a span of intervals.
type Cost struct {
	// Steps is the number of recorded steps the span holds.
	Steps int
	// Ns is the steps' CPU in total; User and Sys split it in the ratio
	// of the process's user and system time once the harness's parts are
	// taken out of each (the harness's spins from user, its sleeps and
	// snapshots from system), so User+Sys = Ns.
	Ns, User, Sys float64
	// Loop is the part of Ns that ran on the loop thread, NaN when the
	// loop thread's clock was not read at every boundary.
	Loop float64
	// Harness is the harness's CPU left out, the per-step bookkeeping
	// included.
	Harness float64
	// Process is the process's CPU over the span's own intervals (turns:
	// over the arm's turns).
	Process float64
	// Why is Available, or why the figure is not given (Ns is then 0).
	Why Reason
}

// PerStep returns Ns per step, and false when unavailable.
func (c Cost) PerStep() (float64, bool) {
	if c.Why != Available || c.Steps == 0 {
		return 0, false
	}
	return c.Ns / float64(c.Steps), true
}

// negativeSlack is how far below zero a span's figure may fall and still
// read as 0: the readings' rounding (getrusage's µs, the clocks read a
// few hundred ns apart) on a step that does next to nothing.
const negativeSlack = 0.02

// Sum returns the cost of the span ivs. overheadNs is the loop's own
// bookkeeping per recorded step (left out with the harness); turns says
// the intervals come from a sliced round (Foreign and the threads' part
// apply). It does not allocate.
func Sum(ivs []Interval, overheadNs float64, turns bool) Cost {
	var c Cost
	var user, sys, loop, process float64
	loopOK := true
	for i := range ivs {
		iv := &ivs[i]
		if turns && !iv.ThreadsOK {
			return Cost{Steps: stepsOf(ivs), Why: NoThreadList, Loop: math.NaN()}
		}
		if iv.Foreign {
			if turns {
				c.Ns += float64(iv.Own)
			}
			continue
		}
		c.Steps += iv.Steps
		ns := float64(iv.Process - iv.Harness)
		if turns {
			ns -= float64(iv.Others)
		}
		c.Ns += ns
		c.Harness += float64(iv.Harness)
		process += float64(iv.Process)
		user += float64(iv.User - iv.HarnessUser)
		sys += float64(iv.Sys - (iv.Harness - iv.HarnessUser))
		loopOK = loopOK && iv.LoopOK
		loop += float64(iv.Loop - iv.Harness)
	}
	c.Process = process
	if c.Steps == 0 {
		return Cost{Why: NoSteps, Loop: math.NaN(), Process: process}
	}
	bk := overheadNs * float64(c.Steps)
	c.Ns -= bk
	c.Harness += bk
	user -= bk
	loop -= bk
	if c.Ns < 0 {
		if -c.Ns > negativeSlack*max(process, 1) {
			return Cost{Steps: c.Steps, Why: Negative, Loop: math.NaN(), Harness: c.Harness, Process: process}
		}
		c.Ns = 0
	}
	user, sys = max(user, 0), max(sys, 0)
	if user+sys > 0 {
		c.User = c.Ns * user / (user + sys)
		c.Sys = c.Ns - c.User
	} else {
		c.User = c.Ns
	}
	c.Loop = math.NaN()
	if loopOK {
		c.Loop = min(max(loop, 0), c.Ns)
	}
	return c
}

func stepsOf(ivs []Interval) int {
	n := 0
	for i := range ivs {
		if !ivs[i].Foreign {
			n += ivs[i].Steps
		}
	}
	return n
}
