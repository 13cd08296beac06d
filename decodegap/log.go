package decodegap

import (
	"fmt"
	"github.com/gapbench/gapbench/decodegap/internal/cpucost"
	"github.com/gapbench/gapbench/decodegap/internal/modes"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/slo"
	"github.com/gapbench/gapbench/decodegap/internal/steady"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/hostwords"
	"github.com/gapbench/gapbench/internal/trace"
)

// This file is the one place that writes the words a person reads about a
// result: the log of Run and of Compare's blocks.

// reporter is the part of *testing.B that publish uses.
type reporter interface {
	Helper()
	ReportMetric(n float64, unit string)
	Log(args ...any)
	Fatalf(format string, args ...any)
}

var _ reporter = (*testing.B)(nil)

// publish reports res's metrics and, when log is set (the last call testing
// makes), its log lines; then fails the benchmark when s asks for it.
func publish(b reporter, s *settings, res *result, log bool) {
	b.Helper()
	for _, m := range res.metrics() {
		m.value = reportValue(m.value)
		b.ReportMetric(m.value, reportUnit(m))
	}
	if !log {
		return
	}
	if lines := res.logLines(s); len(lines) > 0 {
		b.Log(strings.Join(lines, "\n"))
	}
	if res.host.ok && res.host.verdict.Contended && s.screen.FailContended {
		b.Fatalf("%s: the host was contended and %s.Screen.FailContended is set: %s", s.fn, s.typ, strings.Join(hostwords.Reasons(res.host.verdict), "; "))
	}
	if !res.reached && s.requireSteady {
		b.Fatalf("%s: steady state NOT REACHED and %s.RequireSteady is set: %s", s.fn, s.typ, steadyReason(res, s.typ))
	}
}

// logLines returns the log, at most nine lines: testing keeps ten.
func (res *result) logLines(s *settings) []string {
	var ls []string
	if res.rounds > 0 {
		ls = append(ls, fmt.Sprintf("round %d of %d at GOMAXPROCS %d (decodegap.Compare: the order and the verdicts follow the last arm's lines)", res.round, res.rounds, res.procs))
	}
	ls = append(ls, res.steadyLine(s.typ))
	ls = append(ls, fmt.Sprintf("step: mean %s, p50 %s, %s over %d iterations%s%s%s%s",
		fmtNs(res.lat.mean), fmtNs(res.lat.p50), res.tails.words(res.lat), res.n-res.from, res.strideNote(), res.modesNote(), res.outlierNote(), res.stallNote(s.typ)))
	if res.open.on {
		ls = append(ls, res.open.line())
	}
	if res.slo.on {
		ls = append(ls, res.slo.line())
	}
	if g := res.gapLine(s.typ); g != "" {
		ls = append(ls, g)
	}
	if res.null.on {
		ls = append(ls, res.nullLine())
	}
	if l := res.sessionsLine(); l != "" {
		ls = append(ls, l)
	}
	ls = append(ls, res.counterLine(s.typ))
	if l := userLine(res.user, res.proc.iters()); l != "" {
		ls = append(ls, l)
	}
	if l := res.hostLine(s); l != "" {
		ls = append(ls, l)
	}
	if res.host.ok {
		ls = append(ls, res.census.lines()...)
	}
	switch {
	case res.traceErr != nil:
		ls = append(ls, fmt.Sprintf("trace: NOT WRITTEN (%s.Trace or $%s): %v; the figures above stand", s.typ, trace.EnvDir, res.traceErr))
	case len(res.tracePaths) > 0:
		ls = append(ls, "trace: "+strings.Join(res.tracePaths, ", ")+" (draw with: decodegap plot DIR)")
	}
	return ls
}

