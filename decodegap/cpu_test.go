package decodegap

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cpu-ns/op is read one way in every block: the sampled steps' own time
// on the loop thread plus the open's threads' time per step. The loop
// thread's share of the process moves nothing (it once switched the
// figure to the process's clock, gaps and all, below 75%).
func TestStepCPUReadsOneScopeWhateverTheShare(t *testing.T) {
	span := func(share, stepNs float64, poolNs int64) counterSpan {
		return counterSpan{ok: true, from: 0, to: 1000, wallNs: 1e9, cpuNs: 100e6,
			thread: threadSpan{ok: true, cpuNs: int64(share * 100e6), stepNs: stepNs},
			pool:   poolSpan{ok: true, ns: poolNs, threads: 2}}
	}
	for _, share := range []float64{0.9, 0.76, 0.74, 0.5, 0.1} {
		c := span(share, 35e3, 5e6)
		v, ok := c.stepCPUNs()
		require.True(t, ok)
		assert.Equal(t, 35e3+5e3, v, "share %v: the steps' own time plus the pool's per step", share)
	}

	c := span(0.9, 35e3, 5e6)
	c.scope = scopeLoopThread
	v, ok := c.stepCPUNs()
	require.True(t, ok)
	assert.Equal(t, 35e3, v, "loop-thread scope: the pool is not counted, in any block")

	c = span(0.9, 35e3, 0)
	c.pool = poolSpan{}
	_, ok = c.stepCPUNs()
	assert.False(t, ok, "step-threads scope, the pool unread: unavailable, never the process's clock")

	c = span(0.9, math.NaN(), 0)
	_, ok = c.stepCPUNs()
	assert.False(t, ok, "no step sampled: unavailable")

	_, ok = (&counterSpan{}).stepCPUNs()
	assert.False(t, ok, "no counters: no figure, never a 0")
}

// Two arms of equal work, one doing it on the loop thread and one handing
// it to a thread its open started, read alike: the definition cannot make
// them differ. Under the per-block rule the second read the process's
// clock per step, gaps and all: 6.25 times the first.
func TestEqualWorkOnOtherThreadsReadsEqual(t *testing.T) {
	const iters, workNs, gapNs = 1000, 300e3, 2e6
	// A: the step's 300 µs on the loop thread; the gap's spin and the
	// runtime's threads bring the process to 625 µs a step.
	a := counterSpan{ok: true, from: 0, to: iters, wallNs: iters * (workNs + gapNs), cpuNs: iters * 625e3,
		thread: threadSpan{ok: true, cpuNs: iters * 600e3, stepNs: workNs},
		pool:   poolSpan{ok: true}}
	// B: the loop thread waits 20 µs on the pool thread doing 280 µs.
	b := counterSpan{ok: true, from: 0, to: iters, wallNs: iters * (workNs + gapNs), cpuNs: iters * 625e3,
		thread: threadSpan{ok: true, cpuNs: iters * 320e3, stepNs: 20e3},
		pool:   poolSpan{ok: true, ns: iters * 280e3, threads: 1}}
	va, ok := a.stepCPUNs()
	require.True(t, ok)
	vb, ok := b.stepCPUNs()
	require.True(t, ok)
	assert.InDelta(t, 1.0, vb/va, 1e-9, "A %v ns, B %v ns a step", va, vb)
	assert.Greater(t, a.threadShare(), 0.75)
	assert.Less(t, b.threadShare(), 0.75, "the share that used to switch B's definition")
}

func TestThreadBetweenNeedsOneThread(t *testing.T) {
	a := &snapshot{tid: 7, threadNs: 100, stepCPUNs: 1000, stepCPUs: 2}
	b := &snapshot{tid: 7, threadNs: 600, stepCPUNs: 1900, stepCPUs: 5}
	ts := threadBetween(a, b)
	assert.True(t, ts.ok)
	assert.Equal(t, int64(500), ts.cpuNs)
	assert.Equal(t, 300.0, ts.stepNs)
	b.tid = 8
	assert.False(t, threadBetween(a, b).ok, "two threads' clocks do not subtract")
	a.tid = 0
	assert.False(t, threadBetween(a, a).ok, "an unread clock")
}

func TestStepCPUSamplesOneStepIn8(t *testing.T) {
	runtime.LockOSThread() // as Run and Compare do: the clock is the thread's
	defer runtime.UnlockOSThread()
	var c counterReader
	for j := range 64 {
		c0 := c.stepCPUBegin(j)
		assert.Equal(t, j%stepCPUEvery == 0, c0 >= 0, "step %d", j)
		spinFor(20 * time.Microsecond)()
		c.stepCPUEnd(c0)
	}
	assert.Equal(t, 8, c.stepCPUs)
	assert.Positive(t, c.stepCPUNs, "a spin costs CPU time")
}

// A real run reports cpu-ns/op and states the scope it read it in.
func TestRunReportsCPUPerStep(t *testing.T) {
	out, err := runChild(t, "flat", "400x")
	require.NoError(t, err, out)
	res := benchResults(t, out)
	require.NotEmpty(t, res)
	cpu, ok := res[len(res)-1].Value("cpu-sec/op")
	require.True(t, ok, out)
	assert.Positive(t, cpu)
	share, ok := res[len(res)-1].Value("thread-cpu-%")
	require.True(t, ok, out)
	assert.True(t, share > 0 && share <= 100.5, "a share of the process's CPU time: %v", share)
	var meaning string
	for _, m := range Metrics() {
		if m.Unit == "cpu-ns/op" {
			meaning = m.Meaning
		}
	}
	assert.True(t, strings.Contains(meaning, "CLOCK_THREAD_CPUTIME_ID") && strings.Contains(meaning, "cpu-scope:"), meaning)
	assert.Regexp(t, `(?m)^cpu-scope: step-threads$`, out, "the scope every block was read in, stated once")
}
