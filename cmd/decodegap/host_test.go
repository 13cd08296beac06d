package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/hostmon"
)

func TestHostFixtureEPYC32(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"host", "-root", "../../hostmon/testdata/epyc32", "-n", "10", "-for", "20ms"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	s := out.String()
	t.Log(s)
	assert.Contains(t, s, "32 CPUs online (0-31), 16 physical cores in 1 package(s), SMT (2 threads a core)\n")
	assert.Contains(t, s, "L3 0: CPUs 0-7,16-23 (32768K)\nL3 1: CPUs 8-15,24-31 (32768K)\n")
	assert.Contains(t, s, "budget for -n 10 (deterministic order): CPUs 0-9 (siblings 16-25)\n")
	// A fixture does not change while it is sampled: no tick, so the
	// /proc/stat figures are unavailable, not 0.
	assert.Contains(t, s, "foreign busy      unavailable (no clock tick counted on CPUs 0-9 within the span)")
	assert.NotContains(t, s, "one tick =", "no resolution line without ticks")
	assert.Contains(t, s, "verdict: clean (not screened: foreign busy: unavailable")
}

func TestHostFixtureSocket2(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"host", "-root", "../../hostmon/testdata/socket2", "-n", "4", "-for", "20ms"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "cores (CPUs of one core joined by +): 0+1 2+3")
	assert.Contains(t, out.String(), "budget for -n 4 (deterministic order): CPUs 0,2,4,6 (siblings 1,3,5,7)\n")
}

func TestHostLive(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"host", "-n", "1", "-for", "200ms"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	s := out.String()
	t.Log(s)
	assert.Contains(t, s, "budget for -n 1 (deterministic order): CPU ")
	assert.Regexp(t, `contention over 0\.[2-9]\ds on the budget`, s, "200 ms asked for; a loaded host wakes the sampler late")
	assert.Regexp(t, `verdict: (clean|contended: )`, s)
}

func TestHostErrors(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 1, dispatch([]string{"host", "-root", "../../hostmon/testdata/vm2", "-n", "3", "-for", "10ms"}, &out, &errb))
	assert.Contains(t, errb.String(), "decodegap host: -n 3: hostmon: a budget of 3 physical cores, but only 2 cores have a CPU this process may use")

	errb.Reset()
	assert.Equal(t, 2, dispatch([]string{"host", "-for", "0s"}, &out, &errb))
	assert.Contains(t, errb.String(), "-for 0s: the sample needs a positive duration")

	for _, n := range []string{"0", "-1"} {
		errb.Reset()
		assert.Equal(t, 2, dispatch([]string{"host", "-root", "../../hostmon/testdata/vm2", "-n", n}, &out, &errb), "-n %s is a usage error", n)
		assert.Equal(t, "decodegap host: -n "+n+": the budget needs at least 1 core\n", errb.String())
	}

	errb.Reset()
	assert.Equal(t, 2, dispatch([]string{"host", "extra"}, &out, &errb))
	assert.Contains(t, errb.String(), `unexpected argument "extra"`)
	assert.Contains(t, errb.String(), "usage: decodegap host")
	assert.NotContains(t, errb.String(), "-root", "the fixture flag stays hidden")
}

// The resolution line's numbers agree with each other and with the span's
// length: a 1 s sample in which /proc/stat counted 70 ticks on one CPU
// (the kernel counts idle time lazily) makes one tick 1.4%, and the line
// says so rather than implying 100 ticks.
func TestHostResolutionLine(t *testing.T) {
	var b bytes.Buffer
	sp := hostmon.Span{Seconds: 1.0, CPUs: hostmon.NewCPUSet(1), ResolutionPct: 100.0 / 70}
	printSpan(&b, sp, time.Second)
	s := b.String()
	assert.Contains(t, s, "contention over 1.00s on the budget")
	assert.Contains(t, s, "(percentages from /proc/stat count whole clock ticks: it counted 70 ticks (0.70 CPU-seconds) on CPU 1 in these 1.00s, so one tick = 1.4%; sample longer with -for for finer figures)\n")
}