// steadyReason is the detector's finding in words, from its fields; typ
// names the config whose Window applies.
func steadyReason(res *result, typ string) string {
	st := &res.st
	it := func(sample int) int { return sample * res.stride }
	var s string
	switch st.Reason {
	case steady.InvalidParams:
		s = st.Err.Error()
	case steady.TooShort:
		s = fmt.Sprintf("%d iterations make %d whole %s of %d (%s.Window); at least 2 are needed", res.n, st.Windows, plural(st.Windows, "window", "windows"), res.window, typ)
	case steady.TooLong:
		s = fmt.Sprintf("the record holds more than %d samples", steady.MaxSamples)
	case steady.StillChanging:
		last := st.Levels[len(st.Levels)-1].Median
		what := fmt.Sprintf("its median stayed at %s but its distribution changed", fmtNs(last))
		if !st.SameMedian {
			a, b := fmtPair(st.Ref.Median, last)
			what = "median " + a + " → " + b
		}
		changed := "level still changing"
		if k := len(st.Changepoints); k > 1 {
			changed = fmt.Sprintf("level changed %d times, still", k)
		}
		s = fmt.Sprintf("%s in the last %d of %d windows (%s; a steady window needs at least %d windows)", changed, st.TailWindows, st.Windows, what, st.MinTail)
	case steady.Drifting:
		what := "by less than 1 ppm, yet significantly"
		if a, b := fmtPair(st.DriftFrom, st.DriftTo); a != b {
			what = "from about " + a + " to " + b
		}
		s = fmt.Sprintf("level still drifting in the last %d of %d windows (%s)", st.TailWindows, st.Windows, what)
	case steady.OneLevel:
		s = fmt.Sprintf("one level over all %d windows (median %s)", st.Windows, fmtNs(st.Levels[0].Median))
	case steady.WithinMargin:
		s = fmt.Sprintf("all %d levels within %s of the steady one (median %s)", len(st.Levels), fmtNs(st.Margin), fmtNs(st.Levels[len(st.Levels)-1].Median))
	case steady.Faster, steady.Slower:
		word := "faster"
		if st.Reason == steady.Slower {
			word = "slower"
		}
		a, b := fmtPair(st.Ref.Median, st.Levels[len(st.Levels)-1].Median)
		s = fmt.Sprintf("median %s in iterations %d–%d, %s at %s", a, it(st.Ref.Start), it(st.Ref.End)-1, word, b)
	}
	if st.ShortTail {
		s += fmt.Sprintf("; the steady window holds only %d %s (fewer than %d)", st.TailWindows, plural(st.TailWindows, "window", "windows"), steady.ShortTailWindows)
	}
	if st.Suggest > 0 {
		s += fmt.Sprintf("; run with -benchtime=%dx", st.Suggest)
	}
	return s
}

// steadyLine states the steady-state verdict, and says when it leaves out
// more than half the run.
func (res *result) steadyLine(typ string) string {
	why := steadyReason(res, typ)
	if !res.reached {
		return "steady state: NOT REACHED (series never settled): " + why + "; every figure below describes the transient, not a steady state"
	}
	var s string
	if res.from == 0 {
		s = fmt.Sprintf("steady state: %s from the first iteration (%d iterations, windows of %d; %s)", res.st.Class, res.n, res.window, why)
	} else {
		s = fmt.Sprintf("steady state: %s; steady from iteration %d of %d, the first %d left out (%s)", res.st.Class, res.from, res.n, res.from, why)
	}
	if res.rerunN > 0 {
		s += fmt.Sprintf("; the steady window is %d of %d iterations, less than half the run: -benchtime=%dx would give a steady window of %d", res.n-res.from, res.n, res.rerunN, res.n)
	}
	return s
}

// outlierNote mentions outliers, and says when they dominate the mean.
// modesNote says when the steps have two or more modes, "" otherwise.
func (res *result) modesNote() string {
	if !(res.mvalue >= modes.Multimodal) {
		return ""
	}
	return fmt.Sprintf("; two or more modes (mvalue %.2f, ≥ %.1f): the mean and the median can sit between them, p90 and max-ns/op show the upper one", res.mvalue, modes.Multimodal)
}

func (res *result) outlierNote() string {
	o := res.out
	if o.count == 0 {
		return ""
	}
	s := fmt.Sprintf("; %d %s at least %d× the median (largest %s, %.3g× p50) make %.1f%% of the mean", o.count, plural(o.count, "step", "steps"),
		outlierFactor, fmtNs(o.largest), o.largest/res.lat.p50, 100*o.share)
	if o.dominated() {
		s += ": the mean (ns/op) is dominated by them; read p50-ns/op for the typical step"
	}
	return s
}

