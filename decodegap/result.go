package decodegap

import (
	"math"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/cpucost"
	"github.com/gapbench/gapbench/decodegap/internal/mem"
	"github.com/gapbench/gapbench/decodegap/internal/modes"
	"github.com/gapbench/gapbench/decodegap/internal/radix"
	"github.com/gapbench/gapbench/decodegap/internal/steady"
	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/quantile"
)

// result is what one measurement (a Run, or one block of Compare) found:
// plain numbers and enumerations, filled by the analysis and read by every
// reporter (metrics.go, log.go, trace.go). No field holds a sentence.
type result struct {
	n      int // recorded iterations
	stride int // iterations per kept sample
	window int // steps per window in effect
	// st is the steady-state verdict on the kept samples; reached whether a
	// steady state was observed; from the first recorded iteration the
	// figures describe (0 when not reached: they describe the transient).
	st      steady.Result
	reached bool
	from    int
	// rerunN, when > 0, is the -benchtime=Nx that would give a steady window
	// of b.N iterations: set when the steady window is less than half the run.
	rerunN int

	lat latency // step latency over the reported samples (ns)
	// mvalue is the reported samples' modality (internal/modes): about 2
	// for one mode, modes.Multimodal or more for two or more; NaN for too
	// few samples.
	mvalue float64
	// tails bounds lat's p90, p99 and p99.9 (distribution-free, 95%); a
	// percentile too far in the tail for the steps recorded is not Known.
	tails tails
	// open is the open loop's response times and queue (Gap.Open).
	open openResult
	// slo is RunConfig.SLO judged on the run, when set; sloService, in an
	// open loop, the same objective on the service times alone (every
	// recorded step): when they miss it, no arrival rate meets it.
	slo        sloResult
	sloService sloResult
	out        outliers // the steps that dominate the mean, if any
	// stall is the longest step of the whole run, warm-up included, and
	// where it fell (stall.go).
	stall stallInfo
	gap   gapStats
	proc  counterSpan // process counters over the span they cover
	// snapNs is the time the counter snapshots of the timed loop took, all
	// of them; loopNs the timed loop's wall time (the counter budget).
	snapNs, loopNs int64
	host           hostResult
	// census is the threads by phase and where the span's CPU went.
	census census
	// user is the config's Counters over the counter span.
	user []userSpan

	// sessions are each session's figures (RunConfig.Sessions > 1); the
	// latency above then pools every session. throughput is steps per
	// second of the region; soloN the steps of the solo census block.
	sessions   []sessionStats
	throughput float64
	soloN      int

	null nullResult
	// round, rounds and procs place a Compare block (rounds is 0 in Run).
	round, rounds, procs int
	// tracePaths are the trace files written, if any; traceErr why the
	// trace asked for could not be written (a warning: the result stands).
	tracePaths []string
	traceErr   error
}

// latency is a latency distribution's summary (ns).
type latency struct{ mean, p50, p90, p99 float64 }

// outlierFactor: a step at least this many times the median is an outlier.
const outlierFactor = 10

// dominatedShare: outliers making at least this share of the mean's total
// dominate it.
const dominatedShare = 0.5

// outliers are the steps of the reported window at least outlierFactor
// times its median: how many, the largest (ns), and the share of the
// window's total step time (so of the mean) they make.
type outliers struct {
	count   int
	largest float64
	share   float64
}

// dominated reports whether a few steps make most of the mean.
func (o outliers) dominated() bool { return o.count > 0 && o.share >= dominatedShare }

// gapStats is the achieved gap beside the requested one.
type gapStats struct {
	req, mean, p50 float64 // requested mean, achieved mean and median (ns)
	kind           GapKind
	shape          GapShape
	spin           time.Duration
	// stretched counts the counter snapshots that took longer than the mean
	// requested gap; stretchMax is the longest (ns).
	stretched  int
	stretchMax int64
	// cpuNs and wallNs are the CPU and wall time the waits took, all gaps
	// of the run (warm-up included); maxCPU is Gap.MaxCPU in effect.
	cpuNs, wallNs int64
	maxCPU        float64
}

// hostResult is the contention over the counter span, when ok; why says
// why it is unavailable otherwise.
type hostResult struct {
	ok      bool
	why     string
	span    hostmon.Span
	verdict hostmon.Verdict
}

