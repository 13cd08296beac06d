package decodegap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/internal/steady"
)

func TestNullInstanceTakesAlternateWindowsABBA(t *testing.T) {
	s := (&RunConfig{Window: 4, Warmup: 8}).settings()
	r := newRunner(s, 32)
	var order strings.Builder
	m := &nullMode{
		step: func() error { order.WriteByte('A'); return nil },
		null: func() error { order.WriteByte('b'); return nil },
	}
	m.nullRec, r.rec = newRecord(16+4), newRecord(16+4)
	_, err := m.run(r)
	require.NoError(t, err)
	// 8 warm-up iterations (A A A A b b b b), then 32 recorded in windows of 4:
	// A b b A A b b A.
	want := "AAAAbbbb" + "AAAAbbbbbbbbAAAAAAAAbbbbbbbbAAAA"
	assert.Equal(t, want, order.String())
	assert.Equal(t, 16, r.rec.count)
	assert.Equal(t, 16, m.nullRec.count)
	assert.Len(t, r.rec.lat, 16)
	assert.Len(t, m.nullRec.lat, 16)
}

func TestNullLineIsConditional(t *testing.T) {
	rep := steadyReport()
	rep.null = nullResult{on: true, ratio: 1.0123, steady: true}
	assert.Equal(t, "null: a second instance (RunConfig.Null) ran alternate windows; its steady mean / this one's = 1.0123", rep.nullLine())
	rep.null.steady, rep.null.st = false, steady.Result{Reason: steady.Drifting}
	assert.Contains(t, rep.nullLine(), "the null instance reached no steady state (drifting), so the ratio compares transients")
	var b fakeB
	pub(&b, rep, true)
	assert.Equal(t, 1.0123, b.metrics["null-ratio"])
}

func TestRunWithNullReportsNullRatio(t *testing.T) {
	out, err := runChild(t, "null", "256x")
	require.NoError(t, err, out)
	assert.Regexp(t, `[\d.]+ null-ratio`, out)
	assert.Contains(t, out, "null: a second instance (RunConfig.Null) ran alternate windows")
	assert.Contains(t, out, "instance 1 closed", "Run closes both instances")
	assert.Contains(t, out, "instance 2 closed", "Run closes both instances")
}
