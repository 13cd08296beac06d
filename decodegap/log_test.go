package decodegap

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/gapbench/gapbench/decodegap/internal/cpucost"
	"github.com/gapbench/gapbench/decodegap/internal/modes"
	"github.com/gapbench/gapbench/decodegap/internal/steady"
	"github.com/gapbench/gapbench/hostmon"
)

// fakeB records what publish sends to testing.B.
type fakeB struct {
	metrics map[string]float64
	logs    []string
	fatal   string
}

func (f *fakeB) Helper() {}
func (f *fakeB) ReportMetric(n float64, unit string) {
	if f.metrics == nil {
		f.metrics = map[string]float64{}
	}
	f.metrics[unit] = n
}
func (f *fakeB) Log(args ...any) { f.logs = append(f.logs, fmt.Sprint(args...)) }
func (f *fakeB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
}

// runSettings are Run's settings with the zero RunConfig.
var runSettings = (&RunConfig{}).settings()

// steadyReport is the result of a flat run with live counters.
func steadyReport() *result {
	return &result{
		n: 2000, stride: 1, window: 32, reached: true,
		st:  steady.Result{Class: steady.Flat, Reason: steady.OneLevel, Start: 0, Windows: 62, TailWindows: 62, Levels: []steady.Segment{{Start: 0, End: 2000, Median: 249e3}}},
		lat: latency{mean: 250e3, p50: 249e3, p90: 262e3, p99: 310e3},
		proc: counterSpan{ok: true, from: 0, to: 2000, wallNs: 1e9, cpuNs: 6e8,
			userNs: 4.6e8, sysNs: 1.4e8, nvcsw: 4000, nivcsw: 20, maxRSS: 40 << 20,
			cost: cpucost.Cost{Steps: 2000, Ns: 5e8, User: 4e8, Sys: 1e8, Loop: 4.5e8, Harness: 1e8, Process: 6e8}},
	}
}

// pub publishes res as Run would.
func pub(b reporter, res *result, log bool) { publish(b, runSettings, res, log) }

func TestMetricUnitsParseWithBenchunit(t *testing.T) {
	rep := steadyReport()
	rep.gap.req, rep.gap.mean, rep.gap.p50 = 1e5, 1.001e5, 1.0005e5
	documented := map[string]bool{}
	for _, m := range Metrics() {
		documented[m.Unit] = true
		assert.NotEmpty(t, m.Meaning, m.Unit)
	}
	for _, m := range rep.metrics() {
		assert.True(t, documented[m.unit], "%s is reported but not in Metrics()", m.unit)
		// Every unit must read back through benchfmt unchanged, as one value.
		line := fmt.Sprintf("BenchmarkX 1 %g %s\n", m.value, m.unit)
		rd := benchfmt.NewReader(strings.NewReader(line), "in")
		require.True(t, rd.Scan(), m.unit)
		r, ok := rd.Result().(*benchfmt.Result)
		require.True(t, ok, "%s: %v", m.unit, rd.Result())
		require.Len(t, r.Values, 1, m.unit)
		v := r.Values[0]
		if v.OrigUnit != "" {
			assert.Equal(t, m.unit, v.OrigUnit)
			assert.Equal(t, m.value, v.OrigValue)
		} else {
			assert.Equal(t, m.unit, v.Unit)
			assert.Equal(t, m.value, v.Value)
		}
	}
	assert.Equal(t, benchunit.Binary, benchunit.ClassOf("peak-RSS-B"))
	_, u := benchunit.Tidy(1, "p50-ns/op")
	assert.Equal(t, "p50-sec/op", u)
}

