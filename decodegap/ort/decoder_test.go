package ort

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
)

// handLoop is the plain by-hand decode loop a user writes with
// onnxruntime_go: every step makes its inputs, lets ONNX Runtime allocate
// the outputs, and feeds the present outputs back as the next past.
type handLoop struct {
	sess  *ort.DynamicAdvancedSession
	sig   Signature
	past  []ort.Value // by input index; nil for non-cache inputs
	depth int
}

func newHandLoop(t testing.TB, path string, opts Options) *handLoop {
	t.Helper()
	require.NoError(t, Init(""))
	sig, err := Inspect(path)
	require.NoError(t, err)
	so, err := opts.sessionOptions()
	require.NoError(t, err)
	defer so.Destroy()
	s, err := ort.NewDynamicAdvancedSession(path, portList(sig.Inputs), portList(sig.Outputs), so)
	require.NoError(t, err)
	h := &handLoop{sess: s, sig: sig}
	t.Cleanup(func() { h.reset(); s.Destroy() })
	return h
}

func (h *handLoop) reset() {
	for _, v := range h.past {
		if v != nil {
			v.Destroy()
		}
	}
	h.past, h.depth = nil, 0
}

// step runs seq tokens (ids all tok) and returns the logits; it handles
// the test models' inputs: input_ids, attention_mask, use_cache_branch,
// past_key_values.* of float32 or float16.
func (h *handLoop) step(t testing.TB, seq int, tok int64) []float32 {
	if h.past == nil {
		h.past = make([]ort.Value, len(h.sig.Inputs))
	}
	ins := make([]ort.Value, len(h.sig.Inputs))
	for i, p := range h.sig.Inputs {
		var v ort.Value
		var err error
		switch {
		case p.Name == "input_ids":
			ids := make([]int64, seq)
			for j := range ids {
				ids[j] = tok
			}
			v, err = ort.NewTensor(ort.NewShape(1, int64(seq)), ids)
		case p.Name == "attention_mask":
			m := make([]int64, h.depth+seq)
			for j := range m {
				m[j] = 1
			}
			v, err = ort.NewTensor(ort.NewShape(1, int64(h.depth+seq)), m)
		case p.Name == "use_cache_branch":
			v, err = ort.NewTensor(ort.NewShape(1), []bool{h.depth > 0})
		case h.past[i] != nil:
			ins[i] = h.past[i]
			continue
		default: // an empty cache
			shape := ort.NewShape(1, p.Shape[1], 0, p.Shape[3])
			v, err = ort.NewCustomDataTensor(shape, make([]byte, 8), ort.TensorElementDataType(p.DType))
		}
		require.NoError(t, err)
		ins[i] = v
	}
	outs := make([]ort.Value, len(h.sig.Outputs))
	for j, o := range h.sig.Outputs {
		if strings.HasPrefix(o.Name, "present") {
			shape := ort.NewShape(1, o.Shape[1], int64(h.depth+seq), o.Shape[3])
			v, err := ort.NewCustomDataTensor(shape, make([]byte, shape.FlattenedSize()*int64(o.DType.Size())), ort.TensorElementDataType(o.DType))
			require.NoError(t, err)
			outs[j] = v
		}
	}
	require.NoError(t, h.sess.Run(ins, outs))
	for i, p := range h.sig.Inputs {
		if ins[i] != nil {
			ins[i].Destroy()
		}
		h.past[i] = nil
		rest, ok := strings.CutPrefix(p.Name, "past_key_values")
		for j, o := range h.sig.Outputs {
			if ok && o.Name == "present"+rest {
				h.past[i], outs[j] = outs[j], nil
			}
		}
	}
	logits := append([]float32(nil), outs[0].(*ort.Tensor[float32]).GetData()...)
	for _, o := range outs {
		if o != nil {
			o.Destroy()
		}
	}
	h.depth += seq
	return logits
}

// TestDecoderMatchesHandLoop: the Decoder's logits equal a by-hand loop's
// at every depth, for the KV decoder, the merged one (use_cache_branch
// left to the Decoder) and the float16 one.
func TestDecoderMatchesHandLoop(t *testing.T) {
	RequireLibrary(t)
	for _, name := range []string{"decoder_kv.onnx", "decoder_merged.onnx", "decoder_fp16.onnx"} {
		t.Run(name, func(t *testing.T) {
			cfg := DecoderConfig{Model: ModelConfig{Path: repoModel(name), Options: Options{IntraOpThreads: 1},
				Dims: map[string]int64{"batch": 1}, Inputs: map[string]Fill{"input_ids": {Kind: Const, Value: 3}}},
				Prefill: 4, MaxContext: 12}
			d, err := OpenDecoder(cfg)
			require.NoError(t, err)
			defer d.Close()
			assert.True(t, d.SeqPrefill())
			h := newHandLoop(t, cfg.Model.Path, cfg.Model.Options)
			for gen := range 2 {
				require.NoError(t, d.Prefill())
				h.reset()
				want := h.step(t, 4, 3)
				logitsOf := func() []float32 {
					for i, p := range d.sig.Outputs {
						if p.Name == "logits" {
							b := &Buffer{Port: p, Bytes: d.outBufs[i]}
							out := make([]float32, 0, 64)
							for j := range len(want) {
								out = append(out, float32(b.At(j)))
							}
							return out
						}
					}
					return nil
				}
				assert.InDeltaSlice(t, want, logitsOf(), 1e-5, "generation %d prefill", gen)
				for k := range 8 {
					assert.Equal(t, 4+k, d.Depth())
					require.NoError(t, d.Token())
					want = h.step(t, 1, 3)
					assert.InDeltaSlice(t, want, logitsOf(), 1e-5, "generation %d token %d", gen, k)
				}
				assert.Error(t, d.Token(), "past MaxContext")
			}
		})
	}
}

