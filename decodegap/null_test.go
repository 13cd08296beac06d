package decodegap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNullInstanceTakesAlternateWindowsABBA(t *testing.T) {
	cfg := Config{Window: 4, Warmup: 8}
	r := newRunner(&cfg, 32)
	r.rec, r.nullRec = newRecord(16+4), newRecord(16+4)
	var order strings.Builder
	a := func() error { order.WriteByte('A'); return nil }
	b := func() error { order.WriteByte('b'); return nil }
	_, err := r.loop(a, b)
	require.NoError(t, err)
	// 8 warm-up iterations (A A A A b b b b), then 32 recorded in windows of 4:
	// A b b A A b b A.
	want := "AAAAbbbb" + "AAAAbbbbbbbbAAAAAAAAbbbbbbbbAAAA"
	assert.Equal(t, want, order.String())
	assert.Equal(t, 16, r.rec.count)
	assert.Equal(t, 16, r.nullRec.count)
	assert.Len(t, r.rec.lat, 16)
	assert.Len(t, r.nullRec.lat, 16)
}

func TestNullLineIsConditional(t *testing.T) {
	rep := steadyReport()
	rep.null, rep.nullRatio, rep.nullSteady = true, 1.0123, true
	assert.Equal(t, "null: a second instance (Config.Null) ran alternate windows; its steady mean / this one's = 1.0123", rep.nullLine())
	rep.nullSteady, rep.nullReason = false, "drift"
	assert.Contains(t, rep.nullLine(), "the null instance reached no steady state (drift), so the ratio compares transients")
	var b fakeB
	rep.publish(&b, true)
	assert.Equal(t, 1.0123, b.metrics["null-ratio"])
}

func TestRunWithNullReportsNullRatio(t *testing.T) {
	out, err := runChild(t, "null", "256x")
	require.NoError(t, err, out)
	assert.Regexp(t, `[\d.]+ null-ratio`, out)
	assert.Contains(t, out, "null: a second instance (Config.Null) ran alternate windows")
	assert.Contains(t, out, "null instance closed", "Run closes the null instance")
}