func TestPublishFlatRun(t *testing.T) {
	var b fakeB
	pub(&b, steadyReport(), true)
	require.Len(t, b.logs, 1)
	log := b.logs[0]
	assert.Contains(t, log, "steady state: flat from the first iteration (2000 iterations, windows of 32; one level over all 62 windows (median 249µs))")
	assert.Contains(t, log, "step: mean 250µs, p50 249µs, p90 262µs, p99 310µs over 2000 iterations")
	assert.Contains(t, log, "cpu 250µs/op (user 200µs, sys 50µs; cpu/wall 0.50), the process's 300µs/op less the harness's 50µs/op (gaps, snapshots, the loop's bookkeeping)")
	assert.NotContains(t, log, "gap:", "no gap requested, no gap line")
	assert.LessOrEqual(t, strings.Count(log, "\n")+1, 8, "testing keeps ten lines of a benchmark's log")
	assert.Equal(t, 250e3, b.metrics["ns/op"])
	assert.Equal(t, 0.5, b.metrics["cpu/wall"])
	assert.Equal(t, 250e3, b.metrics["cpu-ns/op"])
	assert.Equal(t, 200e3, b.metrics["user-ns/op"], "cpu-ns/op's user part")
	assert.Equal(t, 50e3, b.metrics["sys-ns/op"])
	assert.Equal(t, 90.0, b.metrics["thread-cpu-%"], "the loop thread's share of cpu-ns/op")
	assert.Equal(t, 2.0, b.metrics["vcsw/op"])
	assert.Empty(t, b.fatal)
}

func TestPublishSilentOnNonFinalCall(t *testing.T) {
	var b fakeB
	pub(&b, steadyReport(), false)
	assert.Empty(t, b.logs)
	assert.NotEmpty(t, b.metrics, "metrics are reported on every call; testing keeps the last")
}

func TestNotReachedWarnsAndNamesBenchtime(t *testing.T) {
	rep := steadyReport()
	rep.reached = false
	rep.n = 40
	rep.st = steady.Result{Class: steady.NoSteadyState, Reason: steady.TooShort, Start: -1, Suggest: 640, Windows: 1}
	var b fakeB
	pub(&b, rep, true)
	require.Len(t, b.logs, 1)
	assert.Contains(t, b.logs[0], "steady state: NOT REACHED (series never settled): 40 iterations make 1 whole window of 32 (RunConfig.Window); at least 2 are needed; run with -benchtime=640x; every figure below describes the transient")
	assert.Empty(t, b.fatal)

	// Compare names its own config.
	assert.Contains(t, rep.steadyLine("CompareConfig"), "(CompareConfig.Window)")

	b = fakeB{}
	publish(&b, (&RunConfig{RequireSteady: true}).settings(), rep, true)
	assert.Contains(t, b.fatal, "decodegap.Run: steady state NOT REACHED and RunConfig.RequireSteady is set")
}

func TestWarmupLineSaysWhatWasLeftOut(t *testing.T) {
	rep := steadyReport()
	rep.st = steady.Result{Class: steady.Warmup, Reason: steady.Faster, Start: 412, TailWindows: 50,
		Ref: steady.Segment{Start: 0, End: 412, Median: 1.4e6}, Levels: []steady.Segment{{Start: 0, End: 412, Median: 1.4e6}, {Start: 412, End: 2000, Median: 250e3}}}
	rep.from = 412
	rep.proc.from = 448
	ls := rep.logLines(runSettings)
	assert.Equal(t, "steady state: warm-up; steady from iteration 412 of 2000, the first 412 left out (median 1.4ms in iterations 0–411, faster at 250µs)", ls[0])
	assert.Contains(t, ls[1], "over 1588 iterations")
	assert.Contains(t, strings.Join(ls, "\n"), "counters cover iterations 448-2000 (1552), the figures above 412-2000 (1588)")
}

func TestCountersIncludingWarmupAreFlagged(t *testing.T) {
	rep := steadyReport()
	rep.st = steady.Result{Class: steady.Warmup, Start: 412}
	rep.from = 412
	rep.proc.from = 0
	got := rep.counterLine("RunConfig")
	assert.Contains(t, got, "counters include warm-up: they cover iterations 0-2000, 412 before the steady start at 412")
	assert.Contains(t, got, "raise -benchtime or lower RunConfig.Window")

	// Same start: neither message.
	rep.proc.from = 412
	got = rep.counterLine("RunConfig")
	assert.NotContains(t, got, "counters include warm-up")
	assert.NotContains(t, got, "counters cover")
}

