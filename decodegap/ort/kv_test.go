package ort

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// pb builds protobuf messages for the test models below.
type pb []byte

func (b pb) str(num protowire.Number, s string) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (b pb) msg(num protowire.Number, m pb) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func (b pb) varint(num protowire.Number, v int64) pb {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// valueInfo is an ONNX ValueInfoProto of a float tensor; each dim is an
// int (a size) or a string (a symbolic name).
func valueInfo(name string, dims ...any) pb {
	var shape pb
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			shape = shape.msg(shapeDim, pb(nil).varint(dimValue, int64(d)))
		case string:
			shape = shape.msg(shapeDim, pb(nil).str(dimParam, d))
		}
	}
	tt := pb(nil).varint(tensorTypeElem, int64(Float32)).msg(tensorTypeShape, shape)
	return pb(nil).str(valueInfoName, name).msg(valueInfoType, pb(nil).msg(typeTensor, tt))
}

// node is an ONNX NodeProto; axis ≥ 0 adds an "axis" int attribute.
func node(op string, ins, outs []string, axis int) pb {
	var n pb
	for _, s := range ins {
		n = n.str(1, s)
	}
	for _, s := range outs {
		n = n.str(2, s)
	}
	n = n.str(4, op)
	if axis >= 0 {
		n = n.msg(5, pb(nil).str(1, "axis").varint(3, int64(axis)).varint(20, 2))
	}
	return n
}

// decoderModel writes a small decoder-shaped model: a key/value cache that
// grows by the step's token (present.0.key = Concat(past_key_values.0.key,
// x) on axis 2) and a recurrent state (hn = h + x), both carried by the
// automatic rule.
func decoderModel(t *testing.T) string {
	t.Helper()
	g := pb(nil).str(graphName, "decoder").
		msg(1, node("Concat", []string{"past_key_values.0.key", "x"}, []string{"present.0.key"}, 2)).
		msg(1, node("Add", []string{"h", "x"}, []string{"hn"}, -1)).
		msg(graphInput, valueInfo("past_key_values.0.key", 1, 2, "past", 4)).
		msg(graphInput, valueInfo("x", 1, 2, 1, 4)).
		msg(graphInput, valueInfo("h", 1, 2, 1, 4)).
		msg(graphOutput, valueInfo("present.0.key", 1, 2, "total", 4)).
		msg(graphOutput, valueInfo("hn", 1, 2, 1, 4))
	m := pb(nil).varint(modelIRVersion, 8).str(modelProducerName, "gapbench test").
		msg(modelOpset, pb(nil).str(1, "").varint(2, 17)).msg(modelGraph, g)
	p := filepath.Join(t.TempDir(), "decoder.onnx")
	require.NoError(t, os.WriteFile(p, m, 0o644))
	return p
}

// TestModelCarriesKVCacheAndRecurrentState runs the decoder model: the KV
// cache keeps the last "past" tokens (a sliding window on axis 2), and h
// accumulates every token.
func TestModelCarriesKVCacheAndRecurrentState(t *testing.T) {
	RequireLibrary(t)
	p := decoderModel(t)
	sig, err := Inspect(p)
	require.NoError(t, err)
	assert.Equal(t, "[1,2,past,4]", sig.Inputs[0].ShapeString())
	assert.Equal(t, "gapbench test", sig.Meta.Producer)

	// x for step k (k = 1, 2, ...) holds k everywhere: one token per step.
	const steps = 5
	tok := make([]byte, 0, steps*8*4)
	for k := 1; k <= steps; k++ {
		for range 8 {
			tok = binary.LittleEndian.AppendUint32(tok, math.Float32bits(float32(k)))
		}
	}
	xs := filepath.Join(t.TempDir(), "x.f32")
	require.NoError(t, os.WriteFile(xs, tok, 0o644))

	m := openModel(t, ModelConfig{Path: p, Dims: map[string]int64{"past": 3}, Options: Options{IntraOpThreads: 1},
		Inputs: map[string]Fill{"x": {Kind: File, Path: xs}}})
	assert.Equal(t, []Pair{
		{Output: "present.0.key", Input: "past_key_values.0.key", Rule: "present→past_key_values", Axis: 2},
		{Output: "hn", Input: "h", Rule: "suffix n", Axis: -1},
	}, m.Pairs())
	assert.Equal(t, []int64{1, 2, 4, 4}, m.Output("present.0.key").Port.Shape, "sized by one run: past + 1")

	past, h := m.Input("past_key_values.0.key"), m.Input("h")
	for k := 1; k <= steps; k++ {
		require.NoError(t, m.Step())
		// The cache holds the last 3 tokens (0 for those before the first),
		// in both heads (axis 1).
		for head := range 2 {
			for pos := range 3 {
				want := float64(max(0, k-2+pos))
				assert.Equal(t, want, past.At(head*12+pos*4+3), "step %d head %d pos %d", k, head, pos)
			}
		}
		assert.Equal(t, float64(k*(k+1)/2), h.At(7), "h sums the tokens after step %d", k)
	}
	m.Reset()
	assert.Zero(t, past.At(11))
	assert.Zero(t, h.At(0))
	require.NoError(t, m.Step())
	assert.Equal(t, 1.0, h.At(0), "Reset rewinds the token file too")
}