// nullLine reports the null instance's ratio, and warns when it did not
// settle (the ratio then compares transients).
func (res *result) nullLine() string {
	n := &res.null
	var s string
	if n.of == "" {
		s = fmt.Sprintf("null: a second instance (RunConfig.Null) ran alternate windows; its steady mean / this one's = %.4f", n.ratio)
		if !n.steady {
			s += "; the null instance reached no steady state (" + n.st.Reason.String() + "), so the ratio compares transients"
		}
		return s
	}
	s = fmt.Sprintf("null: this arm is a second instance of %q measured in the same round; its mean / %q's = %.4f", n.of, n.of, n.ratio)
	if !n.steady {
		s += fmt.Sprintf("; this arm or %q did not settle, so the ratio compares transients", n.of)
	}
	return s
}

// strideNote says when percentiles come from a thinned record.
func (res *result) strideNote() string {
	if res.stride == 1 {
		return ""
	}
	return fmt.Sprintf(" (percentiles from every %dth iteration: b.N exceeds %d)", res.stride, maxSamples)
}

// gapLine reports the achieved gap beside the requested one, and says by
// how much it missed when it missed by more than 2 µs and 2%.
func (res *result) gapLine(typ string) string {
	g := &res.gap
	if g.req == 0 {
		return ""
	}
	s := fmt.Sprintf("gap: requested mean %s (%v, %v), achieved mean %s, p50 %s", fmtNs(g.req), g.kind, g.shape, fmtNs(g.mean), fmtNs(g.p50))
	// The median says whether the gap engine is on time; the mean, whether
	// the tail (preemption, a slow boundary) stretched some gaps.
	const slackNs, slackFrac = 2000, 0.02
	overP50, overMean := g.p50-g.req, g.mean-g.req
	switch {
	case len(res.sessions) > 0 && overP50 > slackNs && overP50 > slackFrac*g.req:
		s += fmt.Sprintf("; the median gap is %s longer than requested: with RunConfig.Sessions it runs from the end of a round to each session's start, so it includes waking the sessions' threads", fmtNs(overP50))
	case g.shape == GapConstant && overP50 > slackNs && overP50 > slackFrac*g.req:
		s += fmt.Sprintf("; the median gap is %s (%.0f%%) longer than requested", fmtNs(overP50), 100*overP50/g.req)
		switch g.kind {
		case GapSleep:
			s += fmt.Sprintf(": that is the kernel's wake-up latency; use %s.Gap.Kind = GapHybrid to start steps on time", typ)
		case GapHybrid:
			s += fmt.Sprintf(": raise %s.Gap.MaxCPU above %g (the CPU ceiling that chose a %v spin), or %s.Gap.Spin above %v, or use GapBusy",
				typ, g.maxCPU, g.spin, typ, g.spin)
		default:
			s += ": the busy wait itself was late, so the host delayed the loop"
		}
	case overMean > slackNs && overMean > slackFrac*g.req:
		s += fmt.Sprintf("; the mean gap is %s (%.0f%%) longer than requested though the median is on time: some gaps were stretched (preemption or a busy host)", fmtNs(overMean), 100*overMean/g.req)
	}
	if g.stretched > 0 {
		s += fmt.Sprintf("; %d counter %s (at most 1%% of the run, up to %s each) took longer than the gap and stretched %s",
			g.stretched, plural(g.stretched, "snapshot", "snapshots"), fmtNs(float64(g.stretchMax)), plural(g.stretched, "it", "those gaps"))
	}
	return s
}

// hostLine reports the contention over the counter span and the screen's
// verdict. A figure the screen could not read is named once, in the
// screen's own note. The process's own run-queue wait is not the host's:
// it is in the process line (counterLine), never beside the screen's.
func (res *result) hostLine(s *settings) string {
	h := &res.host
	if !h.ok {
		if h.why == "" {
			return ""
		}
		return "host: contention figures unavailable (" + h.why + ")"
	}
	sp := &h.span
	var figs []string
	for _, f := range []struct {
		name string
		fig  hostmon.Figure
	}{{"foreign", sp.ForeignBusyPct}, {"sibling", sp.SiblingBusyPct}, {"steal", sp.StealPct}, {"PSI some", sp.PSISomePct}, {"load1", sp.Load1}} {
		if f.fig.Available() {
			figs = append(figs, f.name+" "+fmtFigure(f.fig))
		}
	}
	l := fmt.Sprintf("host: %s over the counter span on CPUs %s", hostwords.Verdict(h.verdict), sp.CPUs.String())
	if len(figs) > 0 {
		l += ": " + strings.Join(figs, ", ")
	}
	if h.verdict.Contended && !s.screen.FailContended {
		l += fmt.Sprintf("; figures measured in this weather are not comparable with a clean run's (%s.Screen.FailContended fails instead)", s.typ)
	}
	return l
}