func TestGapLineIsConditionalOnTheNumbers(t *testing.T) {
	rep := steadyReport()
	rep.gap.req = 100e3

	rep.gap.mean, rep.gap.p50 = 100.4e3, 100.2e3
	line := rep.gapLine("RunConfig")
	assert.Equal(t, "gap: requested mean 100µs (hybrid, constant), achieved mean 100µs, p50 100µs", line)

	rep.gap.kind = GapSleep
	rep.gap.mean, rep.gap.p50 = 110e3, 109.5e3
	line = rep.gapLine("RunConfig")
	assert.Contains(t, line, "the median gap is 9.5µs (10%) longer than requested: that is the kernel's wake-up latency; use RunConfig.Gap.Kind = GapHybrid")

	rep.gap.kind = GapHybrid
	rep.gap.spin, rep.gap.maxCPU = 20e3, 0.4
	line = rep.gapLine("RunConfig")
	assert.Contains(t, line, ": raise RunConfig.Gap.MaxCPU above 0.4 (the CPU ceiling that chose a 20µs spin), or RunConfig.Gap.Spin above 20µs, or use GapBusy")

	rep.gap.mean, rep.gap.p50 = 140e3, 100.1e3
	line = rep.gapLine("RunConfig")
	assert.Contains(t, line, "the mean gap is 40µs (40%) longer than requested though the median is on time")
	assert.NotContains(t, line, "RunConfig.Gap.Spin")

	rep.gap.mean, rep.gap.p50 = 100.4e3, 100.2e3
	rep.gap.stretched, rep.gap.stretchMax = 3, 250e3
	assert.Equal(t, "gap: requested mean 100µs (hybrid, constant), achieved mean 100µs, p50 100µs; 3 counter snapshots (at most 1% of the run, up to 250µs each) took longer than the gap and stretched those gaps", rep.gapLine("RunConfig"))
	rep.gap.stretched = 0

	rep.sessions = []sessionStats{{}, {}}
	rep.gap.mean, rep.gap.p50 = 150e3, 147e3
	line = rep.gapLine("RunConfig")
	assert.Contains(t, line, "the median gap is 47µs longer than requested: with RunConfig.Sessions it runs from the end of a round to each session's start")
	assert.NotContains(t, line, "RunConfig.Gap.Spin")

	rep.gap.req = 0
	assert.Empty(t, rep.gapLine("RunConfig"))
}

func TestZeroSwitchesSayWhichZero(t *testing.T) {
	rep := steadyReport()
	c := &rep.proc
	assert.Equal(t, "2/op", switchFigure(c, 4000))
	assert.Equal(t, "0/op (a true zero: getrusage's CPU times moved 600ms in the same span)", switchFigure(c, 0))
	c.userNs, c.sysNs = 0, 0
	assert.Equal(t, "0/op (a dead instrument? getrusage's CPU times did not move either)", switchFigure(c, 0))
}

func TestUnavailableCountersAreNotZero(t *testing.T) {
	rep := steadyReport()
	rep.proc = counterSpan{why: "getrusage: operation not permitted"}
	var b fakeB
	pub(&b, rep, true)
	assert.Contains(t, b.logs[0], "process counters: unavailable (getrusage: operation not permitted)")
	_, has := b.metrics["cpu/wall"]
	assert.False(t, has, "an unreadable counter is not reported as 0")
}

func TestSummarize(t *testing.T) {
	xs := make([]int64, 100)
	for i := range xs {
		xs[i] = int64(100 - i) // 100..1, unsorted
	}
	// Hyndman–Fan type 8 (internal/quantile): h = (n+1/3)p + 1/3.
	l := summarize(xs)
	assert.Equal(t, 50.5, l.mean)
	assert.InDelta(t, 50.5, l.p50, 1e-9)
	assert.InDelta(t, 90.0+2.0/3-1.0/30, l.p90, 1e-9)
	assert.InDelta(t, 99.0+2.0/3-1.0/300, l.p99, 1e-9)
	assert.Equal(t, int64(100), xs[0], "summarize leaves its input alone")
}

