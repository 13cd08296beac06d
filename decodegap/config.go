package decodegap

import (
	"fmt"
	"time"

	"github.com/gapbench/gapbench/nullband"
)

// Step is one unit of decode-shaped work: one token, one audio frame, one
// request. Run calls it once per iteration, from a single goroutine locked to
// its OS thread; an error stops the benchmark (b.Fatalf names the iteration).
type Step func() error

// Opener opens a fresh, independent instance of a step: its own state and
// resources. close releases them; it may be nil when there is nothing to
// release. Config.Null and Compare's arms use it.
type Opener func() (step Step, close func() error, err error)

// GapKind is how Run spends the idle gap between two steps.
type GapKind int

const (
	// GapHybrid sleeps through most of the gap with clock_nanosleep (timer
	// slack lowered to 1 ns for the run) and spins the last stretch, so the
	// step starts on time while the CPU idles for most of the gap. It is the
	// zero value.
	GapHybrid GapKind = iota
	// GapSleep sleeps through the whole gap with clock_nanosleep; the step
	// starts late by the kernel's wake-up latency (20-33 µs at p50 on the
	// 2-vCPU KVM guests this was built on; about 10 µs on quieter hosts).
	GapSleep
	// GapBusy spins on the monotonic clock for the whole gap: exact, but the
	// measuring thread never leaves its CPU.
	GapBusy
)

// String returns "hybrid", "sleep" or "busy".
func (k GapKind) String() string {
	switch k {
	case GapHybrid:
		return "hybrid"
	case GapSleep:
		return "sleep"
	case GapBusy:
		return "busy"
	}
	return fmt.Sprintf("GapKind(%d)", int(k))
}

// GapShape is how the requested gap varies from one step to the next.
type GapShape int

const (
	// GapConstant requests Gap.Mean before every step. It is the zero value.
	GapConstant GapShape = iota
	// GapUniform requests a gap drawn uniformly from
	// [Mean×(1−Jitter), Mean×(1+Jitter)].
	GapUniform
	// GapExponential requests exponentially distributed gaps of mean Mean:
	// Poisson arrivals.
	GapExponential
	// GapTrace requests the durations of Gap.Trace in order, starting over
	// at the end: an empirical list, such as inter-arrival times recorded in
	// production.
	GapTrace
)

// String returns "constant", "uniform", "exponential" or "trace".
func (s GapShape) String() string {
	switch s {
	case GapConstant:
		return "constant"
	case GapUniform:
		return "uniform"
	case GapExponential:
		return "exponential"
	case GapTrace:
		return "trace"
	}
	return fmt.Sprintf("GapShape(%d)", int(s))
}

// Gap describes the idle time injected before each step. The zero Gap is no
// gap at all: steps run back to back.
//
// Gap time is never part of a step's latency. Every run reports the achieved
// gap (the time from the end of one step to the start of the next) beside
// the requested one.
type Gap struct {
	// Kind is how the gap is spent; the zero value is GapHybrid.
	Kind GapKind
	// Shape is how the requested gap varies; the zero value is GapConstant.
	Shape GapShape
	// Mean is the requested gap (the mean, for GapUniform and
	// GapExponential). It must be >= 0; 0 with GapConstant means no gap.
	Mean time.Duration
	// Jitter is the half-width of GapUniform as a fraction of Mean, in [0, 1].
	Jitter float64
	// Trace is the list of gaps for GapTrace, used in order and cycled. Every
	// entry must be >= 0 and the list non-empty when Shape is GapTrace.
	Trace []time.Duration
	// Spin is, for GapHybrid, the final stretch of each gap that is spun
	// rather than slept. 0 calibrates it at the start of the run and then
	// follows the measured wake-up lateness (its 90th percentile), capped so
	// that the CPU spent spinning stays within about a quarter of the mean
	// gap. It must be >= 0.
	Spin time.Duration
	// Seed seeds GapUniform and GapExponential: the same seed gives the same
	// sequence of requested gaps. 0 is a valid seed like any other.
	Seed uint64
}

