// Package trace defines gapbench's trace file: everything one benchmark run
// measured, written after the timed loop so that a person (or a notebook) can
// look at the series instead of reading a summary of it.
//
// decodegap.Run fills a Trace from the buffers it already holds and calls
// Write (or WriteFile); `decodegap plot` and internal/traceplot read it back
// with Read (or ReadFile). Write and Read are symmetric: Read(Write(t)) equals
// t, which the golden test in this package proves.
//
// # Format
//
// A trace is JSON lines (one JSON object per line, UTF-8, '\n' separated).
// Every line has a "kind" field:
//
//   - The first line, kind "header": "format" ("gapbench-trace/1"), the
//     benchmark's full name, the -count index, the start time (RFC 3339, UTC),
//     the Go version, GOOS/GOARCH, the run's configuration as string
//     key/values, a one-line summary of the host's topology, the number of
//     recorded "iterations", the number of "samples" kept and their
//     "stride", and the steady-state result ("steady": class, start and end
//     sample, changepoints, reason).
//   - Then one line per window boundary, kind "boundary": "iter" (iterations
//     completed when the snapshot was taken), "time_ns" (monotonic ns since the
//     start of the timed loop), "counters" (cumulative process counters as
//     read at the boundary; see the Counter* constants for names and units),
//     "contention" (contention figures for the window that ends at this
//     boundary, name → value, units in the name) and "unavailable" (name →
//     reason, for every counter or figure that could not be read: such a name
//     is absent from "counters" and "contention", never written as 0).
//   - Then the per-iteration samples in chunks of at most ChunkLen
//     samples, kind "samples": "first" (index of the chunk's first sample),
//     "latency_ns" (each step's latency), "gap_ns" (the achieved gap before
//     each step) and "requested_ns" (the gap requested before each step).
//     "gap_ns" and "requested_ns" are each absent when the run did not keep
//     them. Chunks are in order and cover samples 0 … samples−1 exactly once.
//
// Iteration numbers are 0-based and count recorded iterations only (the
// discarded Config.Warmup iterations are not in the trace). Sample k is
// recorded iteration k×stride: stride is 1, every iteration kept, unless the
// run was too long to keep them all (decodegap then keeps a systematic
// sample). The steady window and changepoints are sample indexes, so that
// latency[start:end] is the steady window; boundaries count iterations.
//
// A reader must ignore fields it does not know; lines of an unknown kind
// are skipped, so a later gapbench-trace/1 writer may add them.
//
// An example, shortened (ExampleWrite shows a whole file):
//
//	{"kind":"header","format":"gapbench-trace/1","benchmark":"BenchmarkVAD/gap=32ms","count":0,"start":"2026-11-30T05:40:00Z","go_version":"go1.26.8","goos":"linux","goarch":"amd64","config":{"gap.mean":"32ms","window":"32"},"host":"2 CPUs, 2 cores, 1 L3","iterations":2000,"stride":1,"steady":{"class":"warm-up","start":320,"end":2000,"changepoints":[320],"reason":"windows 10-62 within 1.5% of their median"},"samples":2000}
//	{"kind":"boundary","iter":0,"time_ns":0,"counters":{"cpu_user_ns":1200000,"threads":7},"unavailable":{"psi_cpu_some_avg10":"no /proc/pressure/cpu: kernel without PSI"}}
//	{"kind":"boundary","iter":32,"time_ns":1032000000,"counters":{"cpu_user_ns":9300000,"threads":7},"contention":{"foreign_busy_pct":3.5}}
//	{"kind":"samples","first":0,"latency_ns":[251020,249870],"gap_ns":[32000400,32000150],"requested_ns":[32000000,32000000]}
//
// Read it without gapbench, in Python:
//
//	import json
//	rows = [json.loads(line) for line in open("BenchmarkVAD.gap-32ms.count0.jsonl")]
//	header = rows[0]
//	bounds = [r for r in rows if r["kind"] == "boundary"]
//	latency = [x for r in rows if r["kind"] == "samples" for x in r["latency_ns"]]
//	s = header["steady"]
//	steady = latency[s["start"]:s["end"]] if s["start"] >= 0 else []
package trace

import (
	"fmt"
	"time"
)

// Format is the value of the header's "format" field written by Write: the
// format's name and major version. Read accepts only this value.
const Format = "gapbench-trace/1"

// ChunkLen is the largest number of samples in one "samples" line.
const ChunkLen = 1024

