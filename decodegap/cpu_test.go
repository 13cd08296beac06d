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

// cpu-ns/op reads the sampled steps' own CPU time when the loop's thread
// did the process's work, and the process's per step otherwise.
func TestStepCPUChoosesItsClock(t *testing.T) {
	span := func(share float64, stepNs float64) counterSpan {
		return counterSpan{ok: true, from: 0, to: 1000, wallNs: 1e9, cpuNs: 100e6,
			thread: threadSpan{ok: true, cpuNs: int64(share * 100e6), stepNs: stepNs}}
	}
	c := span(0.9, 35e3)
	v, ok := c.stepCPUNs()
	require.True(t, ok)
	assert.Equal(t, 35e3, v, "one thread: the steps' own time, gaps left out")
	assert.InDelta(t, 0.9, c.threadShare(), 1e-12)

	c = span(0.5, 35e3)
	v, ok = c.stepCPUNs()
	require.True(t, ok)
	assert.Equal(t, 100e3, v, "other threads worked too: the process's CPU time per step")

	c = span(0.9, math.NaN())
	v, _ = c.stepCPUNs()
	assert.Equal(t, 100e3, v, "no step sampled: the process's")

	c = counterSpan{ok: true, from: 0, to: 1000, wallNs: 1e9, cpuNs: 100e6}
	v, _ = c.stepCPUNs()
	assert.Equal(t, 100e3, v, "the thread's clock unread (snapshots from two threads)")
	assert.True(t, math.IsNaN(c.threadShare()))

	_, ok = (&counterSpan{}).stepCPUNs()
	assert.False(t, ok, "no counters: no figure, never a 0")
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

// A real run reports cpu-ns/op and says which clock it read.
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
	assert.True(t, strings.Contains(meaning, "CLOCK_THREAD_CPUTIME_ID") && strings.Contains(meaning, "CLOCK_PROCESS_CPUTIME_ID"), meaning)
}
