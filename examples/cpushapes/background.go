package cpushapes

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap"
)

// DefaultBurst is BackgroundArm's spin stretch when Burst is 0.
const DefaultBurst = time.Millisecond

// BackgroundArm is an arm whose every instance runs a goroutine beside its
// step: Open starts a burner that spins for Burst and then sleeps
// (1−Duty)/Duty × Burst, again and again until the instance is closed,
// while the step itself does W units of work inline. The burner's CPU is
// part of what the arm costs the process, in the gaps as much as during the
// steps, so a step costs
//
//	W's work + duty × (wall time per step, gap included)
//
// where duty is the share of a core the burner achieved: its sleeps wake
// late (about 1 ms here), so it is below Duty, and it is measured, not
// assumed. The burner locks itself to its OS thread and reads that thread's
// CPU clock (CLOCK_THREAD_CPUTIME_ID) when it starts and stops: Burners
// returns those figures, an account of its CPU that owes nothing to the
// process's counters.
//
// A BackgroundArm is safe for concurrent use; its Open may be handed to
// decodegap.Measure or to a decodegap.Arm as it is.
type BackgroundArm struct {
	// Duty is the share of a core the burner aims at, in (0, 1].
	Duty float64
	// W is the step's inline work in units (see UnitRounds).
	W float64
	// Burst is the burner's spin stretch; 0 means DefaultBurst.
	Burst time.Duration

	mu sync.Mutex
	// burners holds one record per closed instance, in the order of their
	// closes.
	burners []Burner
}

// Burner is one burner's own account of itself, from its thread's CPU
// clock and the monotonic clock, over its whole life (open to close).
type Burner struct {
	CPUNs  float64 // CPU time of the burner's thread (user+sys), ns
	WallNs float64 // wall time from its first clock read to its last, ns
}

// Duty returns the share of a core the burner used over its life:
// CPUNs/WallNs.
func (b Burner) Duty() float64 { return b.CPUNs / b.WallNs }

// Background returns a BackgroundArm of the given duty and inline work,
// spinning in stretches of DefaultBurst.
func Background(duty, w float64) *BackgroundArm {
	return &BackgroundArm{Duty: duty, W: w}
}

// Burners returns a copy of the records of the instances closed so far, in
// the order of their closes.
func (a *BackgroundArm) Burners() []Burner {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Burner(nil), a.burners...)
}

// Last returns the record of the instance closed last; ok is false when
// none has been closed.
func (a *BackgroundArm) Last() (b Burner, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.burners) == 0 {
		return Burner{}, false
	}
	return a.burners[len(a.burners)-1], true
}

// Open opens an instance: it starts the burner, and returns once the burner
// has read its clocks, with the inline step and the close that stops the
// burner and waits for its record. It has decodegap.Opener's signature.
func (a *BackgroundArm) Open() (decodegap.Step, func() error, error) {
	if !(a.Duty > 0 && a.Duty <= 1) {
		return nil, nil, fmt.Errorf("cpushapes.BackgroundArm.Duty = %v: want a share of a core in (0, 1]", a.Duty)
	}
	burst := a.Burst
	if burst == 0 {
		burst = DefaultBurst
	}
	if burst < 0 {
		return nil, nil, fmt.Errorf("cpushapes.BackgroundArm.Burst = %v: want > 0, or 0 for %v", a.Burst, DefaultBurst)
	}
	rest := time.Duration(float64(burst) * (1 - a.Duty) / a.Duty)
	stop, started := make(chan struct{}), make(chan error, 1)
	done := make(chan Burner, 1)
	go burn(burst, rest, stop, started, done)
	if err := <-started; err != nil {
		return nil, nil, fmt.Errorf("cpushapes.BackgroundArm: %w", err)
	}
	r := Rounds(a.W)
	closed := false
	return func() error { work(r); return nil }, func() error {
		if closed {
			return nil
		}
		closed = true
		close(stop)
		b := <-done
		a.mu.Lock()
		a.burners = append(a.burners, b)
		a.mu.Unlock()
		return nil
	}, nil
}

// burn is the burner: on its own locked thread, spin for burst and sleep
// for rest until stop is closed, then send its record on done. It sends
// nil on started once its clocks are read, or the error that stopped it.
func burn(burst, rest time.Duration, stop <-chan struct{}, started chan<- error, done chan<- Burner) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, err := threadCPU()
	if err != nil {
		started <- err
		return
	}
	t0 := time.Now()
	started <- nil
	var timer *time.Timer
	for {
		for s := time.Now(); time.Since(s) < burst; {
			work(500) // about 1 µs between clock reads
		}
		if rest > 0 {
			if timer == nil {
				timer = time.NewTimer(rest)
			} else {
				timer.Reset(rest)
			}
			select {
			case <-stop:
			case <-timer.C:
				continue
			}
		} else {
			select {
			case <-stop:
			default:
				continue
			}
		}
		break
	}
	wall := time.Since(t0)
	c1, err := threadCPU()
	if err != nil {
		c1 = c0 // cannot happen once the first read worked; a zero is safer than a guess
	}
	done <- Burner{CPUNs: float64(c1 - c0), WallNs: float64(wall)}
}

// threadCPU reads the calling thread's CPU clock, ns.
func threadCPU() (int64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("reading CLOCK_THREAD_CPUTIME_ID: %w", err)
	}
	return ts.Nano(), nil
}
