package decodegap

import (
	"runtime/metrics"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/hostmon"
)

// snapshot is the process's counters at one window boundary.
type snapshot struct {
	// iter is the number of recorded iterations completed at the boundary.
	iter int
	// wallNs is gap.Now() at the boundary.
	wallNs int64
	// cpuNs is CLOCK_PROCESS_CPUTIME_ID: every thread, living or exited.
	cpuNs int64
	// userNs and sysNs come from getrusage(RUSAGE_SELF) (µs precision).
	userNs, sysNs int64
	// nvcsw and nivcsw are voluntary and involuntary context switches.
	nvcsw, nivcsw int64
	// maxRSSBytes is the peak resident set size of the process so far.
	maxRSSBytes int64
	// gcCycles counts completed GC cycles; gcPauseNs estimates their total
	// stop-the-world time from the runtime's pause histogram.
	gcCycles  uint64
	gcPauseNs float64
	// host is the host's contention counters and this process's threads;
	// nil when the host cannot be read.
	host *hostmon.Snapshot
	// userVals and userErrs are Config.Counters' values at the boundary.
	userVals []float64
	userErrs []error
	// costNs is how long taking this snapshot took.
	costNs int64
	// err is why the kernel counters could not be read, or nil.
	err error
}

// counterReader takes snapshots; it holds the runtime/metrics buffers so
// that a snapshot reuses them.
type counterReader struct {
	samples []metrics.Sample
	// sampler snapshots the host; nil when it cannot be read.
	sampler *hostmon.Sampler
	// user is Config.Counters.
	user []Counter
}

const (
	metricGCCycles = "/gc/cycles/total:gc-cycles"
	metricGCPauses = "/sched/pauses/total/gc:seconds"
)

// newMetricSamples returns the runtime/metrics samples a snapshot reads.
func newMetricSamples() []metrics.Sample {
	return []metrics.Sample{{Name: metricGCCycles}, {Name: metricGCPauses}}
}

// take fills s for a boundary after iter recorded iterations.
func (c *counterReader) take(s *snapshot, iter int) {
	t0 := gap.Now()
	s.iter = iter
	s.wallNs = t0
	s.err = nil
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		s.err = err
	}
	s.cpuNs = ts.Nano()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		s.err = err
	}
	s.userNs = ru.Utime.Nano()
	s.sysNs = ru.Stime.Nano()
	s.nvcsw = ru.Nvcsw
	s.nivcsw = ru.Nivcsw
	s.maxRSSBytes = ru.Maxrss * 1024 // Linux reports KiB
	if c.sampler != nil {
		s.host = c.sampler.Snapshot()
	}
	if len(c.user) > 0 {
		s.userVals, s.userErrs = make([]float64, len(c.user)), make([]error, len(c.user))
		readCounters(c.user, s.userVals, s.userErrs)
	}
	metrics.Read(c.samples)
	if v := c.samples[0].Value; v.Kind() == metrics.KindUint64 {
		s.gcCycles = v.Uint64()
	}
	if v := c.samples[1].Value; v.Kind() == metrics.KindFloat64Histogram {
		s.gcPauseNs = histogramSumNs(v.Float64Histogram())
	}
	s.costNs = gap.Now() - t0
}

// histogramSumNs estimates the sum of a seconds histogram in nanoseconds,
// counting each observation at its bucket's midpoint (the lower bound for
// the open top bucket, the upper for the open bottom one).
func histogramSumNs(h *metrics.Float64Histogram) float64 {
	var sum float64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		var mid float64
		switch {
		case lo < -1e300:
			mid = hi
		case hi > 1e300:
			mid = lo
		default:
			mid = (lo + hi) / 2
		}
		sum += float64(n) * mid
	}
	return sum * 1e9
}
