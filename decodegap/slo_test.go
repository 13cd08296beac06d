package decodegap

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/decodegap/internal/slo"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
	"github.com/gapbench/gapbench/internal/testutil"
)

func TestSLOConfig(t *testing.T) {
	assert.NoError(t, (&RunConfig{}).validate(), "the zero SLO judges nothing")
	assert.ErrorContains(t, (&RunConfig{SLO: SLO{Limit: time.Millisecond}}).validate(), "RunConfig.SLO.Percentile = 0")
	assert.ErrorContains(t, (&RunConfig{SLO: SLO{Percentile: 99, Limit: time.Millisecond, Confidence: 1}}).validate(), "RunConfig.SLO.Confidence = 1")
	assert.ErrorContains(t, (&RunConfig{SLO: SLO{Percentile: 99, Limit: -1}}).validate(), "RunConfig.SLO.Limit = -1ns")
	o := SLO{Percentile: 99, Limit: time.Millisecond}.objective()
	assert.Equal(t, 0.95, o.Confidence)
	assert.InDelta(t, 0.99, o.Q, 1e-12)
}

func TestSLOLineWords(t *testing.T) {
	xs := make([]int64, 1000)
	for i := range xs {
		xs[i] = int64(i+1) * 1000 // 1 µs .. 1 ms: p99 ≈ 990 µs
	}
	pass := judgeSLO(SLO{Percentile: 99, Limit: time.Millisecond}, xs, "response time")
	require.Equal(t, tail.Pass, pass.j.Verdict)
	assert.Contains(t, pass.line(), "SLO response time p99 ≤ 1ms (RunConfig.SLO, 95% bound over 1000 steps): pass: the upper bound")
	fail := judgeSLO(SLO{Percentile: 99, Limit: 900 * time.Microsecond}, xs, "step latency")
	assert.Equal(t, tail.Fail, fail.j.Verdict)
	assert.Contains(t, fail.line(), ": fail: the lower bound")
	few := judgeSLO(SLO{Percentile: 99, Limit: time.Second}, xs[:100], "step latency")
	assert.Equal(t, tail.Undecided, few.j.Verdict, "100 steps bound no p99, however far under the limit")
	assert.Contains(t, few.line(), "100 steps bound no p99; a pass needs ≥ 299 (raise -benchtime)")
	near := judgeSLO(SLO{Percentile: 99, Limit: 990 * time.Microsecond}, xs, "step latency")
	assert.Equal(t, tail.Undecided, near.j.Verdict)
	assert.Contains(t, near.line(), "straddle the limit")
	assert.False(t, judgeSLO(SLO{}, xs, "x").on)
}

func TestWriteSearchWords(t *testing.T) {
	var w bytes.Buffer
	r := slo.Result{Rate: 100, Ceiling: 102, Undecided: 1, Steps: []slo.Step{
		{Rate: 100, Judgement: tail.Judgement{Verdict: tail.Pass, Upper: 1e6, N: 500}},
		{Rate: 102, Judgement: tail.Judgement{Verdict: tail.Undecided, N: 200, NeedPass: 299}},
		{Rate: 101, Judgement: tail.Judgement{Verdict: tail.Undecided, N: 500, NeedPass: 299, Lower: 1.5e6, Upper: 2.5e6}},
	}}
	writeSearch(&w, "BenchmarkX", SLO{Percentile: 99, Limit: 2 * time.Millisecond}, r, probeLength{})
	out := w.String()
	assert.Contains(t, out, "    --- decodegap.SearchRate: BenchmarkX: response p99 ≤ 2ms at 95% confidence\n")
	assert.Contains(t, out, "highest rate that passed: 100/s; lowest that did not: 102/s (2.0% apart)")
	assert.Contains(t, out, "1 probe was undecided")
	assert.Contains(t, out, "102/s: undecided (200 steps; a pass needs ≥ 299)")
	assert.Contains(t, out, "101/s: undecided (bounds 1.5ms–2.5ms straddle the limit, 500 steps)")
	w.Reset()
	writeSearch(&w, "BenchmarkX", SLO{Percentile: 99, Limit: time.Millisecond}, slo.Result{Ceiling: 10}, probeLength{})
	assert.Contains(t, w.String(), "no probed rate passed (lowest probed 10/s): lower Rates.Start")
}

