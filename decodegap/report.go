package decodegap

import (
	"fmt"

	"golang.org/x/perf/benchunit"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/steady"
	"github.com/gapbench/gapbench/hostmon"
)

// report is what one call of Run found, ready to publish.
type report struct {
	n      int // recorded iterations
	stride int // iterations per kept sample
	// st is the steady-state verdict on the kept samples.
	st steady.Result
	// from is the first recorded iteration the figures describe: the steady
	// start, or 0 when no steady state was found (the figures then describe
	// the whole transient).
	from int
	// reached is whether a steady state was observed.
	reached bool
	// requireSteady mirrors Config.RequireSteady.
	requireSteady bool
	// window is Config.Window in effect.
	window int

	// Step latency over the reported samples (ns).
	mean, p50, p90, p99 float64
	// Achieved gap over the reported samples (ns) and the requested mean.
	gapMean, gapP50, gapReq float64
	// stretched counts the counter snapshots that took longer than the mean
	// requested gap (so the gap they fell in ran long); stretchMax is the
	// longest such snapshot (ns).
	stretched  int
	stretchMax int64
	gapKind    GapKind
	gapShape   GapShape
	gapSpin    time.Duration

	// counters is the process counters over the span they cover.
	counters counterSpan

	// host is the contention over the counter span, when hostOK; hostWhy
	// says why it is unavailable otherwise. verdict screens it with screen.
	host    hostmon.Span
	hostOK  bool
	hostWhy string
	verdict hostmon.Verdict
	screen  Screen
	// census is the threads by phase and where the span's CPU went.
	census census
	// user is Config.Counters over the counter span.
	user []userSpan

	// sessions are each session's figures (Config.Sessions > 1); the
	// step figures above are then pooled over the sessions. throughput is
	// steps per second of the whole region; soloN the steps of the solo
	// census block.
	sessions   []sessionStats
	throughput float64
	soloN      int

	// null is whether a null instance ran (Config.Null); nullRatio is its
	// steady mean over the step's, nullSteady whether it reached a steady
	// state of its own.
	null       bool
	nullRatio  float64
	nullSteady bool
	nullReason string
	// nullHow is the null line's format, with one %.4f verb for the ratio;
	// empty means Run's in-process null instance.
	nullHow string

	// tracePaths are the trace (and picture) files written, if any.
	tracePaths []string

	// head lines go first in the log (Compare's order and verdicts).
	head []string

	// round and rounds place a Compare block: round round of rounds (0
	// outside Compare).
	round, rounds int
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
	wallNs      int64
	cpuNs       int64
	userNs      int64
	sysNs       int64
	nvcsw       int64
	nivcsw      int64
	maxRSS      int64
	gcCycles    uint64
	gcPause     float64
}

// iters returns the number of iterations the span covers.
func (c *counterSpan) iters() int { return c.to - c.from }

// analyze finds the steady window and computes the figures over it.
func (r *runner) analyze() *report {
	rec := r.rec
	rep := &report{
		n: rec.count, stride: rec.stride, window: r.window,
		requireSteady: r.cfg.RequireSteady,
		gapKind:       r.cfg.Gap.Kind, gapShape: r.cfg.Gap.Shape, gapSpin: r.waiter.Spin(),
	}
	var lat, gaps []int64
	if len(r.sessRecs) > 1 {
		lat, gaps = r.pooled(rep)
	} else {
		rep.st, rep.reached, rep.from, lat, gaps = steadyWindow(rec, r.window)
	}
	rep.mean, rep.p50, rep.p90, rep.p99 = summarize(lat)
	rep.gapMean, rep.gapP50, _, _ = summarize(gaps)
	if r.n > 0 {
		rep.gapReq = float64(r.requested) / float64(r.n)
	}
	if rep.gapReq > 0 {
		// The first and last snapshots fall outside the recorded gaps.
		for k := 1; k < len(r.snaps)-1; k++ {
			if c := r.snaps[k].costNs; float64(c) > rep.gapReq {
				rep.stretched++
				rep.stretchMax = max(rep.stretchMax, c)
			}
		}
	}
	spanFrom := rep.from
	if r.nullRec != nil {
		rep.null = true
		st, ok, _, nullLat, _ := steadyWindow(r.nullRec, r.window)
		rep.nullSteady, rep.nullReason = ok, st.Reason
		nullMean, _, _, _ := summarize(nullLat)
		rep.nullRatio = nullMean / rep.mean
		// The step's k-th iteration ran near iteration 2k of the whole run.
		spanFrom = 2 * rep.from
	}
	rep.counters = r.span(spanFrom)
	if rep.counters.ok && len(r.cfg.Counters) > 0 {
		rep.user = userSpans(r.cfg.Counters, rep.counters.first, rep.counters.last, rep.counters.iters())
	}
	rep.screen = r.cfg.Screen
	r.hostSpan(rep)
	if len(r.sessRecs) > 1 {
		if c := &rep.counters; c.ok && c.wallNs > 0 {
			rep.throughput = float64(len(r.sessRecs)*c.iters()) / (float64(c.wallNs) / 1e9)
		}
	}
	return rep
}

