package decodegap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/hostwords"
)

func task(tid int, name string, cpu uint64) hostmon.Task {
	return hostmon.Task{TID: tid, Name: name, OnCPUNanoseconds: cpu}
}

func TestCensusAttributesCPUToThePhaseThatCreatedTheThreads(t *testing.T) {
	ph := phaseReadings{
		phaseBefore: {1, 2, 3},
		phaseSetup:  {1, 2, 3, 10, 11},
		phaseWarmup: {1, 2, 3, 10, 11},
	}
	first := []hostmon.Task{task(1, "vad.test", 1000), task(2, "vad.test", 50), task(3, "vad.test", 7), task(10, "vad.test", 5000), task(11, "vad.test", 5000), task(12, "gone", 10)}
	last := []hostmon.Task{task(1, "vad.test", 9000), task(2, "vad.test", 50), task(3, "vad.test", 7), task(10, "vad.test", 51000), task(11, "vad.test", 51000), task(20, "late", 0)}
	c := takeCensus(&ph, first, last)
	require.True(t, c.ok)
	assert.Equal(t, [nPhases]int{3, 2, 0, 1}, c.count)
	assert.Equal(t, uint64(8000+46000+46000), c.total)
	assert.Equal(t, 1, c.exited)
	ls := c.lines()
	require.Len(t, ls, 1)
	assert.Equal(t, "threads: 6 at the end (3 from before Run, 2 created at setup/open, 1 created while recorded); 1 exited during the counter span (their CPU is in cpu-ns/op and cpu/wall but not below); "+
		"CPU by thread over the counter span: 92% in 2 threads created at setup/open (vad.test); 8% in 1 thread from before Run (vad.test); idle (no CPU in the span): 3 threads (late, vad.test ×2)", ls[0])
	c.harnessNs = 5000
	assert.Contains(t, c.lines()[0], "CPU by thread over the counter span: 92% in 2 threads created at setup/open (vad.test); 8% in 1 thread from before Run (vad.test) (5% of it the harness's, on the loop thread: left out of cpu-ns/op)",
		"the census says how much of its total cpu-ns/op leaves out")
}

func TestCensusNoCPUAndUnavailable(t *testing.T) {
	var ph phaseReadings
	c := takeCensus(&ph, []hostmon.Task{task(1, "x", 5)}, []hostmon.Task{task(1, "x", 5)})
	ls := c.lines()
	assert.Contains(t, ls[0], "no thread ran in the counter span")
	assert.NotContains(t, ls[0], "exited")

	c = takeCensus(&ph, nil, []hostmon.Task{task(1, "x", 5)})
	assert.Equal(t, []string{"threads: unavailable (the process's /proc/self/task could not be read)"}, c.lines())
}

func TestHostLineIsConditional(t *testing.T) {
	rep := steadyReport()
	assert.Empty(t, rep.hostLine(runSettings), "no host run, no line")
	rep.host.why = "no /proc"
	assert.Equal(t, "host: contention figures unavailable (no /proc)", rep.hostLine(runSettings))

	rep.host.ok = true
	rep.host.span = hostmon.Span{
		CPUs:                  hostmon.NewCPUSet(1),
		ForeignBusyPct:        hostmon.Figure{Value: 91, Unit: "%"},
		SiblingBusyPct:        hostmon.Figure{Reason: "no SMT"},
		StealPct:              hostmon.Figure{Value: 0, Unit: "%"},
		PSISomePct:            hostmon.Figure{Value: 3, Unit: "%"},
		Load1:                 hostmon.Figure{Value: 1.5},
		ProcessRunQueueWaitNs: hostmon.Figure{Value: 4e6, Unit: "ns"},
	}
	rep.host.verdict = rep.host.span.Screen(hostmon.Thresholds{})
	require.True(t, rep.host.verdict.Contended)
	line := rep.hostLine(runSettings)
	assert.Contains(t, line, "host: contended: foreign 91")
	assert.Contains(t, line, "on CPUs 1: foreign 91%, steal 0%, PSI some 3%, load1 1.5")
	assert.NotContains(t, line, "2µs/op", "the process's own wait is not beside the host's screen")
	assert.Contains(t, rep.counterLine("RunConfig"), "; its threads waited 2µs/op on a run queue")
	assert.Contains(t, line, "RunConfig.Screen.FailContended fails instead")
	var b fakeB
	pub(&b, rep, true)
	assert.Equal(t, 91.0, b.metrics["foreign-%"])
	_, has := b.metrics["sibling-%"]
	assert.False(t, has, "an unavailable figure is not reported as 0")
	assert.Empty(t, b.fatal)

	fail := (&RunConfig{Screen: Screen{FailContended: true}}).settings()
	assert.NotContains(t, rep.hostLine(fail), "fails instead")
	b = fakeB{}
	publish(&b, fail, rep, true)
	assert.Contains(t, b.fatal, "decodegap.Run: the host was contended and RunConfig.Screen.FailContended is set: foreign 91")

	rep.host.span.ForeignBusyPct.Value = 1e-9
	rep.host.span.Load1.Value = 0.1
	rep.host.verdict = rep.host.span.Screen(hostmon.Thresholds{})
	require.False(t, rep.host.verdict.Contended, hostwords.Verdict(rep.host.verdict))
	assert.True(t, strings.HasPrefix(rep.hostLine(runSettings), "host: clean"), rep.hostLine(runSettings))
	assert.Contains(t, rep.hostLine(runSettings), "foreign 0%,", "a near-zero prints as 0")
	b = fakeB{}
	pub(&b, rep, false)
	assert.Equal(t, 0.0, b.metrics["foreign-%"], "never 0.0000000 foreign-%")
}
