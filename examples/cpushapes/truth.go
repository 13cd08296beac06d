package cpushapes

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap"
)

// Truth is what GroundTruth or GroundTruthGap measured: per step, over N
// steps run in a plain loop with no harness, the process's CPU time by two
// kernel counters, and the wall time.
type Truth struct {
	// N is the number of steps measured (the warm-up left out); Gap the
	// sleep before each.
	N   int
	Gap time.Duration
	// ClockNs is CLOCK_PROCESS_CPUTIME_ID's advance per step, ns: every
	// thread of the process, those that exited during the loop included,
	// less GapNs.
	ClockNs float64
	// RusageNs is getrusage(RUSAGE_SELF)'s user+sys advance per step, ns:
	// the same total by the other route (microsecond resolution, the
	// kernel's split between user and sys), less GapNs. UserNs and SysNs
	// are its two parts, as the kernel split them (GapNs is left in them).
	RusageNs      float64
	UserNs, SysNs float64
	// GapNs is the loop thread's own CPU time in the gaps per step (its
	// CPU clock read around each sleep), ns: 0 with no gap.
	GapNs float64
	// WallNs is the monotonic clock's advance per step, the gap included,
	// ns.
	WallNs float64
}

// GroundTruth opens an instance with open, runs n steps of it back to back
// in a plain loop on the calling goroutine, not locked to its OS thread
// (as decodegap runs a step, and as a caller outside any harness does),
// with no counters or harness, and returns what the
// process's CPU time and the wall clock advanced per step: all the CPU the
// step costs the process, on whatever thread it was spent. It first
// collects the heap (runtime.GC), so that earlier work's garbage is not
// billed to the steps, and runs n/10 steps (at most 100) unmeasured, so
// that pools and threads the step starts are up; the close is not
// measured. The process must be otherwise quiet: everything it runs
// meanwhile is counted. An error from the open, a step or the close is
// returned, with what was measured when a step or the close failed.
func GroundTruth(open decodegap.Opener, n int) (Truth, error) {
	return GroundTruthGap(open, n, 0)
}

// GroundTruthGap is GroundTruth with an idle gap before every step: the
// loop thread sleeps for gap and then runs the step, and the loop thread's
// own CPU time in the gaps (its CPU clock, CLOCK_THREAD_CPUTIME_ID, read
// around each sleep) is subtracted. What is left is what the steps cost the
// process at this gap, with what the gaps change included (a collector's
// workers and a background goroutine run through them, woken threads start
// from idle) and the gaps' own cost left out, as a harness that leaves out
// its own CPU should read.
//
// The sleep is clock_nanosleep called as a raw system call, which the Go
// runtime does not see: to it the loop thread stays busy, so its sysmon
// thread neither retakes the thread's P nor polls for the sleep's end. A
// sleep that the runtime sees (decodegap's gaps, time.Sleep) costs that
// thread CPU too, measured here at about 18 µs a 500 µs gap, and 15–200 µs
// as the host's load moved, on a thread that is neither the loop's nor the
// step's: too noisy to subtract, and the gap's cost, not the step's. The
// loop's CPU clock reads cost about 1 µs a step that falls outside what is
// subtracted. gap 0 is GroundTruth.
func GroundTruthGap(open decodegap.Opener, n int, gap time.Duration) (Truth, error) {
	const fn = "cpushapes.GroundTruth"
	if n < 1 {
		return Truth{}, fmt.Errorf("%s: n = %d: want >= 1 steps", fn, n)
	}
	if gap < 0 {
		return Truth{}, fmt.Errorf("%s: gap = %v: want >= 0", fn, gap)
	}
	runtime.GC()
	step, closeFn, err := open()
	if err != nil {
		return Truth{}, fmt.Errorf("%s: open: %w", fn, err)
	}
	if step == nil {
		return Truth{}, fmt.Errorf("%s: open returned a nil step", fn)
	}
	closeOnce := func() error {
		if closeFn == nil {
			return nil
		}
		c := closeFn
		closeFn = nil
		return c()
	}
	defer func() { _ = closeOnce() }() // the error paths; the last line reports the close's error
	for i := range min(n/10, 100) {
		if err := step(); err != nil {
			return Truth{}, fmt.Errorf("%s: warm-up step %d: %w", fn, i, err)
		}
	}
	t, err := runLoop(step, n, gap)
	if err != nil {
		return t, fmt.Errorf("%s: %w", fn, err)
	}
	if err := closeOnce(); err != nil {
		return t, fmt.Errorf("%s: close: %w", fn, err)
	}
	return t, nil
}