// Names of the process counters in Boundary.Counters. Each is a cumulative
// reading taken at the boundary (the difference between two boundaries is
// the window's figure), except CounterMaxRSSBytes and CounterThreads, which
// are levels. The unit is the name's suffix.
const (
	// CounterUserNs is user CPU time of the whole process (getrusage), ns.
	CounterUserNs = "cpu_user_ns"
	// CounterSysNs is system CPU time of the whole process (getrusage), ns.
	CounterSysNs = "cpu_sys_ns"
	// CounterProcessCPUNs is CLOCK_PROCESS_CPUTIME_ID, ns.
	CounterProcessCPUNs = "process_cpu_ns"
	// CounterVoluntaryCtxSw is voluntary context switches (getrusage), a count.
	CounterVoluntaryCtxSw = "voluntary_ctxsw"
	// CounterInvoluntaryCtxSw is involuntary context switches (getrusage), a
	// count.
	CounterInvoluntaryCtxSw = "involuntary_ctxsw"
	// CounterRunQueueWaitNs is the time the process's threads spent runnable
	// but waiting for a CPU (schedstat), ns.
	CounterRunQueueWaitNs = "runqueue_wait_ns"
	// CounterMaxRSSBytes is the peak resident set size so far, bytes.
	CounterMaxRSSBytes = "max_rss_bytes"
	// CounterThreads is the number of OS threads of the process, a count.
	CounterThreads = "threads"
	// CounterGCCycles is completed Go GC cycles, a count.
	CounterGCCycles = "gc_cycles"
	// CounterGCPauseNs is total Go GC stop-the-world pause time, ns.
	CounterGCPauseNs = "gc_pause_ns"
)

// Names of the contention figures in Boundary.Contention and
// Boundary.Unavailable, each the figure of the window that ends at the
// boundary (hostmon.Between of the two snapshots). The unit is the name's
// suffix; a figure without one (load1) is a count of tasks. decodegap
// reports the same figures as the metrics named beside each (see
// decodegap's package doc), and the pictures label them by those names.
const (
	// ContentionForeignBusyPct is others' busy time on the measured CPUs,
	// % (metric foreign-%).
	ContentionForeignBusyPct = "foreign_busy_pct"
	// ContentionSiblingBusyPct is busy time on the SMT siblings of the
	// measured CPUs, % (metric sibling-%).
	ContentionSiblingBusyPct = "sibling_busy_pct"
	// ContentionStealPct is hypervisor steal on the measured CPUs, %
	// (metric steal-%).
	ContentionStealPct = "steal_pct"
	// ContentionPSISomePct is the share of the window in which some task
	// waited for a CPU (/proc/pressure/cpu), % (metric psi-some-%).
	ContentionPSISomePct = "psi_some_pct"
	// ContentionLoad1 is the 1-minute load average at the window's end, a
	// count of tasks (metric load1).
	ContentionLoad1 = "load1"
	// ContentionRunQueueWaitPct is the time the process's threads waited on
	// a run queue, as % of the window's wall time.
	ContentionRunQueueWaitPct = "runqueue_wait_pct"
)

// Values of Steady.Class as decodegap writes them: the steady-state
// classes, after Barrett et al. (2017).
const (
	// ClassFlat: one level, or levels all within the margin of the last.
	ClassFlat = "flat"
	// ClassWarmup: the level fell (the series got faster) before the steady
	// window; the samples before Steady.Start are the warm-up.
	ClassWarmup = "warm-up"
	// ClassSlowdown: the steady window is slower than an earlier level; the
	// samples before Steady.Start ran faster and are not part of it.
	ClassSlowdown = "slowdown"
	// ClassNoSteadyState: the series never settled; Steady.Start is -1.
	ClassNoSteadyState = "no steady state"
)

// Trace is one benchmark run: its header, its window boundaries and its
// per-iteration samples. Write does not copy or retain the slices; Read
// returns a Trace that the caller owns.
type Trace struct {
	// Header describes the run.
	Header Header
	// Latency is the step latency in ns of each kept iteration (sample k
	// is iteration k×Header.Stride), in order.
	Latency []int64
	// Gap is the achieved gap before each kept step in ns (end of the
	// previous step to start of this one): nil when not kept, else
	// len(Latency) long.
	Gap []int64
	// Requested is the gap requested before each kept step in ns: nil when
	// not kept, else len(Latency) long.
	Requested []int64
	// Boundaries are the window boundaries in order of Iter (nondecreasing).
	Boundaries []Boundary
}

// Header is the first line of a trace.
type Header struct {
	// Format is the file's format name and version. Write always writes
	// the package constant Format whatever this field holds; Read sets it.
	Format string `json:"format"`
	// Benchmark is the benchmark's full name as testing.B.Name returns it,
	// with sub-benchmark parts ("BenchmarkVAD/gap=32ms").
	Benchmark string `json:"benchmark"`
	// Count is the -count index of this run, from 0.
	Count int `json:"count"`
	// Start is the wall-clock time the timed loop started.
	Start time.Time `json:"start"`
	// GoVersion is runtime.Version() of the benchmark binary.
	GoVersion string `json:"go_version"`
	// GOOS and GOARCH are runtime.GOOS and runtime.GOARCH.
	GOOS   string `json:"goos,omitempty"`
	GOARCH string `json:"goarch,omitempty"`
	// Config is the run's configuration, flattened to key/values
	// ("gap.mean": "32ms").
	Config map[string]string `json:"config,omitempty"`
	// Host is a one-line summary of the host's topology.
	Host string `json:"host,omitempty"`
	// Iterations is the number of recorded iterations (b.N). 0 means
	// len(Latency)×Stride: Write fills it in, Read always returns it.
	Iterations int `json:"iterations"`
	// Stride is the number of iterations per sample: sample k is iteration
	// k×Stride. 0 means 1: Write fills it in, Read always returns it.
	Stride int `json:"stride"`
	// Steady is the steady-state detection's result.
	Steady Steady `json:"steady"`
}

