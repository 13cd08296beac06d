package ort

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToleranceMatch(t *testing.T) {
	nan := float32(math.NaN())
	exact := Tolerance{}
	assert.True(t, exact.Match(0.5, 0.5))
	assert.False(t, exact.Match(0.5, math.Nextafter32(0.5, 1)))
	assert.False(t, exact.Match(nan, nan), "NaN never matches")

	tol := Tolerance{Abs: 0.01, Rel: 0.1}
	assert.True(t, tol.Match(1, 1.105), "0.105 ≤ 0.01 + 0.1×1")
	assert.False(t, tol.Match(1, 1.115))
	assert.True(t, tol.Match(-1, -1.105), "relative to |ref|")
	assert.True(t, tol.Match(0, 0.01))
	assert.False(t, tol.Match(0, 0.02))
	assert.False(t, tol.Match(1, nan))
	assert.Equal(t, "abs 1e-05 + rel 0.0001×|ref|", DefaultTolerance.String())
}

func TestParityErrorMessage(t *testing.T) {
	e := &ParityError{
		Output: "stateN", Frame: 12, Index: 37, Reference: 0.25, Candidate: 0.5,
		ReferenceOptions: Options{IntraOpThreads: 1}, CandidateOptions: Options{IntraOpThreads: 2, Spinning: SpinOff},
		Tolerance: DefaultTolerance,
	}
	assert.Equal(t, `parity: output "stateN"[37] at frame 12 differs: reference (intra=1,inter=0,spin=on,sequential) 0.25, candidate (intra=2,inter=0,spin=off,sequential) 0.5, |diff| 0.25 exceeds tolerance abs 1e-05 + rel 0.0001×|ref|`, e.Error())
}

func TestParityMatchesAcrossThreadsAndSpinning(t *testing.T) {
	v := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 2, Spinning: SpinOff}})
	require.NoError(t, v.Step())
	require.NoError(t, v.Parity(Options{IntraOpThreads: 1}, 40, DefaultTolerance))
	assert.Equal(t, int64(0), v.Frames(), "Parity leaves the VAD reset")

	w := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1, Spinning: SpinOn}})
	assert.NoError(t, w.Parity(Options{IntraOpThreads: 1, Spinning: SpinOff}, 40, DefaultTolerance))
}

func TestParityReportsFirstMismatch(t *testing.T) {
	const bad = 5
	clip := SynthAudio(0, 8)
	perturbed := append([]float32{}, clip...)
	for i := bad * VADFrameSamples; i < (bad+1)*VADFrameSamples; i++ {
		perturbed[i] += 0.05
	}
	cand := Options{IntraOpThreads: 1, Spinning: SpinOff}
	v := openVAD(t, VADConfig{Options: cand, Audio: clip})
	ref := VADConfig{Options: Options{IntraOpThreads: 1}, Audio: perturbed}

	err := v.parity(ref, 8, Tolerance{})
	var pe *ParityError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "output", pe.Output, "the probability is compared before the state")
	assert.Equal(t, bad, pe.Frame, "frames before the perturbation match exactly")
	assert.Equal(t, 0, pe.Index)
	assert.NotEqual(t, pe.Reference, pe.Candidate)
	assert.Equal(t, ref.Options, pe.ReferenceOptions)
	assert.Equal(t, cand, pe.CandidateOptions)
	assert.Equal(t, int64(0), v.Frames(), "Parity leaves the VAD reset, also on a mismatch")

}

func TestParityRejectsBadArguments(t *testing.T) {
	v := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}})
	assert.EqualError(t, v.Parity(Options{}, 0, DefaultTolerance), "parity needs at least one frame, got 0")
	assert.EqualError(t, v.Parity(Options{}, 4, Tolerance{Abs: -1}), "parity tolerance abs -1 + rel 0×|ref|: Abs and Rel must be ≥ 0")
	assert.EqualError(t, v.Parity(Options{IntraOpThreads: -1}, 4, DefaultTolerance),
		"parity: opening the reference session (intra=-1,inter=0,spin=on,sequential): Options.IntraOpThreads is -1: use 0 for ONNX Runtime's default or a positive thread count")
}
