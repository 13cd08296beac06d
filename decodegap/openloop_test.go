package decodegap

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/internal/quantile"
)

// stallStep busy-spins spin per call and sleeps stall at call stallAt; it
// records each call's start and end on the loop's clock, so a test can
// compute what the arrival schedule implies.
type stallStep struct {
	calls       int
	stallAt     int
	spin, stall time.Duration
	start, end  []int64
}

func (s *stallStep) step() error {
	start := gap.Now()
	if s.calls == s.stallAt {
		time.Sleep(s.stall)
	} else {
		for gap.Now()-start < int64(s.spin) {
		}
	}
	s.start, s.end = append(s.start, start), append(s.end, gap.Now())
	s.calls++
	return nil
}

// scheduledP99 is the p99 response time that a fixed-rate schedule implies
// for the steps that ran: step i arrives at t0 + (i+1)·interval and responds
// at its end. t0 is the latest origin no step started before its arrival
// from. It uses nothing the loop computed: only the schedule and the step's
// own clock readings.
func scheduledP99(s *stallStep, interval int64) float64 {
	t0 := int64(math.MaxInt64)
	for i, st := range s.start {
		t0 = min(t0, st-int64(i+1)*interval)
	}
	resp := make([]int64, len(s.end))
	for i, e := range s.end {
		resp[i] = e - (t0 + int64(i+1)*interval)
	}
	slices.Sort(resp)
	return quantile.Sorted(resp, 0.99)
}

// TestOpenLoopMeasuresCoordinatedOmission: a 50 ms stall in 1 of 2000 steps
// at a 1 ms arrival interval. The open loop's response p99 matches the p99
// that the fixed-rate schedule implies for the steps' own end times (within
// 5%); the closed loop's step p99 misses it by far, because it sent nothing
// while the step stalled.
func TestOpenLoopMeasuresCoordinatedOmission(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2000 steps at 1 ms arrivals, twice")
	}
	const n, interval = 2000, time.Millisecond
	run := func(open bool) (*stallStep, testing.BenchmarkResult) {
		var s *stallStep
		cfg := RunConfig{Gap: Gap{Mean: interval, Open: open}}
		res := benchmarkN(t, "2000x", func(b *testing.B) {
			// Only the 2000-step call is checked; the N=1 probe gets a step
			// of its own.
			s = &stallStep{stallAt: 1000, spin: 50 * time.Microsecond, stall: 50 * time.Millisecond}
			Run(b, cfg, Func(s.step))
		})
		return s, res
	}
	s, res := run(true)
	require.Len(t, s.end, n)
	want := scheduledP99(s, int64(interval))
	got := res.Extra["resp-p99-ns/op"]
	require.Greater(t, want, 20e6, "the stall queues about 50 arrivals: the schedule's p99 is tens of ms")
	assert.InEpsilon(t, want, got, 0.05, "open-loop resp-p99 %.3gms, schedule's %.3gms", got/1e6, want/1e6)
	assert.GreaterOrEqual(t, res.Extra["queue-max"], 40.0, "the stall left about 50 arrivals queued")

	_, closed := run(false)
	assert.Less(t, closed.Extra["p99-ns/op"], want/10, "the closed loop's p99 hides the stall's queue")
	_, has := closed.Extra["resp-p99-ns/op"]
	assert.False(t, has, "response times are the open loop's")
}

func TestOpenLoopOverloadIsNamed(t *testing.T) {
	o := openResult{on: true, resp: latency{p50: 100}, lateFirst: 1000, lateLast: 1000 + 5*100}
	o.judgeOverload(false)
	assert.True(t, o.overloaded())
	assert.Contains(t, o.line(), "OVERLOADED")
	assert.Contains(t, o.line(), "RunConfig.Gap.Mean")
	o.lateLast = 1200
	o.judgeOverload(false)
	assert.False(t, o.overloaded())
	o.judgeOverload(true)
	assert.Equal(t, OverloadQueueLimit, o.overload)
	assert.Contains(t, o.line(), "the queue reached 65536 arrivals (decodegap.MaxQueue)")
	o.judgeOverload(false)
	assert.NotContains(t, o.line(), "OVERLOADED")
}

func TestOpenLoopConfigErrors(t *testing.T) {
	assert.NoError(t, (&RunConfig{Gap: Gap{Open: true}, Sessions: 2}).validate())
	assert.ErrorContains(t, (&RunConfig{Gap: Gap{Open: true}, Null: true}).validate(), "RunConfig.Gap.Open and RunConfig.Null")
	s := (&RunConfig{Gap: Gap{Open: true}}).settings()
	assert.ErrorContains(t, s.validate(100), "RunConfig.Gap.Open needs arrivals")
}