// pooled finds the steady window of every session, starts them all at the
// latest start, and returns the pooled latencies and gaps from there, with
// each session's p50 and p90 in rep.sessions. The series counts as steady
// only if every session's is.
func (r *runner) pooled(rep *report) (lat, gaps []int64) {
	rep.reached = true
	sts := make([]steady.Result, len(r.sessRecs))
	for i, rec := range r.sessRecs {
		st, ok, from, _, _ := steadyWindow(rec, r.window)
		sts[i] = st
		if !ok {
			rep.reached = false
		}
		if from > rep.from {
			rep.from = from
			rep.st = st
		}
	}
	if !rep.reached {
		rep.from = 0
		for i, st := range sts {
			if st.Class == steady.NoSteadyState {
				rep.st = st
				rep.st.Reason = fmt.Sprintf("session %d: %s", i+1, st.Reason)
				break
			}
		}
	} else if rep.from == 0 {
		rep.st = sts[0]
	}
	k0 := rep.from / r.sessRecs[0].stride
	rep.sessions = make([]sessionStats, len(r.sessRecs))
	for i, rec := range r.sessRecs {
		k := min(k0, len(rec.lat))
		_, p50, p90, _ := summarize(rec.lat[k:])
		rep.sessions[i] = sessionStats{p50: p50, p90: p90}
		lat = append(lat, rec.lat[k:]...)
		gaps = append(gaps, rec.gap[k:]...)
	}
	return lat, gaps
}

// steadyWindow runs the detector on rec and returns its result, whether a
// steady state was reached, the first iteration reported, and the kept
// latencies and gaps from there on (the whole record when not reached).
func steadyWindow(rec *record, window int) (st steady.Result, reached bool, from int, lat, gaps []int64) {
	st = steady.Detect(rec.lat, steady.Params{Window: window, Stride: rec.stride})
	k0 := 0
	if st.Class != steady.NoSteadyState && st.Start >= 0 {
		reached = true
		k0 = st.Start
	}
	return st, reached, k0 * rec.stride, rec.lat[k0:], rec.gap[k0:]
}

// hostSpan fills the contention figures, the screen's verdict and the
// thread census for the counter span.
func (r *runner) hostSpan(rep *report) {
	if r.host == nil {
		return
	}
	if r.host.sampler == nil {
		rep.hostWhy = r.host.why
		return
	}
	first, last := rep.counters.first, rep.counters.last
	if !rep.counters.ok || first.host == nil || last.host == nil {
		rep.hostWhy = "no host snapshots for the counter span"
		return
	}
	rep.host, rep.hostOK = hostmon.Between(first.host, last.host), true
	rep.verdict = rep.host.Screen(r.cfg.Screen.Thresholds)
	if len(r.sessRecs) > 1 {
		// Sessions take their census from session 1 alone (see sessions).
		rep.census, rep.soloN = r.soloCensus, r.soloCensus.solo
		return
	}
	rep.census = takeCensus(&r.phases, first.host.Tasks(), last.host.Tasks())
}

// summarize returns the mean and the 50th, 90th and 99th percentiles of xs
// (nearest rank). It sorts a copy; xs is left as it is.
func summarize(xs []int64) (mean, p50, p90, p99 float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		return float64(s[i])
	}
	return sum / float64(len(s)), q(0.50), q(0.90), q(0.99)
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
	return counterSpan{
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
	}
}