// SearchRate on a step of known capacity (a 200 µs spin: 5000 steps/s at
// most): above capacity the queue grows without bound and a probe fails
// whatever the host's weather; far under a generous limit probes pass up to
// the cap. Neither depends on how fast this host is today.
func TestSearchRateOnAKnownCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand open-loop steps")
	}
	const service = 200 * time.Microsecond
	step := func() error {
		t0 := gap.Now()
		for gap.Now()-t0 < int64(service) {
		}
		return nil
	}
	var w bytes.Buffer
	old := summaryOut
	summaryOut = &w
	defer func() { summaryOut = old }()
	search := func(limit time.Duration, rates Rates) (rate float64) {
		w.Reset()
		benchmarkN(t, "1000x", func(b *testing.B) {
			rate = SearchRate(b, RunConfig{SLO: SLO{Percentile: 99, Limit: limit}}, Func(step), rates)
		})
		return rate
	}
	// 4× capacity: 1000 arrivals in 50 ms for 200 ms of work.
	rate := search(3*time.Millisecond, Rates{Start: 20000, MaxProbes: 2})
	assert.Less(t, rate, 20000.0, w.String())
	assert.Contains(t, w.String(), "    20000/s: fail (lower bound ")
	// A second per step, at a tenth of capacity at most: every probe passes.
	rate = search(time.Second, Rates{Start: 250, Max: 500, MaxProbes: 3})
	assert.Equal(t, 500.0, rate, w.String())
	assert.Contains(t, w.String(), "the cap passed: 500/s (Rates.Max)")
	assert.Contains(t, w.String(), "    250/s: pass (upper bound ")
}

// A queue that grows through the run fails the objective even when the
// run was too short for its tail to pass the limit.
func TestSLOFailsAnOverloadedRun(t *testing.T) {
	xs := make([]int64, 1000)
	for i := range xs {
		xs[i] = 1000
	}
	s := judgeSLO(SLO{Percentile: 99, Limit: time.Millisecond}, xs, "response time")
	require.Equal(t, tail.Pass, s.j.Verdict)
	grown := s.unless(openResult{on: true, resp: latency{p50: 1000}, lateFirst: 0, lateLast: 10000, overload: OverloadQueueGrew})
	assert.Equal(t, tail.Fail, grown.j.Verdict)
	assert.Contains(t, grown.line(), "the queue grew through the run")
	assert.Equal(t, tail.Pass, s.unless(openResult{on: true, resp: latency{p50: 1000}}).j.Verdict)
}

// SearchRate's probes run the mode Run would: with Sessions, every session
// serves its own stream (a probe once ran session 1 alone).
func TestModeForOpenSessions(t *testing.T) {
	c := RunConfig{Gap: Gap{Open: true, Mean: time.Millisecond}, Sessions: 4}
	m, ok := modeFor(&c).(*openSessionsMode)
	require.True(t, ok)
	assert.Equal(t, 4, m.n)
	c.Sessions = 0
	_, ok = modeFor(&c).(*openMode)
	assert.True(t, ok)
	c.Gap.Open = false
	_, ok = modeFor(&c).(*singleMode)
	assert.True(t, ok)
}