// runLoop runs n iterations of (sleep gap, step) and returns what they
// cost per iteration; a step's error stops it, with the iterations before
// it measured.
func runLoop(step decodegap.Step, n int, gap time.Duration) (Truth, error) {
	r0, c0, err := processCPU()
	if err != nil {
		return Truth{}, err
	}
	t0 := time.Now()
	var stepErr, gapErr error
	var inGaps int64 // ns of the loop thread's CPU inside the sleeps' brackets
	i := 0
	for ; i < n; i++ {
		if gap > 0 {
			var d int64
			if d, gapErr = sleepRaw(gap); gapErr != nil {
				break
			}
			inGaps += d
		}
		if stepErr = step(); stepErr != nil {
			stepErr = fmt.Errorf("step %d: %w", i, stepErr)
			break
		}
	}
	wall := time.Since(t0)
	r1, c1, err := processCPU()
	if err != nil {
		return Truth{}, err
	}
	if gapErr != nil {
		return Truth{}, gapErr
	}
	k := max(i, 1)
	per := func(d int64) float64 { return float64(d) / float64(k) }
	t := Truth{N: k, Gap: gap, GapNs: per(inGaps), WallNs: per(int64(wall)),
		ClockNs: per(c1 - c0 - inGaps), UserNs: per(r1.user - r0.user), SysNs: per(r1.sys - r0.sys)}
	t.RusageNs = t.UserNs + t.SysNs - t.GapNs
	return t, stepErr
}

// sleepRaw sleeps for d by clock_nanosleep called as a raw system call
// (the runtime does not see the thread leave), resuming after a signal
// with the time that remained, and returns the calling thread's CPU time
// between its clock reads before and after, ns.
func sleepRaw(d time.Duration) (int64, error) {
	// Locked for the sleep and its two clock reads only: the step runs on
	// a goroutine as a caller's does outside any harness (a locked caller
	// makes every wait of a step on its goroutines a hand-off of the P).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, err := threadCPU()
	if err != nil {
		return 0, err
	}
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		return 0, fmt.Errorf("reading CLOCK_MONOTONIC: %w", err)
	}
	until := unix.NsecToTimespec(now.Nano() + int64(d))
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME,
			uintptr(unsafe.Pointer(&until)), 0, 0, 0)
		if e == 0 {
			break
		}
		if e != unix.EINTR {
			return 0, fmt.Errorf("clock_nanosleep: %w", e)
		}
	}
	c1, err := threadCPU()
	if err != nil {
		return 0, err
	}
	return c1 - c0, nil
}

// rusage is getrusage(RUSAGE_SELF)'s user and system time, ns.
type rusage struct{ user, sys int64 }

// processCPU reads the process's CPU time by getrusage(RUSAGE_SELF) and by
// CLOCK_PROCESS_CPUTIME_ID (ns).
func processCPU() (rusage, int64, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return rusage{}, 0, fmt.Errorf("getrusage(RUSAGE_SELF): %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return rusage{}, 0, fmt.Errorf("reading CLOCK_PROCESS_CPUTIME_ID: %w", err)
	}
	return rusage{ru.Utime.Nano(), ru.Stime.Nano()}, ts.Nano(), nil
}