func TestTailsWords(t *testing.T) {
	few := tailsOf([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	w := few.words(latency{})
	assert.Contains(t, w, "no bound from 10 steps")
	assert.Contains(t, w, "p99.9 needs ≥ ")
	assert.NotContains(t, w, "p99 1", "an unbounded p99 is never printed as a value")
	xs := make([]int64, 5000)
	for i := range xs {
		xs[i] = int64(i + 1)
	}
	many := tailsOf(xs)
	require.True(t, many[2].Known)
	w = many.words(latency{})
	assert.Contains(t, w, "p99.9 ")
	assert.Contains(t, w, "(95%: ")
	assert.NotContains(t, w, "no bound")
	assert.Equal(t, quantile.Sorted(xs, 0.99), many[1].Value, "the bounded p99 is the run's p99-ns/op")
	assert.False(t, math.IsNaN(many[1].Lo))
}

// Sessions in an open loop: each session serves its own stream, so a stall
// in one session queues that session's arrivals only.
func TestOpenLoopSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2×1000 steps at 1 ms arrivals")
	}
	var steps [2]*stallStep
	opened := 0
	open := func() (Step, func() error, error) {
		s := &stallStep{stallAt: -1, spin: 50 * time.Microsecond}
		if opened%2 == 0 { // session 1 of each call stalls once
			s.stallAt, s.stall = 500, 100*time.Millisecond
		}
		steps[opened%2] = s
		opened++
		return s.step, nil, nil
	}
	res := benchmarkN(t, "1000x", func(b *testing.B) {
		Run(b, RunConfig{Gap: Gap{Mean: time.Millisecond, Open: true}, Sessions: 2}, open)
	})
	require.Len(t, steps[0].end, 1000)
	require.Len(t, steps[1].end, 1000)
	assert.GreaterOrEqual(t, res.Extra["queue-max"], 20.0, "session 1's stall queued its own arrivals")
	assert.Contains(t, res.Extra, "resp-p90-ns/op")
	assert.Contains(t, res.Extra, "steps/s")
	// Each session kept its own schedule: while session 1 stalled for
	// 100 ms, session 2 went on starting steps (about 100 were due).
	stallStart, stallEnd := steps[0].start[500], steps[0].end[500]
	during := 0
	for _, st := range steps[1].start {
		if st > stallStart && st < stallEnd {
			during++
		}
	}
	assert.GreaterOrEqual(t, during, 20, "session 2 started %d steps during session 1's stall", during)
	assert.Greater(t, scheduledP99(steps[0], int64(time.Millisecond)), 40e6, "session 1's own queue")
}

func TestGammaArrivalsConfig(t *testing.T) {
	s := (&RunConfig{Gap: Gap{Shape: GapGamma, Mean: time.Millisecond, Burstiness: 3, Open: true}}).settings()
	assert.NoError(t, s.validate(100))
	assert.Equal(t, "gamma", GapGamma.String())
	s = (&RunConfig{Gap: Gap{Shape: GapGamma, Mean: time.Millisecond, Burstiness: math.NaN()}}).settings()
	assert.ErrorContains(t, s.validate(100), "RunConfig.Gap.Burstiness = NaN")
	s = (&RunConfig{Gap: Gap{Shape: GapGamma + 1, Mean: time.Millisecond}}).settings()
	assert.ErrorContains(t, s.validate(100), "GapTrace or GapGamma")
}

// A burst of stalls late in a run (a preemption, the arrivals behind it
// started late) is not a queue growing; a lateness that climbs step after
// step through the last part of the run is. (The mean of the last tenth
// once called the burst an overload, failing a search's probe at a rate far
// under capacity.)
func TestOpenLoopOverloadIgnoresALateBurst(t *testing.T) {
	const n = 600
	stats := func(late func(i int) int64) openResult {
		r := &record{stride: 1, count: n}
		for i := range n {
			r.gap = append(r.gap, late(i))
			r.lat = append(r.lat, late(i)+500e3) // a 500 µs step
		}
		return openStats([]*stream{{resp: r}})
	}
	stall := func(i int) int64 {
		if i >= 570 && i < 580 {
			return int64(580-i) * 6e6 // 60, 54, ... 6 ms
		}
		return 400e3
	}
	burst := stats(stall)
	var sum float64
	for i := 540; i < n; i++ {
		sum += float64(stall(i))
	}
	require.Greater(t, sum/60-400e3, 4*burst.resp.p50, "the burst moves the last tenth's mean past the threshold")
	assert.False(t, burst.overloaded(), "first half %v, last tenth %v", burst.lateFirst, burst.lateLast)
	assert.InDelta(t, 400e3, burst.lateLast, 1)
	growing := stats(func(i int) int64 { return 400e3 + int64(max(0, i-500))*200e3 })
	assert.True(t, growing.overloaded(), "first half %v, last tenth %v", growing.lateFirst, growing.lateLast)
	assert.Contains(t, growing.line(), "OVERLOADED: median lateness grew from 400µs (first half) to 14.")
}

// TestOpenLoopFasterThanItsOwnCostEnds: arrivals every 1 ns come faster
// than the loop can even count them; the run ends (on the base it counted
// arrivals forever) and is reported as overloaded at the queue limit.
func TestOpenLoopFasterThanItsOwnCostEnds(t *testing.T) {
	done := make(chan testing.BenchmarkResult, 1)
	var got *Result
	go func() {
		done <- benchmarkN(t, "2000x", func(b *testing.B) {
			got = Run(b, RunConfig{Window: 8, Gap: Gap{Mean: time.Nanosecond, Open: true}}, Func(spinFor(20*time.Microsecond)))
		})
	}()
	var res testing.BenchmarkResult
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("an open loop at 1 ns arrivals did not end within 2 minutes")
	}
	require.NotNil(t, got)
	assert.Equal(t, 1.0, res.Extra["overloaded"])
	assert.Equal(t, float64(MaxQueue), res.Extra["queue-max"])
	assert.Equal(t, OverloadQueueLimit, got.Open.Overload)
	assert.Equal(t, 2000, got.N)
}

// TestOpenLoopSteadyOverloadIsNamed: 100 µs steps at an arrival every
// 50 µs: the queue grows from the first step on. On the base the trend
// was judged against the median response, which grows with the queue, and
// such a run read overloaded 0.
func TestOpenLoopSteadyOverloadIsNamed(t *testing.T) {
	var got *Result
	res := benchmarkN(t, "2000x", func(b *testing.B) {
		got = Run(b, RunConfig{Gap: Gap{Mean: 50 * time.Microsecond, Open: true}}, Func(spinFor(100*time.Microsecond)))
	})
	require.NotNil(t, got)
	assert.Equal(t, OverloadQueueGrew, got.Open.Overload)
	assert.Equal(t, 1.0, res.Extra["overloaded"])
}
