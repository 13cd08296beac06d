package decodegap

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchunit"

	"github.com/gapbench/gapbench/decodegap/internal/tail"
	"github.com/gapbench/gapbench/hostmon"
)

// Metric is one unit that Run and Compare report with b.ReportMetric, with
// its meaning. Every unit parses with golang.org/x/perf/benchunit, so
// benchstat compares it. A figure that cannot be measured on the host is
// left out of the line, never reported as 0; the log says why.
type Metric struct {
	Unit    string
	Meaning string
}

// Metrics lists every fixed unit reported, in the order reported. Besides
// them: sN-p50-ns/op and sN-p90-ns/op (RunConfig.Sessions: session N's
// percentiles) and NAME/op (a config Counter's change per step).
func Metrics() []Metric {
	out := make([]Metric, len(metricTable))
	for i, m := range metricTable {
		out[i] = Metric{m.unit, m.doc}
	}
	return out
}

// metricDef is one metric: its unit, its meaning, and how to read it from a
// result (false leaves it out of the line). Adding a metric is adding an
// entry here (and, when it needs a new figure, a field in result.go).
type metricDef struct {
	unit, doc string
	read      func(*result) (float64, bool)
}

// always wraps a figure that every result has.
func always(f func(*result) float64) func(*result) (float64, bool) {
	return func(r *result) (float64, bool) { return f(r), true }
}

// perOp divides a process-counter total by the span's iterations.
func perOp(f func(*counterSpan) float64) func(*result) (float64, bool) {
	return func(r *result) (float64, bool) {
		c := &r.proc
		if !c.ok || c.iters() == 0 || c.wallNs <= 0 {
			return 0, false
		}
		return f(c) / float64(c.iters()), true
	}
}

// hostFigure reads a contention figure when available; per divides it by
// the span's iterations.
func hostFigure(f func(*hostmon.Span) hostmon.Figure, per bool) func(*result) (float64, bool) {
	return func(r *result) (float64, bool) {
		if !r.host.ok {
			return 0, false
		}
		fig := f(&r.host.span)
		if !fig.Available() {
			return 0, false
		}
		if per {
			if r.proc.iters() == 0 {
				return 0, false
			}
			return fig.Value / float64(r.proc.iters()), true
		}
		return fig.Value, true
	}
}

// knownTail reads the i-th bounded tail percentile (tailQuantiles) when its
// distribution-free bound exists: a figure too far in the tail for the steps
// recorded is left out, never printed as if it were known.
func knownTail(of func(*result) *tails, i int) func(*result) (float64, bool) {
	return func(r *result) (float64, bool) {
		t := of(r)[i]
		return t.Value, t.Known
	}
}

// openFigure reads a figure of the open loop (Gap.Open).
func openFigure(f func(*openResult) float64) func(*result) (float64, bool) {
	return func(r *result) (float64, bool) { return f(&r.open), r.open.on }
}

