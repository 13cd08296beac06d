package decodegap

import (
	"fmt"
	"math"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/tail"
	"github.com/gapbench/gapbench/nullband"
)

// Step is one unit of decode-shaped work: one token, one audio frame, one
// request. It is called from a single goroutine locked to its OS thread; an
// error stops the measurement and is quoted with the iteration.
type Step func() error

// Opener opens a fresh, independent instance of a step: its own state and
// resources. close releases them; it may be nil when there is nothing to
// release. It is the one way to hand a step to Run and Compare.
type Opener func() (step Step, close func() error, err error)

// Func returns an Opener that hands out step itself on every call, with
// nothing to close: for a step with no state worth opening afresh. Its
// instances are all the same function, so they are not independent:
// RunConfig.Null and RunConfig.Sessions need a real Opener.
func Func(step Step) Opener {
	return func() (Step, func() error, error) { return step, nil, nil }
}

// GapKind is how Run spends the idle gap between two steps.
type GapKind int

const (
	// GapHybrid sleeps through most of the gap with clock_nanosleep (timer
	// slack lowered to 1 ns for the run) and spins the last stretch, so the
	// step starts on time while the CPU idles for most of the gap. It is the
	// zero value.
	GapHybrid GapKind = iota
	// GapSleep sleeps through the whole gap with clock_nanosleep; the step
	// starts late by the kernel's wake-up latency (tens of µs on a busy
	// guest; measured figures in docs/decodegap-figures.md).
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
	// GapGamma requests gamma-distributed gaps of mean Mean and coefficient
	// of variation Gap.Burstiness: 1 is Poisson, above 1 arrivals come in
	// bursts (as requests to a service often do), below 1 more regularly.
	GapGamma
)

// String returns "constant", "uniform", "exponential", "trace" or "gamma".
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
	case GapGamma:
		return "gamma"
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
	// GapExponential). It must be >= 0 and at most MaxGap (an hour); 0
	// with GapConstant means no gap.
	Mean time.Duration
	// Jitter is the half-width of GapUniform as a fraction of Mean, in [0, 1].
	Jitter float64
	// Trace is the list of gaps for GapTrace, used in order and cycled. Every
	// entry must be >= 0 and the list non-empty when Shape is GapTrace.
	Trace []time.Duration
	// Spin is, for GapHybrid, the final stretch of each gap that is spun
	// rather than slept. 0 learns it from this host's sleeps, at the start
	// of the run and throughout: the largest stretch that covers the 99th
	// percentile of the wake-up lateness or less while the gap's expected
	// CPU stays within MaxCPU. It must be >= 0.
	Spin time.Duration
	// MaxCPU is, for GapHybrid with a learned Spin, the trade between
	// accuracy and CPU: the largest share of the mean gap that a gap may
	// keep the CPU busy (waking from the sleep and spinning), in (0, 1]. 0
	// means 0.4, and at most 90 µs a gap (4.5% of a 2 ms gap). 1 puts
	// accuracy first: the stretch covers the 99th percentile of the
	// lateness whatever it costs. The run reports what the gaps used as
	// gap-cpu-%.
	MaxCPU float64
	// Burstiness is GapGamma's coefficient of variation (standard
	// deviation over mean) of the gaps; 0 means 1, which is Poisson.
	Burstiness float64
	// Open makes the gaps inter-arrival times: an open loop. Step i is
	// scheduled at the loop's start plus the first i+1 gaps, whenever the
	// steps before it finish, so an overrun delays the steps queued behind
	// it and that wait counts in their response time (resp-*-ns/op, from
	// the scheduled arrival to the end), as it would for requests at a
	// server; the step-latency figures are then service times. Shape gives
	// the arrival process (GapConstant: a fixed rate, GapExponential:
	// Poisson, GapGamma: bursts). It needs a gap (Mean > 0, or GapTrace).
	// With RunConfig.Sessions, each session serves its own arrival stream
	// (seeded RunConfig.Seed+k), as independent users would. In Compare
	// every block is an open loop and resp-p50-ns/op and resp-p99-ns/op
	// are judged besides.
	Open bool
}

