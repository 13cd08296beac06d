package ort

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tensor(name string, dt DType, dims ...any) Port {
	p := Port{Name: name, Kind: Tensor, DType: dt, Type: "tensor(" + onnxTypeName(dt) + ")", Shape: []int64{}, Dims: []string{}}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			p.Shape, p.Dims = append(p.Shape, int64(d)), append(p.Dims, "")
		case string:
			p.Shape, p.Dims = append(p.Shape, -1), append(p.Dims, d)
		}
	}
	return p
}

func TestStatePairsRule(t *testing.T) {
	sig := Signature{
		Inputs: []Port{
			tensor("x", Float32, 1, 40),
			tensor("h", Float32, 1, 1, 64), tensor("c", Float32, 1, 1, 64),
			tensor("past_key_values.0.key", Float16, "batch", 4, "past", 16),
			tensor("state", Float32, 2, 1, 128),
			tensor("mask", Int64, 1, 8),
		},
		Outputs: []Port{
			tensor("y", Float32, 1, 40),
			tensor("hn", Float32, 1, 1, 64), tensor("cn", Float32, 1, 1, 64),
			tensor("present.0.key", Float16, "batch", 4, "past+1", 16),
			tensor("stateN", Float64, 2, 1, 128),
			tensor("mask_out", Int64, 1, 9),
		},
	}
	pairs, refused, err := StatePairs(sig, nil, true)
	require.NoError(t, err)
	assert.Equal(t, []Pair{
		{Output: "hn", Input: "h", Rule: "suffix n", Axis: -1},
		{Output: "cn", Input: "c", Rule: "suffix n", Axis: -1},
		{Output: "present.0.key", Input: "past_key_values.0.key", Rule: "present→past_key_values", Axis: 2},
		{Output: "mask_out", Input: "mask", Rule: "suffix _out", Axis: 1},
	}, pairs)
	assert.Equal(t, []Pair{{Output: "stateN", Input: "state", Rule: `output "stateN" is float64 but input "state" is float32`, Axis: -1}}, refused)
	assert.Equal(t, "present.0.key → past_key_values.0.key (present→past_key_values), sliding window on axis 2", pairs[2].String())

	// The explicit map overrides the rule for its input; the rule still
	// feeds the rest.
	pairs, _, err = StatePairs(sig, map[string]string{"y": "x"}, true)
	require.NoError(t, err)
	assert.Equal(t, Pair{Output: "y", Input: "x", Rule: "explicit", Axis: -1}.Output, pairs[0].Output)
	assert.Len(t, pairs, 5)

	pairs, refused, err = StatePairs(sig, map[string]string{"hn": "c"}, false)
	require.NoError(t, err)
	assert.Equal(t, []Pair{{Output: "hn", Input: "c", Rule: "explicit", Axis: -1}}, pairs)
	assert.Empty(t, refused)
}

func TestStatePairsExplicitErrors(t *testing.T) {
	sig := Signature{
		Inputs:  []Port{tensor("a", Float32, 2, 3), tensor("b", Int32, 2, 3), tensor("r", Float32, 2)},
		Outputs: []Port{tensor("o", Float32, 2, 3), tensor("p", Float32, 2, 3), tensor("short", Float32, 2, 2), {Name: "seq", Kind: Sequence, Type: "seq(tensor(float))"}},
	}
	for _, c := range []struct {
		m    map[string]string
		want string
	}{
		{map[string]string{"nope": "a"}, `state nope→a: the model has no output "nope" (outputs: "o", "p", "short", "seq")`},
		{map[string]string{"o": "nope"}, `state o→nope: the model has no input "nope" (inputs: "a", "b", "r")`},
		{map[string]string{"o": "b"}, `state o→b: output "o" is float32 but input "b" is int32`},
		{map[string]string{"o": "r"}, `state o→r: output "o" has shape [2,3] but input "r" has [2]: the ranks differ`},
		{map[string]string{"short": "a"}, `state short→a: output "short" has shape [2,2] but input "a" has [2,3]: they may differ on one axis only, where the output is longer`},
		{map[string]string{"seq": "a"}, `state seq→a: output "seq" is seq(tensor(float)) and input "a" is tensor(float): only tensors carry state`},
		{map[string]string{"o": "a", "p": "a"}, `state p→a: input "a" is already fed by another output`},
	} {
		_, _, err := StatePairs(sig, c.m, true)
		assert.EqualError(t, err, c.want)
	}
}

func TestCarryWindow(t *testing.T) {
	// out [2,3,2] into in [2,2,2] along axis 1: keep the last 2 rows of each
	// outer slice.
	src := []byte{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}
	dst := make([]byte, 8)
	c := carry{dst: dst, src: src, outer: 2, dstRow: 4, srcRow: 6}
	c.do()
	assert.Equal(t, []byte{2, 3, 4, 5, 12, 13, 14, 15}, dst)
	whole := carry{dst: make([]byte, 3), src: []byte{7, 8, 9}}
	whole.do()
	assert.Equal(t, []byte{7, 8, 9}, whole.dst)
}

