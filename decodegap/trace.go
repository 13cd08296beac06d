package decodegap

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/trace"
)

// traceDir returns the folder to write traces to: the config's Trace, else
// $DECODEGAP_TRACE, else "" (no trace).
func traceDir(s *settings) string {
	if s.trace != "" {
		return s.trace
	}
	return os.Getenv(trace.EnvDir)
}

// writeTrace writes the run's trace to dir. It runs after the timed loop,
// from the buffers the run already holds, and returns the path written.
// A trace that cannot be written (a file in the way, a read-only folder, a
// name too long) loses no measurement: the failure is kept in res.traceErr,
// which the log reports as a warning, and writeTrace returns a nil error.
// Pictures are the command's: `decodegap plot DIR`.
func (r *runner) writeTrace(dir, name string, res *result) ([]string, error) {
	path, err := trace.WriteFile(dir, r.buildTrace(name, res))
	if err != nil {
		res.traceErr = err
		return nil, nil
	}
	return []string{path}, nil
}

// buildTrace assembles the trace of the run; the sample columns alias the
// run's own buffers (Write streams them).
func (r *runner) buildTrace(name string, res *result) *trace.Trace {
	rec := r.rec
	h := trace.Header{
		Benchmark: name, Start: r.wallStart,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Config:     r.configMap(),
		Host:       hostSummary(r.host),
		Iterations: rec.count, Stride: rec.stride,
		Steady: trace.Steady{Class: res.st.Class.String(), Start: -1, End: len(rec.lat),
			Changepoints: res.st.Changepoints, Reason: steadyReason(res, r.s.typ)},
	}
	if res.reached {
		h.Steady.Start = res.from / rec.stride
	}
	t := &trace.Trace{Header: h, Latency: rec.lat, Gap: rec.gap, Requested: r.requestedColumn()}
	var prev *snapshot
	for k := range r.snaps {
		s := &r.snaps[k]
		t.Boundaries = append(t.Boundaries, boundaryOf(s, prev, r.loopStartNs))
		prev = s
	}
	return t
}

// requestedColumn regenerates the requested gaps of the kept samples from
// the gap sequence's seed. It returns nil when the mapping from iterations to
// requests is not one to one (a null instance or sessions share them).
func (r *runner) requestedColumn() []int64 {
	if r.noRequested || r.s.noGap() {
		return nil
	}
	seq := gap.NewSequence(r.spec)
	for i := 0; i < r.s.warmup; i++ {
		seq.Next()
	}
	out := make([]int64, 0, len(r.rec.lat))
	for i := 0; i < r.rec.count && len(out) < len(r.rec.lat); i++ {
		d := int64(seq.Next())
		if i%r.rec.stride == 0 {
			out = append(out, d)
		}
	}
	return out
}

// configMap flattens the run's configuration for the trace header.
func (r *runner) configMap() map[string]string {
	g := &r.s.gap
	m := map[string]string{
		"gap.kind":  g.Kind.String(),
		"gap.shape": g.Shape.String(),
		"gap.mean":  g.Mean.String(),
		"gap.spin":  r.waiter.Spin().String(),
		"gap.seed":  strconv.FormatUint(r.s.seed, 10),
		"warmup":    strconv.Itoa(r.s.warmup),
		"window":    strconv.Itoa(r.window),
	}
	if g.Shape == GapUniform {
		m["gap.jitter"] = strconv.FormatFloat(g.Jitter, 'g', -1, 64)
	}
	for k, v := range r.traceConfig {
		m[k] = v
	}
	if r.host != nil && len(r.host.budget.CPUs) > 0 {
		m["budget.cpus"] = r.host.budget.CPUs.String()
	}
	return m
}

// hostSummary is the topology in one line.
func hostSummary(h *hostRun) string {
	_, topo, err := hostInfo()
	if err != nil {
		return "unavailable (" + err.Error() + ")"
	}
	s := strings.ReplaceAll(strings.TrimSpace(topo.String()), "\n", "; ")
	if h != nil && len(h.budget.CPUs) > 0 {
		s += "; confined to " + h.budget.String()
	}
	return s
}

// boundaryOf turns a snapshot into a trace boundary, with the contention of
// the window since prev.
func boundaryOf(s, prev *snapshot, loopStartNs int64) trace.Boundary {
	b := trace.Boundary{Iter: s.iter, TimeNs: s.wallNs - loopStartNs, Unavailable: map[string]string{}}
	if s.err == nil {
		b.Counters = map[string]float64{
			trace.CounterUserNs:           float64(s.userNs),
			trace.CounterSysNs:            float64(s.sysNs),
			trace.CounterProcessCPUNs:     float64(s.cpuNs),
			trace.CounterVoluntaryCtxSw:   float64(s.nvcsw),
			trace.CounterInvoluntaryCtxSw: float64(s.nivcsw),
			trace.CounterMaxRSSBytes:      float64(s.maxRSSBytes),
			trace.CounterGCCycles:         float64(s.gcCycles),
			trace.CounterGCPauseNs:        s.gcPauseNs,
		}
	} else {
		for _, k := range []string{trace.CounterUserNs, trace.CounterSysNs, trace.CounterProcessCPUNs, trace.CounterVoluntaryCtxSw, trace.CounterInvoluntaryCtxSw, trace.CounterMaxRSSBytes} {
			b.Unavailable[k] = s.err.Error()
		}
	}
	switch {
	case s.host == nil:
		b.Unavailable[trace.CounterThreads] = "the host could not be read"
	case s.host.Tasks() == nil:
		b.Unavailable[trace.CounterThreads] = "the process's threads could not be read"
	default:
		ts := s.host.Tasks()
		if b.Counters == nil {
			b.Counters = map[string]float64{}
		}
		b.Counters[trace.CounterThreads] = float64(len(ts))
		var wait uint64
		for _, t := range ts {
			wait += t.RunQueueWaitNanoseconds
		}
		b.Counters[trace.CounterRunQueueWaitNs] = float64(wait)
	}
	if prev != nil && prev.host != nil && s.host != nil {
		sp := hostmon.Between(prev.host, s.host)
		b.Contention = map[string]float64{}
		for name, f := range map[string]hostmon.Figure{
			"foreign_busy_pct": sp.ForeignBusyPct, "sibling_busy_pct": sp.SiblingBusyPct,
			"steal_pct": sp.StealPct, "psi_some_pct": sp.PSISomePct, "load1": sp.Load1,
			"runqueue_wait_pct": sp.RunQueueWaitPct,
		} {
			if f.Available() {
				b.Contention[name] = f.Value
			} else {
				b.Unavailable[name] = f.Reason
			}
		}
	}
	if len(b.Unavailable) == 0 {
		b.Unavailable = nil
	}
	return b
}

// wallNow is time.Now, for the trace's start time.
var wallNow = time.Now
