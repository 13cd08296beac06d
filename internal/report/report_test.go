package report

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/nullband"
)

func TestBenchstatDeltaAndSignificance(t *testing.T) {
	b := Benchstat{Base: 2, Arm: 1.5, P: 0.019, Alpha: 0.05}
	assert.InDelta(t, -0.25, b.Delta(), 1e-12)
	assert.True(t, b.Significant())
	b.P = 0.2
	assert.False(t, b.Significant(), "above benchstat's α: ~")
	assert.True(t, math.IsNaN(Benchstat{Base: 0, Arm: 1}.Delta()), "no base: no delta")
	assert.True(t, math.IsNaN(Benchstat{Base: 1, Arm: math.NaN()}.Delta()))
}

func TestRowKindsAndWords(t *testing.T) {
	assert.True(t, IsCPU("cpu-sec/op"))
	assert.True(t, IsCPU("cpu-ns/op"))
	assert.False(t, IsCPU("cpu/wall"), "CPU per wall second is a share, not CPU time per op")
	assert.False(t, IsCPU("sec/op"))
	assert.Equal(t, "null-check", NullCheck.String())
	assert.Equal(t, "candidate", Candidate.String())
	r := Row{Verdict: nullband.Verdict{Outcome: nullband.Equivalent}}
	assert.True(t, r.Decided())
	r.Err = "boom"
	assert.False(t, r.Decided(), "an error is never decided")
	r = Row{}
	assert.False(t, r.Decided(), "undecided")
}

// A Row holds only data: a JSON writer can write it once its floats are
// finite (NaN and ±Inf are the writer's to map).
func TestRowIsPlainData(t *testing.T) {
	r := Row{Bench: "Step-2", Arm: "new", Base: "old", Unit: "sec/op", Weight: 1, Level: 0.975,
		Verdict: nullband.Verdict{Outcome: nullband.Slower, Effect: nullband.Effect{Ratio: 1.05, Lo: 1.01, Hi: 1.09}}, Stalled: []int{3},
		Benchstat: Benchstat{Base: 1, Arm: 1.05, P: 0.01, Alpha: 0.05, BaseN: 10, ArmN: 10}}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var back Row
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, r, back)
}
