// Package gap is the gap engine of decodegap and the monotonic clock it
// shares with Run: it yields the idle gaps requested between two steps
// (Sequence) and spends them (Waiter).
//
// # Clock
//
// [Now] is monotonic nanoseconds since an arbitrary process-wide origin. It
// reads the runtime's clock (CLOCK_MONOTONIC through the vDSO, no system
// call), so Run can time steps with it and hand its readings to
// [Waiter.WaitUntil] as deadlines.
//
// # Shapes
//
// A [Sequence] yields the requested gaps of a [Spec]:
//
//   - Constant: Mean every time.
//   - Uniform: uniform in [Mean×(1−Jitter), Mean×(1+Jitter)].
//   - Exponential: exponential of mean Mean (Poisson arrivals), by inverse
//     transform: −Mean×ln(1−u).
//   - Trace: Spec.Trace in order, starting over at the end.
//
// Uniform and Exponential draw u from a splitmix64 generator seeded with
// Spec.Seed (0 is a seed like any other), written out here rather than taken
// from math/rand so that the same Seed gives the same sequence on every Go
// release. Gaps are rounded to the nanosecond; a negative Mean or trace entry
// counts as 0.
//
// # Kinds
//
// A [Waiter] spends a gap until a deadline on the Now clock, and never
// returns before it:
//
//   - Busy spins on Now: exact, but the thread never leaves its CPU.
//   - Sleep sleeps with clock_nanosleep until the deadline: cheap, but the
//     next step starts late by the kernel's wake-up latency.
//   - Hybrid sleeps until deadline−spin, then spins to the deadline: on time
//     whenever the wake-up latency is below spin, at a CPU cost of the
//     sleep's own plus spin minus that latency per gap. A gap shorter than
//     spin is spun whole.
//
// # Why clock_nanosleep and timer slack
//
// time.Sleep(100µs) takes 1.13 ms on the machines gapbench was designed on
// (p50; 20 µs and 500 µs requests land at the same 1.1 ms): the runtime's
// timers wake far too late for a gap. nanosleep with the default 50 µs timer
// slack takes 162 µs; with prctl(PR_SET_TIMERSLACK, 1) it takes 109.5 µs; a
// busy wait takes 100.15 µs. So Sleep and Hybrid call clock_nanosleep
// directly (golang.org/x/sys/unix) on a thread the caller has locked with
// runtime.LockOSThread, and [Waiter.Begin] lowers that thread's timer slack to
// 1 ns, remembering the old value for [Waiter.End] to restore. Timer slack is
// per thread, which is why the thread must be locked from Begin to End.
//
// The wake-up latency is the host's, not Go's. On the Firecracker guests
// measured while this package was written (2 vCPUs), a 100 µs
// clock_nanosleep with slack 1 took 121 to 133 µs at p50 and charged the
// thread 15 to 20 µs of CPU time, and even an absolute sleep already due
// took 19.5 µs: Sleep is late by that much, and Hybrid's spin must cover it.
//
// The sleep is absolute (TIMER_ABSTIME on CLOCK_MONOTONIC), not relative: a
// sleep interrupted by a signal (EINTR; the Go runtime signals its threads)
// is reissued with the same request and cannot drift, and time lost between
// reading the clock and entering the kernel (a preemption, a page fault) does
// not lengthen the sleep. Now and CLOCK_MONOTONIC differ by a constant
// offset, measured once per process by bracketing a clock_gettime between two
// Now readings and rounded up, so the kernel never wakes the thread before
// the deadline; a final check of Now (a spin, if anything were left) makes
// that hold whatever the kernel does.
//
// # Spin stretch (Hybrid)
//
// Spec.Spin > 0 is used as given. With Spec.Spin == 0 the spin stretch is
// calibrated in Begin and then follows the host through the run:
//
//	spin = min(p90(overshoot) + 1 µs, mean gap/4 + idle)
//
// where overshoot is how late a sleep wakes (wake-up minus requested
// wake-up) and idle is the part of that lateness the thread spends off the
// CPU. Hybrid spins from its wake-up to the deadline, so a gap costs the
// CPU time of the sleep plus spin − overshoot; as the sleep's CPU time is
// overshoot − idle, that is spin − idle, which the ceiling keeps within a
// quarter of the mean gap. (When the sleep wakes after the deadline the gap
// costs what a plain sleep costs, and is late.) On a host whose sleeps cost
// little CPU, idle is about the whole overshoot; on the KVM guests here the
// wake-up path is charged to the thread and idle is a few microseconds.
//
// Begin measures both with 1 discarded and 32 measured absolute sleeps of
// three quarters of the mean gap, clamped to [10 µs, 500 µs] (so at most
// about 17 ms): it seeds p90 with the probes' 90th percentile and sets idle
// to the median, over the probes, of overshoot minus the thread CPU time
// (CLOCK_THREAD_CPUTIME_ID) the sleep was charged; if the CPU time cannot be
// read, idle is 0. From then on, each sleep's overshoot updates p90 as a
// frugal streaming quantile (Ma, Muthukrishnan and Sandler, 2013): up 9 steps
// of 128 ns when the sleep overshot the estimate, down 1 otherwise, so it
// settles where one sleep in ten overshoots it. The host's wake-up latency
// shifts between regimes (calibrations a fraction of a second apart found
// 20, 26 and 30 µs here), and a stretch fixed at the start would then spin
// too long or wake too late for the rest of the run; the estimate climbs
// 10 µs in about 9 gaps and comes back down 10 µs in about 80, while a
// single long preemption moves it by 9 steps only.
//
// The 90th percentile puts nine gaps in ten on time while the latency holds
// steady, without letting the rare long preemption set the stretch. The mean
// gap is Spec.Mean, or the mean of Spec.Trace for Trace; when a quarter of
// it is 0, the spin is 0 and nothing is measured. A gap shorter than the
// spin is spun whole. [Waiter.Spin] reports the stretch in use, and Run
// reports the achieved gaps, so a ceiling that left gaps late shows.
//
// # Allocation
//
// Nothing on the measured path allocates: Now, [Sequence.Next] and
// [Waiter.WaitUntil] allocate nothing (tested); the clock_nanosleep request
// lives in the Waiter. NewSequence copies Spec.Trace.
package gap

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// base is the origin of Now, read when the package is initialised.
var base = time.Now()