func TestSpanPicksSnapshotsInsideTheSteadyWindow(t *testing.T) {
	r := &runner{snaps: []snapshot{{iter: 0}, {iter: 320, cpuNs: 10}, {iter: 640, cpuNs: 20}, {iter: 2000, cpuNs: 100}}}
	c := r.span(400)
	assert.Equal(t, 640, c.from)
	assert.Equal(t, 2000, c.to)
	assert.Equal(t, int64(80), c.cpuNs)
	// No interior snapshot at or after the start: the last one before it.
	c = r.span(1000)
	assert.Equal(t, 640, c.from)
	c = r.span(0)
	assert.Equal(t, 0, c.from)
	assert.False(t, (&runner{snaps: []snapshot{{iter: 0}}}).span(0).ok)
}

func TestZeroIsPrintedInTheTidiedUnit(t *testing.T) {
	assert.Equal(t, "sys-sec/op", reportUnit(metric{0, "sys-ns/op"}))
	assert.Equal(t, "sys-ns/op", reportUnit(metric{12, "sys-ns/op"}))
	assert.Equal(t, "vcsw/op", reportUnit(metric{0, "vcsw/op"}))
	assert.Equal(t, "ns/op", reportUnit(metric{0, "ns/op"}))

	// Both land in one unit once benchfmt has read them.
	in := "BenchmarkX 10 5 ns/op 0 sys-sec/op\nBenchmarkX 10 5 ns/op 12 sys-ns/op\n"
	rd := benchfmt.NewReader(strings.NewReader(in), "in")
	var units []string
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			units = append(units, r.Values[1].Unit)
		}
	}
	assert.Equal(t, []string{"sys-sec/op", "sys-sec/op"}, units)
}

func TestWorstCaseRunLogFitsTestingsTenLines(t *testing.T) {
	rep := steadyReport()
	rep.st = steady.Result{Class: steady.Warmup, Reason: steady.Faster, Start: 412, Ref: steady.Segment{Start: 0, End: 412, Median: 1e6}, Levels: []steady.Segment{{Start: 0, End: 412, Median: 1e6}, {Start: 412, End: 2000, Median: 250e3}}}
	rep.from = 412
	rep.proc.from = 0 // counters include warm-up
	rep.gap.req, rep.gap.mean, rep.gap.p50 = 100e3, 140e3, 120e3
	rep.null = nullResult{on: true, ratio: 1.01}
	rep.user = []userSpan{{name: "misses", delta: 5}}
	rep.host.ok = true
	rep.host.span = hostmon.Span{CPUs: hostmon.NewCPUSet(0)}
	rep.census = census{ok: true, total: 1, groups: []threadGroup{{name: "x", threads: 1, cpuNs: 1}}, idle: map[string]int{}}
	rep.tracePaths = []string{"t.jsonl"}
	var b fakeB
	pub(&b, rep, true)
	require.Len(t, b.logs, 1)
	n := strings.Count(b.logs[0], "\n") + 1
	// testing keeps ten lines, and marks the output truncated at the tenth.
	assert.Equal(t, 9, n, "every optional line is on:\n%s", b.logs[0])
}

// recorded returns a runner whose record holds lat, as if Run had timed it.
func recorded(lat []int64) *runner {
	r := newRunner(runSettings, len(lat))
	for i, v := range lat {
		r.rec.add(i, v, 0)
	}
	return r
}

// TestOneStallIsNotHiddenInTheMean: one 2 s stall among 2000 steps of
// 250 ns leaves the series flat (rank tests ignore it), but the result
// counts it, the metric carries its share of the mean, and the log says the
// mean is dominated by it.
func TestOneStallIsNotHiddenInTheMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]int64, 2000)
	for i := range lat {
		lat[i] = 250 + rng.Int64N(10)
	}
	lat[1000] = 2e9
	res := recorded(lat).analyzeSingle()
	require.Equal(t, steady.Flat, res.st.Class)
	assert.Equal(t, 1, res.out.count)
	assert.Equal(t, 2e9, res.out.largest)
	assert.InDelta(t, 2e9/(2e9+1999*254.5), res.out.share, 1e-4)
	assert.True(t, res.out.dominated())
	var b fakeB
	pub(&b, res, true)
	assert.InDelta(t, 99.97, b.metrics["outlier-%"], 0.01)
	assert.Contains(t, b.logs[0], "1 step at least 10× the median (largest 2s, ")
	assert.Contains(t, b.logs[0], "make 100.0% of the mean: the mean (ns/op) is dominated by them; read p50-ns/op for the typical step")

	// Without the stall: no mention, and 0 outlier-%.
	lat[1000] = 250
	res = recorded(lat).analyzeSingle()
	assert.Zero(t, res.out.count)
	b = fakeB{}
	pub(&b, res, true)
	assert.NotContains(t, b.logs[0], "median (largest")
	assert.Equal(t, 0.0, b.metrics["outlier-%"])
}