func TestParseSLO(t *testing.T) {
	for in, want := range map[string]SLO{
		"p99=5ms":         {Percentile: 99, Limit: 5 * time.Millisecond},
		"p99.9=20ms":      {Percentile: 99.9, Limit: 20 * time.Millisecond},
		"p50=800us":       {Percentile: 50, Limit: 800 * time.Microsecond},
		"p50=800µs":       {Percentile: 50, Limit: 800 * time.Microsecond},
		" p90 = 1.5s ":    {Percentile: 90, Limit: 1500 * time.Millisecond},
		"p99=5ms@90%":     {Percentile: 99, Limit: 5 * time.Millisecond, Confidence: 0.9},
		"p99=5ms@0.9":     {Percentile: 99, Limit: 5 * time.Millisecond, Confidence: 0.9},
		"p99.99=1s@99.9%": {Percentile: 99.99, Limit: time.Second, Confidence: 0.999},
		"p0.1=100ns@0.5":  {Percentile: 0.1, Limit: 100 * time.Nanosecond, Confidence: 0.5},
		"p99=1m30s@ 95% ": {Percentile: 99, Limit: 90 * time.Second, Confidence: 0.95},
	} {
		got, err := ParseSLO(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want.Percentile, got.Percentile, 1e-12, in)
		assert.Equal(t, want.Limit, got.Limit, in)
		assert.InDelta(t, want.Confidence, got.Confidence, 1e-12, in)
		assert.NoError(t, (&RunConfig{SLO: got}).validate(), in)
		back, err := ParseSLO(got.String())
		require.NoError(t, err, "%s → %s", in, got.String())
		assert.Equal(t, got, back, "String writes what ParseSLO reads")
	}
	const eg = ": write pPERCENTILE=LIMIT[@CONFIDENCE], e.g. p99=5ms, p99.9=20ms@90% or p50=800us@0.99"
	for in, want := range map[string]string{
		"":             `SLO "": empty`,
		"p99":          `SLO "p99": no '=' between the percentile and the limit`,
		"99=5ms":       `SLO "99=5ms": percentile "99" is not p and a number in (0, 100)`,
		"p100=5ms":     `SLO "p100=5ms": percentile "p100" is not p and a number in (0, 100)`,
		"p0=5ms":       `SLO "p0=5ms": percentile "p0" is not p and a number in (0, 100)`,
		"pNaN=5ms":     `SLO "pNaN=5ms": percentile "pNaN" is not p and a number in (0, 100)`,
		"p99=5":        `SLO "p99=5": limit "5" is not a duration > 0 with its unit`,
		"p99=0s":       `SLO "p99=0s": limit "0s" is not a duration > 0 with its unit`,
		"p99=-1ms":     `SLO "p99=-1ms": limit "-1ms" is not a duration > 0 with its unit`,
		"p99=5ms@95":   `SLO "p99=5ms@95": confidence "95" is not a percentage (90%) or a fraction (0.9) in (0, 1)`,
		"p99=5ms@100%": `SLO "p99=5ms@100%": confidence "100%" is not a percentage (90%) or a fraction (0.9) in (0, 1)`,
		"p99=5ms@":     `SLO "p99=5ms@": confidence "" is not a percentage (90%) or a fraction (0.9) in (0, 1)`,
		"p99=5ms@x%":   `SLO "p99=5ms@x%": confidence "x%" is not a percentage (90%) or a fraction (0.9) in (0, 1)`,
	} {
		_, err := ParseSLO(in)
		assert.EqualError(t, err, want+eg, in)
	}
	assert.Equal(t, "p99.9=20ms@90%", SLO{Percentile: 99.9, Limit: 20 * time.Millisecond, Confidence: 0.9}.String())
	assert.Equal(t, "p99=5ms", SLO{Percentile: 99, Limit: 5 * time.Millisecond}.String())
	assert.Equal(t, "off", SLO{}.String())
}

// $DECODEGAP_SLO judges any test binary's Run when RunConfig.SLO is zero,
// with the log line and the slo-met metric RunConfig.SLO gives; the config
// wins over it; a bad value fails the benchmark naming the variable.
func TestRunSLOFromTheEnvironment(t *testing.T) {
	bench := func(mode, slo string) (string, error) {
		// 2000 steps: a p99 pass needs ≥ 299 in the steady window, and
		// under load the detector has left out 208 of 400 as warm-up.
		return testutil.Bench(t, []string{childEnv + "=" + mode, EnvSLO + "=" + slo}, "^BenchmarkChild$", "-test.benchtime=2000x")
	}
	out, err := bench("flat", "p99=1s")
	require.NoError(t, err, out)
	assert.Regexp(t, `SLO step latency p99 ≤ 1s \(\$DECODEGAP_SLO, 95% bound over \d+ steps\): pass: the upper bound`, out)
	rs := testutil.ResultsString(t, out)
	require.Len(t, rs, 1)
	met, ok := rs[0].Value("slo-met")
	require.True(t, ok, out)
	assert.Equal(t, 1.0, met)

	// A no-op step takes more than a nanosecond at its median.
	out, err = bench("flat", "p50=1ns@90%")
	require.NoError(t, err, out)
	assert.Regexp(t, `SLO step latency p50 ≤ 1ns \(\$DECODEGAP_SLO, 90% bound over \d+ steps\): fail: the lower bound`, out)
	met, ok = testutil.ResultsString(t, out)[0].Value("slo-met")
	require.True(t, ok, out)
	assert.Equal(t, 0.0, met)

	out, err = bench("slo-code", "p50=1ns")
	require.NoError(t, err, out)
	assert.Regexp(t, `SLO step latency p50 ≤ 1s \(RunConfig.SLO, 95% bound over \d+ steps\): pass`, out)

	out, err = bench("flat", "p99=5")
	require.Error(t, err, out)
	assert.Contains(t, out, `decodegap.Run: $DECODEGAP_SLO: SLO "p99=5": limit "5" is not a duration > 0 with its unit: write pPERCENTILE=LIMIT[@CONFIDENCE], e.g. p99=5ms`)

	out, err = bench("flat", "")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "SLO ")
	assert.NotContains(t, out, "slo-met")
}

