package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/testutil"
)

func testModel(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "decodegap", "ort", "testdata", name))
	return p
}

// runORTBin runs the built command with args and returns stdout, stderr
// and the error.
func runORTBin(t *testing.T, bin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"ort", "-lock=false", "-screen=false"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

var procs = regexp.MustCompile(`-[0-9]+$`)

// TestORTDecodeMode: a merged decoder decodes with no -input
// use_cache_branch, one line per depth bucket, with what was measured in
// the configuration lines.
func TestORTDecodeMode(t *testing.T) {
	ort.RequireLibrary(t)
	bin := buildDecodegap(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	_, stderr, err := runORTBin(t, bin, "-rounds", "1", "-benchtime", "12x", "-warmup", "2", "-gap", "100us",
		"-dims", "batch=1", "-prefill", "4", "-decode", "12", "-buckets", "4,8,12", "-parity", "6", "-arm", "intra=1", "-arm", "two:intra=2,spin=off",
		"-o", out, testModel("decoder_merged.onnx"))
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "decodegap ort: parity: arm two agrees with intra1 over the prefill and 6 tokens")
	names := map[string]int{}
	for _, r := range testutil.ResultsFile(t, out) {
		names[procs.ReplaceAllString(string(r.Name), "")]++
		assert.Equal(t, "decoder_merged", r.GetConfig("model"))
		assert.Regexp(t, `^[0-9a-f]{64}$`, r.GetConfig("model-sha256"))
		assert.Equal(t, "1.30.0", r.GetConfig("ort-version"))
		assert.Equal(t, "cpu", r.GetConfig("ort-ep"))
		assert.Equal(t, "intra1=intra=1,inter=0,spin=on,sequential two=intra=2,inter=0,spin=off,sequential", r.GetConfig("ort-arms"))
		assert.Equal(t, "decode prefill=4 tokens=12 range=4..15", r.GetConfig("context"))
		assert.Equal(t, "attention_mask=1(default:mask),use_cache_branch=1(default:cache-branch)", r.GetConfig("fills"))
		assert.Equal(t, "mean=100µs kind=hybrid shape=constant", r.GetConfig("gap"))
		assert.Equal(t, "1", r.GetConfig("batch"))
		assert.Contains(t, r.GetConfig("state"), "present.0.key->past_key_values.0.key")
	}
	for _, part := range []string{"ttft", "ctx=4..7", "ctx=8..11", "ctx=12..15", "ctx=all"} {
		assert.Equal(t, 3, names["Model/batch=1/prefill=4/"+part], "%s: two arms and the null arm, in %v", part, names)
	}
}

// TestORTNamesAndConfigShowTheContext: two windowed runs that differ only
// in the cache's past length get different names and context lines.
func TestORTNamesAndConfigShowTheContext(t *testing.T) {
	ort.RequireLibrary(t)
	bin := buildDecodegap(t)
	got := map[string]string{}
	for past, total := range map[string]string{"3": "4", "7": "8"} {
		out := filepath.Join(t.TempDir(), "out.txt")
		_, stderr, err := runORTBin(t, bin, "-rounds", "1", "-benchtime", "40x", "-warmup", "2", "-parity", "0",
			"-dims", "batch=1,sequence_length=1,past_sequence_length="+past+",total_sequence_length="+total,
			"-arm", "intra=1", "-o", out, testModel("decoder_kv.onnx"))
		require.NoError(t, err, stderr)
		rs := testutil.ResultsFile(t, out)
		require.NotEmpty(t, rs)
		got[procs.ReplaceAllString(string(rs[0].Name), "")] = rs[0].GetConfig("context")
	}
	assert.Equal(t, map[string]string{
		"Model/ctx=3/batch=1/past_sequence_length=3/sequence_length=1/total_sequence_length=4": "window=3 (sliding: the newest 3 tokens of the cache are kept)",
		"Model/ctx=7/batch=1/past_sequence_length=7/sequence_length=1/total_sequence_length=8": "window=7 (sliding: the newest 7 tokens of the cache are kept)",
	}, got)
}

// TestORTRateInputWarnsOrRefuses: a Silero v4-like model with no -input sr
// is warned about, and refused under -strict-fills.
func TestORTRateInputWarnsOrRefuses(t *testing.T) {
	m := testModel("vad_sr.onnx")
	var out, errb bytes.Buffer
	code := runORT([]string{"-lock=false", "-strict-fills", "-dims", "batch=1", "-arm", "intra=1", "-o", filepath.Join(t.TempDir(), "o.txt"), m}, &out, &errb)
	assert.Equal(t, 2, code)
	assert.Contains(t, errb.String(), `decodegap ort: -strict-fills: inputs "sr" (rate) have no fill and would be zeros`)

	ort.RequireLibrary(t)
	bin := buildDecodegap(t)
	_, stderr, err := runORTBin(t, bin, "-rounds", "1", "-benchtime", "40x", "-warmup", "2", "-dims", "batch=1",
		"-arm", "intra=1", "-o", filepath.Join(t.TempDir(), "o.txt"), m)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, `decodegap ort: warning: "sr" (a sample rate) has no -input and run on zeros, which may take another branch of the model than the one meant (Silero VAD's 8 kHz path for sr 0): give each with -input NAME=VALUE (e.g. -input sr=16000), or -strict-fills to refuse`)
	_, stderr, err = runORTBin(t, bin, "-rounds", "1", "-benchtime", "40x", "-warmup", "2", "-dims", "batch=1", "-input", "sr=16000",
		"-strict-fills", "-arm", "intra=1", "-o", filepath.Join(t.TempDir(), "o.txt"), m)
	require.NoError(t, err, stderr)
	assert.NotContains(t, stderr, "warning")
}

func TestORTDecodeFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-prefill", "8", "-arm", "intra=1", "m.onnx"}, "decodegap ort: -prefill, -buckets and -token-input belong to the decode mode: give -decode M (tokens a generation)\n"},
		{[]string{"-decode", "8", "-arm", "intra=1", "m.onnx"}, "decodegap ort: -decode needs -prefill N ≥ 1, the prompt's tokens (llama-bench's -p, or -d for the depth to decode at)\n"},
		{[]string{"-decode", "8", "-prefill", "4", "-buckets", "8,4", "-arm", "intra=1", "m.onnx"}, `decodegap ort: -buckets "8,4": write ascending context depths, the buckets' lower bounds, e.g. 32,512,1024,1536` + "\n"},
		{[]string{"-decode", "8", "-prefill", "4", "-open", "-gap", "1ms", "-arm", "intra=1", "m.onnx"}, "decodegap ort: -decode runs a closed loop of one session, unconfined: drop -open, -search, -slo, -sessions, -cores and -cpus (run under taskset -c LIST to confine it)\n"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, runORT(c.args, &out, &errb), "%v", c.args)
		assert.Contains(t, errb.String(), c.want, "%v", c.args)
	}
}

// TestORTWindowOfZeroWarns: a KV cache with a past length of 0 runs every
// step at a context of one token; the command says so.
func TestORTWindowOfZeroWarns(t *testing.T) {
	ort.RequireLibrary(t)
	cfg := ort.ModelConfig{Path: testModel("decoder_kv.onnx"), Options: ort.Options{IntraOpThreads: 1},
		Dims: map[string]int64{"batch": 1, "sequence_length": 1, "past_sequence_length": 0, "total_sequence_length": 1}}
	assert.Contains(t, windowWarning(cfg), "warning: the KV cache keeps 0 tokens (its past length is 0 in -dims), so every step runs at a context of 1 token")
	cfg.Dims["past_sequence_length"], cfg.Dims["total_sequence_length"] = 5, 6
	assert.Empty(t, windowWarning(cfg))
}