// nullResult is the null instance's figures: its steady mean over the
// step's (ratio) and whether both settled. of names the arm it is a second
// instance of, in Compare ("" in Run).
type nullResult struct {
	on     bool
	ratio  float64
	steady bool
	of     string
	// st is the null instance's own steady-state verdict (Run).
	st steady.Result
}

// counterSpan is the process counters between two snapshots.
type counterSpan struct {
	ok bool
	// why is the reason the counters are unavailable, when !ok.
	why string
	// from and to are the recorded iterations the span covers; first and
	// last the snapshots it runs between.
	from, to    int
	first, last *snapshot
	// fi and li are first's and last's indexes in the runner's snapshots.
	// In a sliced round (CompareConfig.Slice) the figures below leave out
	// the intervals between them that ran other arms' turns; the host's
	// figures and the census span them whole.
	fi, li   int
	wallNs   int64
	cpuNs    int64
	userNs   int64
	sysNs    int64
	nvcsw    int64
	nivcsw   int64
	maxRSS   int64
	gcCycles uint64
	gcPause  float64
	// cost is the arm's CPU time over the span (internal/cpucost): the
	// process's less the harness's, in a sliced round less the other
	// arms' threads. cpu-ns/op, user-ns/op, sys-ns/op, cpu/wall and
	// thread-cpu-% all read it.
	cost cpucost.Cost
}

// iters returns the number of iterations the span covers.
func (c *counterSpan) iters() int { return c.to - c.from }

// cpuPerWall is the arm's CPU (cpu-ns/op's) per wall second over the
// span, NaN when unavailable.
func (c *counterSpan) cpuPerWall() float64 {
	if c.ok && c.wallNs > 0 && c.cost.Why == cpucost.Available {
		return c.cost.Ns / float64(c.wallNs)
	}
	return math.NaN()
}

// stepCPUNs is cpu-ns/op: the arm's CPU time per step over the span;
// false when unavailable (no counters, or c.cost.Why).
func (c *counterSpan) stepCPUNs() (float64, bool) {
	if !c.ok {
		return 0, false
	}
	return c.cost.PerStep()
}

// threadShare is the share of the arm's CPU time that ran on the loop
// thread (thread-cpu-%); NaN when unavailable.
func (c *counterSpan) threadShare() float64 {
	if !c.ok || c.cost.Why != cpucost.Available || !(c.cost.Ns > 0) {
		return math.NaN()
	}
	return c.cost.Loop / c.cost.Ns
}

// userSysPerStep is cpu-ns/op's split into user and system time per step.
func (c *counterSpan) userSysPerStep() (user, sys float64, ok bool) {
	if _, ok := c.stepCPUNs(); !ok {
		return 0, 0, false
	}
	n := float64(c.cost.Steps)
	return c.cost.User / n, c.cost.Sys / n, true
}

// newResult starts the result of r's run.
func (r *runner) newResult() *result {
	return &result{
		n: r.rec.count, stride: r.rec.stride, window: r.window,
		gap:    r.gapStats(),
		snapNs: r.cr.costNs, loopNs: r.loopNs(),
	}
}

// loopNs is the timed loop's wall time: from its start to the end of its
// last snapshot.
func (r *runner) loopNs() int64 {
	if len(r.snaps) == 0 {
		return 0
	}
	last := &r.snaps[len(r.snaps)-1]
	return last.wallNs + last.costNs - r.loopStartNs
}

