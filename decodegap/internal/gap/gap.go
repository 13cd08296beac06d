// Package gap is the gap engine of decodegap and the monotonic clock it
// shares with Run.
package gap

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// base is the origin of Now: the process-wide monotonic reading taken when
// the package was initialised.
var base = time.Now()

// Now returns monotonic nanoseconds since an arbitrary process-wide origin.
// It reads the runtime's monotonic clock (CLOCK_MONOTONIC through the vDSO,
// no system call) and does not allocate.
func Now() int64 { return int64(time.Since(base)) }

// Kind is how a gap is spent. Its values match decodegap.GapKind.
type Kind int

const (
	Hybrid Kind = iota // sleep most of the gap, spin the last stretch
	Sleep              // sleep the whole gap
	Busy               // spin the whole gap
)

// Shape is how the requested gap varies. Its values match decodegap.GapShape.
type Shape int

const (
	Constant    Shape = iota // Mean every time
	Uniform                  // uniform in [Mean×(1−Jitter), Mean×(1+Jitter)]
	Exponential              // exponential of mean Mean
	Trace                    // Spec.Trace in order, cycled
)

// Spec describes the gaps. It mirrors decodegap.Gap field for field.
type Spec struct {
	Kind   Kind
	Shape  Shape
	Mean   time.Duration
	Jitter float64
	Trace  []time.Duration
	Spin   time.Duration
	Seed   uint64
}

// Sequence yields requested gaps.
type Sequence struct {
	shape  Shape
	mean   float64         // Spec.Mean in ns, >= 0
	jitter float64         // Spec.Jitter
	trace  []time.Duration // private copy of Spec.Trace
	i      int             // next index into trace
	rng    uint64          // splitmix64 state
}

// NewSequence returns the sequence of gaps requested by s.
func NewSequence(s Spec) *Sequence {
	q := &Sequence{shape: s.Shape, mean: float64(max(s.Mean, 0)), jitter: s.Jitter, rng: s.Seed}
	q.trace = slices.Clone(s.Trace)
	return q
}

// next64 advances the splitmix64 generator.
func (q *Sequence) next64() uint64 {
	q.rng += 0x9e3779b97f4a7c15
	z := q.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform float64 in [0, 1).
func (q *Sequence) float() float64 { return float64(q.next64()>>11) * 0x1p-53 }

// Next returns the next requested gap. It does not allocate.
func (q *Sequence) Next() time.Duration {
	switch q.shape {
	case Uniform:
		u := q.float()
		return time.Duration(math.Round(q.mean * (1 + q.jitter*(2*u-1))))
	case Exponential:
		u := q.float()
		return time.Duration(math.Round(-q.mean * math.Log(1-u)))
	case Trace:
		if len(q.trace) == 0 {
			return 0
		}
		d := q.trace[q.i]
		q.i++
		if q.i == len(q.trace) {
			q.i = 0
		}
		return max(d, 0)
	}
	return time.Duration(q.mean)
}

// Waiter spends gaps.
type Waiter struct {
	kind  Kind
	spec  time.Duration // Spec.Spin
	mean  time.Duration // mean requested gap
	spin  int64         // spin stretch in ns
	off   int64         // CLOCK_MONOTONIC minus Now, rounded up
	ts    unix.Timespec // request for clock_nanosleep
	slack int           // timer slack before Begin
	begun bool
}

// NewWaiter returns a Waiter for s. Call Begin before waiting.
func NewWaiter(s Spec) *Waiter {
	return &Waiter{kind: s.Kind, spec: max(s.Spin, 0), mean: meanGap(s)}
}

// meanGap is the mean requested gap of s.
func meanGap(s Spec) time.Duration {
	if s.Shape == Trace {
		if len(s.Trace) == 0 {
			return 0
		}
		var sum float64
		for _, d := range s.Trace {
			sum += float64(max(d, 0))
		}
		return time.Duration(sum / float64(len(s.Trace)))
	}
	return max(s.Mean, 0)
}

// Begin prepares the calling thread.
func (w *Waiter) Begin() error {
	if w.begun {
		return errors.New("gap: Waiter.Begin called twice without End")
	}
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("gap: prctl(PR_GET_TIMERSLACK): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("gap: prctl(PR_SET_TIMERSLACK, 1): %w", err)
	}
	w.slack = old
	w.begun = true
	w.off = monoOffset()
	switch {
	case w.kind != Hybrid:
		w.spin = 0
	case w.spec > 0:
		w.spin = int64(w.spec)
	default:
		w.spin = 0
	}
	return nil
}

// monoOffset returns an upper bound of CLOCK_MONOTONIC − Now.
func monoOffset() int64 {
	best, bestW := int64(0), int64(math.MaxInt64)
	for range 16 {
		var ts unix.Timespec
		t0 := Now()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			continue
		}
		t1 := Now()
		if t1-t0 < bestW {
			bestW = t1 - t0
			best = ts.Nano() - t0
		}
	}
	return best
}

// End restores the timer slack.
func (w *Waiter) End() {
	if !w.begun {
		return
	}
	unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(w.slack), 0, 0, 0)
	w.begun = false
}

// Spin returns the spin stretch in use.
func (w *Waiter) Spin() time.Duration { return time.Duration(w.spin) }

// WaitUntil returns when Now() >= deadline.
func (w *Waiter) WaitUntil(deadline int64) {
	now := Now()
	if now >= deadline {
		return
	}
	switch w.kind {
	case Sleep:
		w.sleepUntil(deadline)
	case Hybrid:
		if wake := deadline - w.spin; wake > now {
			w.sleepUntil(wake)
		}
	}
	for Now() < deadline {
	}
}

// sleepUntil sleeps until Now() >= t.
func (w *Waiter) sleepUntil(t int64) error {
	abs := t + w.off
	w.ts.Sec = abs / 1e9
	w.ts.Nsec = abs % 1e9
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &w.ts, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