// publish reports the figures with b.ReportMetric, and, when log is set (the
// last call testing makes), the verdict and warnings with b.Log.
func (rep *report) publish(b reporter, log bool) {
	b.Helper()
	for _, m := range rep.metrics() {
		b.ReportMetric(m.value, reportUnit(m))
	}
	if !log {
		return
	}
	lines := rep.logLines()
	if len(lines) > 0 {
		b.Log(strings.Join(lines, "\n"))
	}
	if rep.hostOK && rep.verdict.Contended && rep.screen.FailContended {
		b.Fatalf("decodegap.Run: the host was contended and Config.Screen.FailContended is set: %s", strings.Join(rep.verdict.Reasons, "; "))
	}
	if !rep.reached && rep.requireSteady {
		b.Fatalf("decodegap.Run: steady state NOT REACHED and Config.RequireSteady is set: %s", rep.st.Reason)
	}
}

// reporter is the part of *testing.B that publish uses.
type reporter interface {
	Helper()
	ReportMetric(n float64, unit string)
	Log(args ...any)
	Fatalf(format string, args ...any)
}

var _ reporter = (*testing.B)(nil)

// metric is one value for b.ReportMetric.
type metric struct {
	value float64
	unit  string
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

// metrics lists the benchfmt metrics of the report; the package doc's table
// documents each unit.
func (rep *report) metrics() []metric {
	ms := []metric{
		{rep.mean, "ns/op"},
		{rep.p50, "p50-ns/op"},
		{rep.p90, "p90-ns/op"},
		{rep.p99, "p99-ns/op"},
		{rep.gapReq, "gap-req-ns/op"},
		{rep.gapMean, "gap-ns/op"},
		{rep.gapP50, "gap-p50-ns/op"},
	}
	if rep.null {
		ms = append(ms, metric{rep.nullRatio, "null-ratio"})
	}
	if len(rep.sessions) > 0 {
		ms = append(ms, metric{rep.throughput, "steps/s"})
		for i, s := range rep.sessions {
			ms = append(ms, metric{s.p50, fmt.Sprintf("s%d-p50-ns/op", i+1)}, metric{s.p90, fmt.Sprintf("s%d-p90-ns/op", i+1)})
		}
	}
	if rep.hostOK {
		h := &rep.host
		for _, f := range []struct {
			fig  hostmon.Figure
			unit string
			per  bool
		}{
			{h.ForeignBusyPct, "foreign-%", false},
			{h.SiblingBusyPct, "sibling-%", false},
			{h.StealPct, "steal-%", false},
			{h.PSISomePct, "psi-some-%", false},
			{h.Load1, "load1", false},
			{h.ProcessRunQueueWaitNs, "runq-ns/op", true},
		} {
			if !f.fig.Available() {
				continue
			}
			v := f.fig.Value
			if f.per {
				if rep.counters.iters() == 0 {
					continue
				}
				v /= float64(rep.counters.iters())
			}
			ms = append(ms, metric{v, f.unit})
		}
		if rep.census.ok {
			ms = append(ms, metric{float64(rep.census.threads()), "threads"})
		}
	}
	for _, u := range rep.user {
		if u.err == "" && rep.counters.iters() > 0 {
			ms = append(ms, metric{u.delta / float64(rep.counters.iters()), u.name + "/op"})
		}
	}
	c := &rep.counters
	if c.ok && c.iters() > 0 && c.wallNs > 0 {
		n := float64(c.iters())
		ms = append(ms,
			metric{float64(c.cpuNs) / float64(c.wallNs), "cpu/wall"},
			metric{float64(c.userNs) / n, "user-ns/op"},
			metric{float64(c.sysNs) / n, "sys-ns/op"},
			metric{float64(c.nvcsw) / n, "vcsw/op"},
			metric{float64(c.nivcsw) / n, "ivcsw/op"},
			metric{float64(c.maxRSS), "peak-RSS-B"},
			metric{c.gcPause / n, "gc-pause-ns/op"},
		)
	}
	return ms
}

// logLines returns the lines Run logs, at most eight.
func (rep *report) logLines() []string {
	ls := append([]string(nil), rep.head...)
	if rep.rounds > 0 {
		ls = append(ls, fmt.Sprintf("round %d of %d (decodegap.Compare: the order and the verdicts head the last arm's last log)", rep.round, rep.rounds))
	}
	ls = append(ls, rep.steadyLine())
	ls = append(ls, fmt.Sprintf("step: mean %s, p50 %s, p90 %s, p99 %s over %d iterations%s",
		fmtNs(rep.mean), fmtNs(rep.p50), fmtNs(rep.p90), fmtNs(rep.p99), rep.n-rep.from, rep.strideNote()))
	if g := rep.gapLine(); g != "" {
		ls = append(ls, g)
	}
	if rep.null {
		ls = append(ls, rep.nullLine())
	}
	if l := rep.sessionsLine(); l != "" {
		ls = append(ls, l)
	}
	ls = append(ls, rep.counterLines()...)
	if l := userLine(rep.user, rep.counters.iters()); l != "" {
		ls = append(ls, l)
	}
	if l := rep.hostLine(); l != "" {
		ls = append(ls, l)
	}
	if rep.hostOK {
		ls = append(ls, rep.census.lines()...)
	}
	if len(rep.tracePaths) > 0 {
		ls = append(ls, "trace: "+strings.Join(rep.tracePaths, ", "))
	}
	return ls
}

// steadyLine states the steady-state verdict.
func (rep *report) steadyLine() string {
	if !rep.reached {
		s := "steady state: NOT REACHED (series never settled): " + rep.st.Reason
		if rep.st.Suggest > 0 && !strings.Contains(rep.st.Reason, "-benchtime") {
			s += fmt.Sprintf("; raise -benchtime to at least %dx", rep.st.Suggest)
		}
		return s + "; every figure below describes the transient, not a steady state"
	}
	switch rep.st.Class {
	case steady.Flat:
		if rep.from > 0 {
			return fmt.Sprintf("steady state: flat from iteration %d of %d, the first %d left out (%s)", rep.from, rep.n, rep.from, rep.st.Reason)
		}
		return fmt.Sprintf("steady state: flat from the first iteration (%d iterations, windows of %d)", rep.n, rep.window)
	default:
		return fmt.Sprintf("steady state: %s; steady from iteration %d of %d, the first %d left out (%s)",
			rep.st.Class, rep.from, rep.n, rep.from, rep.st.Reason)
	}
}

// nullLine reports the null instance's ratio, and warns when the null
// instance never settled (its ratio then compares a transient).
func (rep *report) nullLine() string {
	how := rep.nullHow
	if how == "" {
		how = "null: a second instance (Config.Null) ran alternate windows; its steady mean / this one's = %.4f"
	}
	s := fmt.Sprintf(how, rep.nullRatio)
	if !rep.nullSteady {
		s += "; the null instance reached no steady state (" + rep.nullReason + "), so the ratio compares transients"
	}
	return s
}

// strideNote says when percentiles come from a thinned record.
func (rep *report) strideNote() string {
	if rep.stride == 1 {
		return ""
	}
	return fmt.Sprintf(" (percentiles from every %dth iteration: b.N exceeds %d)", rep.stride, maxSamples)
}

// gapLine reports the achieved gap beside the requested one, and says by
// how much it missed when it missed by more than 2 µs and 2%.
func (rep *report) gapLine() string {
	if rep.gapReq == 0 {
		return ""
	}
	s := fmt.Sprintf("gap: requested mean %s (%v, %v), achieved mean %s, p50 %s",
		fmtNs(rep.gapReq), rep.gapKind, rep.gapShape, fmtNs(rep.gapMean), fmtNs(rep.gapP50))
	// The median says whether the gap engine is on time; the mean, whether
	// the tail (preemption, a slow boundary) stretched some gaps.
	const slackNs, slackFrac = 2000, 0.02
	overP50 := rep.gapP50 - rep.gapReq
	overMean := rep.gapMean - rep.gapReq
	switch {
	case len(rep.sessions) > 0 && overP50 > slackNs && overP50 > slackFrac*rep.gapReq:
		s += fmt.Sprintf("; the median gap is %s longer than requested: with Config.Sessions it runs from the end of a round to each session's start, so it includes waking the sessions' threads", fmtNs(overP50))
	case rep.gapShape == GapConstant && overP50 > slackNs && overP50 > slackFrac*rep.gapReq:
		s += fmt.Sprintf("; the median gap is %s (%.0f%%) longer than requested", fmtNs(overP50), 100*overP50/rep.gapReq)
		switch rep.gapKind {
		case GapSleep:
			s += ": that is the kernel's wake-up latency; use Config.Gap.Kind = GapHybrid to start steps on time"
		case GapHybrid:
			s += fmt.Sprintf(": raise Config.Gap.Spin above %v, or use GapBusy", rep.gapSpin)
		default:
			s += ": the busy wait itself was late, so the host delayed the loop"
		}
	case overMean > slackNs && overMean > slackFrac*rep.gapReq:
		s += fmt.Sprintf("; the mean gap is %s (%.0f%%) longer than requested though the median is on time: some gaps were stretched (preemption or a busy host)", fmtNs(overMean), 100*overMean/rep.gapReq)
	}
	if rep.stretched > 0 {
		s += fmt.Sprintf("; %d counter %s (at most 1%% of the run, up to %s each) took longer than the gap and stretched %s",
			rep.stretched, plural(rep.stretched, "snapshot", "snapshots"), fmtNs(float64(rep.stretchMax)), plural(rep.stretched, "it", "those gaps"))
	}
	return s
}

// hostLine reports the contention over the counter span and the screen's
// verdict.
func (rep *report) hostLine() string {
	if !rep.hostOK {
		if rep.hostWhy == "" {
			return ""
		}
		return "host: contention figures unavailable (" + rep.hostWhy + ")"
	}
	h := &rep.host
	where := "CPUs " + h.CPUs.String()
	s := fmt.Sprintf("host: %s over the counter span on %s: foreign %s, sibling %s, steal %s, PSI some %s, load1 %s, our run-queue wait %s",
		rep.verdict, where, h.ForeignBusyPct, h.SiblingBusyPct, h.StealPct, h.PSISomePct, h.Load1, perOp(h.ProcessRunQueueWaitNs, rep.counters.iters()))
	if rep.verdict.Contended && !rep.screen.FailContended {
		s += "; figures measured in this weather are not comparable with a clean run's (Config.Screen.FailContended fails instead)"
	}
	return s
}

// perOp prints a nanosecond figure per op, or why it is unavailable.
func perOp(f hostmon.Figure, n int) string {
	if !f.Available() || n == 0 {
		return f.String()
	}
	return fmtNs(f.Value/float64(n)) + "/op"
}

// counterLines reports the process counters and says which span they
// cover, in one line.
func (rep *report) counterLines() []string {
	c := &rep.counters
	if !c.ok {
		return []string{"process counters: unavailable (" + c.why + ")"}
	}
	n := float64(c.iters())
	var ls []string
	ls = append(ls, fmt.Sprintf("process: cpu/wall %.2f (user %s/op, sys %s/op); context switches %s voluntary, %s involuntary; peak RSS %s; GC %d cycles",
		float64(c.cpuNs)/float64(c.wallNs), fmtNs(float64(c.userNs)/n), fmtNs(float64(c.sysNs)/n),
		rep.switchFigure(c.nvcsw), rep.switchFigure(c.nivcsw), fmtBytes(c.maxRSS), c.gcCycles))
	if c.from != rep.from && len(rep.sessions) > 0 {
		ls = append(ls, fmt.Sprintf("counters cover the whole concurrent region, rounds %d-%d (Run takes no snapshots inside it), the figures above %d-%d", c.from, c.to, rep.from, rep.n))
	} else if c.from != rep.from {
		if c.from < rep.from {
			ls = append(ls, fmt.Sprintf("counters include warm-up: they cover iterations %d-%d, %d before the steady start at %d (no snapshot landed inside the steady window); raise -benchtime or lower Config.Window",
				c.from, c.to, rep.from-c.from, rep.from))
		} else {
			ls = append(ls, fmt.Sprintf("counters cover iterations %d-%d (%d), the figures above %d-%d (%d): snapshots are taken at window boundaries at most every 100x their own cost",
				c.from, c.to, c.iters(), rep.from, rep.n, rep.n-rep.from))
		}
	}
	// One line: testing keeps ten lines of a benchmark's log in all.
	return []string{strings.Join(ls, "; ")}
}

// switchFigure prints a context-switch count per op, and for a zero says
// which zero it is: getrusage returns every counter at once, so a zero
// beside CPU times that moved is a true zero.
func (rep *report) switchFigure(v int64) string {
	c := &rep.counters
	if v != 0 {
		return fmt.Sprintf("%.3g/op", float64(v)/float64(c.iters()))
	}
	if c.userNs+c.sysNs > 0 {
		return fmt.Sprintf("0/op (a true zero: getrusage's CPU times moved %s in the same span)", fmtNs(float64(c.userNs+c.sysNs)))
	}
	return "0/op (a dead instrument? getrusage's CPU times did not move either)"
}

// fmtNs prints nanoseconds as a duration with three significant digits.
func fmtNs(ns float64) string {
	if math.IsNaN(ns) {
		return "n/a"
	}
	a := math.Abs(ns)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.3gs", ns/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gms", ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3gµs", ns/1e3)
	}
	return fmt.Sprintf("%.3gns", ns)
}

// fmtBytes prints a byte count in binary units.
func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3gGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3gMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.3gKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