// fmtFigure prints a contention figure with at most three significant
// digits, and a near-zero as 0.
func fmtFigure(f hostmon.Figure) string {
	v := reportValue(f.Value)
	if math.Abs(v) < 0.001 {
		v = 0
	}
	s := fmt.Sprintf("%.3g", v)
	if f.Unit == "%" {
		s += "%"
	}
	return s
}

// counterLine reports the process counters and which span they cover, in
// one line.
func (res *result) counterLine(typ string) string {
	c := &res.proc
	if !c.ok {
		return "process counters: unavailable (" + c.why + ")"
	}
	n := float64(c.iters())
	s := "process: " + cpuFigures(c) + fmt.Sprintf("; context switches %s voluntary, %s involuntary; peak RSS %s; GC %d cycles",
		switchFigure(c, c.nvcsw), switchFigure(c, c.nivcsw), fmtBytes(c.maxRSS), c.gcCycles)
	if w := res.host.span.ProcessRunQueueWaitNs; res.host.ok && w.Available() && c.iters() > 0 {
		s += fmt.Sprintf("; its threads waited %s/op on a run queue", fmtNs(w.Value/n))
	}
	switch {
	case c.from == res.from:
	case len(res.sessions) > 0:
		s += fmt.Sprintf("; counters cover the whole concurrent region, rounds %d-%d (Run takes no snapshots inside it), the figures above %d-%d", c.from, c.to, res.from, res.n)
	case c.from < res.from:
		s += fmt.Sprintf("; counters include warm-up: they cover iterations %d-%d, %d before the steady start at %d (no snapshot landed inside the steady window); raise -benchtime or lower %s.Window",
			c.from, c.to, res.from-c.from, res.from, typ)
	default:
		s += fmt.Sprintf("; counters cover iterations %d-%d (%d), the figures above %d-%d (%d): snapshots are taken at window boundaries at most every 100x their own cost",
			c.from, c.to, c.iters(), res.from, res.n, res.n-res.from)
	}
	return s
}

// cpuFigures reports cpu-ns/op with its split and what was left out, or
// which part could not be read.
func cpuFigures(c *counterSpan) string {
	cpu, ok := c.stepCPUNs()
	if !ok {
		return "cpu-ns/op unavailable: " + cpuWhy(c.cost.Why)
	}
	user, sys, _ := c.userSysPerStep()
	s := fmt.Sprintf("cpu %s/op (user %s, sys %s; cpu/wall %.2f)", fmtNs(cpu), fmtNs(user), fmtNs(sys), c.cpuPerWall())
	if c.cost.Process > 0 {
		s += fmt.Sprintf(", the process's %s/op less the harness's %s/op (gaps, snapshots, the loop's bookkeeping)",
			fmtNs(c.cost.Process/float64(c.cost.Steps)), fmtNs(c.cost.Harness/float64(c.cost.Steps)))
	}
	return s
}

// cpuWhy says why cpu-ns/op is unavailable.
func cpuWhy(why cpucost.Reason) string {
	switch why {
	case cpucost.NoSteps:
		return "the counter span holds no recorded step"
	case cpucost.NoThreadList:
		return "in turns (CompareConfig.Slice) the other arms' threads are left out by their own clocks in /proc/self/task, which could not be read; set CompareConfig.Slice to decodegap.SliceWhole for whole blocks"
	case cpucost.Negative:
		return "the harness's own CPU time (gaps, snapshots) read more than the process spent: a CPU clock on this host is wrong"
	}
	return "the process's CPU clock could not be read"
}

// switchFigure prints a context-switch count per op, and for a zero says
// which zero it is: getrusage returns every counter at once, so a zero
// beside CPU times that moved is a true zero.
func switchFigure(c *counterSpan, v int64) string {
	if v != 0 {
		return fmt.Sprintf("%.3g/op", float64(v)/float64(c.iters()))
	}
	if c.userNs+c.sysNs > 0 {
		return fmt.Sprintf("0/op (a true zero: getrusage's CPU times moved %s in the same span)", fmtNs(float64(c.userNs+c.sysNs)))
	}
	return "0/op (a dead instrument? getrusage's CPU times did not move either)"
}