// fill computes the figures over the reported samples lat and gaps, the
// counter span from recorded iteration spanFrom, and the host's.
func (r *runner) fill(res *result, lat, gaps []int64, spanFrom int) {
	sorted := sortInto(r.rec.scratch, lat) // the detector's memory, free again
	res.lat = summarizeSorted(sorted)
	res.mvalue = modes.MValue(sorted)
	res.tails = tailsOfSorted(sorted)
	res.slo = r.s.judgeSLO(lat, "step latency")
	res.out = findOutliers(lat, res.lat.p50)
	recs := r.recs
	if len(recs) == 0 {
		recs = []*record{r.rec}
	}
	res.stall = findStall(recs, res.from, res.lat.p50)
	g := summarizeSorted(sortInto(sorted, gaps)) // gaps is as long as lat
	res.gap.mean, res.gap.p50 = g.mean, g.p50
	if r.n > 0 {
		res.gap.req = float64(r.requested) / float64(r.n)
	}
	if res.gap.req > 0 {
		// The first and last snapshots fall outside the recorded gaps.
		for k := 1; k < len(r.snaps)-1; k++ {
			if c := r.snaps[k].costNs; float64(c) > res.gap.req {
				res.gap.stretched++
				res.gap.stretchMax = max(res.gap.stretchMax, c)
			}
		}
	}
	if res.reached && res.from > res.n/2 {
		res.rerunN = roundUp2(res.from + res.n)
	}
	res.proc = r.span(spanFrom)
	if res.proc.ok && len(r.s.counters) > 0 {
		res.user = userSpans(r.s.counters, res.proc.first, res.proc.last, res.proc.iters())
		for i := range res.user {
			if u := &res.user[i]; u.err == "" {
				if d := r.foreignUser(i, res.proc.fi, res.proc.li); d == d {
					u.delta -= d
				} else {
					u.err = "it could not be read at a turn of a sliced round (CompareConfig.Slice)"
				}
			}
		}
	}
	r.hostSpan(res)
}

// steadyWindow runs the detector on rec and sets res's steady fields; it
// returns the kept latencies and gaps the figures describe (the whole
// record when not reached).
func steadyWindow(rec *record, window int) (st steady.Result, reached bool, from int, lat, gaps []int64) {
	if len(rec.scratch) < 2*len(rec.lat) {
		rec.scratch = make([]int64, 2*len(rec.lat))
		mem.Populate(rec.scratch)
	}
	st = steady.Detect(rec.lat, steady.Params{Window: window, Stride: rec.stride, Scratch: rec.scratch})
	k0 := 0
	if st.Class != steady.NoSteadyState && st.Start >= 0 {
		reached = true
		k0 = st.Start
	}
	return st, reached, k0 * rec.stride, rec.lat[k0:], rec.gap[k0:]
}

// hostSpan fills the contention figures, the screen's verdict and the
// thread census for the counter span.
func (r *runner) hostSpan(res *result) {
	if r.host == nil {
		return
	}
	if r.host.sampler == nil {
		res.host.why = r.host.why
		return
	}
	first, last := res.proc.first, res.proc.last
	if !res.proc.ok || first.host == nil || last.host == nil {
		res.host.why = "no host snapshots for the counter span"
		return
	}
	res.host.span, res.host.ok = hostmon.Between(first.host, last.host), true
	res.host.verdict = res.host.span.Screen(r.s.screen.Thresholds)
	res.census = takeCensus(r.censusPhases(), first.host.Tasks(), last.host.Tasks())
	if !r.sliced {
		res.census.harnessNs = res.proc.cost.Harness
	}
}

// summarize returns the mean and the 50th, 90th and 99th percentiles of xs
// (gapbench's one rule, internal/quantile), NaN for none. It sorts a copy;
// xs is left as it is.
func summarize(xs []int64) latency {
	return summarizeSorted(sortedCopy(xs))
}

// sortedCopy returns a sorted copy of xs.
func sortedCopy(xs []int64) []int64 {
	return sortInto(nil, xs)
}

// sortInto returns a sorted copy of xs in buf's memory, when it has room;
// with room for twice xs, the second half is the radix sort's.
func sortInto(buf, xs []int64) []int64 {
	n := len(xs)
	s := append(buf[:0], xs...)
	var tmp []int64
	if cap(buf) >= 2*n {
		tmp = buf[n : 2*n : 2*n]
	}
	radix.Sort(s, tmp)
	return s
}

