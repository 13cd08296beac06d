package hostmon

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// SpinPeriod is the spinner's duty-cycle period: in every 10 ms it spins
// duty% of the period and sleeps the rest. 10 ms is one scheduler tick, short
// enough that a sample of 100 ms or more sees the average duty.
const SpinPeriod = 10 * time.Millisecond

// Spinner is a running busy loop pinned to one CPU.
type Spinner struct {
	// CPU is the CPU the spinner is pinned to; DutyPct its duty cycle.
	CPU     int
	DutyPct float64
	done    chan struct{}
	// spun is the time spent spinning so far, in ns.
	spun atomic.Int64
}

// Spin starts a busy loop on its own OS thread pinned to cpu (with
// sched_setaffinity) that spins dutyPct percent (0–100) of every SpinPeriod
// and sleeps the rest, until ctx is done: the deterministic contention source
// for experiments and tests. Spin returns once the thread is pinned. It fails
// when dutyPct is out of range or the CPU cannot be used (offline, outside
// the cpuset), naming the CPU.
//
// The spinner's CPU time is this process's: to make foreign load for a
// Sampler of this process, run it in another process (decodegap spin).
func Spin(ctx context.Context, cpu int, dutyPct float64) (*Spinner, error) {
	if dutyPct < 0 || dutyPct > 100 {
		return nil, fmt.Errorf("hostmon: spin duty %g%% is outside 0–100%%", dutyPct)
	}
	if cpu < 0 || cpu >= 1024 {
		return nil, fmt.Errorf("hostmon: cannot spin on CPU %d: no such CPU", cpu)
	}
	s := &Spinner{CPU: cpu, DutyPct: dutyPct, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		defer close(s.done)
		// The thread is locked while pinned and gets its mask back before
		// it is unlocked, so the pin never leaks to other goroutines. (A
		// goroutine that exits locked would kill its thread, except the
		// main thread, which Go keeps, pinned, forever.)
		runtime.LockOSThread()
		var orig, m unix.CPUSet
		if err := unix.SchedGetaffinity(0, &orig); err != nil {
			started <- fmt.Errorf("hostmon: cannot spin on CPU %d: read this thread's affinity: %w", cpu, err)
			return // exits locked: the thread is discarded
		}
		m.Set(cpu)
		if err := unix.SchedSetaffinity(0, &m); err != nil {
			started <- fmt.Errorf("hostmon: cannot spin on CPU %d: %w", cpu, explainAffinityErr(err))
			runtime.UnlockOSThread()
			return
		}
		started <- nil
		s.loop(ctx)
		if unix.SchedSetaffinity(0, &orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	if err := <-started; err != nil {
		<-s.done
		return nil, err
	}
	return s, nil
}

func (s *Spinner) loop(ctx context.Context) {
	busy := time.Duration(float64(SpinPeriod) * s.DutyPct / 100)
	for ctx.Err() == nil {
		start := time.Now()
		for time.Since(start) < busy {
		}
		s.spun.Add(int64(time.Since(start)))
		if rest := SpinPeriod - time.Since(start); rest > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rest):
			}
		}
	}
}

// Wait blocks until the spinner has stopped (its context is done).
func (s *Spinner) Wait() { <-s.done }

// Spun returns the wall time spent spinning so far.
func (s *Spinner) Spun() time.Duration { return time.Duration(s.spun.Load()) }