// Now returns monotonic nanoseconds since an arbitrary process-wide origin.
// It reads the runtime's monotonic clock through the vDSO, makes no system
// call and does not allocate.
func Now() int64 { return int64(time.Since(base)) }

// Kind is how a gap is spent. Its values are those of decodegap.GapKind.
type Kind int

const (
	// Hybrid sleeps until the deadline minus the spin stretch, then spins.
	Hybrid Kind = iota
	// Sleep sleeps with clock_nanosleep until the deadline.
	Sleep
	// Busy spins on Now until the deadline.
	Busy
)

// Shape is how the requested gap varies from one step to the next. Its
// values are those of decodegap.GapShape.
type Shape int

const (
	// Constant requests Mean every time.
	Constant Shape = iota
	// Uniform requests gaps uniform in [Mean×(1−Jitter), Mean×(1+Jitter)].
	Uniform
	// Exponential requests exponential gaps of mean Mean.
	Exponential
	// Trace requests Spec.Trace in order, cycled.
	Trace
)

// Spec describes the gaps; it mirrors decodegap.Gap field for field, and
// decodegap validates it before it gets here.
type Spec struct {
	Kind   Kind
	Shape  Shape
	Mean   time.Duration   // requested gap, or its mean; < 0 counts as 0
	Jitter float64         // half-width of Uniform as a fraction of Mean
	Trace  []time.Duration // gaps for Trace, cycled; entries < 0 count as 0
	Spin   time.Duration   // Hybrid's spin stretch; 0 calibrates it in Begin
	Seed   uint64          // seed of Uniform and Exponential
}

// Sequence yields the requested gaps of a Spec. Its API is modeled on an
// iterator's Next; it is deterministic for a Spec and not safe for
// concurrent use.
type Sequence struct {
	shape  Shape
	mean   float64         // Spec.Mean in ns, >= 0
	jitter float64         // Spec.Jitter
	trace  []time.Duration // private copy of Spec.Trace
	i      int             // index in trace of the next gap, < len(trace)
	rng    uint64          // splitmix64 state, starts at Spec.Seed
}

// NewSequence returns the sequence of gaps requested by s. It copies
// s.Trace, so the caller may reuse it.
func NewSequence(s Spec) *Sequence {
	return &Sequence{
		shape:  s.Shape,
		mean:   float64(max(s.Mean, 0)),
		jitter: s.Jitter,
		trace:  slices.Clone(s.Trace),
		rng:    s.Seed,
	}
}