func TestParseFill(t *testing.T) {
	for in, want := range map[string]Fill{
		"zeros":          {},
		"16000":          {Kind: Const, Value: 16000},
		"-0.5":           {Kind: Const, Value: -0.5},
		"rand":           {Kind: Random, Lo: -1, Hi: 1},
		"rand:0,255":     {Kind: Random, Lo: 0, Hi: 255},
		"file:clip.f32":  {Kind: File, Path: "clip.f32"},
		" rand:-2, 2 ":   {Kind: Random, Lo: -2, Hi: 2},
		"file:/a b/c.in": {Kind: File, Path: "/a b/c.in"},
	} {
		got, err := ParseFill(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		back, err := ParseFill(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, back, "String round-trips %q", in)
	}
	for in, want := range map[string]string{
		"rand:1,0": `fill "rand:1,0": write rand:LO,HI with LO < HI, e.g. rand:-1,1`,
		"rand:1":   `fill "rand:1": write rand:LO,HI with LO < HI, e.g. rand:-1,1`,
		"file:":    `fill "file:": write file:PATH`,
		"ones":     `fill "ones": use zeros, a number, rand, rand:LO,HI or file:PATH`,
	} {
		_, err := ParseFill(in)
		assert.EqualError(t, err, want)
	}
}

func TestElementCoding(t *testing.T) {
	for _, dt := range []DType{Float32, Float64, Float16, BFloat16, Int8, Uint8, Int16, Uint16, Int32, Uint32, Int64, Uint64, Bool} {
		b := make([]byte, 3*dt.Size())
		put(dt, b, 1, 1)
		put(dt, b, 2, 100)
		want := 100.0
		if dt == Bool {
			want = 1
		} else if dt == Int8 {
			want = 100
		}
		assert.Equal(t, []float64{0, 1, want}, []float64{get(dt, b, 0), get(dt, b, 1), get(dt, b, 2)}, "%v", dt)
	}
	b := make([]byte, 8)
	put(Int64, b, 0, -3)
	assert.Equal(t, -3.0, get(Int64, b, 0))

	// float16: exact values, rounding to nearest even, overflow, subnormals.
	for f, h := range map[float32]uint16{
		1: 0x3c00, -2: 0xc000, 0.5: 0x3800, 65504: 0x7bff, 1e6: 0x7c00,
		5.960464477539063e-08: 0x0001, 6.103515625e-05: 0x0400,
		1 + 1.0/2048: 0x3c00, // a tie rounds to even (down)
		1 + 3.0/2048: 0x3c02, // a tie rounds to even (up)
	} {
		assert.Equal(t, h, f32ToF16(f), "f32ToF16(%v)", f)
	}
	for _, h := range []uint16{0x3c00, 0xc000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00} {
		assert.Equal(t, h, f32ToF16(f16ToF32(h)), "round trip %#x", h)
	}
	assert.True(t, math.IsNaN(float64(f16ToF32(f32ToF16(float32(math.NaN()))))))
	assert.Equal(t, uint16(0x3fc0), f32ToBF16(1.5))
	assert.Equal(t, uint16(0x3f80), f32ToBF16(1+1.0/512), "a tie rounds to even")
	assert.True(t, math.IsNaN(float64(math.Float32frombits(uint32(f32ToBF16(float32(math.NaN())))<<16))))
}

func TestDTypeAndPortStrings(t *testing.T) {
	assert.Equal(t, "bfloat16", BFloat16.String())
	assert.Equal(t, "DType(99)", DType(99).String())
	assert.False(t, String.Supported())
	assert.False(t, Complex64.Supported())
	assert.Equal(t, 2, Float16.Size())
	p := tensor("x", Float32, "batch", 512)
	p.Shape = append(p.Shape, -1)
	p.Dims = append(p.Dims, "")
	assert.Equal(t, "[batch,512,?]", p.ShapeString())
	assert.Equal(t, "[*]", Port{}.ShapeString())
	assert.Equal(t, "sequence", Sequence.String())
}

// TestStatePairsStatelessOutIsNotState: a model y = f(x) whose output is
// named x_out is not stateful; the rule would feed its only input from its
// output, so it refuses and says why (issue 26).
func TestStatePairsStatelessOutIsNotState(t *testing.T) {
	x := Port{Name: "x", Kind: Tensor, DType: Float32, Shape: []int64{1, 16}, Dims: []string{"", ""}, Type: "tensor(float)"}
	out := x
	out.Name = "x_out"
	sig := Signature{Inputs: []Port{x}, Outputs: []Port{out}}
	pairs, refused, err := StatePairs(sig, nil, true)
	require.NoError(t, err)
	assert.Empty(t, pairs)
	require.Len(t, refused, 1)
	assert.Contains(t, refused[0].Rule, "the names match (suffix _out), but then every input of the model would be fed from its outputs")

	// Beside a data input, the same pair is state; explicit pairs are kept.
	data := x
	data.Name = "frame"
	sig.Inputs = append(sig.Inputs, data)
	pairs, _, err = StatePairs(sig, nil, true)
	require.NoError(t, err)
	assert.Equal(t, []Pair{{Output: "x_out", Input: "x", Rule: "suffix _out", Axis: -1}}, pairs)
	sig.Inputs = sig.Inputs[:1]
	pairs, _, err = StatePairs(sig, map[string]string{"x_out": "x"}, true)
	require.NoError(t, err)
	assert.Len(t, pairs, 1)
}
