package decodegap

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestZeroConfigIsValid(t *testing.T) {
	var c Config
	assert.NoError(t, c.validate(1))
	assert.NoError(t, c.validate(2000))
	assert.Equal(t, 32, c.window())
}

func TestValidateNamesFieldValueAndRange(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		n    int
		want string
	}{
		{"negative gap", Config{Gap: Gap{Mean: -time.Microsecond}}, 100, "Config.Gap.Mean = -1µs: want >= 0"},
		{"jitter above 1", Config{Gap: Gap{Shape: GapUniform, Jitter: 1.5}}, 100, "Config.Gap.Jitter = 1.5: want a fraction in [0, 1]"},
		{"jitter below 0", Config{Gap: Gap{Jitter: -0.1}}, 100, "Config.Gap.Jitter = -0.1: want a fraction in [0, 1]"},
		{"jitter NaN", Config{Gap: Gap{Jitter: math.NaN()}}, 100, "Config.Gap.Jitter = NaN"},
		{"empty trace", Config{Gap: Gap{Shape: GapTrace}}, 100, "Config.Gap.Trace is empty but Config.Gap.Shape is GapTrace"},
		{"negative trace entry", Config{Gap: Gap{Shape: GapTrace, Trace: []time.Duration{1, -2}}}, 100, "Config.Gap.Trace[1] = -2ns: want >= 0"},
		{"negative spin", Config{Gap: Gap{Spin: -1}}, 100, "Config.Gap.Spin = -1ns: want >= 0"},
		{"bad kind", Config{Gap: Gap{Kind: 7}}, 100, "Config.Gap.Kind = 7: want GapHybrid, GapSleep or GapBusy"},
		{"bad shape", Config{Gap: Gap{Shape: -1}}, 100, "Config.Gap.Shape = -1"},
		{"negative warmup", Config{Warmup: -3}, 100, "Config.Warmup = -3: want >= 0"},
		{"tiny window", Config{Window: 2}, 100, "Config.Window = 2: want 0 (default 32) or >= 4"},
		{"window larger than run", Config{Window: 64}, 50, "Config.Window = 64 is larger than the run (b.N = 50): lower Config.Window or raise -benchtime to at least 128x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.validate(c.n)
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), c.want)
			}
		})
	}
}

func TestValidateIgnoresWindowOnProbe(t *testing.T) {
	// testing's first call has b.N = 1: a window larger than that is no error.
	c := Config{Window: 64}
	assert.NoError(t, c.validate(1))
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