// next64 advances the splitmix64 generator (Steele, Lea and Flood, 2014).
func (q *Sequence) next64() uint64 {
	q.rng += 0x9e3779b97f4a7c15
	z := q.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform float64 in [0, 1) with 53 random bits.
func (q *Sequence) float() float64 { return float64(q.next64()>>11) * 0x1p-53 }

// Next returns the next requested gap, >= 0. It does not allocate.
func (q *Sequence) Next() time.Duration {
	switch q.shape {
	case Uniform:
		u := q.float()
		return time.Duration(math.Round(max(q.mean*(1+q.jitter*(2*u-1)), 0)))
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

// Spin parameters; see the package doc.
const (
	calibProbes = 32                     // measured sleeps
	calibMin    = 10 * time.Microsecond  // shortest probe sleep
	calibMax    = 500 * time.Microsecond // longest probe sleep
	calibMargin = time.Microsecond       // added to the p90 overshoot
	trackStep   = 128                    // ns, step of the streaming p90
)

// Waiter spends gaps on one locked OS thread, between Begin and End. It is
// not safe for concurrent use.
type Waiter struct {
	kind  Kind
	given time.Duration // Spec.Spin, >= 0
	mean  time.Duration // mean requested gap, >= 0
	spin  int64         // spin stretch in ns, set by Begin; 0 unless Hybrid
	adapt bool          // spin follows tr (Hybrid, Spec.Spin == 0, mean/4 > 0)
	tr    tracker       // overshoot estimates behind spin when adapt
	off   int64         // CLOCK_MONOTONIC − Now in ns, rounded up
	ts    unix.Timespec // clock_nanosleep request; a field so it never escapes
	slack int           // timer slack of the thread before Begin, in ns
	tid   int           // thread of Begin; 0 when not begun
}

// NewWaiter returns a Waiter for s. Call Begin before waiting: without it
// the timer slack is the thread's own and Hybrid has no spin stretch.
func NewWaiter(s Spec) *Waiter {
	return &Waiter{kind: s.Kind, given: max(s.Spin, 0), mean: meanGap(s), off: monoOffset()}
}

// meanGap is the mean requested gap of s: Mean, or the mean of Trace.
func meanGap(s Spec) time.Duration {
	if s.Shape != Trace {
		return max(s.Mean, 0)
	}
	if len(s.Trace) == 0 {
		return 0
	}
	var sum float64
	for _, d := range s.Trace {
		sum += float64(max(d, 0))
	}
	return time.Duration(sum / float64(len(s.Trace)))
}

// monoOffset returns CLOCK_MONOTONIC − Now, rounded up, measured once per
// process.
var monoOffset = sync.OnceValue(func() int64 {
	best, width := int64(0), int64(math.MaxInt64)
	for range 16 {
		var ts unix.Timespec
		t0 := Now()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			continue
		}
		t1 := Now()
		// The reading was taken between t0 and t1, so the offset lies in
		// [ts−t1, ts−t0]; keep the upper end of the narrowest bracket.
		if t1-t0 < width {
			best, width = ts.Nano()-t0, t1-t0
		}
	}
	return best
})

// Begin prepares the calling thread for waiting. It must be called on the
// goroutine that will wait, after runtime.LockOSThread, and be followed by
// End on the same thread. It lowers the thread's timer slack to 1 ns and,
// for Hybrid with Spec.Spin == 0, calibrates the spin stretch (see the
// package doc; this takes up to about 17 ms). It returns an error, leaving
// the thread as it was, if the timer slack cannot be read or set or
// clock_nanosleep fails.
func (w *Waiter) Begin() error {
	if w.tid != 0 {
		return errors.New("gap: Waiter.Begin called again before End")
	}
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("gap: reading the timer slack, prctl(PR_GET_TIMERSLACK): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("gap: lowering the timer slack, prctl(PR_SET_TIMERSLACK, 1): %w", err)
	}
	w.slack, w.tid = old, unix.Gettid()
	w.spin, w.adapt = 0, false
	if w.kind == Busy {
		return nil
	}
	// Probe clock_nanosleep with a deadline already past: it must return at
	// once, and an error here (seccomp, an old kernel) is better than a
	// silent spin in every gap.
	if err := w.sleepUntil(Now()); err != nil {
		w.End()
		return fmt.Errorf("gap: clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME): %w", err)
	}
	if w.kind != Hybrid {
		return nil
	}
	if w.given > 0 {
		w.spin = int64(w.given)
		return nil
	}
	if err := w.calibrate(); err != nil {
		w.End()
		return err
	}
	return nil
}

// calibrate measures the sleep overshoot and the CPU time of a sleep, seeds
// the tracker with them and sets the spin stretch.
func (w *Waiter) calibrate() error {
	mean := int64(w.mean)
	if mean/4 == 0 {
		return nil
	}
	probe := min(max(mean-mean/4, int64(calibMin)), int64(calibMax))
	var over, cpu [calibProbes]int64
	// The first sleep is discarded: it pays for whatever the thread did
	// before.
	if err := w.sleepUntil(Now() + probe); err != nil {
		return fmt.Errorf("gap: calibrating the spin stretch, clock_nanosleep: %w", err)
	}
	cpuOK := true
	for i := range over {
		c0, err0 := threadCPU()
		target := Now() + probe
		if err := w.sleepUntil(target); err != nil {
			return fmt.Errorf("gap: calibrating the spin stretch, clock_nanosleep: %w", err)
		}
		over[i] = Now() - target
		c1, err1 := threadCPU()
		cpu[i] = c1 - c0
		cpuOK = cpuOK && err0 == nil && err1 == nil
	}
	// idle is the part of a sleep's overshoot the thread spends off the
	// CPU, its median over the probes: the overshoot minus the CPU time
	// charged to the sleep (on some virtual machines most of the wake-up
	// path is charged to the thread). The median, because a sleep during
	// which the host preempted the vCPU can be charged anything.
	var idle [calibProbes]int64
	for i := range idle {
		idle[i] = over[i] - cpu[i]
	}
	slices.Sort(idle[:])
	w.tr.seed(over[:], idle[calibProbes/2], mean)
	if !cpuOK {
		// Without the CPU time of a sleep, keep to the plain cap.
		w.tr.ceil = mean / 4
	}
	w.spin, w.adapt = w.tr.spin(), true
	return nil
}

// threadCPU returns the CPU time of the calling thread in ns.
func threadCPU() (int64, error) {
	var ts unix.Timespec
	err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano(), err
}

// tracker follows the sleep overshoot of a Hybrid Waiter and derives the
// spin stretch from it (see the package doc). It does not allocate.
type tracker struct {
	p90  int64 // streaming estimate of the 90th percentile of the overshoot, ns
	ceil int64 // largest spin allowed, ns: mean gap/4 + idle part of a wake-up
}

// seed starts the tracker from the overshoots of probe sleeps (over, sorted
// in place), the part of a wake-up spent idle and the mean gap, all in ns.
func (t *tracker) seed(over []int64, idle, mean int64) {
	slices.Sort(over)
	t.p90 = over[(len(over)*9+9)/10-1]
	t.ceil = mean/4 + max(idle, 0)
}

// observe updates the estimate with the overshoot o of one sleep: a frugal
// streaming quantile (Ma, Muthukrishnan and Sandler, 2013) that moves up 9
// steps when o lies above it and down 1 otherwise, so that it settles where
// one overshoot in ten lies above it.
func (t *tracker) observe(o int64) {
	if o > t.p90 {
		t.p90 += 9 * trackStep
	} else {
		t.p90 -= trackStep
	}
}

// spin returns the spin stretch in ns: min(p90 + calibMargin, ceil), >= 0.
func (t *tracker) spin() int64 {
	return max(min(t.p90+int64(calibMargin), t.ceil), 0)
}

// End restores the timer slack that the thread had before Begin. It must be
// called on the thread of Begin (it panics otherwise: the caller unlocked
// it). End without Begin does nothing.
func (w *Waiter) End() {
	if w.tid == 0 {
		return
	}
	if tid := unix.Gettid(); tid != w.tid {
		panic(fmt.Sprintf("gap: Waiter.End on thread %d, Begin was on thread %d: keep the goroutine locked to its OS thread from Begin to End", tid, w.tid))
	}
	// It cannot fail where PR_SET_TIMERSLACK, 1 succeeded.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(w.slack), 0, 0, 0)
	w.tid = 0
}

// Spin returns the spin stretch in use. For Hybrid it is Spec.Spin if that
// is > 0, otherwise the stretch calibrated by Begin as it stands after the
// last gap (it follows the overshoot, see the package doc); it is 0 for Sleep
// and Busy, and before Begin.
func (w *Waiter) Spin() time.Duration { return time.Duration(w.spin) }

// WaitUntil returns when Now() >= deadline, at once for a deadline already
// past. It does not allocate. Should clock_nanosleep fail (Begin checked it
// does not), it spins instead, so it never returns early.
func (w *Waiter) WaitUntil(deadline int64) {
	now := Now()
	if now >= deadline {
		return
	}
	switch w.kind {
	case Sleep:
		_ = w.sleepUntil(deadline)
	case Hybrid:
		if wake := deadline - w.spin; wake > now {
			if w.sleepUntil(wake) == nil && w.adapt {
				w.tr.observe(Now() - wake)
				w.spin = w.tr.spin()
			}
		}
	}
	for Now() < deadline {
	}
}

// sleepUntil sleeps until Now() >= t, reissuing the same absolute request
// when a signal interrupts it.
func (w *Waiter) sleepUntil(t int64) error {
	abs := t + w.off
	w.ts.Sec, w.ts.Nsec = abs/1e9, abs%1e9
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &w.ts, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