var metricTable = []metricDef{
	{"ns/op", "mean step latency (replaces testing's own ns/op, which would include gaps)", always(func(r *result) float64 { return r.lat.mean })},
	{"p50-ns/op", "median step latency", always(func(r *result) float64 { return r.lat.p50 })},
	{"p90-ns/op", "90th percentile step latency", always(func(r *result) float64 { return r.lat.p90 })},
	{"p99-ns/op", "99th percentile step latency; left out when too few steps bound it (the log says how many)", knownTail(func(r *result) *tails { return &r.tails }, 1)},
	{"p99.9-ns/op", "99.9th percentile step latency, when enough steps bound it", knownTail(func(r *result) *tails { return &r.tails }, 2)},
	{"resp-ns/op", "Gap.Open: mean response time, scheduled arrival to end (queueing included)", openFigure(func(o *openResult) float64 { return o.resp.mean })},
	{"resp-p50-ns/op", "Gap.Open: median response time", openFigure(func(o *openResult) float64 { return o.resp.p50 })},
	{"resp-p90-ns/op", "Gap.Open: 90th percentile response time", openFigure(func(o *openResult) float64 { return o.resp.p90 })},
	{"resp-p99-ns/op", "Gap.Open: 99th percentile response time, when enough steps bound it", knownTail(func(r *result) *tails { return &r.open.respTail }, 1)},
	{"resp-p99.9-ns/op", "Gap.Open: 99.9th percentile response time, when enough steps bound it", knownTail(func(r *result) *tails { return &r.open.respTail }, 2)},
	{"late-ns/op", "Gap.Open: mean lateness of a step's start after its scheduled arrival", openFigure(func(o *openResult) float64 { return o.lateMean })},
	{"queue-max", "Gap.Open: most arrivals due and not yet finished at a step's start (1: no queue)", openFigure(func(o *openResult) float64 { return float64(o.queueMax) })},
	{"overloaded", "Gap.Open: 1 when the arrivals outpaced the step (the queue grew through the run, or reached decodegap.MaxQueue), else 0", openFigure(func(o *openResult) float64 {
		if o.overload != NotOverloaded {
			return 1
		}
		return 0
	})},
	{"slo-met", "RunConfig.SLO (or $DECODEGAP_SLO): 1 when the percentile's bound shows the objective met, 0 when it shows it missed (or Gap.Open's queue grew); left out when undecided", func(r *result) (float64, bool) {
		switch {
		case !r.slo.on || r.slo.j.Verdict == tail.Undecided:
			return 0, false
		case r.slo.j.Verdict == tail.Pass:
			return 1, true
		}
		return 0, true
	}},
	{"steady-%", "share of the recorded iterations in the steady window (100 = all; the rest was left out)", func(r *result) (float64, bool) {
		return 100 * float64(r.n-r.from) / float64(r.n), r.n > 0
	}},
	{"max-ns/op", "the longest single step anywhere in the run, warm-up and transient included (the log names a stall of 10× the median or more that the window leaves out)", func(r *result) (float64, bool) {
		return r.stall.maxNs, r.stall.phase != StallNone
	}},
	{"mvalue", "the steps' modality over the reported window (BenchmarkDotNet's mvalue): about 2 for one mode, 3.2 or more for two or more, when the log says so; left out under 30 steps", func(r *result) (float64, bool) {
		return r.mvalue, !math.IsNaN(r.mvalue)
	}},
	{"outlier-%", "share of the steps' total time (so of ns/op) made by steps at least 10× the median", always(func(r *result) float64 { return 100 * r.out.share })},
	{"gap-req-ns/op", "mean requested gap", always(func(r *result) float64 { return r.gap.req })},
	{"gap-ns/op", "mean achieved gap: end of one step to start of the next", always(func(r *result) float64 { return r.gap.mean })},
	{"gap-p50-ns/op", "median achieved gap", always(func(r *result) float64 { return r.gap.p50 })},
	{"gap-cpu-%", "CPU time the gaps themselves used (sleep wake-ups and spins), of their wall time", func(r *result) (float64, bool) {
		return 100 * float64(r.gap.cpuNs) / float64(r.gap.wallNs), r.gap.wallNs > 0
	}},
	{"null-ratio", "the null instance's (Run) or null arm's (Compare) mean over the step's, same run or round", func(r *result) (float64, bool) { return r.null.ratio, r.null.on }},
	{"steps/s", "RunConfig.Sessions: steps of all sessions per second of the region", func(r *result) (float64, bool) { return r.throughput, len(r.sessions) > 0 }},
	{"foreign-%", "others' busy time on the measured CPUs (100 = every CPU busy)", hostFigure(func(h *hostmon.Span) hostmon.Figure { return h.ForeignBusyPct }, false)},
	{"sibling-%", "busy time on the SMT siblings of the measured CPUs (only with SMT)", hostFigure(func(h *hostmon.Span) hostmon.Figure { return h.SiblingBusyPct }, false)},
	{"steal-%", "hypervisor steal on the measured CPUs", hostFigure(func(h *hostmon.Span) hostmon.Figure { return h.StealPct }, false)},
	{"psi-some-%", "share of the span in which some task waited for a CPU (/proc/pressure/cpu)", hostFigure(func(h *hostmon.Span) hostmon.Figure { return h.PSISomePct }, false)},
	{"load1", "1-minute load average at the end of the span", hostFigure(func(h *hostmon.Span) hostmon.Figure { return h.Load1 }, false)},
	{"runq-ns/op", "time this process's threads waited on a run queue, per step (schedstat)", hostFigure(func(h *hostmon.Span) hostmon.Figure { return h.ProcessRunQueueWaitNs }, true)},
	{"threads", "threads of the process at the end", func(r *result) (float64, bool) { return float64(r.census.threads()), r.host.ok && r.census.ok }},
	{"cpu/wall", "cpu-ns/op's CPU seconds per wall second of the counter span (1 = one core busy with the arm's work)", func(r *result) (float64, bool) {
		v := r.proc.cpuPerWall()
		return v, !math.IsNaN(v) && r.proc.iters() > 0
	}},
	{"cpu-ns/op", "CPU time per step (user+sys): all the process spent over the counter span (CLOCK_PROCESS_CPUTIME_ID, every thread, exited ones too, read at the span's boundaries only) less the harness's own (the gaps, the snapshots, the loop's bookkeeping), per step; in turns (CompareConfig.Slice) also less the threads the other arms' opens created. The same in every block of every route (the cpu-scope: configuration line); unavailable when a part cannot be read (the log says which)", func(r *result) (float64, bool) { return r.proc.stepCPUNs() }},
	{"thread-cpu-%", "the share of cpu-ns/op that ran on the loop thread: near 100 the step runs on that thread alone, lower it hands work to other threads", func(r *result) (float64, bool) {
		v := r.proc.threadShare()
		return 100 * v, !math.IsNaN(v)
	}},
	{"user-ns/op", "the user-time part of cpu-ns/op (getrusage's split of the process's time, the harness's spins taken out)", func(r *result) (float64, bool) {
		u, _, ok := r.proc.userSysPerStep()
		return u, ok
	}},
	{"sys-ns/op", "the system-time part of cpu-ns/op (getrusage's split, the harness's sleeps and snapshots taken out)", func(r *result) (float64, bool) {
		_, sy, ok := r.proc.userSysPerStep()
		return sy, ok
	}},
	{"vcsw/op", "voluntary context switches per step, all threads", perOp(func(c *counterSpan) float64 { return float64(c.nvcsw) })},
	{"ivcsw/op", "involuntary context switches per step, all threads", perOp(func(c *counterSpan) float64 { return float64(c.nivcsw) })},
	{"peak-RSS-B", "peak resident set size of the process so far, bytes", func(r *result) (float64, bool) {
		return float64(r.proc.maxRSS), r.proc.ok && r.proc.iters() > 0 && r.proc.wallNs > 0
	}},
	{"gc-pause-ns/op", "Go GC stop-the-world time per step (histogram estimate)", perOp(func(c *counterSpan) float64 { return c.gcPause })},
	{"gc/op", "completed Go GC cycles per step", perOp(func(c *counterSpan) float64 { return float64(c.gcCycles) })},
	{"snap-%", "time the counter snapshots took, of the timed loop's (the budget is 1%)", func(r *result) (float64, bool) {
		return 100 * float64(r.snapNs) / float64(r.loopNs), r.loopNs > 0
	}},
}

