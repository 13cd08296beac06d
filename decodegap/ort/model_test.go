package ort

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
)

// testData returns the path of a model in onnxruntime_go's own test_data,
// found with go list; it skips (fails under CI) when the module or the
// library is missing.
func testData(t testing.TB, name string) string {
	t.Helper()
	RequireLibrary(t)
	return RequireModel(t, filepath.Join(ortModuleDir(t), "test_data", name))
}

var ortDir struct {
	once sync.Once
	dir  string
	err  error
}

func ortModuleDir(t testing.TB) string {
	ortDir.once.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
		ortDir.dir, ortDir.err = strings.TrimSpace(string(out)), err
	})
	if ortDir.err != nil || ortDir.dir == "" {
		missing(t, fmt.Errorf("onnxruntime_go's module directory (go list -m github.com/yalue/onnxruntime_go): %v", ortDir.err), InCI())
	}
	return ortDir.dir
}

// openModel opens a Model for a test and closes it at the end.
func openModel(t testing.TB, cfg ModelConfig) *Model {
	t.Helper()
	m, err := OpenModel(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	return m
}

// clipFile writes SynthAudio(seed, frames) as little-endian float32.
func clipFile(t testing.TB, seed uint64, frames int) string {
	t.Helper()
	clip := SynthAudio(seed, frames)
	b := make([]byte, 4*len(clip))
	for i, s := range clip {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(s))
	}
	p := filepath.Join(t.TempDir(), "clip.f32")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// vadModelConfig is Silero VAD v5 through the generic path: the clip fed
// frame by frame from a file, sr = 16000, state carried by the rule.
func vadModelConfig(t testing.TB, opts Options, frames int) ModelConfig {
	t.Helper()
	parts := Require(t)
	return ModelConfig{
		Path:    parts.Model,
		Options: opts,
		Shapes:  map[string][]int64{"input": {1, VADFrameSamples}, "state": {2, 1, 128}},
		Inputs:  map[string]Fill{"input": {Kind: File, Path: clipFile(t, 0, frames)}, "sr": {Kind: Const, Value: VADSampleRate}},
	}
}

func TestModelVADMatchesHandWrittenStep(t *testing.T) {
	const frames = 70 // > one 50-frame voiced+pause period, and the clip cycles
	opts := Options{IntraOpThreads: 1}
	m := openModel(t, vadModelConfig(t, opts, 64))
	assert.Equal(t, []Pair{{Output: "stateN", Input: "state", Rule: "suffix N", Axis: -1}}, m.Pairs())
	out, stateN := m.Output("output"), m.Output("stateN")
	assert.Equal(t, []int64{1, 1}, out.Port.Shape, "sized by one run")
	assert.Equal(t, []int64{2, 1, 128}, stateN.Port.Shape)

	v := openVAD(t, VADConfig{Options: opts, Audio: SynthAudio(0, 64)})
	for f := range frames {
		p, err := v.Next()
		require.NoError(t, err)
		require.NoError(t, m.Step())
		require.Equal(t, float64(p), out.At(0), "frame %d: probability", f)
		for i := range v.stateN {
			require.Equal(t, float64(v.stateN[i]), stateN.At(i), "frame %d: stateN[%d]", f, i)
		}
	}
	assert.Equal(t, int64(frames), m.Steps())

	m.Reset()
	v.Reset()
	require.NoError(t, m.Step())
	p, err := v.Next()
	require.NoError(t, err)
	assert.Equal(t, float64(p), out.At(0), "Reset starts the stream again")
}

func TestModelStepDoesNotAllocate(t *testing.T) {
	m := openModel(t, vadModelConfig(t, Options{IntraOpThreads: 1}, 4))
	step := m.Step
	assert.Zero(t, testing.AllocsPerRun(50, func() {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}))
}

// TestModelTestData opens, steps and reads every model of onnxruntime_go's
// test_data that the generic step runs, with known results.
func TestModelTestData(t *testing.T) {
	cases := []struct {
		file  string
		cfg   ModelConfig
		check func(t *testing.T, m *Model)
	}{
		{"example_several_inputs_and_outputs.onnx", ModelConfig{Inputs: map[string]Fill{
			"input 1": {Kind: Const, Value: 2}, "input 2": {Kind: Const, Value: 1.5}, "input 3": {Kind: Const, Value: 3}}},
			func(t *testing.T, m *Model) {
				o1, o2 := m.Output("output 1"), m.Output("output 2")
				assert.Equal(t, Int64, o1.Port.DType)
				assert.Equal(t, 100, o1.Len())
				assert.Equal(t, 5.0, o1.At(0), "2 + int64(bfloat16 3)")
				assert.Equal(t, 2.0, o1.At(99))
				assert.Equal(t, Float64, o2.Port.DType)
				assert.Equal(t, []int64{1, 2, 3, 4, 5}, o2.Port.Shape)
				assert.Equal(t, 1.5, o2.At(119))
			}},
		{"example_dynamic_axes.onnx", ModelConfig{Dims: map[string]int64{"input_vectors_dynamic_axes_1": 3},
			Inputs: map[string]Fill{"input_vectors": {Kind: Const, Value: 0.5}}},
			func(t *testing.T, m *Model) {
				o := m.Output("output_scalars")
				assert.Equal(t, []int64{3}, o.Port.Shape, "sized by one run")
				for i := range 3 {
					assert.Equal(t, 5.0, o.At(i))
				}
			}},
		{"example_multitype.onnx", ModelConfig{Inputs: map[string]Fill{
			"InputA": {Kind: Const, Value: 2}, "InputB": {Kind: Const, Value: 0.25}}},
			func(t *testing.T, m *Model) {
				assert.Equal(t, Int16, m.Output("OutputA").Port.DType)
				assert.Equal(t, -511.0, m.Output("OutputA").At(3), "int16(0.25×2 − 512)")
				assert.Equal(t, 2468.0, m.Output("OutputB").At(0), "2 × 1234")
			}},
		{"example_float16.onnx", ModelConfig{Inputs: map[string]Fill{"InputA": {Kind: Const, Value: 0.5}}},
			func(t *testing.T, m *Model) {
				o := m.Output("OutputA")
				assert.Equal(t, BFloat16, o.Port.DType)
				assert.Equal(t, 1.5, o.At(7), "bfloat16(float16 0.5 × 3)")
			}},
		{"example ż 大 김.onnx", ModelConfig{Inputs: map[string]Fill{"in": {Kind: Const, Value: 3}}},
			func(t *testing.T, m *Model) { assert.Equal(t, 6.0, m.Output("out").At(0)) }},
		{"example_0_dim_output.onnx", ModelConfig{},
			func(t *testing.T, m *Model) {
				o := m.Output("y")
				assert.Equal(t, []int64{2, 0, 8}, o.Port.Shape, "sized by one run")
				assert.Zero(t, o.Len())
			}},
		{"example_big_compute.onnx", ModelConfig{Inputs: map[string]Fill{"Input": {Kind: Const, Value: 0.75}}},
			func(t *testing.T, m *Model) {
				o := m.Output("Output")
				assert.Equal(t, 50<<20, o.Len())
				for _, i := range []int{0, 12345, o.Len() - 1} {
					assert.InEpsilon(t, 0.75, o.At(i), 1e-5, "40 × (÷10, ×10) returns the input, element %d", i)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			steps := 2
			if strings.Contains(c.file, "big_compute") {
				// 80 passes over 200 MB: about 10 s a step on a shared
				// 2-core host.
				if testing.Short() {
					t.Skip("example_big_compute takes about 10 s a step; run without -short")
				}
				steps = 1
			}
			c.cfg.Path = testData(t, c.file)
			c.cfg.Options = Options{IntraOpThreads: 1}
			m := openModel(t, c.cfg)
			for range steps {
				require.NoError(t, m.Step())
			}
			assert.Equal(t, int64(steps), m.Steps())
			assert.Empty(t, m.Pairs())
			c.check(t, m)
		})
	}
}

func TestModelRefusesNonTensors(t *testing.T) {
	dir := filepath.Join(ortModuleDir(t), "test_data")
	RequireLibrary(t)
	for _, c := range []struct{ file, want string }{
		{"sklearn_randomforest.onnx", `output "output_probability" is a sequence, seq(map(int64,tensor(float))): the generic step runs tensors only, so it cannot open this model`},
		{"example_strings.onnx", `input "input" is a tensor of string: the generic step runs float32/64, float16, bfloat16, int8…int64, uint8…uint64 and bool tensors only, so it cannot open this model`},
	} {
		p := filepath.Join(dir, c.file)
		_, err := OpenModel(ModelConfig{Path: p, Dims: map[string]int64{"X@0": 1}})
		assert.EqualError(t, err, p+": "+c.want)
	}
}

func TestModelDimsErrors(t *testing.T) {
	p := testData(t, "example_dynamic_axes.onnx")
	_, err := OpenModel(ModelConfig{Path: p})
	assert.EqualError(t, err, p+`: dynamic dimensions not set: "input_vectors_dynamic_axes_1" (input "input_vectors" axis 0); set each in ModelConfig.Dims or the input's whole shape in ModelConfig.Shapes`)
	_, err = OpenModel(ModelConfig{Path: p, Dims: map[string]int64{"input_vectors_dynamic_axes_1": 2, "batch": 1}})
	assert.EqualError(t, err, p+`: dimensions "batch": no dynamic axis of the model has that name (its named dynamic axes: "input_vectors_dynamic_axes_1", "output_scalars_dynamic_axes_1"; an unnamed one is NAME@AXIS)`)
	m := openModel(t, ModelConfig{Path: p, Dims: map[string]int64{"input_vectors@0": 4}})
	assert.Equal(t, []int64{4, 10}, m.Input("input_vectors").Port.Shape)
	_, err = OpenModel(ModelConfig{Path: p, Shapes: map[string][]int64{"input_vectors": {4, 11}}})
	assert.EqualError(t, err, p+`: shape [4 11] for input "input_vectors": axis 1 must be 10`)
	_, err = OpenModel(ModelConfig{Path: p, Dims: map[string]int64{"input_vectors@0": 1}, Inputs: map[string]Fill{"x": {}}})
	assert.EqualError(t, err, p+`: a fill names input "x", which the model does not have (inputs: "input_vectors")`)
}

func TestModelFileFeedErrors(t *testing.T) {
	p := testData(t, "example ż 大 김.onnx")
	f := filepath.Join(t.TempDir(), "odd.bin")
	require.NoError(t, os.WriteFile(f, make([]byte, 12), 0o644))
	_, err := OpenModel(ModelConfig{Path: p, Inputs: map[string]Fill{"in": {Kind: File, Path: f}}})
	assert.EqualError(t, err, p+`: input "in": fill file:`+f+`: the file has 12 bytes, but one int32 tensor of shape [1,2] is 8 bytes: the file must hold a whole number of tensors (little-endian int32)`)

	// Three tensors: steps cycle through them.
	b := make([]byte, 24)
	for i := range 6 {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(i+1))
	}
	require.NoError(t, os.WriteFile(f, b, 0o644))
	m := openModel(t, ModelConfig{Path: p, Inputs: map[string]Fill{"in": {Kind: File, Path: f}}})
	var got []float64
	for range 4 {
		require.NoError(t, m.Step())
		got = append(got, m.Output("out").At(0))
	}
	assert.Equal(t, []float64{3, 7, 11, 3}, got)
}

func TestModelCustomOptions(t *testing.T) {
	p := testData(t, "example ż 大 김.onnx")
	called := false
	opts := Options{IntraOpThreads: 1, GraphOpt: OptDisable, Arena: Off, Custom: func(so *ort.SessionOptions) error {
		called = true
		return so.AddSessionConfigEntry("session.use_env_allocators", "0")
	}}
	m := openModel(t, ModelConfig{Path: p, Options: opts})
	assert.True(t, called)
	require.NoError(t, m.Step())

	_, err := OpenModel(ModelConfig{Path: p, Options: Options{Custom: func(*ort.SessionOptions) error { return assert.AnError }}})
	assert.ErrorContains(t, err, "setting Options.Custom for intra=0,inter=0,spin=on,sequential,custom: "+assert.AnError.Error())
}

func TestModelClose(t *testing.T) {
	m, err := OpenModel(ModelConfig{Path: testData(t, "example ż 大 김.onnx")})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	assert.EqualError(t, m.Step(), "ort: the session is closed: open a new one (ort.Open or ort.OpenVAD)")
}

func TestModelParity(t *testing.T) {
	cfg := vadModelConfig(t, Options{IntraOpThreads: 2, Spinning: SpinOff}, 64)
	m := openModel(t, cfg)
	require.NoError(t, m.Parity(Options{IntraOpThreads: 1}, 40, Tolerances{Default: DefaultTolerance}))
	assert.Zero(t, m.Steps(), "parity leaves the model reset")

	// A reference fed other audio differs; the report names the worst
	// element of each output.
	other := cfg
	other.Options = Options{IntraOpThreads: 1}
	other.Inputs = map[string]Fill{"input": {Kind: File, Path: clipFile(t, 9, 64)}, "sr": {Kind: Const, Value: VADSampleRate}}
	ref := openModel(t, other)
	rep, err := ModelParity(ref, m, 8, Tolerances{Default: DefaultTolerance, Outputs: map[string]Tolerance{"output": {Abs: 1}}})
	require.NoError(t, err)
	require.Len(t, rep.Worst, 2)
	assert.Equal(t, "output", rep.Worst[0].Output)
	assert.LessOrEqual(t, rep.Worst[0].Excess, 1.0, "a probability is within abs 1 of any other")
	w := rep.Worst[1]
	assert.Equal(t, "stateN", w.Output)
	assert.Greater(t, w.Excess, 1.0)
	assert.Equal(t, []int64{int64(w.Index / 128), 0, int64(w.Index % 128)}, w.At)
	assert.Equal(t, w.Excess, excess(w.Reference, w.Candidate, DefaultTolerance))
	var pe *ModelParityError
	require.ErrorAs(t, rep.Err(), &pe)
	assert.Equal(t, w, pe.Worst)
	assert.Equal(t, 1, pe.Failed)
	assert.Contains(t, pe.Error(), `parity over 8 steps: output "stateN"[`)

	_, err = ModelParity(ref, m, 0, Tolerances{})
	assert.EqualError(t, err, "parity needs at least one step, got 0")
	_, err = ModelParity(ref, m, 1, Tolerances{Outputs: map[string]Tolerance{"nope": {}}})
	assert.EqualError(t, err, `parity: a tolerance names output "nope", which the model does not have`)
}

func TestParityErrorWords(t *testing.T) {
	e := &ModelParityError{
		Worst: Worst{Output: "y", Step: 3, Index: 5, At: []int64{1, 2}, Reference: 1, Candidate: 1.5,
			Excess: 2.5, Tolerance: Tolerance{Abs: 0.2}},
		Failed: 1, Steps: 10, Reference: Options{IntraOpThreads: 1}, Candidate: Options{IntraOpThreads: 2},
	}
	assert.Equal(t, `parity over 10 steps: output "y"[1,2] (flat 5) at step 3 differs most: reference (intra=1,inter=0,spin=on,sequential) 1, candidate (intra=2,inter=0,spin=on,sequential) 1.5, |diff| 0.5 is 2.5× tolerance abs 0.2 + rel 0×|ref| (1 output(s) outside tolerance)`, e.Error())
	assert.Equal(t, math.Inf(1), excess(1, 1.0001, Tolerance{}))
	assert.Equal(t, 0.0, excess(1, 1, Tolerance{}))
	assert.Equal(t, math.Inf(1), excess(math.NaN(), math.NaN(), DefaultTolerance))
	assert.Equal(t, []int64{1, 0, 3}, unflatten(11, []int64{2, 2, 4}))
}

func TestOpenRefusesBadBindings(t *testing.T) {
	RequireLibrary(t)
	require.NoError(t, Init(""))
	p := filepath.Join(ortModuleDir(t), "test_data", "sklearn_randomforest.onnx")
	in, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 4))
	require.NoError(t, err)
	label, err := ort.NewEmptyTensor[int64](ort.NewShape(1))
	require.NoError(t, err)
	_, err = Open(p, []Binding{{"X", in}}, []Binding{{"output_label", label}, {"output_probability", nil}}, Options{})
	assert.EqualError(t, err, `output "output_probability" of `+p+` has no value (nil): create its tensor first, or let OpenModel allocate every tensor`)

	in, _ = ort.NewEmptyTensor[float32](ort.NewShape(1, 4))
	seqIn, _ := ort.NewEmptyTensor[float32](ort.NewShape(1))
	seq, err := ort.NewSequence([]ort.Value{seqIn})
	require.NoError(t, err)
	_, err = Open(p, []Binding{{"X", in}}, []Binding{{"output_probability", seq}}, Options{})
	assert.EqualError(t, err, p+`: output "output_probability" is a sequence, seq(map(int64,tensor(float))): Open binds tensors only, so it cannot run this model`)
	seqIn.Destroy()

	in, _ = ort.NewEmptyTensor[float32](ort.NewShape(1, 4))
	_, err = Open(p, []Binding{{"x", in}}, nil, Options{})
	assert.EqualError(t, err, p+` has no input "x" (its inputs: "X")`)
}

func TestOpenVADRefusesOtherModels(t *testing.T) {
	p := testData(t, "example_multitype.onnx")
	_, err := OpenVAD(VADConfig{Model: p})
	assert.EqualError(t, err, p+` is not Silero VAD v5: its inputs are "InputA", "InputB" and its outputs "OutputA", "OutputB", where OpenVAD needs inputs "input", "state", "sr" and outputs "output", "stateN"; open any other model with OpenModel`)
}
