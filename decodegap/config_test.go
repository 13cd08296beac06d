package decodegap

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestZeroConfigIsValid(t *testing.T) {
	var c RunConfig
	assert.NoError(t, c.validate())
	assert.NoError(t, c.settings().validate(1))
	assert.NoError(t, c.settings().validate(2000))
	assert.Equal(t, 32, c.settings().windowSize())
	var cc CompareConfig
	assert.NoError(t, cc.settings().validate(2000))
}

func TestValidateNamesFieldValueAndRange(t *testing.T) {
	cases := []struct {
		name string
		cfg  RunConfig
		n    int
		want string
	}{
		{"negative gap", RunConfig{Gap: Gap{Mean: -time.Microsecond}}, 100, "RunConfig.Gap.Mean = -1µs: want >= 0"},
		{"jitter above 1", RunConfig{Gap: Gap{Shape: GapUniform, Jitter: 1.5}}, 100, "RunConfig.Gap.Jitter = 1.5: want a fraction in [0, 1]"},
		{"jitter below 0", RunConfig{Gap: Gap{Jitter: -0.1}}, 100, "RunConfig.Gap.Jitter = -0.1: want a fraction in [0, 1]"},
		{"jitter NaN", RunConfig{Gap: Gap{Jitter: math.NaN()}}, 100, "RunConfig.Gap.Jitter = NaN"},
		{"empty trace", RunConfig{Gap: Gap{Shape: GapTrace}}, 100, "RunConfig.Gap.Trace is empty but RunConfig.Gap.Shape is GapTrace"},
		{"negative trace entry", RunConfig{Gap: Gap{Shape: GapTrace, Trace: []time.Duration{1, -2}}}, 100, "RunConfig.Gap.Trace[1] = -2ns: want >= 0"},
		{"negative spin", RunConfig{Gap: Gap{Spin: -1}}, 100, "RunConfig.Gap.Spin = -1ns: want >= 0"},
		{"bad kind", RunConfig{Gap: Gap{Kind: 7}}, 100, "RunConfig.Gap.Kind = 7: want GapHybrid, GapSleep or GapBusy"},
		{"bad shape", RunConfig{Gap: Gap{Shape: -1}}, 100, "RunConfig.Gap.Shape = -1"},
		{"negative warmup", RunConfig{Warmup: -3}, 100, "RunConfig.Warmup = -3: want >= 0"},
		{"tiny window", RunConfig{Window: 2}, 100, "RunConfig.Window = 2: want 0 (default 32) or >= 4"},
		{"window larger than run", RunConfig{Window: 64}, 50, "RunConfig.Window = 64 is larger than the run (b.N = 50): lower RunConfig.Window or raise -benchtime to at least 128x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.settings().validate(c.n)
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), c.want)
			}
		})
	}
}

func TestValidateIgnoresWindowOnProbe(t *testing.T) {
	// testing's first call has b.N = 1: a window larger than that is no error.
	c := RunConfig{Window: 64}
	assert.NoError(t, c.settings().validate(1))
}

func TestKindAndShapeStrings(t *testing.T) {
	assert.Equal(t, "hybrid", GapHybrid.String())
	assert.Equal(t, "sleep", GapSleep.String())
	assert.Equal(t, "busy", GapBusy.String())
	assert.Equal(t, "GapKind(9)", GapKind(9).String())
	assert.Equal(t, "constant", GapConstant.String())
	assert.Equal(t, "uniform", GapUniform.String())
	assert.Equal(t, "exponential", GapExponential.String())
	assert.Equal(t, "trace", GapTrace.String())
	assert.Equal(t, "GapShape(9)", GapShape(9).String())
}

// TestSizesOverTheLimitsAreNamedErrors: issue 24: Sessions: 100000 ended in
// "thread exhaustion"; Gap.Mean = math.MaxInt64 ran with no gap and
// reported gap-req 0 silently.
func TestSizesOverTheLimitsAreNamedErrors(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  RunConfig
		n    int
		want string
	}{
		"sessions":       {RunConfig{Sessions: 100000}, 100, "RunConfig.Sessions = 100000: over decodegap's limit: at most 1024 (MaxSessions"},
		"session memory": {RunConfig{Sessions: 1024, Gap: Gap{Mean: time.Millisecond, Open: true}}, 1 << 20, "the records would take 32GiB, over MaxRecordBytes (4GiB): lower -benchtime or RunConfig.Sessions"},
		"gap":            {RunConfig{Gap: Gap{Mean: math.MaxInt64}}, 100, "RunConfig.Gap.Mean = 2562047h47m16.854775807s: over decodegap's limit: at most 1h0m0s (MaxGap)"},
		"trace":          {RunConfig{Gap: Gap{Shape: GapTrace, Trace: []time.Duration{1, 2 * time.Hour}}}, 100, "RunConfig.Gap.Trace[1] = 2h0m0s: over decodegap's limit"},
		"spin":           {RunConfig{Gap: Gap{Mean: time.Millisecond, Spin: math.MaxInt64}}, 100, "RunConfig.Gap.Spin = "},
	} {
		err := c.cfg.settings().validate(c.n)
		if err == nil {
			err = c.cfg.limitSessions(c.n)
		}
		if assert.Error(t, err, name) {
			assert.ErrorIs(t, err, ErrLimit, name)
			assert.Contains(t, err.Error(), c.want, name)
		}
	}
	assert.NoError(t, (&RunConfig{Sessions: MaxSessions}).limitSessions(2000))
	assert.NoError(t, (&RunConfig{Gap: Gap{Mean: MaxGap}}).settings().validate(100))
}
