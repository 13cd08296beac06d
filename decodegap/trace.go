package decodegap

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/trace"
	"github.com/gapbench/gapbench/internal/traceplot"
)

// traceDir returns the folder Run writes its trace to: Config.Trace, else
// $DECODEGAP_TRACE, else "" (no trace).
func traceDir(cfg *Config) string {
	if cfg.Trace != "" {
		return cfg.Trace
	}
	return os.Getenv(trace.EnvDir)
}

// writeTrace writes the run's trace to dir, and its picture beside it when
// $DECODEGAP_TRACE_PLOT is 1. It runs after the timed loop, from the buffers
// the run already holds, and returns the paths written.
func (r *runner) writeTrace(dir, name string, rep *report) ([]string, error) {
	t := r.buildTrace(name, rep)
	path, err := trace.WriteFile(dir, t)
	if err != nil {
		return nil, err
	}
	paths := []string{path}
	if os.Getenv(trace.EnvPlot) == "1" {
		pic, err := traceplot.RenderBeside(t, path)
		if err != nil {
			return paths, fmt.Errorf("drawing %s ($%s=1): %v", path, trace.EnvPlot, err)
		}
		paths = append(paths, pic)
	}
	return paths, nil
}

// buildTrace assembles the trace of the run; the sample columns alias the
// run's own buffers (Write streams them).
func (r *runner) buildTrace(name string, rep *report) *trace.Trace {
	rec := r.rec
	h := trace.Header{
		Benchmark: name, Start: r.wallStart,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Config:     r.configMap(),
		Host:       hostSummary(r.host),
		Iterations: rec.count, Stride: rec.stride,
		Steady: trace.Steady{Class: rep.st.Class.String(), Start: -1, End: len(rec.lat),
			Changepoints: rep.st.Changepoints, Reason: rep.st.Reason},
	}
	if rep.reached {
		h.Steady.Start = rep.from / rec.stride
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
	if r.nullRec != nil || len(r.sessRecs) > 0 || (r.cfg.Gap.Shape == GapConstant && r.cfg.Gap.Mean == 0) {
		return nil
	}
	seq := gap.NewSequence(r.spec)
	for i := 0; i < r.cfg.Warmup; i++ {
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
	c := r.cfg
	m := map[string]string{
		"gap.kind":  c.Gap.Kind.String(),
		"gap.shape": c.Gap.Shape.String(),
		"gap.mean":  c.Gap.Mean.String(),
		"gap.spin":  r.waiter.Spin().String(),
		"gap.seed":  strconv.FormatUint(c.Gap.Seed, 10),
		"warmup":    strconv.Itoa(c.Warmup),
		"window":    strconv.Itoa(r.window),
	}
	if c.Gap.Shape == GapUniform {
		m["gap.jitter"] = strconv.FormatFloat(c.Gap.Jitter, 'g', -1, 64)
	}
	if c.Sessions > 1 {
		m["sessions"] = strconv.Itoa(c.Sessions)
	}
	if c.Null != nil {
		m["null"] = "alternate windows"
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
