package decodegap

import (
	"math"

	"github.com/gapbench/gapbench/decodegap/internal/steady"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
)

// Result is what one measurement (a Run, or one block of Compare) found,
// as numbers and enumerations: no field holds a sentence (the log writes
// the words). Durations are float64 nanoseconds; a figure that could not be
// measured is NaN, or its Available/On field is false. The caller owns it.
type Result struct {
	// N is the number of recorded iterations (b.N); Window the steps per
	// window; Stride the iterations per kept sample (1 unless b.N exceeds
	// the record's 4,194,304 samples).
	N, Window, Stride int
	// Steady is the steady-state class; SteadyReason why the detector
	// classified the series so; Reached whether a steady state was
	// observed; From the first recorded iteration the figures describe (0
	// when not reached: they then describe the transient). RerunN, when >
	// 0, is the -benchtime=Nx that would give a steady window of N.
	Steady       SteadyClass
	SteadyReason SteadyReason
	Reached      bool
	From         int
	RerunN       int
	// Latency is the step latency over the reported window (ns).
	Latency Latency
	// Stall is the longest step of the whole run, warm-up included.
	Stall Stall
	// Gap is the requested and achieved gap (ns).
	Gap GapFigures
	// Open is the open loop's figures (Gap.Open); Open.On is false otherwise.
	Open OpenFigures
	// SLO is RunConfig.SLO's verdict; SLOOn is false when none was set.
	SLOOn bool
	SLO   SLOVerdict
	// Contended is the contention screen's mark of the counter span;
	// HostAvailable whether the screen could read the host at all.
	Contended, HostAvailable bool
	// NullRatio is the null instance's mean over the step's (RunConfig.Null,
	// or Compare's null arm); NaN without one.
	NullRatio float64
	// TracePaths are the trace files written; TraceFailed reports that a
	// trace was asked for (RunConfig.Trace or $DECODEGAP_TRACE) and could
	// not be written: the log says why, and the result stands.
	TracePaths  []string
	TraceFailed bool
	// Metrics are the values of the result line, in its order, with the
	// units as reported (Metrics documents them).
	Metrics []MetricValue
}

// Latency is a latency distribution's summary (ns).
type Latency struct{ Mean, P50, P90, P99 float64 }

// Stall is the longest step of a run (ns), where it fell, and its ratio to
// the reported median. Stalled is Ratio >= 10 (a stall, as the log and
// max-ns/op report it), wherever it fell; Iter counts from the first
// warm-up step for StallWarmup, from the first recorded one otherwise.
type Stall struct {
	MaxNs   float64
	Iter    int
	Phase   StallPhase
	Ratio   float64
	Stalled bool
}

// GapFigures is the requested mean gap beside the achieved mean and median
// (ns), with the gap's kind and shape.
type GapFigures struct {
	Requested, Mean, P50 float64
	Kind                 GapKind
	Shape                GapShape
}

// OpenFigures is the open loop's part of a Result: response times
// (scheduled arrival to end, ns), mean lateness (ns), queue depth and the
// overload reason.
type OpenFigures struct {
	On        bool
	Response  Latency
	LateMean  float64
	QueueMean float64
	QueueMax  int
	Overload  OverloadReason
}

// SteadyClass is the steady-state detector's class of a series: flat,
// warm-up, slowdown or no steady state.
type SteadyClass = steady.Class

// The steady-state classes.
const (
	SteadyNone     = steady.NoSteadyState
	SteadyFlat     = steady.Flat
	SteadyWarmup   = steady.Warmup
	SteadySlowdown = steady.Slowdown
)

// SteadyReason is why the detector classified a series as it did (its
// String is a short token such as "too-short" or "faster").
type SteadyReason = steady.Reason

// SLOVerdict is a latency objective's verdict: undecided, pass or fail.
type SLOVerdict = tail.Verdict

// The SLO verdicts.
const (
	SLOUndecided = tail.Undecided
	SLOPass      = tail.Pass
	SLOFail      = tail.Fail
)

// MetricValue is one value of a result line, in the unit Metrics
// documents (the result line prints an exact 0 in benchfmt's tidied unit,
// "0 cpu-sec/op", so that benchstat keeps one table; Unit stays
// "cpu-ns/op").
type MetricValue struct {
	Unit  string
	Value float64
}

// export turns the internal result into the exported Result.
func (r *result) export() *Result {
	out := &Result{
		N: r.n, Window: r.window, Stride: r.stride,
		Steady: r.st.Class, SteadyReason: r.st.Reason, Reached: r.reached, From: r.from, RerunN: r.rerunN,
		Latency: exportLatency(r.lat),
		Stall:   Stall{MaxNs: r.stall.maxNs, Iter: r.stall.iter, Phase: r.stall.phase, Ratio: r.stall.ratio, Stalled: r.stall.stalled()},
		Gap:     GapFigures{Requested: r.gap.req, Mean: r.gap.mean, P50: r.gap.p50, Kind: r.gap.kind, Shape: r.gap.shape},
		SLOOn:   r.slo.on, SLO: r.slo.j.Verdict,
		Contended: contended(r), HostAvailable: r.host.ok,
		NullRatio:   math.NaN(),
		TracePaths:  append([]string(nil), r.tracePaths...),
		TraceFailed: r.traceErr != nil,
	}
	if r.open.on {
		o := &r.open
		out.Open = OpenFigures{On: true, Response: exportLatency(o.resp), LateMean: o.lateMean,
			QueueMean: o.queueMean, QueueMax: o.queueMax, Overload: o.overload}
	}
	if r.null.on {
		out.NullRatio = r.null.ratio
	}
	for _, m := range r.metrics() {
		out.Metrics = append(out.Metrics, MetricValue{m.unit, reportValue(m.value)})
	}
	return out
}

func exportLatency(l latency) Latency { return Latency{l.mean, l.p50, l.p90, l.p99} }