// fmtNs prints nanoseconds as a duration with three significant digits.
func fmtNs(ns float64) string { return durfmt.Ns(ns) }

// fmtPair prints two durations with as many digits (3 to 6) as it takes for
// different values to read differently.
func fmtPair(a, b float64) (string, string) {
	for sig := 3; sig < 6; sig++ {
		if sa, sb := durfmt.NsDigits(a, sig), durfmt.NsDigits(b, sig); sa != sb {
			return sa, sb
		}
	}
	return durfmt.NsDigits(a, 6), durfmt.NsDigits(b, 6)
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

// words writes the bounded tails: each percentile with its 95% bounds, or,
// when too few steps were recorded to bound it, the count that would. A
// result with no samples behind it (tails never computed) gives lat's p90
// and p99 as they are.
func (t *tails) words(lat latency) string {
	if t[0].Q == 0 {
		return fmt.Sprintf("p90 %s, p99 %s", fmtNs(lat.p90), fmtNs(lat.p99))
	}
	var parts, unknown []string
	for i, e := range t {
		name := pctName(tailQuantiles[i])
		if !e.Known {
			unknown = append(unknown, fmt.Sprintf("%s needs ≥ %d", name, e.Need))
			continue
		}
		lo, hi := fmtPair(e.Lo, e.Hi)
		parts = append(parts, fmt.Sprintf("%s %s (%.0f%%: %s–%s)", name, fmtNs(e.Value), 100*e.Confidence, lo, hi))
	}
	if len(unknown) > 0 {
		n := 0
		if len(t) > 0 {
			n = t[0].N
		}
		parts = append(parts, fmt.Sprintf("no bound from %d steps: %s (raise -benchtime)", n, strings.Join(unknown, ", ")))
	}
	return strings.Join(parts, ", ")
}

// pctName names quantile q as a percentile: 0.9 → "p90", 0.999 → "p99.9".
func pctName(q float64) string {
	return "p" + strconv.FormatFloat(100*q, 'f', -1, 64)
}

// line reports the open loop's response times and queue, and says when the
// queue grew through the window (the arrival rate is above what the step
// sustains).
func (o *openResult) line() string {
	s := fmt.Sprintf("open loop: response (arrival to end) mean %s, p50 %s, %s; late start mean %s; queue mean %.2f, max %d",
		fmtNs(o.resp.mean), fmtNs(o.resp.p50), o.respTail.words(o.resp), fmtNs(o.lateMean), o.queueMean, o.queueMax)
	switch o.overload {
	case OverloadQueueGrew:
		s += fmt.Sprintf("; OVERLOADED: median lateness grew from %s (first half) to %s (last tenth), so the arrivals outpace the step: raise RunConfig.Gap.Mean", fmtNs(o.lateFirst), fmtNs(o.lateLast))
	case OverloadQueueLimit:
		s += fmt.Sprintf("; OVERLOADED: the queue reached %d arrivals (decodegap.MaxQueue), so the arrivals come far faster than the step serves them; the rest ran back to back: raise RunConfig.Gap.Mean", MaxQueue)
	}
	return s
}

// line reports the objective's verdict with the bound it rests on, or, when
// too few steps were recorded for a bound, the count a pass needs.
func (o *sloResult) line() string {
	name, from := pctName(o.obj.Q), o.from
	if from == "" {
		from = "RunConfig.SLO"
	}
	head := fmt.Sprintf("SLO %s %s ≤ %s (%s, %.0f%% bound over %d steps): %s", o.of, name, fmtNs(o.obj.Limit), from, 100*o.obj.Confidence, o.j.N, o.j.Verdict)
	if o.overloaded {
		return head + ": the queue grew through the run (OVERLOADED above), so the arrivals outpace the step whatever this run's bound says"
	}
	switch o.j.Verdict {
	case tail.Pass:
		return head + fmt.Sprintf(": the upper bound %s is within the limit", fmtNs(o.j.Upper))
	case tail.Fail:
		return head + fmt.Sprintf(": the lower bound %s is over the limit", fmtNs(o.j.Lower))
	}
	if o.j.N < o.j.NeedPass {
		return head + fmt.Sprintf(": %d steps bound no %s; a pass needs ≥ %d (raise -benchtime)", o.j.N, name, o.j.NeedPass)
	}
	return head + fmt.Sprintf(": the bounds %s–%s straddle the limit (more steps narrow them: raise -benchtime)", fmtNs(o.j.Lower), fmtNs(o.j.Upper))
}

// writeSearch prints SearchRate's search of benchmark bench, indented as
// Compare's summary is (benchfmt skips indented lines).
func writeSearch(w io.Writer, bench string, o SLO, r slo.Result, pl probeLength) {
	obj := o.objective()
	fmt.Fprintf(w, "    --- decodegap.SearchRate: %s: response %s ≤ %s at %.0f%% confidence\n", bench, pctName(obj.Q), fmtNs(obj.Limit), 100*obj.Confidence)
	switch {
	case r.Stopped == slo.ServiceMisses:
		fmt.Fprintf(w, "    stopped at %s/s: the service time alone misses the objective (its %s's lower bound %s is over %s, %d steps), so no arrival rate can meet it: make the step faster or raise RunConfig.SLO.Limit\n",
			fmtRate(r.StopRate), pctName(obj.Q), fmtNs(pl.service.Lower), fmtNs(obj.Limit), pl.service.N)
	case r.Stopped == slo.ProbeTooLong && pl.n == 0:
		fmt.Fprintf(w, "    stopped before %s/s: -benchtime=%v is over Rates.ProbeTime (%v): raise Rates.ProbeTime or lower -benchtime\n",
			fmtRate(r.StopRate), pl.need, pl.limit)
	case r.Stopped == slo.ProbeTooLong:
		fmt.Fprintf(w, "    stopped before %s/s: its %d steps would take %v, over Rates.ProbeTime (%v): raise Rates.ProbeTime or lower -benchtime\n",
			fmtRate(r.StopRate), pl.n, pl.need.Round(time.Millisecond), pl.limit)
	}
	switch {
	case r.Rate == 0 && r.Stopped != slo.NotStopped: // the stop line says why
	case r.Rate == 0:
		fmt.Fprintf(w, "    no probed rate passed (lowest probed %s/s): lower Rates.Start\n", fmtRate(r.Ceiling))
	case r.Capped:
		fmt.Fprintf(w, "    the cap passed: %s/s (Rates.Max); raise it to search above\n", fmtRate(r.Rate))
	case math.IsInf(r.Ceiling, 1):
		fmt.Fprintf(w, "    highest rate that passed: %s/s; no rate above it was probed\n", fmtRate(r.Rate))
	default:
		fmt.Fprintf(w, "    highest rate that passed: %s/s; lowest that did not: %s/s (%.1f%% apart)\n", fmtRate(r.Rate), fmtRate(r.Ceiling), 100*(r.Ceiling/r.Rate-1))
	}
	if r.Exhausted && r.Rate > 0 {
		fmt.Fprintf(w, "    Rates.MaxProbes ran out before the bracket closed to Rates.Tolerance\n")
	}
	if r.Undecided > 0 {
		fmt.Fprintf(w, "    %d %s undecided (the bound straddled the limit, or too few steps bound it: raise -benchtime); counted as not passing\n",
			r.Undecided, plural(r.Undecided, "probe was", "probes were"))
	}
	for _, s := range r.Steps {
		j := s.Judgement
		switch j.Verdict {
		case tail.Pass:
			fmt.Fprintf(w, "    %s/s: pass (upper bound %s, %d steps)\n", fmtRate(s.Rate), fmtNs(j.Upper), j.N)
		case tail.Fail:
			fmt.Fprintf(w, "    %s/s: fail (lower bound %s, %d steps)\n", fmtRate(s.Rate), fmtNs(j.Lower), j.N)
		default:
			if j.N < j.NeedPass {
				fmt.Fprintf(w, "    %s/s: undecided (%d steps; a pass needs ≥ %d)\n", fmtRate(s.Rate), j.N, j.NeedPass)
				continue
			}
			fmt.Fprintf(w, "    %s/s: undecided (bounds %s–%s straddle the limit, %d steps)\n", fmtRate(s.Rate), fmtNs(j.Lower), fmtNs(j.Upper), j.N)
		}
	}
}

// fmtRate writes an arrival rate with four significant digits, never in
// exponent form: 20000, 3125, 3.906.
func fmtRate(r float64) string {
	if r >= 1e4 {
		return strconv.FormatFloat(math.Round(r), 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', 4, 64)
}
