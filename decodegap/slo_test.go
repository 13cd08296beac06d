package decodegap

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/decodegap/internal/slo"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
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
	}}
	writeSearch(&w, "BenchmarkX", SLO{Percentile: 99, Limit: 2 * time.Millisecond}, r)
	out := w.String()
	assert.Contains(t, out, "    --- decodegap.SearchRate: BenchmarkX: response p99 ≤ 2ms at 95% confidence\n")
	assert.Contains(t, out, "highest rate that passed: 100/s; lowest that did not: 102/s (2.0% apart)")
	assert.Contains(t, out, "1 probe was undecided")
	assert.Contains(t, out, "102/s: undecided (200 steps; a pass needs ≥ 299)")
	w.Reset()
	writeSearch(&w, "BenchmarkX", SLO{Percentile: 99, Limit: time.Millisecond}, slo.Result{Ceiling: 10})
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
	grown := s.unless(openResult{on: true, resp: latency{p50: 1000}, lateFirst: 0, lateLast: 10000})
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
