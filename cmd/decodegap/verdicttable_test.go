package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/report"
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
	// Without a null arm (with one, no round is set aside), 16 rounds
	// (equivalence needs 14 used): one wild block is quarantined.
	s2 := synth(4, 16, 0.05, 0.01, 1.0)
	s2.Null = nil
	s2.Candidate[3] = s2.Base[3] * 1.5
	v2, err := nullband.Judge(s2, nullband.Options{})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, []report.Row{
		{Bench: "Step-2", Unit: "sec/op", Arm: "new", Verdict: v, Benchstat: report.Benchstat{Base: 1, Arm: 1.1, P: 0.001, Alpha: 0.05}},
		{Bench: "Step-2", Unit: "sec/op", Arm: "same", Verdict: v2},
	}, "old", "null", "-rounds"))
	out := b.String()
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^benchmark +arm +metric +verdict +B/A +95% CI +δ / MDE +rounds +benchstat$`, lines[0])
	assert.Regexp(t, `^Step-2 +new +sec/op +slower +1\.\d{3} +1\.\d{3}–1\.\d{3} +- +12 +\+\d+\.\d% p=0\.\d{3}$`, lines[1])
	assert.Regexp(t, `^Step-2 +same +sec/op +equivalent .* 15\+1q .*$`, lines[2])
	assert.NotContains(t, out, "quarantined rounds of new sec/op")
	assert.Contains(t, out, "quarantined rounds of same sec/op (left out of the test):\n  round 4: old ")

	// Infinite and missing figures print as such, not as numbers.
	v3, err := nullband.Judge(synth(1, 2, 0.05, 0.01, 1.0), nullband.Options{})
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, writeTable(&b, []report.Row{{Bench: "X", Unit: "sec/op", Arm: "new", Verdict: v3,
		Benchstat: report.Benchstat{Base: 1, Arm: 1.01, P: 0.5, Alpha: 0.05}}}, "old", "null", "-rounds"))
	assert.Regexp(t, `\nX +new +sec/op +undecided +\d\.\d{3} +∞ +MDE ∞ +2 +~ p=0\.500\n`, b.String())
}

// The benchstat column is the row's Benchstat (every round, benchstat's
// α of 0.05), not the verdict's view at its decision look and level: the
// regression printed "~ p=0.019" beside benchstat's "-41.92% (p=0.019)".
func TestWriteTableBenchstatColumnIsBenchstats(t *testing.T) {
	v, err := nullband.Judge(synth(1, 12, 0.05, 0.01, 1.10), nullband.Options{Confidence: 0.99})
	require.NoError(t, err)
	v.Comparison.P, v.Comparison.Alpha = 0.019, 0.01 // the decision look's view at the family's level
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, []report.Row{{Bench: "X", Unit: "sec/op", Arm: "new", Verdict: v,
		Benchstat: report.Benchstat{Base: 1, Arm: 0.5808, P: 0.019, Alpha: 0.05}}}, "old", "null", "-rounds"))
	assert.Contains(t, b.String(), " -41.9% p=0.019\n")
	assert.NotContains(t, b.String(), "~ p=0.019")
}

// A decided row whose interval is bounded on one side shows the finite
// bound: "1.040–∞", not a bare "∞".
func TestWriteTableOneSidedInterval(t *testing.T) {
	v := nullband.Verdict{Outcome: nullband.Slower, Effect: nullband.Effect{Ratio: 1.2, Lo: 1.04, Hi: math.Inf(1), Confidence: 0.95}, RoundUse: nullband.RoundUse{Used: 5}}
	f := nullband.Verdict{Outcome: nullband.Faster, Effect: nullband.Effect{Ratio: 0.8, Lo: 0, Hi: 0.97, Confidence: 0.95}, RoundUse: nullband.RoundUse{Used: 5}}
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, []report.Row{{Unit: "p50-sec/op", Arm: "new", Verdict: v}, {Unit: "cpu-sec/op", Arm: "new", Verdict: f}}, "old", "null", "-rounds"))
	assert.Regexp(t, `new +p50-sec/op +slower +1\.200 +1\.040–∞ `, b.String())
	assert.Regexp(t, `new +cpu-sec/op +less CPU +0\.800 +0–0\.970 `, b.String(), "CPU rows say less CPU, not faster")
}

// A hostile value (1e308 ns/op against 1000) prints its B/A, interval and
// benchstat delta with bounded digits: the regression printed B/A as a
// 306-digit number.
func TestInterleaveHugeValueFiguresBounded(t *testing.T) {
	dir := t.TempDir()
	base := stepScript(t, dir, "base", 1000, 0.2)
	cand := stepScript(t, dir, "cand", 1e308, 0.2)
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-rounds", "6", "-seed", "5", "-o", filepath.Join(dir, "out.txt"),
		"-lock=false", "-screen=false", "-unit", "sec/op", "old=" + base, "new=" + cand}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr:\n%s", stderr.String())
	out := stdout.String()
	assert.Regexp(t, `(?m)^Step-2 +new +sec/op +slower +1\.00e\+305 +\d\.\d\de\+30[45]–\d\.\d\de\+30[45] +- +6 +\+1\.00e\+307% p=0\.\d{3}$`, out)
	assert.NotRegexp(t, `\d{13}`, out, "a figure of more than 12 digits")
}