// TestShortSteadyWindowGivesTheBenchtime: a warm-up that leaves less than
// half the run says so and gives the -benchtime for a steady window of b.N.
func TestShortSteadyWindowGivesTheBenchtime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lat := make([]int64, 2000)
	for i := range lat {
		level := 1e6
		if i < 1200 {
			level = 2e6
		}
		lat[i] = int64(level * (1 + 0.03*rng.NormFloat64()))
	}
	res := recorded(lat).analyzeSingle()
	require.Equal(t, steady.Warmup, res.st.Class)
	require.Greater(t, res.from, 1000)
	assert.Equal(t, roundUp2(res.from+2000), res.rerunN)
	want := fmt.Sprintf("the steady window is %d of 2000 iterations, less than half the run: -benchtime=%dx would give a steady window of 2000", 2000-res.from, res.rerunN)
	assert.Contains(t, res.steadyLine("RunConfig"), want)

	// More than half steady: no such note.
	res = recorded(lat[800:]).analyzeSingle()
	assert.Zero(t, res.rerunN)
	assert.NotContains(t, res.steadyLine("RunConfig"), "less than half")
}

// cpu-ns/op is never partial in silence: an unreadable part leaves the
// unit out of the result line and the process line says which part.
func TestCPUUnavailableSaysWhichPart(t *testing.T) {
	for why, words := range map[cpucost.Reason]string{
		cpucost.NoThreadList: "process: cpu-ns/op unavailable: in turns (CompareConfig.Slice) the other arms' threads are left out by their own clocks in /proc/self/task, which could not be read; set CompareConfig.Slice to decodegap.SliceWhole for whole blocks",
		cpucost.Negative:     "process: cpu-ns/op unavailable: the harness's own CPU time (gaps, snapshots) read more than the process spent: a CPU clock on this host is wrong",
		cpucost.NoSteps:      "process: cpu-ns/op unavailable: the counter span holds no recorded step",
	} {
		rep := steadyReport()
		rep.proc.cost = cpucost.Cost{Steps: 2000, Why: why, Loop: math.NaN()}
		assert.Contains(t, rep.counterLine("RunConfig"), words)
		for _, m := range rep.metrics() {
			assert.NotContains(t, []string{"cpu-ns/op", "user-ns/op", "sys-ns/op", "cpu/wall", "thread-cpu-%"}, m.unit, "%v: no figure, never a part of one", why)
		}
	}
}

// A step with two modes is said to have them, in the metric and the log;
// one with one mode is not.
func TestModesAreSaid(t *testing.T) {
	for name, c := range map[string]struct {
		slow  time.Duration
		multi bool
	}{"one mode": {20 * time.Microsecond, false}, "two modes": {45 * time.Microsecond, true}} {
		t.Run(name, func(t *testing.T) {
			i := 0
			step := func() error { // every other step is slow, in a fixed pattern
				i++
				d := 20 * time.Microsecond
				if (i*7)%10 < 5 {
					d = c.slow
				}
				return spinFor(d)()
			}
			s := (&RunConfig{Window: 50}).settings()
			res, done, err := measure(context.Background(), s, 1000, Func(step), &singleMode{}, nil, "")
			require.NoError(t, err)
			defer done()
			v, ok := 0.0, false
			for _, m := range res.metrics() {
				if m.unit == "mvalue" {
					v, ok = m.value, true
				}
			}
			require.True(t, ok, "mvalue reported")
			log := strings.Join(res.logLines(s), "\n")
			if c.multi {
				assert.GreaterOrEqual(t, v, modes.Multimodal)
				assert.Contains(t, log, "; two or more modes (mvalue ")
			} else {
				assert.Less(t, v, modes.Multimodal)
				assert.NotContains(t, log, "two or more modes")
			}
		})
	}
}