// metric is one value for b.ReportMetric.
type metric struct {
	value float64
	unit  string
}

// metrics lists the result's benchfmt metrics.
func (r *result) metrics() []metric {
	var ms []metric
	for _, d := range metricTable {
		if v, ok := d.read(r); ok {
			ms = append(ms, metric{v, d.unit})
		}
	}
	for i, s := range r.sessions {
		ms = append(ms, metric{s.p50, fmt.Sprintf("s%d-p50-ns/op", i+1)}, metric{s.p90, fmt.Sprintf("s%d-p90-ns/op", i+1)})
	}
	for _, u := range r.user {
		if u.err == "" && r.proc.iters() > 0 {
			ms = append(ms, metric{u.delta / float64(r.proc.iters()), u.name + "/op"})
		}
	}
	return ms
}

// reportValue is the value to print: testing prints a value under 5e-8 as
// "0.0000000", which reads as a measured non-zero; such a value is reported
// as an exact 0.
func reportValue(v float64) float64 {
	if math.Abs(v) < 5e-8 {
		return 0
	}
	return v
}

// reportUnit is the unit to print m in. benchfmt tidies "ns" units to
// "sec" by comparing the tidied value with the original, so it leaves an
// exact 0 in its original unit: "0 sys-ns/op" and "12 sys-ns/op" would land
// in two benchstat tables. A zero is therefore printed in the tidied unit
// ("0 sys-sec/op"), which benchfmt keeps as it is. ns/op is left alone:
// testing treats "0 ns/op" specially.
func reportUnit(m metric) string {
	if m.value != 0 || m.unit == "ns/op" {
		return m.unit
	}
	_, u := benchunit.Tidy(1, m.unit)
	return u
}