// RunConfig configures Run. The zero RunConfig is valid: no gap, no
// discarded warm-up iterations, windows of 32 steps, one instance, and a
// report whatever the steady-state verdict.
type RunConfig struct {
	// Gap is the idle time injected before each step; the zero Gap is none.
	Gap Gap
	// Warmup is the number of iterations run and discarded before the b.N
	// recorded ones; >= 0. Steady-state detection still runs on the
	// recorded ones, so 0 is safe.
	Warmup int
	// Window is the number of steps per window: the unit of steady-state
	// detection and the spacing of counter snapshots. 0 means 32; otherwise
	// >= 4, and b.N must hold two windows for a steady state to be found.
	Window int
	// Seed seeds everything Run draws at random (GapUniform and
	// GapExponential gaps): the same seed, the same sequence. 0 is a seed
	// like any other.
	Seed uint64
	// Null opens a second, independent instance with the same Opener: the
	// null arm. The recorded iterations alternate between the two a window
	// at a time (A A' A' A ...); the figures are the first instance's, and
	// null-ratio is the second's steady mean over the first's, the spread an
	// A/B ratio must exceed over -count runs. Process counters cannot tell
	// the instances apart: their per-op figures count both.
	Null bool
	// Sessions, when > 1, runs that many independent instances at once, on
	// as many locked OS threads released together each iteration: an op is
	// one round of Sessions steps. Session 1 first runs alone for the thread
	// census. Figures pool every session's steps; each session's p50 and p90
	// and the throughput are added. 0 and 1 mean one; it excludes Null. At
	// most MaxSessions (1024), and the sessions' records at most
	// MaxRecordBytes: over either, Run fails with an ErrLimit error.
	Sessions int
	// Parity, when set, runs once before the warm-up: a check that the
	// step's output is right before it is timed. An error stops the
	// benchmark, quoting it.
	Parity func() error
	// Counters are user counters read at window boundaries and reported per
	// op over the counter span (see Counter).
	Counters []Counter
	// Trace, when set (or $DECODEGAP_TRACE), is a folder where Run writes
	// the run's trace on testing's last call (format: internal/trace).
	// `decodegap plot DIR` draws it.
	Trace string
	// Budget confines the run to CPUs; the zero Budget does not confine.
	Budget Budget
	// Screen configures the contention screen of the counter span.
	Screen Screen
	// RequireSteady fails the benchmark when no steady state was observed,
	// instead of reporting the transient with a warning.
	RequireSteady bool
	// SLO, when its Limit is set, judges a latency objective on the run:
	// on response times with Gap.Open, on step latencies otherwise. Left
	// zero, $DECODEGAP_SLO sets it (EnvSLO).
	SLO SLO
}

// SLO is a latency objective: the Percentile-th percentile at most Limit,
// judged from its distribution-free confidence bound at Confidence (pass:
// the upper bound is within Limit; fail: the lower bound is over it;
// otherwise undecided), never from the point estimate. The zero SLO judges
// nothing.
type SLO struct {
	// Percentile is in (0, 100), e.g. 99.
	Percentile float64
	// Limit is the latency the percentile must not exceed; 0 turns the
	// objective off.
	Limit time.Duration
	// Confidence is the level of the bound, in (0, 1); 0 means 0.95.
	Confidence float64
}

func (o SLO) on() bool { return o.Limit > 0 }

func (o SLO) objective() tail.Objective {
	c := o.Confidence
	if c == 0 {
		c = 0.95
	}
	return tail.Objective{Q: o.Percentile / 100, Limit: float64(o.Limit), Confidence: c}
}

func (o SLO) validate(typ string) error {
	switch {
	case o.Limit < 0:
		return fmt.Errorf("%s.SLO.Limit = %v: want > 0 (0 turns the objective off)", typ, o.Limit)
	case !o.on():
		return nil
	case !(o.Percentile > 0 && o.Percentile < 100):
		return fmt.Errorf("%s.SLO.Percentile = %v: want a percentile in (0, 100), e.g. 99", typ, o.Percentile)
	case !(o.Confidence >= 0 && o.Confidence < 1):
		return fmt.Errorf("%s.SLO.Confidence = %v: want a level in (0, 1), or 0 for 0.95", typ, o.Confidence)
	}
	return nil
}

