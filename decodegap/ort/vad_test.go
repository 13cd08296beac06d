package ort

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
)

// openVAD opens a VAD for a test and closes it at the end.
func openVAD(t testing.TB, cfg VADConfig) *VAD {
	t.Helper()
	Require(t)
	v, err := OpenVAD(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, v.Close()) })
	return v
}

// run returns the probabilities of n steps.
func run(t testing.TB, v *VAD, n int) []float32 {
	t.Helper()
	out := make([]float32, n)
	for i := range out {
		p, err := v.Next()
		require.NoError(t, err)
		out[i] = p
	}
	return out
}

func TestSynthAudioDeterministic(t *testing.T) {
	a, b, c := SynthAudio(1, 3), SynthAudio(1, 3), SynthAudio(2, 3)
	assert.Len(t, a, 3*VADFrameSamples)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
	assert.Nil(t, SynthAudio(1, 0))
	for _, s := range SynthAudio(7, SynthFrames) {
		require.True(t, s >= -1 && s <= 1, "sample %v out of [-1, 1]", s)
	}
}

func TestVADHearsVoicedSegments(t *testing.T) {
	v := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}})
	probs := run(t, v, synthVoiced+synthPause)
	var voiced, pause float32
	for i, p := range probs {
		require.True(t, p >= 0 && p <= 1, "frame %d: probability %v", i, p)
		if i < synthVoiced {
			voiced += p / synthVoiced
		} else {
			pause += p / synthPause
		}
	}
	assert.Greater(t, voiced, float32(0.3), "mean probability over the voiced segment")
	assert.Less(t, pause, float32(0.1), "mean probability over the pause")
	assert.Equal(t, probs[len(probs)-1], v.Prob())
	assert.Equal(t, int64(len(probs)), v.Frames())
}

func TestVADCarriesState(t *testing.T) {
	v := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}})
	carried := run(t, v, 10)

	// The same frames with the state zeroed before each step: a stateless
	// model would give the same probabilities.
	v.Reset()
	var fresh []float32
	for range 10 {
		clear(v.state)
		fresh = append(fresh, run(t, v, 1)...)
	}
	assert.Equal(t, carried[0], fresh[0], "the first step starts from a zero state either way")
	assert.NotEqual(t, carried[1:], fresh[1:])

	v.Reset()
	assert.Equal(t, int64(0), v.Frames())
	assert.Equal(t, float32(0), v.Prob())
	assert.Equal(t, carried, run(t, v, 10), "Reset starts the same stream again")
}

func TestVADCyclesClipAndSeedsDiffer(t *testing.T) {
	clip := SynthAudio(3, 2)
	a := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}, Audio: clip})
	b := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}, Audio: append(append([]float32{}, clip...), clip...)})
	assert.Equal(t, run(t, b, 6), run(t, a, 6), "a 2-frame clip cycled equals the clip written out twice, and so on")

	c := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}, Seed: 1})
	d := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}, Seed: 2})
	assert.NotEqual(t, run(t, c, 5), run(t, d, 5))
}

func TestVADStepDoesNotAllocate(t *testing.T) {
	v := openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}})
	step := v.Step
	allocs := testing.AllocsPerRun(50, func() {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestVADRejectsBadAudio(t *testing.T) {
	Require(t)
	_, err := OpenVAD(VADConfig{Audio: make([]float32, 100)})
	assert.EqualError(t, err, "VADConfig.Audio has 100 samples: it must be a positive multiple of 512 (one frame)")
	_, err = OpenVAD(VADConfig{Audio: []float32{}})
	assert.EqualError(t, err, "VADConfig.Audio has 0 samples: it must be a positive multiple of 512 (one frame)")
}

func TestVADMissingModel(t *testing.T) {
	Require(t)
	_, err := OpenVAD(VADConfig{Model: "/nonexistent/silero.onnx"})
	assert.EqualError(t, err, "reading the Silero VAD model: open /nonexistent/silero.onnx: no such file or directory (run `make deps` or set GAPBENCH_VAD_MODEL)")
}

func TestVADCloseReleasesAndStepFails(t *testing.T) {
	Require(t)
	v, err := OpenVAD(VADConfig{Options: Options{IntraOpThreads: 1}})
	require.NoError(t, err)
	require.NoError(t, v.Step())
	require.NoError(t, v.Close())
	require.NoError(t, v.Close(), "a second Close does nothing")
	assert.EqualError(t, v.Step(), "running Silero VAD step 1: ort: the session is closed: open a new one (ort.Open or ort.OpenVAD)")
}

func TestVADInstancesRunConcurrently(t *testing.T) {
	const n = 3
	want := run(t, openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}}), 20)
	vads := make([]*VAD, n)
	for i := range vads {
		vads[i] = openVAD(t, VADConfig{Options: Options{IntraOpThreads: 1}})
	}
	got := make([][]float32, n)
	var wg sync.WaitGroup
	for i, v := range vads {
		wg.Go(func() {
			for range 20 {
				p, err := v.Next()
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = append(got[i], p)
			}
		})
	}
	wg.Wait()
	for i := range got {
		assert.Equal(t, want, got[i], "instance %d", i)
	}
}

func TestOpenGenericSession(t *testing.T) {
	parts := Require(t)
	require.NoError(t, Init(""))
	input, err := ort.NewTensor(ort.NewShape(1, VADFrameSamples), SynthAudio(0, 1))
	require.NoError(t, err)
	state, err := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
	require.NoError(t, err)
	sr, err := ort.NewScalar(int64(VADSampleRate))
	require.NoError(t, err)
	prob, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 1))
	require.NoError(t, err)
	stateN, err := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
	require.NoError(t, err)
	opts := Options{IntraOpThreads: 1, Spinning: SpinOff}
	s, err := Open(parts.Model,
		[]Binding{{"input", input}, {"state", state}, {"sr", sr}},
		[]Binding{{"output", prob}, {"stateN", stateN}}, opts)
	require.NoError(t, err)
	assert.Equal(t, opts, s.Options())
	require.NoError(t, s.Run())

	v := openVAD(t, VADConfig{Options: opts})
	assert.Equal(t, run(t, v, 1)[0], prob.GetData()[0], "Session and VAD agree on the first frame")

	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	assert.EqualError(t, s.Run(), "ort: the session is closed: open a new one (ort.Open or ort.OpenVAD)")
}

func TestOpenGenericSessionErrors(t *testing.T) {
	parts := Require(t)
	require.NoError(t, Init(""))
	_, err := Open("/nonexistent/model.onnx", nil, nil, Options{})
	assert.EqualError(t, err, "reading the ONNX model: open /nonexistent/model.onnx: no such file or directory")

	in, err := ort.NewEmptyTensor[float32](ort.NewShape(1, VADFrameSamples))
	require.NoError(t, err)
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 1))
	require.NoError(t, err)
	_, err = Open(parts.Model, []Binding{{"input", in}}, []Binding{{"output", out}}, Options{IntraOpThreads: -1})
	assert.EqualError(t, err, "Options.IntraOpThreads is -1: use 0 for ONNX Runtime's default or a positive thread count")
}