// Steady is the result of steady-state detection over the recorded
// iterations.
type Steady struct {
	// Class is the classification decodegap gave the series: one of the
	// Class* constants; a reader shows an unknown value as it is.
	Class string `json:"class"`
	// Start and End bound the steady window as sample indexes (into
	// Trace.Latency), [Start, End). Start < 0 means no steady window was
	// found; then End is ignored. Samples before Start are not in the
	// window: the warm-up, or the faster level before a slowdown (see
	// Class).
	Start int `json:"start"`
	End   int `json:"end"`
	// Changepoints are the sample indexes at which the detector found a
	// change of level, in increasing order.
	Changepoints []int `json:"changepoints,omitempty"`
	// Reason is the detector's explanation in words.
	Reason string `json:"reason,omitempty"`
}

// Found reports whether a steady window was found.
func (s Steady) Found() bool { return s.Start >= 0 }

// Boundary is one counter snapshot at a window boundary.
type Boundary struct {
	// Iter is the number of recorded iterations completed when the
	// snapshot was taken: 0 for the start of the timed loop.
	Iter int `json:"iter"`
	// TimeNs is the monotonic time since the start of the timed loop, ns.
	TimeNs int64 `json:"time_ns"`
	// Counters are process counter readings, keyed by the Counter*
	// constants; a counter that could not be read is absent here and
	// present in Unavailable.
	Counters map[string]float64 `json:"counters,omitempty"`
	// Contention are contention figures for the window that ends at this
	// boundary, name → value with the unit in the name ("foreign_busy_pct").
	// A figure that could not be measured is absent here and present in
	// Unavailable.
	Contention map[string]float64 `json:"contention,omitempty"`
	// Unavailable maps a counter or figure name to the reason it could not
	// be read ("no /proc/pressure/cpu: kernel without PSI").
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// SyntaxError is a malformed trace: where and what.
type SyntaxError struct {
	// File is the file's name, "" when read from an io.Reader.
	File string
	// Line is the 1-based line number.
	Line int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("trace line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// validate checks the invariants Write relies on and Read guarantees. Its
// error names the field and what to do.
func (t *Trace) validate() error {
	n := len(t.Latency)
	if t.Gap != nil && len(t.Gap) != n {
		return fmt.Errorf("trace: len(Gap) = %d, len(Latency) = %d: give one achieved gap per sample, or nil", len(t.Gap), n)
	}
	if t.Requested != nil && len(t.Requested) != n {
		return fmt.Errorf("trace: len(Requested) = %d, len(Latency) = %d: give one requested gap per sample, or nil", len(t.Requested), n)
	}
	stride, iters := t.Header.stride(), t.Header.iterations(n)
	if t.Header.Stride < 0 {
		return fmt.Errorf("trace: Header.Stride = %d: want the number of iterations per sample (>= 1), or 0 for 1", t.Header.Stride)
	}
	if iters < 0 || (n > 0 && (iters <= (n-1)*stride || iters > n*stride)) || (n == 0 && iters != 0) {
		return fmt.Errorf("trace: Header.Iterations = %d does not fit %d samples at stride %d: want (samples-1)×stride < Iterations <= samples×stride, or 0", t.Header.Iterations, n, stride)
	}
	s := t.Header.Steady
	if s.Found() && (s.End < s.Start || s.End > n) {
		return fmt.Errorf("trace: Steady = [%d, %d) is not inside the %d samples: want 0 <= Start <= End <= %d, or Start = -1 when no steady window was found", s.Start, s.End, n, n)
	}
	for i, c := range s.Changepoints {
		if c < 0 || c > n || (i > 0 && c <= s.Changepoints[i-1]) {
			return fmt.Errorf("trace: Steady.Changepoints[%d] = %d: want increasing indexes in [0, %d]", i, c, n)
		}
	}
	prev := 0
	for i, b := range t.Boundaries {
		if b.Iter < prev || b.Iter > iters {
			return fmt.Errorf("trace: Boundaries[%d].Iter = %d: want nondecreasing iteration counts in [0, %d]", i, b.Iter, iters)
		}
		prev = b.Iter
		if err := checkFinite(fmt.Sprintf("Boundaries[%d].Counters", i), b.Counters); err != nil {
			return err
		}
		if err := checkFinite(fmt.Sprintf("Boundaries[%d].Contention", i), b.Contention); err != nil {
			return err
		}
	}
	return nil
}

// stride returns Stride, with 0 read as 1.
func (h *Header) stride() int {
	if h.Stride == 0 {
		return 1
	}
	return h.Stride
}

// iterations returns Iterations, with 0 read as samples×stride.
func (h *Header) iterations(samples int) int {
	if h.Iterations == 0 {
		return samples * h.stride()
	}
	return h.Iterations
}