// CompareConfig configures Compare. The zero CompareConfig is valid. Its
// fields shared with RunConfig mean what they mean there, per block.
type CompareConfig struct {
	// Gap, Warmup and Window apply to every block, as RunConfig's.
	Gap    Gap
	Warmup int
	Window int
	// Seed seeds everything Compare draws at random: the arm order of each
	// round and the gaps of every block.
	Seed uint64
	// Parity runs once, before the first round.
	Parity func() error
	// Counters are read in every block, as RunConfig's.
	Counters []Counter
	// Trace (or $DECODEGAP_TRACE) writes one trace per block, named
	// BenchmarkX/arm=NAME.
	Trace string
	// Budget confines every round (one confinement for the whole Compare).
	Budget Budget
	// Screen screens every block; its Contended marks the round for the
	// verdict.
	Screen Screen
	// RequireSteady fails the benchmark when a block reaches no steady
	// state.
	RequireSteady bool
	// NoNullArm leaves out the null arm that Compare otherwise adds to every
	// round. Without it Compare gives no verdict.
	NoNullArm bool
	// Verdict configures how Compare judges each arm against the first. The
	// zero value is nullband's documented defaults; MaxRounds is set from
	// -count.
	Verdict nullband.Options
	// TimeBudget, when > 0, bounds the rounds' wall time: Compare runs
	// rounds until every verdict is decided, -count rounds ran, or the
	// budget cannot pay for another round at the mean round time so far
	// (the first round always runs). Stopping for the budget costs power,
	// never false alarms. (Budget, above, is the CPU confinement.)
	TimeBudget time.Duration
	// Slice, when > 0, runs each round sliced: every arm's instance is
	// opened (in the round's order) and warmed up, then the arms take turns
	// until each has its block of N steps, each turn one unrecorded lead
	// step and then Slice recorded steps, every step after its gap. The
	// arms of a round then share the host's weather at the scale of a turn
	// rather than a block: where blocks differ by more than their steps'
	// noise (docs/noise-levels.md: a model at a 2 ms gap), the verdict
	// needs far fewer rounds. Every instance of a round stays open for the
	// round; the counter figures leave out the other arms' turns (CPU
	// time is the arm's own threads': its turns on the loop thread and
	// the threads its Open started), the host's span the round. At least
	// N/64 (rounded up); not with Gap.Open.
	//
	// 0, the default, chooses: a closed-loop gap of 1 ms or more with two
	// arms or more (the null arm counts) is sliced in turns of 60 ms of
	// gaps (30 steps at 2 ms; at least 10 and N/64 steps, and only when a
	// block holds two turns); shorter gaps, open loops and a lone arm run
	// whole blocks. SliceWhole (< 0) runs whole blocks always. The
	// choice is written as the slice: configuration line ("turn=30
	// reason=long-gap", internal/levels.SliceReason) and in words above
	// the verdicts.
	Slice int
	// JSON, when set, names a folder Compare writes its verdict rows to as
	// JSON (schema gapbench.report/v1, docs/guide/json.md): one file per
	// benchmark, named from its name ("BenchmarkSpin-2.json", with "/"
	// as "_"). Empty takes the folder from the GAPBENCH_JSON environment
	// variable; neither writes none.
	JSON string
}

// settings are what Run and Compare share, taken from their configs, with
// the name of the entry point and its config type for error messages.
type settings struct {
	fn, typ       string // "decodegap.Run", "RunConfig"
	gap           Gap
	warmup        int
	window        int
	seed          uint64
	parity        func() error
	counters      []Counter
	trace         string
	budget        Budget
	screen        Screen
	requireSteady bool
	slo           SLO    // RunConfig only
	sloFrom       string // where slo came from, for the log: "RunConfig.SLO" or "$DECODEGAP_SLO"
}

func (c *RunConfig) settings() *settings {
	return &settings{fn: "decodegap.Run", typ: "RunConfig", gap: c.Gap, warmup: c.Warmup, window: c.Window, seed: c.Seed,
		parity: c.Parity, counters: c.Counters, trace: c.Trace, budget: c.Budget, screen: c.Screen, requireSteady: c.RequireSteady, slo: c.SLO}
}

func (c *CompareConfig) settings() *settings {
	return &settings{fn: "decodegap.Compare", typ: "CompareConfig", gap: c.Gap, warmup: c.Warmup, window: c.Window, seed: c.Seed,
		parity: c.Parity, counters: c.Counters, trace: c.Trace, budget: c.Budget, screen: c.Screen, requireSteady: c.RequireSteady}
}

// defaultWindow is the window used when the config's Window is 0.
const defaultWindow = 32

