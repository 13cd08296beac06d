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
//   - Gamma: gamma of mean Mean and coefficient of variation
//     Spec.Burstiness (Marsaglia–Tsang): bursty arrivals above 1.
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
// learned: Hybrid sleeps until the deadline minus S, then spins the rest,
// and chooses S from the last 128 sleeps' overshoot (how late a sleep
// wakes: wake-up minus requested wake-up) and the CPU time each sleep
// charged the thread (CLOCK_THREAD_CPUTIME_ID read around every sleep; the
// second reading is part of the wake-up, so S covers it). A gap then costs the sleep's CPU
// plus the spin from the wake-up to the deadline, max(S − overshoot, 0),
// and is late by max(overshoot − S, 0). For each candidate S = q-quantile
// of the overshoots + 1 µs, from q = 0.99 down, the expected CPU of a gap
// is the mean sleep charge plus the mean of max(S − overshoot, 0) over the
// 128 (all of the gap when S is as long as the gap, which is then spun
// whole); S is the largest whose expected CPU is within Spec.MaxCPU × the
// mean gap (by default 40% of it and at most 90 µs). When none fits, S is
// the smallest overshoot seen, which costs no spin and still takes that
// much off the lateness (or 0, a plain sleep, when it is as long as the
// gap). So on a quiet host S sits at the 99th percentile (nearly every gap
// on time), and where waking costs more or is more erratic the ceiling
// chooses a lower quantile: late gaps rather than CPU.
//
// Begin seeds the history with 1 discarded and 32 measured absolute sleeps
// of three quarters of the mean gap, clamped to [10 µs, 500 µs] (so at most
// about 17 ms). From then on every sleep adds its overshoot and charge, and
// S is chosen again every 16 sleeps, so the stretch follows the host's
// regimes (a sleep's wake-up latency shifts by several µs between
// calibrations a fraction of a second apart) within a few dozen gaps; a
// rare long preemption is one sample in 128 and moves S only when it
// repeats. The mean gap is Spec.Mean, or the mean of Spec.Trace for Trace;
// when a quarter of it is 0, the spin is 0 and nothing is learned. A gap
// shorter than the spin is spun whole. [Waiter.Spin] reports the stretch in
// use and [Waiter.Usage] the CPU and wall time the gaps took.
//
// # Allocation
//
// Nothing on the measured path allocates: Now, [Sequence.Next] and
// [Waiter.WaitUntil] allocate nothing (tested); the clock_nanosleep request
// and the sleep history live in the Waiter. NewSequence copies Spec.Trace.
package gap

import (
	"cmp"
	"math"
	"slices"
	"time"
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
	// Gamma requests gamma-distributed gaps of mean Mean and coefficient
	// of variation Spec.Burstiness: 1 is Poisson (Exponential), above 1
	// arrivals bunch into bursts, below 1 they are more regular.
	Gamma
)

// Spec describes the gaps; it mirrors decodegap.Gap field for field, and
// decodegap validates it before it gets here.
type Spec struct {
	Kind   Kind
	Shape  Shape
	Mean   time.Duration   // requested gap, or its mean; < 0 counts as 0
	Jitter float64         // half-width of Uniform as a fraction of Mean
	Trace  []time.Duration // gaps for Trace, cycled; entries < 0 count as 0
	Spin   time.Duration   // Hybrid's spin stretch; 0 learns it (see the package doc)
	MaxCPU float64         // Hybrid's CPU ceiling, a fraction of the mean gap; <= 0 means the defaults below
	Seed   uint64          // seed of Uniform, Exponential and Gamma
	// Burstiness is Gamma's coefficient of variation (σ/mean); <= 0 means 1.
	Burstiness float64
}

// DefaultMaxCPU and DefaultMaxCPUTime are the CPU ceiling of a learned
// spin stretch when Spec.MaxCPU is 0: the expected CPU time of a Hybrid gap
// (sleep charge and spin) stays within DefaultMaxCPU of the mean gap and
// within DefaultMaxCPUTime, so 40% of a 100 µs gap and 4.5% of a 2 ms one.
const (
	DefaultMaxCPU     = 0.4
	DefaultMaxCPUTime = 90 * time.Microsecond
)

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
	cv     float64         // Gamma's coefficient of variation, > 0
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
		cv:     cmp.Or(max(s.Burstiness, 0), 1),
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
	case Gamma:
		return time.Duration(math.Round(q.mean * q.gamma()))
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

// gamma draws a gamma variate of mean 1 and coefficient of variation
// q.cv: shape k = 1/cv², scale cv². Marsaglia and Tsang's method ("A simple
// method for generating gamma variables", ACM TOMS 26(3), 2000), with
// Box–Muller normals from the same generator; for k < 1 a Gamma(k+1) draw
// times U^(1/k). It does not allocate.
func (q *Sequence) gamma() float64 {
	k := 1 / (q.cv * q.cv)
	boost := 1.0
	if k < 1 {
		boost = math.Pow(1-q.float(), 1/k)
		k++
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := math.Sqrt(-2*math.Log(1-q.float())) * math.Cos(2*math.Pi*q.float())
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - q.float()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v * boost * q.cv * q.cv
		}
	}
}
