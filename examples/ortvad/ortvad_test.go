// Package ortvad is Silero VAD v5 through decodegap/ort's generic step: the
// model file as a step, with no hand-written adapter. bench.sh does it
// without Go (decodegap ort); BenchmarkGenericVAD does it in Go, with
// decodegap.Compare:
//
//	make deps
//	cd examples/ortvad
//	go test -run '^$' -bench GenericVAD -benchtime=600x -count 8
package ortvad

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// config is Silero VAD v5 as a generic model: frames of the synthetic clip
// from a file, sr = 16000, stateN carried into state by the rule.
func config(tb testing.TB, model string, o ort.Options) ort.ModelConfig {
	tb.Helper()
	clip := ort.SynthAudio(0, ort.SynthFrames)
	b := make([]byte, 4*len(clip))
	for i, s := range clip {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(s))
	}
	p := filepath.Join(tb.TempDir(), "clip.f32")
	require.NoError(tb, os.WriteFile(p, b, 0o644))
	return ort.ModelConfig{
		Path: model, Options: o,
		Shapes: map[string][]int64{"input": {1, ort.VADFrameSamples}, "state": {2, 1, 128}},
		Inputs: map[string]ort.Fill{"input": {Kind: ort.File, Path: p}, "sr": {Kind: ort.Const, Value: ort.VADSampleRate}},
	}
}

// BenchmarkGenericVAD compares 1 intra-op thread with 2, spinning on and
// off, at a 2 ms gap, in interleaved rounds with the null arm; the arms'
// outputs are checked against the first's before any round.
func BenchmarkGenericVAD(b *testing.B) {
	parts := ort.Require(b)
	arm := func(name string, o ort.Options) decodegap.Arm {
		cfg := config(b, parts.Model, o)
		return decodegap.Arm{Name: name, Open: func() (decodegap.Step, func() error, error) {
			m, err := ort.OpenModel(cfg)
			if err != nil {
				return nil, nil, err
			}
			return m.Step, m.Close, nil
		}}
	}
	base := config(b, parts.Model, ort.Options{IntraOpThreads: 1})
	decodegap.Compare(b, decodegap.CompareConfig{
		Gap:    decodegap.Gap{Mean: 2 * time.Millisecond},
		Warmup: 32,
		Seed:   1,
		Parity: func() error {
			for _, o := range []ort.Options{{IntraOpThreads: 2}, {IntraOpThreads: 2, Spinning: ort.SpinOff}} {
				c := base
				c.Options = o
				m, err := ort.OpenModel(c)
				if err != nil {
					return err
				}
				err = m.Parity(base.Options, 64, ort.Tolerances{Default: ort.DefaultTolerance})
				m.Close()
				if err != nil {
					return err
				}
			}
			return nil
		},
	},
		arm("intra1", ort.Options{IntraOpThreads: 1}),
		arm("intra2-spin", ort.Options{IntraOpThreads: 2}),
		arm("intra2-nospin", ort.Options{IntraOpThreads: 2, Spinning: ort.SpinOff}),
	)
}

// TestBenchScript runs bench.sh for one short round: the example `make
// bench` can run.
func TestBenchScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs decodegap ort: run without -short")
	}
	ort.Require(t)
	out := filepath.Join(t.TempDir(), "ort.txt")
	cmd := exec.Command("bash", "bench.sh")
	cmd.Env = append(os.Environ(), "ORT_ROUNDS=1", "ORT_STEPS=32", "ORT_GAP=100us", "ORT_OUT="+out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	got := string(b)
	assert.Contains(t, got, "decodegap ort: parity: arm intra2-spin agrees with intra1 over 32 steps")
	assert.Contains(t, got, "decodegap ort: parity: arm intra2-nospin agrees with intra1 over 32 steps")
	assert.Contains(t, got, "benchstat: go tool benchstat -col 'arm@(intra1 intra2-spin intra2-nospin null)' -ignore round,screen "+out)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(data), "\nBenchmarkModel/input=1x512/state=2x1x128-"), "one block of each arm and of the null arm, named with the key dims")
}
