package ort

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProvenance: a Model and a Decoder say what they measure; two windows
// differ in their context line.
func TestProvenance(t *testing.T) {
	RequireLibrary(t)
	cfg := ModelConfig{Path: repoModel("decoder_merged.onnx"), Options: Options{IntraOpThreads: 1}, Dims: windowDims}
	m := openModel(t, cfg)
	got := map[string]string{}
	for _, kv := range m.Provenance() {
		got[kv.Key] = kv.Value
	}
	sum, err := FileSHA256(cfg.Path)
	require.NoError(t, err)
	assert.Len(t, sum, 64)
	assert.Equal(t, map[string]string{
		"model": "decoder_merged", "model-sha256": sum, "weights-sha256": "none (inside the model file)", "ort-version": "1.30.0", "ort-ep": "cpu",
		"ort-options": "intra=1,inter=0,spin=on,sequential",
		"dims":        "batch=1,past_sequence_length=7,sequence_length=1,total_sequence_length=8",
		"fills":       "attention_mask=1(default:mask),use_cache_branch=1(default:cache-branch)",
		"state":       "present.0.key->past_key_values.0.key,present.0.value->past_key_values.0.value,present.1.key->past_key_values.1.key,present.1.value->past_key_values.1.value",
		"context":     "window=7 (sliding: the newest 7 tokens of the cache are kept)", "batch": "1",
	}, got)

	d, err := OpenDecoder(DecoderConfig{Model: ModelConfig{Path: cfg.Path, Dims: map[string]int64{"batch": 1}}, Prefill: 4, MaxContext: 20})
	require.NoError(t, err)
	defer d.Close()
	for _, kv := range d.Provenance() {
		if kv.Key == "context" {
			assert.Equal(t, "decode prefill=4 max=20", kv.Value)
		}
	}

	// Unset, the decoder's batch is the 1 it runs at, and says so.
	d2, err := OpenDecoder(DecoderConfig{Model: ModelConfig{Path: cfg.Path}, Prefill: 4, MaxContext: 20})
	require.NoError(t, err)
	defer d2.Close()
	got = map[string]string{}
	for _, kv := range d2.Provenance() {
		got[kv.Key] = kv.Value
	}
	assert.Equal(t, "1 (default)", got["batch"], "never \"unset\": the size the step ran at")
	assert.Equal(t, "fixed by the graph", modelBatch(Signature{Inputs: []Port{{Name: "input", Shape: []int64{1, 512}, Dims: []string{"", ""}}}}))
	_, err = FileSHA256("/dev/zero")
	assert.ErrorIs(t, err, ErrNotRegular)
}

// externalModel writes a model file whose one initializer keeps its bytes
// in the external data file loc, as ONNX's save_as_external_data does.
func externalModel(t *testing.T, dir, loc string) string {
	t.Helper()
	msg := func(fields ...func([]byte) []byte) []byte {
		var b []byte
		for _, f := range fields {
			b = f(b)
		}
		return b
	}
	bytesField := func(n protowire.Number, v []byte) func([]byte) []byte {
		return func(b []byte) []byte { return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v) }
	}
	entry := func(k, v string) []byte {
		return msg(bytesField(stringEntryKey, []byte(k)), bytesField(stringEntryValue, []byte(v)))
	}
	tensorType := msg(bytesField(typeTensor, msg(func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, tensorTypeElem, protowire.VarintType), 1)
	})))
	init := msg(bytesField(tensorProtoName, []byte("w")),
		bytesField(tensorProtoExternalData, entry("location", loc)),
		bytesField(tensorProtoExternalData, entry("offset", "0")))
	graph := msg(bytesField(graphName, []byte("g")), bytesField(graphInitializer, init),
		bytesField(graphInput, msg(bytesField(valueInfoName, []byte("w")), bytesField(valueInfoType, tensorType))),
		bytesField(graphInput, msg(bytesField(valueInfoName, []byte("x")), bytesField(valueInfoType, tensorType))),
		bytesField(graphOutput, msg(bytesField(valueInfoName, []byte("y")), bytesField(valueInfoType, tensorType))))
	model := msg(func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, modelIRVersion, protowire.VarintType), 8)
	}, bytesField(modelGraph, graph))
	p := filepath.Join(dir, "ext.onnx")
	require.NoError(t, os.WriteFile(p, model, 0o644))
	return p
}

// With external data, the weights are hashed too: the graph file alone
// would call two models with other weights the same.
func TestProvenanceHashesExternalWeights(t *testing.T) {
	dir := t.TempDir()
	p := externalModel(t, dir, "ext.onnx.data")
	sig, err := Inspect(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"ext.onnx.data"}, sig.Meta.ExternalData)
	assert.Equal(t, []string{"x"}, []string{sig.Inputs[0].Name}, "the initializer is not an input")

	lines := func() map[string]string {
		got := map[string]string{}
		for _, kv := range provenance(ModelConfig{Path: p}, sig.Meta.ExternalData, nil, nil, "stateless", "1") {
			got[kv.Key] = kv.Value
		}
		return got
	}
	assert.Contains(t, lines()["weights-sha256"], "unavailable (external_data:_open_", "a missing weights file is named, never hashed as nothing")
	assert.Contains(t, lines()["weights-sha256"], "ext.onnx.data")

	weights := []byte("weights, version 1")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ext.onnx.data"), weights, 0o644))
	want := fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprintf("%x  ext.onnx.data\n", sha256.Sum256(weights)))))
	first := lines()
	assert.Equal(t, want, first["weights-sha256"], "sha256sum's list of the files, hashed: reproducible with sha256sum")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ext.onnx.data"), []byte("weights, version 2"), 0o644))
	second := lines()
	assert.Equal(t, first["model-sha256"], second["model-sha256"], "the graph file did not change")
	assert.NotEqual(t, first["weights-sha256"], second["weights-sha256"], "the weights did")

	_, err = WeightsSHA256(dir, []string{"../secret"})
	assert.ErrorContains(t, err, `external data "../secret": not a path inside the model's folder`)
	_, err = WeightsSHA256(dir, []string{"/etc/passwd"})
	assert.Error(t, err)
}