// SearchRate takes its objective from $DECODEGAP_SLO as Run does. (Whether
// a no-op step passes at 2000/s depends on the host's weather: a preempted
// run's queue grows; the verdicts are not asserted.)
func TestSearchRateSLOFromTheEnvironment(t *testing.T) {
	out, err := testutil.Bench(t, []string{childEnv + "=slo-search", EnvSLO + "=p50=1s"}, "^BenchmarkChild$", "-test.benchtime=400x")
	require.NoError(t, err, out)
	assert.Contains(t, out, "--- decodegap.SearchRate: BenchmarkChild: response p50 ≤ 1s at 95% confidence")
	assert.Regexp(t, `SLO response time p50 ≤ 1s \(\$DECODEGAP_SLO, 95% bound over 400 steps\): (pass|fail)`, out)
	rs := testutil.ResultsString(t, out)
	require.NotEmpty(t, rs)
	for _, r := range rs {
		assert.Contains(t, testutil.Name(r), "Child/rate=")
		met, ok := r.Value("slo-met")
		assert.True(t, ok && (met == 0 || met == 1), "%s: every probe is decided", testutil.Name(r))
	}

	out, err = testutil.Bench(t, []string{childEnv + "=slo-search", EnvSLO + "="}, "^BenchmarkChild$", "-test.benchtime=400x")
	require.Error(t, err, out)
	assert.Contains(t, out, "decodegap.SearchRate: RunConfig.SLO.Limit is 0: set the objective to search for (e.g. SLO{Percentile: 99, Limit: 5 * time.Millisecond}, or $DECODEGAP_SLO=p99=5ms)")
}

// TestSearchRateEnds: SearchRate ends, with the reason, when the service
// time alone misses the objective (a 1 ms step against p50 ≤ 100µs: on the
// base it halved the rate, doubling each probe's length, 30 times), when
// the next probe would outlast Rates.ProbeTime, and when Rates.Start asks
// for arrivals faster than the loop can count (on the base it never ended).
func TestSearchRateEnds(t *testing.T) {
	for mode, want := range map[string]string{
		"slo-search-svc":  "stopped at 2000/s: the service time alone misses the objective (its p50's lower bound ",
		"slo-search-fast": "rate=1000000000/s",
	} {
		start := time.Now()
		out, err := runChild(t, mode, "300x")
		require.NoError(t, err, "%s: %s", mode, out)
		assert.NotContains(t, out, "NaN", mode)
		assert.NotRegexp(t, `(?m)^BenchmarkChild(-\d+)?\s`, out, "%s: no line for the search itself", mode)
		assert.Contains(t, out, want, mode)
		assert.Less(t, time.Since(start), 2*time.Minute, mode)
		if mode == "slo-search-svc" {
			assert.Len(t, regexp.MustCompile(`(?m)^BenchmarkChild/rate=`).FindAllString(out, -1), 1, "one probe, then the stop:\n%s", out)
			assert.NotContains(t, out, "lower Rates.Start")
		}
	}
	// The cap after a few probes: the search's own words.
	var w bytes.Buffer
	writeSearch(&w, "BenchmarkX", SLO{Percentile: 99, Limit: time.Millisecond},
		slo.Result{Ceiling: 250, Stopped: slo.ProbeTooLong, StopRate: 62.5, Steps: []slo.Step{{Rate: 250}, {Rate: 125}}},
		probeLength{n: 2000, need: 32 * time.Second, limit: 20 * time.Second})
	assert.Contains(t, w.String(), "    stopped before 62.5/s: its 2000 steps would take 32s, over Rates.ProbeTime (20s): raise Rates.ProbeTime or lower -benchtime\n")
	assert.NotContains(t, w.String(), "lower Rates.Start")

	// Not one rate probed: a failure, never a line timed by testing.
	out, err := runChild(t, "slo-search-none", "300x")
	require.Error(t, err, out)
	assert.Contains(t, out, "decodegap.SearchRate: no rate was probed: the first probe, 100/s, would take 3s, over Rates.ProbeTime (1s)")
	assert.NotRegexp(t, `(?m)^BenchmarkChild(-\d+)?\s+\d`, out)
}
