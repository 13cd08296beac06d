package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/nullband"
)

// synth returns n rounds of A, B = effect × A and A' with per-round weather
// shared by the arms and independent lognormal noise.
func synth(seed uint64, n int, weather, noise, effect float64) nullband.Samples {
	r := rand.New(rand.NewPCG(seed, 42))
	s := nullband.Samples{Base: make([]float64, n), Candidate: make([]float64, n), Null: make([]float64, n)}
	for i := range n {
		w := 1e-3 * (1 + weather*(2*r.Float64()-1))
		s.Base[i] = w * math.Exp(noise*r.NormFloat64())
		s.Null[i] = w * math.Exp(noise*r.NormFloat64())
		s.Candidate[i] = w * effect * math.Exp(noise*r.NormFloat64())
	}
	return s
}

func TestWriteTable(t *testing.T) {
	s := synth(1, 12, 0.05, 0.01, 1.10)
	v, err := nullband.Judge(s, nullband.Options{})
	require.NoError(t, err)
	s2 := synth(2, 12, 0.05, 0.01, 1.0)
	s2.Null[3] = s2.Base[3] * 1.5
	v2, err := nullband.Judge(s2, nullband.Options{})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, []judged{
		{interleave.Set{Benchmark: "Step-2", Unit: "sec/op", Candidate: "new"}, v},
		{interleave.Set{Benchmark: "Step-2", Unit: "sec/op", Candidate: "same"}, v2},
	}, "old", "null", "-rounds"))
	out := b.String()
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^benchmark +arm +metric +verdict +B/A +95% CI +δ / MDE +rounds +benchstat$`, lines[0])
	assert.Regexp(t, `^Step-2 +new +sec/op +slower +1\.\d{3} +1\.\d{3}–1\.\d{3} +- +12 +\+\d+\.\d% p=0\.\d{3}$`, lines[1])
	assert.Regexp(t, `^Step-2 +same +sec/op +equivalent .* 11\+1q .*$`, lines[2])
	assert.NotContains(t, out, "quarantined rounds of new sec/op")
	assert.Contains(t, out, "quarantined rounds of same sec/op (left out of the test):\n  round 4: old ")

	// Infinite and missing figures print as such, not as numbers.
	v3, err := nullband.Judge(synth(1, 2, 0.05, 0.01, 1.0), nullband.Options{})
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, writeTable(&b, []judged{{interleave.Set{Benchmark: "X", Unit: "sec/op", Candidate: "new"}, v3}}, "old", "null", "-rounds"))
	assert.Regexp(t, `\nX +new +sec/op +undecided +\d\.\d{3} +∞ +MDE ∞ +2 +~ p=\d\.\d{3}\n`, b.String())
}
