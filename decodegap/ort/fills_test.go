package ort

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoModel is a model of testdata/ (written by scripts/make-test-models.py).
func repoModel(name string) string { return filepath.Join("testdata", name) }

var windowDims = map[string]int64{"batch": 1, "sequence_length": 1, "past_sequence_length": 7, "total_sequence_length": 8}

// TestMergedDecoderRunsWithoutUserCacheBranch: use_cache_branch follows the
// carried cache (true) and the mask is ones; left false, the model fails on
// a shape, as the merged decoder did.
func TestMergedDecoderRunsWithoutUserCacheBranch(t *testing.T) {
	RequireLibrary(t)
	cfg := ModelConfig{Path: repoModel("decoder_merged.onnx"), Dims: windowDims, Options: Options{IntraOpThreads: 1}}
	m := openModel(t, cfg)
	assert.Equal(t, []DefaultFill{
		{Input: "attention_mask", Fill: Fill{Kind: Const, Value: 1}, Reason: DefaultMask},
		{Input: "use_cache_branch", Fill: Fill{Kind: Const, Value: 1}, Reason: DefaultCacheBranch},
	}, m.DefaultFills())
	for range 3 {
		require.NoError(t, m.Step())
	}
	assert.Equal(t, 1.0, m.Input("use_cache_branch").At(0))
	assert.Equal(t, 1.0, m.Input("attention_mask").At(7))

	cfg.Inputs = map[string]Fill{"use_cache_branch": {}}
	assert.Error(t, openModel(t, cfg).Step(), "the no-cache branch with a past of 7 does not fit the mask")
}

// TestRateInputIsGuessed: Silero v4's sr left out is zeros, listed as a
// guessed rate; StrictFills refuses, naming it and the flag.
func TestRateInputIsGuessed(t *testing.T) {
	sig, err := Inspect(repoModel("vad_sr.onnx"))
	require.NoError(t, err)
	pairs, _, err := StatePairs(sig, nil, true)
	require.NoError(t, err)
	defs := DefaultFills(sig, nil, pairs, true)
	assert.Equal(t, []DefaultFill{{Input: "sr", Reason: DefaultRate}}, defs)
	assert.True(t, defs[0].Reason.Guessed())
	assert.Empty(t, DefaultFills(sig, map[string]Fill{"sr": {Kind: Const, Value: 16000}}, pairs, true))

	_, err = OpenModel(ModelConfig{Path: repoModel("vad_sr.onnx"), Dims: map[string]int64{"batch": 1}, StrictFills: true})
	var fe *FillsError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), `inputs "sr" (rate) have no fill and would be zeros`)
	assert.Contains(t, err.Error(), "-input NAME=VALUE")

	RequireLibrary(t)
	m := openModel(t, ModelConfig{Path: repoModel("vad_sr.onnx"), Dims: map[string]int64{"batch": 1}, Options: Options{IntraOpThreads: 1}})
	require.NoError(t, m.Step())
	assert.Equal(t, defs, m.DefaultFills())
}