// Config configures Run. The zero Config is valid: no gap, no discarded
// warm-up iterations, windows of 32 steps, and a report whatever the
// steady-state verdict.
type Config struct {
	// Gap is the idle time injected before each step; the zero Gap is none.
	Gap Gap
	// Warmup is the number of iterations run and discarded before the b.N
	// recorded ones. It must be >= 0. Steady-state detection still runs on
	// the recorded ones, so 0 is safe: warm-up that remains is found and
	// left out of the report.
	Warmup int
	// Window is the number of steps per window: the unit of steady-state
	// detection and the spacing of counter snapshots. 0 means 32; otherwise
	// it must be at least 4, and b.N must hold at least 2 windows for a
	// steady state to be found at all.
	Window int
	// Null, when set, opens a second, independent instance of the step (its
	// own state, its own thread pool): the null arm. Run then alternates the
	// recorded iterations between the step and the null instance a window
	// at a time (A A' A' A ...), reports the step's figures from its own
	// iterations, and adds null-ratio: the null instance's steady mean over
	// the step's. Over -count runs, null-ratio is the spread an A/B ratio
	// must exceed to be more than noise. The process counters cannot tell
	// the instances apart, so their per-op figures count the iterations of
	// both. Run closes the instance before it returns.
	Null Opener
	// Open, when set, opens the step, and Run's step argument must be nil.
	// Run calls it after reading the process's threads, so the threads the
	// open creates (an engine's thread pool) are attributed to it in the
	// thread census, and closes the step before returning. Sessions needs
	// it to open one instance per session.
	Open Opener
	// Sessions, when > 1, runs that many independent instances of the step
	// (each opened with Config.Open, which it requires) on as many
	// goroutines locked to OS threads, released together each iteration:
	// an op is then one round of Sessions steps. Run first measures session
	// 1 alone for the thread census (never inside the concurrent region,
	// where observing would serialize what is measured), then reports the
	// pooled latency of every session's steps, each session's p50 and p90,
	// and the throughput of the whole. 0 and 1 mean one session.
	Sessions int
	// Parity, when set, runs once before the warm-up: a check that the
	// step's output is right (e.g. the same as a reference configuration's)
	// before it is timed. An error stops the benchmark, quoting it.
	Parity func() error
	// Counters are user counters read at window boundaries and reported per
	// op over the counter span (see Counter).
	Counters []Counter
	// Trace, when set, is a folder where Run writes the run's trace: every
	// iteration's latency and achieved gap, the window boundaries with their
	// counters and contention, the steady-state result, the config and the
	// host, one file per benchmark run (format: package internal/trace's
	// doc, JSON lines). $DECODEGAP_TRACE does the same without code, and
	// $DECODEGAP_TRACE_PLOT=1 also draws each trace's picture beside it.
	// The trace is written after the timed loop, on testing's last call.
	Trace string
	// Budget confines the run to CPUs (see Budget); the zero Budget does
	// not confine.
	Budget Budget
	// Screen configures the contention screen of the counter span; the zero
	// Screen logs the verdict with hostmon's default thresholds.
	Screen Screen
	// NoNullArm leaves out the null arm that Compare otherwise adds to every
	// round. Without it Compare can give no verdict. Run ignores it.
	NoNullArm bool
	// Seed seeds the arm order of Compare's rounds. Run ignores it.
	Seed uint64
	// Verdict configures how Compare judges each arm against the first
	// (null band coverage, round rejection, the widest band that can call
	// noise). The zero value is nullband's documented defaults. Run ignores
	// it.
	Verdict nullband.Options
	// RequireSteady fails the benchmark when no steady state was observed,
	// instead of reporting the transient with a warning.
	RequireSteady bool
}

// defaultWindow is the window used when Config.Window is 0.
const defaultWindow = 32

// window returns the effective window size.
func (c *Config) window() int {
	if c.Window == 0 {
		return defaultWindow
	}
	return c.Window
}

// validate checks c against the number of recorded iterations n. Its error
// names the field, the value and the allowed range.
func (c *Config) validate(n int) error {
	g := &c.Gap
	switch {
	case g.Kind < GapHybrid || g.Kind > GapBusy:
		return fmt.Errorf("Config.Gap.Kind = %d: want GapHybrid, GapSleep or GapBusy", int(g.Kind))
	case g.Shape < GapConstant || g.Shape > GapTrace:
		return fmt.Errorf("Config.Gap.Shape = %d: want GapConstant, GapUniform, GapExponential or GapTrace", int(g.Shape))
	case g.Mean < 0:
		return fmt.Errorf("Config.Gap.Mean = %v: want >= 0", g.Mean)
	case g.Spin < 0:
		return fmt.Errorf("Config.Gap.Spin = %v: want >= 0", g.Spin)
	case g.Jitter < 0 || g.Jitter > 1 || g.Jitter != g.Jitter:
		return fmt.Errorf("Config.Gap.Jitter = %v: want a fraction in [0, 1]", g.Jitter)
	case g.Shape == GapTrace && len(g.Trace) == 0:
		return fmt.Errorf("Config.Gap.Trace is empty but Config.Gap.Shape is GapTrace: give at least one duration")
	case c.Warmup < 0:
		return fmt.Errorf("Config.Warmup = %d: want >= 0", c.Warmup)
	case c.Sessions < 0:
		return fmt.Errorf("Config.Sessions = %d: want >= 0 (0 or 1: one session)", c.Sessions)
	case c.Sessions > 1 && c.Open == nil:
		return fmt.Errorf("Config.Sessions = %d needs Config.Open to open each session's instance", c.Sessions)
	case c.Sessions > 1 && c.Null != nil:
		return fmt.Errorf("Config.Sessions = %d and Config.Null cannot be combined: compare session counts with Compare instead", c.Sessions)
	case c.Budget.Cores < 0:
		return fmt.Errorf("Config.Budget.Cores = %d: want >= 0 (0: no confinement)", c.Budget.Cores)
	case c.Window != 0 && c.Window < 4:
		return fmt.Errorf("Config.Window = %d: want 0 (default %d) or >= 4", c.Window, defaultWindow)
	}
	if err := validateCounters(c.Counters); err != nil {
		return err
	}
	for i, d := range g.Trace {
		if d < 0 {
			return fmt.Errorf("Config.Gap.Trace[%d] = %v: want >= 0", i, d)
		}
	}
	if w := c.window(); n > 1 && w > n {
		return fmt.Errorf("Config.Window = %d is larger than the run (b.N = %d): lower Config.Window or raise -benchtime to at least %dx", w, n, 2*w)
	}
	return nil
}