// TestDecoderPrefillsTokenByToken: a token input with no dynamic sequence
// axis prefills one step a token, and the cache holds every token (no
// window): the kv_test decoder's Concat, carried with no window.
func TestDecoderPrefillsTokenByToken(t *testing.T) {
	RequireLibrary(t)
	p := decoderModel(t)
	d, err := OpenDecoder(DecoderConfig{Model: ModelConfig{Path: p, NoAutoState: true, State: map[string]string{"present.0.key": "past_key_values.0.key"},
		Inputs: map[string]Fill{"x": {Kind: Const, Value: 2}}}, Prefill: 3, MaxContext: 6, TokenInput: "x"})
	require.NoError(t, err)
	defer d.Close()
	assert.False(t, d.SeqPrefill())
	require.NoError(t, d.Prefill())
	assert.Equal(t, 3, d.Depth())
	require.NoError(t, d.Token())
	assert.Equal(t, 4, d.Depth())
	// The past now holds 4 tokens of 2s, in both heads: the input buffer
	// after the swap is the present just written.
	for i, in := range d.sig.Inputs {
		if in.Name == "past_key_values.0.key" {
			b := &Buffer{Port: Port{DType: Float32}, Bytes: d.bufs[i][:2*4*4*4]}
			for j := range b.Len() {
				require.Equal(t, 2.0, b.At(j), "element %d", j)
			}
		}
	}
	require.NoError(t, d.Token())
	require.NoError(t, d.Token())
	assert.Error(t, d.Token(), "a 7th token is past MaxContext 6")

	_, err = OpenDecoder(DecoderConfig{Model: ModelConfig{Path: p}, Prefill: 3, MaxContext: 6, TokenInput: "x"})
	assert.ErrorContains(t, err, "state hn→h does not grow along one axis, so it cannot hold a growing context")
}

// TestDecoderParity: two thread settings agree; a candidate fed other
// tokens does not, and the report names the output.
func TestDecoderParity(t *testing.T) {
	RequireLibrary(t)
	open := func(opts Options, tok float64) *Decoder {
		d, err := OpenDecoder(DecoderConfig{Model: ModelConfig{Path: repoModel("decoder_kv.onnx"), Options: opts,
			Dims: map[string]int64{"batch": 1}, Inputs: map[string]Fill{"input_ids": {Kind: Const, Value: tok}}}, Prefill: 4, MaxContext: 10})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		return d
	}
	base := open(Options{IntraOpThreads: 1}, 3)
	rep, err := DecoderParity(base, open(Options{IntraOpThreads: 2, Spinning: SpinOff}, 3), 5, Tolerances{Default: Tolerance{Abs: 1e-5, Rel: 1e-4}})
	require.NoError(t, err)
	assert.NoError(t, rep.Err())
	require.Len(t, rep.Worst, 5)
	assert.Equal(t, "logits", rep.Worst[0].Output)
	assert.GreaterOrEqual(t, rep.Worst[0].Index, 0)

	rep, err = DecoderParity(base, open(Options{IntraOpThreads: 1}, 5), 2, Tolerances{Default: Tolerance{Abs: 1e-5, Rel: 1e-4}})
	require.NoError(t, err)
	require.Error(t, rep.Err())
	assert.Equal(t, "logits", rep.Failed()[0].Output)
	assert.Contains(t, rep.Err().Error(), "logits")
}

// A -dims name that no dynamic axis has is refused by OpenDecoder, as
// OpenModel refuses it, naming the key and the model's names; a name the
// model has is taken.
func TestDecoderRefusesUnknownDimNames(t *testing.T) {
	p := repoModel("decoder_kv.onnx")
	sig, err := Inspect(p)
	require.NoError(t, err)
	require.Contains(t, sig.DimNames(), "batch")
	_, err = OpenDecoder(DecoderConfig{Model: ModelConfig{Path: p, Dims: map[string]int64{"btach": 1}}, Prefill: 2, MaxContext: 8})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `dimensions "btach": no dynamic axis of the model has that name`)
	assert.Contains(t, err.Error(), `"batch"`, "the model's own names are listed")
	assert.NoError(t, checkDimNames(sig, map[string]int64{"batch": 2}))
	assert.NoError(t, checkDimNames(sig, map[string]int64{sig.Inputs[0].Name + "@0": 2}), "NAME@AXIS of a dynamic axis")
	assert.Error(t, checkDimNames(sig, map[string]int64{sig.Inputs[0].Name + "@9": 2}), "no such axis")
}

// A pair that does not grow is refused with the fix that fits it: an
// encoder–decoder's cross-attention cache names the flags that carry only
// the decoder's pairs (dropping -decode, the advice for a recurrent
// state, would not run that model at all).
func TestFixedStateErrorAdvisesTheFixThatFits(t *testing.T) {
	err := fixedStateError(Pair{Output: "present.0.encoder.key", Input: "past_key_values.0.encoder.key", Axis: -1})
	assert.ErrorContains(t, err, "it is an encoder (cross-attention) cache")
	assert.ErrorContains(t, err, "-no-auto-state and one -state OUTPUT=INPUT for each present.*.decoder.* pair")
	assert.NotContains(t, err.Error(), "drop -decode")
	err = fixedStateError(Pair{Output: "hn", Input: "h", Axis: -1})
	assert.ErrorContains(t, err, "state hn→h does not grow along one axis, so it cannot hold a growing context (the windowed mode carries it: drop -decode)")
}
