package ort

import (
	"testing"

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
		"model": "decoder_merged", "model-sha256": sum, "ort-version": "1.30.0", "ort-ep": "cpu",
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