// windowSize returns the effective window size.
func (s *settings) windowSize() int {
	if s.window == 0 {
		return defaultWindow
	}
	return s.window
}

// noGap reports whether no gap is requested at all.
func (s *settings) noGap() bool { return s.gap.Shape == GapConstant && s.gap.Mean == 0 }

// validate checks s against the number of recorded iterations n. Its error
// names the field (as the user wrote it), the value and the allowed range.
func (s *settings) validate(n int) error {
	g, t := &s.gap, s.typ
	switch {
	case g.Kind < GapHybrid || g.Kind > GapBusy:
		return fmt.Errorf("%s.Gap.Kind = %d: want GapHybrid, GapSleep or GapBusy", t, int(g.Kind))
	case g.Shape < GapConstant || g.Shape > GapGamma:
		return fmt.Errorf("%s.Gap.Shape = %d: want GapConstant, GapUniform, GapExponential, GapTrace or GapGamma", t, int(g.Shape))
	case !(g.Burstiness >= 0) || math.IsInf(g.Burstiness, 1):
		return fmt.Errorf("%s.Gap.Burstiness = %v: want a coefficient of variation >= 0 (0 means 1, Poisson)", t, g.Burstiness)
	case g.Mean < 0:
		return fmt.Errorf("%s.Gap.Mean = %v: want >= 0", t, g.Mean)
	case g.Spin < 0:
		return fmt.Errorf("%s.Gap.Spin = %v: want >= 0", t, g.Spin)
	case g.MaxCPU < 0 || g.MaxCPU > 1 || g.MaxCPU != g.MaxCPU:
		return fmt.Errorf("%s.Gap.MaxCPU = %v: want a fraction in (0, 1], or 0 for the default (0.4, at most 90µs a gap)", t, g.MaxCPU)
	case g.Jitter < 0 || g.Jitter > 1 || g.Jitter != g.Jitter:
		return fmt.Errorf("%s.Gap.Jitter = %v: want a fraction in [0, 1]", t, g.Jitter)
	case g.Shape == GapTrace && len(g.Trace) == 0:
		return fmt.Errorf("%s.Gap.Trace is empty but %s.Gap.Shape is GapTrace: give at least one duration", t, t)
	case g.Open && s.noGap():
		return fmt.Errorf("%s.Gap.Open needs arrivals: set %s.Gap.Mean > 0 (the mean time between arrivals)", t, t)
	case s.warmup < 0:
		return fmt.Errorf("%s.Warmup = %d: want >= 0", t, s.warmup)
	case s.budget.Cores < 0:
		return fmt.Errorf("%s.Budget.Cores = %d: want >= 0 (0: no confinement)", t, s.budget.Cores)
	case s.window != 0 && s.window < 4:
		return fmt.Errorf("%s.Window = %d: want 0 (default %d) or >= 4", t, s.window, defaultWindow)
	}
	if err := validateCounters(t, s.counters); err != nil {
		return err
	}
	if err := limitGap(t, g); err != nil {
		return err
	}
	for i, d := range g.Trace {
		if d < 0 {
			return fmt.Errorf("%s.Gap.Trace[%d] = %v: want >= 0", t, i, d)
		}
	}
	if w := s.windowSize(); n > 1 && w > n {
		return fmt.Errorf("%s.Window = %d is larger than the run (b.N = %d): lower %s.Window or raise -benchtime to at least %dx", t, w, n, t, 2*w)
	}
	return nil
}

// validate checks what only Run has.
func (c *RunConfig) validate() error {
	switch {
	case c.Sessions < 0:
		return fmt.Errorf("RunConfig.Sessions = %d: want >= 0 (0 or 1: one session)", c.Sessions)
	case c.SLO.validate("RunConfig") != nil:
		return c.SLO.validate("RunConfig")
	case c.Gap.Open && c.Null:
		return fmt.Errorf("RunConfig.Gap.Open and RunConfig.Null cannot be combined: alternate windows would break the arrival schedule; compare with Compare")
	case c.Sessions > 1 && c.Null:
		return fmt.Errorf("RunConfig.Sessions = %d and RunConfig.Null cannot be combined: compare session counts with Compare instead", c.Sessions)
	}
	return nil
}

// SliceWhole is CompareConfig.Slice for whole blocks whatever the gap:
// each arm's block of N steps runs on its own, one arm after another.
const SliceWhole = -1