// summarizeSorted is summarize on an ascending s.
func summarizeSorted(s []int64) latency {
	if len(s) == 0 {
		return latency{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	return latency{sum / float64(len(s)), quantile.Sorted(s, 0.50), quantile.Sorted(s, 0.90), quantile.Sorted(s, 0.99)}
}

// findOutliers counts the steps of lat at least outlierFactor times p50.
func findOutliers(lat []int64, p50 float64) outliers {
	var o outliers
	if len(lat) == 0 || !(p50 > 0) {
		return o
	}
	var sum, big float64
	for _, x := range lat {
		v := float64(x)
		sum += v
		if v >= outlierFactor*p50 {
			o.count++
			big += v
			o.largest = max(o.largest, v)
		}
	}
	if sum > 0 {
		o.share = big / sum
	}
	return o
}

// span picks the counter snapshots for a report that starts at recorded
// iteration from: the first snapshot at or after from, to the last one. If
// the only snapshot at or after from is the last, it starts at the last
// snapshot before from instead, so that the span holds at least one window.
func (r *runner) span(from int) counterSpan {
	if len(r.snaps) < 2 {
		return counterSpan{why: "fewer than two counter snapshots"}
	}
	li := len(r.snaps) - 1
	fi := -1
	for k := 0; k < li; k++ {
		if r.snaps[k].iter >= from {
			fi = k
			break
		}
	}
	if fi < 0 {
		fi = 0
		for k := 0; k < li; k++ {
			if r.snaps[k].iter < from {
				fi = k
			}
		}
	}
	first, last := &r.snaps[fi], &r.snaps[li]
	for _, s := range []*snapshot{first, last} {
		if s.err != nil {
			return counterSpan{why: s.err.Error()}
		}
	}
	f := r.foreignSpan(fi, li)
	c := counterSpan{
		ok:   true,
		from: first.iter, to: last.iter,
		first: first, last: last,
		wallNs: last.wallNs - first.wallNs,
		cpuNs:  last.cpuNs - first.cpuNs,
		userNs: last.userNs - first.userNs,
		sysNs:  last.sysNs - first.sysNs,
		nvcsw:  last.nvcsw - first.nvcsw, nivcsw: last.nivcsw - first.nivcsw,
		maxRSS:   last.maxRSSBytes,
		gcCycles: last.gcCycles - first.gcCycles,
		gcPause:  last.gcPauseNs - first.gcPauseNs,
		fi:       fi, li: li,
	}
	c.wallNs -= f.wallNs
	c.cpuNs -= f.cpuNs
	c.userNs -= f.userNs
	c.sysNs -= f.sysNs
	c.nvcsw -= f.nvcsw
	c.nivcsw -= f.nivcsw
	c.gcCycles -= f.gcCycles
	c.gcPause -= f.gcPause
	c.cost = r.cpuCost(fi, li)
	return c
}

// cpuCost is the arm's CPU time over the snapshots fi to li: the
// intervals between them, each with the harness's share and, in a
// sliced round, the threads' (internal/cpucost).
func (r *runner) cpuCost(fi, li int) cpucost.Cost {
	ivs := make([]cpucost.Interval, 0, li-fi)
	for k := fi + 1; k <= li; k++ {
		p, s := &r.snaps[k-1], &r.snaps[k]
		iv := cpucost.Interval{
			Process: s.cpuNs - p.cpuNs, User: s.userNs - p.userNs, Sys: s.sysNs - p.sysNs,
			Loop:    s.threadNs - p.threadNs,
			LoopOK:  p.tid != 0 && p.tid == s.tid && !r.loopOffStep,
			Harness: s.harnessNs - p.harnessNs, HarnessUser: s.harnessUserNs - p.harnessUserNs,
			Foreign: s.foreign,
		}
		if !s.foreign {
			iv.Steps = r.cpuSteps(s.iter - p.iter)
		}
		if r.sliced {
			iv.Own, iv.Others, iv.ThreadsOK = threadsBetween(r.openTIDs, r.otherTIDs, p.host, s.host)
		}
		ivs = append(ivs, iv)
	}
	return cpucost.Sum(ivs, r.overheadNs, r.sliced)
}

// cpuSteps is the number of steps that ran in an interval of iters
// recorded iterations: iters, unless the mode says otherwise (sessions
// run several steps an iteration).
func (r *runner) cpuSteps(iters int) int {
	if r.stepsOf != nil {
		return r.stepsOf(iters)
	}
	return iters
}

// roundUp2 rounds n > 0 up to two significant digits.
func roundUp2(n int) int {
	p := 1
	for n/p >= 100 {
		p *= 10
	}
	return (n + p - 1) / p * p
}

// gapStats starts the gap figures: the settings and what the waits used.
func (r *runner) gapStats() gapStats {
	cpu, wall := r.waiter.Usage()
	return gapStats{kind: r.s.gap.Kind, shape: r.s.gap.Shape, spin: r.waiter.Spin(),
		cpuNs: int64(cpu), wallNs: int64(wall), maxCPU: r.waiter.MaxCPU()}
}
