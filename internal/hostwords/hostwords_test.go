package hostwords

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/hostmon"
)

// The figures are those hostmon's fixtures screen to (hostmon's
// sampler_test.go): the words are pinned here.
func TestReasons(t *testing.T) {
	cpus := hostmon.NewCPUSet(0, 2, 4, 6)
	v := hostmon.Verdict{Contended: true, Over: []hostmon.Over{
		{Check: hostmon.ForeignBusy, Value: 21.75, Limit: 5, CPUs: cpus},
		{Check: hostmon.SiblingBusy, Value: 90, Limit: 20, CPUs: hostmon.NewCPUSet(10)},
		{Check: hostmon.SiblingBusy, Value: 90, Limit: 20, CPUs: hostmon.NewCPUSet(16)},
		{Check: hostmon.Steal, Value: 0.26, Limit: 0.2, CPUs: cpus},
		{Check: hostmon.RunQueueWait, Value: 8, Limit: 5, CPUs: cpus, Extra: hostmon.Figure{Value: 320e6, Unit: "ns"}},
		{Check: hostmon.PSISome, Value: 25, Limit: 20},
		{Check: hostmon.Load1, Value: 40, Limit: 32, PerCPU: 1, OnlineCPUs: 32},
		{Check: hostmon.ProcsRunning, Value: 41, Limit: 32, PerCPU: 1, OnlineCPUs: 32},
		{Check: hostmon.Throttled, Value: 3, Limit: 1, Extra: hostmon.Figure{Value: 5, Unit: "n"}},
		{Check: hostmon.ForeignBusy, Value: 1.26, Limit: 1, CPUs: hostmon.NewCPUSet(0, 1, 2, 3)},
	}}
	assert.Equal(t, []string{
		"foreign 22% on CPUs 0,2,4,6 > 5%",
		"sibling 90% on CPU 10, 90% on CPU 16 > 20%",
		"steal 0.3% on CPUs 0,2,4,6 > 0.2%",
		"run-queue wait 8% of CPU time on CPUs 0,2,4,6 (320ms) > 5%",
		"PSI cpu some 25% > 20%",
		"load1 40.00 > 32.00 (1 per CPU × 32 online CPUs)",
		"41 runnable tasks > 32.0 (1 per CPU × 32 online CPUs)",
		"cgroup CPU quota throttled 3% of the span (5 periods) > 1%",
		"foreign 1.3% on CPUs 0-3 > 1%",
	}, Reasons(v))
}

func TestVerdict(t *testing.T) {
	assert.Equal(t, "clean", Verdict(hostmon.Verdict{}))
	v := hostmon.Verdict{Contended: true,
		Over: []hostmon.Over{{Check: hostmon.ForeignBusy, Value: 16.04, Limit: 5, CPUs: hostmon.NewCPUSet(0, 1)}},
		Unscreened: []hostmon.Unscreened{{Check: hostmon.RunQueueWait,
			Figure: hostmon.Figure{Unit: "ns", Reason: "no testdata/vm2/proc/schedstat: kernel built without CONFIG_SCHEDSTATS"}}}}
	assert.Equal(t, "contended: foreign 16% on CPUs 0,1 > 5% (not screened: run-queue wait: unavailable (no testdata/vm2/proc/schedstat: kernel built without CONFIG_SCHEDSTATS))", Verdict(v))
	assert.Equal(t, "sibling 68% on CPU 17 > 20%", Over(hostmon.Over{Check: hostmon.SiblingBusy, Value: 68, Limit: 20, CPUs: hostmon.NewCPUSet(17)}))
	assert.Equal(t, "PSI cpu some", CheckName(hostmon.PSISome))
}
