package decodegap

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCounter is a counter whose value the test sets; probe adds probeStep.
type fakeCounter struct {
	v         float64
	probeStep float64
	err       error
}

func (f *fakeCounter) counter(name string, withProbe bool) Counter {
	c := Counter{Name: name, Read: func() (float64, error) { return f.v, f.err }}
	if withProbe {
		c.Probe = func() { f.v += f.probeStep }
	}
	return c
}

func TestUserCountersSayWhichZero(t *testing.T) {
	moving := &fakeCounter{}
	quietAlive := &fakeCounter{probeStep: 3}
	dead := &fakeCounter{}
	unprobed := &fakeCounter{}
	broken := &fakeCounter{err: errors.New("perf_event_open: permission denied")}
	cs := []Counter{
		moving.counter("misses", true),
		quietAlive.counter("faults", true),
		dead.counter("dead", true),
		unprobed.counter("plain", false),
		broken.counter("broken", true),
	}
	first, last := &snapshot{}, &snapshot{}
	first.userVals, first.userErrs = make([]float64, 5), make([]error, 5)
	readCounters(cs, first.userVals, first.userErrs)
	moving.v += 500
	last.userVals, last.userErrs = make([]float64, 5), make([]error, 5)
	readCounters(cs, last.userVals, last.userErrs)

	us := userSpans(cs, first, last, 100)
	require.Len(t, us, 5)
	assert.Equal(t, 500.0, us[0].delta)
	assert.Equal(t, "true", us[1].zero)
	assert.Equal(t, 3.0, us[1].probeMoved)
	assert.Equal(t, "dead", us[2].zero)
	assert.Equal(t, "unverified", us[3].zero)
	assert.Contains(t, us[4].err, "permission denied")

	line := userLine(us, 100)
	assert.Equal(t, "counters: misses 5/op; "+
		"faults 0/op (a true zero: its Counter.Probe moved it by 3); "+
		"dead 0/op (a dead instrument: its Counter.Probe did not move it either); "+
		"plain 0/op (unverified: set Counter.Probe to tell a true zero from a dead counter); "+
		"broken unavailable (perf_event_open: permission denied)", line)

	rep := steadyReport()
	rep.proc.first, rep.proc.last = first, last
	rep.user = us
	var b fakeB
	pub(&b, rep, true)
	assert.Equal(t, 500.0/2000, b.metrics["misses/op"])
	assert.Equal(t, 0.0, b.metrics["dead/op"])
	_, has := b.metrics["broken/op"]
	assert.False(t, has, "an unreadable counter is not reported as 0")
}

func TestValidateCounters(t *testing.T) {
	read := func() (float64, error) { return 0, nil }
	assert.EqualError(t, validateCounters("RunConfig", []Counter{{Name: "a b", Read: read}}), `RunConfig.Counters[0].Name = "a b": want a non-empty name without white space`)
	assert.EqualError(t, validateCounters("RunConfig", []Counter{{Name: "x"}}), `RunConfig.Counters[0].Read (counter "x") is nil: give the function that reads it`)
	assert.EqualError(t, validateCounters("RunConfig", []Counter{{Name: "x", Read: read}, {Name: "x", Read: read}}), `RunConfig.Counters[1].Name = "x" is used twice`)
	assert.NoError(t, validateCounters("RunConfig", nil))
}

func TestRunWithOpenParityAndCounters(t *testing.T) {
	out, err := runChild(t, "open", "256x")
	require.NoError(t, err, out)
	assert.Regexp(t, `[\d.]+ steps/op`, out)
	assert.Contains(t, out, "counters: steps 1/op")
	assert.Contains(t, out, "threads: ")
	assert.Contains(t, out, "step closed", "Run closes what it opened")

	out, err = runChild(t, "parity", "16x")
	require.Error(t, err)
	assert.Contains(t, out, "decodegap.Run: parity check failed (RunConfig.Parity), nothing was timed: output 0 differs at frame 3: 0.5 vs 0.25")
	assert.NotContains(t, out, "step ran")
}

func TestRunSessionsReportsPooledPerSessionAndThroughput(t *testing.T) {
	out, err := runChild(t, "sessions", "200x")
	require.NoError(t, err, out)
	for _, unit := range []string{"steps/s", "s1-p50-ns/op", "s2-p90-ns/op", "s3-p50-ns/op"} {
		assert.Contains(t, out, " "+unit)
	}
	assert.Contains(t, out, "sessions: 3 concurrent (RunConfig.Sessions), released together each round; pooled p50")
	assert.Contains(t, out, "the thread census below is of session 1 alone")
	c := RunConfig{Sessions: 2, Null: true}
	assert.EqualError(t, c.validate(), "RunConfig.Sessions = 2 and RunConfig.Null cannot be combined: compare session counts with Compare instead")
}

func TestNonFiniteCountersAreUnavailable(t *testing.T) {
	vals := []float64{math.NaN(), 1, math.Inf(1), 5}
	cs := make([]Counter, 4)
	for i := range cs {
		cs[i] = Counter{Name: fmt.Sprintf("c%d", i), Read: func() (float64, error) { return 0, nil }}
	}
	first := &snapshot{userVals: []float64{0, math.NaN(), 0, math.MaxFloat64}, userErrs: make([]error, 4)}
	last := &snapshot{userVals: vals, userErrs: make([]error, 4)}
	last.userVals[3] = -math.MaxFloat64
	us := userSpans(cs, first, last, 100)
	assert.Equal(t, "it read NaN at the end of the span", us[0].err)
	assert.Equal(t, "it read NaN at the start of the span", us[1].err)
	assert.Equal(t, "it read +Inf at the end of the span", us[2].err)
	assert.Equal(t, "its change over the span is -Inf", us[3].err)

	rep := steadyReport()
	rep.user = us
	var b fakeB
	pub(&b, rep, true)
	for _, c := range cs {
		_, has := b.metrics[c.Name+"/op"]
		assert.False(t, has, "%s: a non-finite counter is not reported", c.Name)
	}
	assert.Contains(t, b.logs[0], "c0 unavailable (it read NaN at the end of the span)")
	assert.NotContains(t, b.logs[0], "NaN/op")
}

// TestCounterNamesCollidingWithBuiltinUnitsAreRefused: a user Counter
// reported as NAME/op must not replace a figure decodegap reports itself
// (issue 24: a Counter "ns" made the result line read "2.500 ns/op").
func TestCounterNamesCollidingWithBuiltinUnitsAreRefused(t *testing.T) {
	read := func() (float64, error) { return 0, nil }
	for name, unit := range map[string]string{
		"ns": "ns/op", "p50-ns": "p50-ns/op", "vcsw": "vcsw/op", "gc": "gc/op",
		"sec": "ns/op", "p99-sec": "p99-ns/op", "B": "B/op", "allocs": "allocs/op",
		"s3-p50-ns": "s3-p50-ns/op", "threads": "threads", "max-ns": "max-ns/op", "overloaded": "overloaded",
		"resp-p99-ns": "resp-p99-ns/op", "user-ns": "user-ns/op",
	} {
		err := validateCounters("RunConfig", []Counter{{Name: name, Read: read}})
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), fmt.Sprintf("RunConfig.Counters[0].Name = %q", name))
			assert.Contains(t, err.Error(), "collides with decodegap's own unit "+unit+":")
		}
	}
	for _, name := range []string{"misses", "cache-misses", "tokens", "nsx", "ns-user"} {
		assert.NoError(t, validateCounters("RunConfig", []Counter{{Name: name, Read: read}}), name)
	}
}
