package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/testutil"
)

func TestORTSLOUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-arm", "intra=1", "-slo", "p99", "m.onnx"}, `decodegap ort: -slo: SLO "p99": no '=' between the percentile and the limit: write pPERCENTILE=LIMIT[@CONFIDENCE], e.g. p99=5ms`},
		{[]string{"-arm", "intra=1", "-slo", "p99=5ms@95", "m.onnx"}, `decodegap ort: -slo: SLO "p99=5ms@95": confidence "95" is not a percentage (90%) or a fraction (0.9) in (0, 1)`},
		{[]string{"-arm", "intra=1", "-search", "-gap", "1ms", "m.onnx"}, "decodegap ort: -search needs -slo, the objective to search for, e.g. -slo p99=32ms\n"},
		{[]string{"-arm", "intra=1", "-search", "-slo", "p99=5ms", "-gap", "1ms", "-rounds", "3", "m.onnx"}, "decodegap ort: -search runs one search per arm, not rounds: drop -rounds, -until-decided and -max-rounds\n"},
		{[]string{"-arm", "intra=1", "-search", "-slo", "p99=5ms", "-gap", "1ms", "-until-decided", "-max-rounds", "8", "m.onnx"}, "decodegap ort: -search runs one search per arm, not rounds"},
		{[]string{"-arm", "intra=1", "-search", "-slo", "p99=5ms", "m.onnx"}, "decodegap ort: -search starts at the arrival rate 1/-gap: give -gap > 0 (e.g. -gap 32ms starts at 31.25/s)\n"},
		{[]string{"-arm", "intra=1", "-max-rate", "100", "-gap", "1ms", "m.onnx"}, "decodegap ort: -max-rate without -search: it caps the rates the search probes\n"},
		{[]string{"-arm", "intra=1", "-search", "-slo", "p99=5ms", "-gap", "10ms", "-max-rate", "50", "m.onnx"}, "decodegap ort: -max-rate 50: need 0 (no cap) or at least the first rate probed, 1/-gap = 100/s\n"},
		{[]string{"-arm", "intra=1", "-open", "m.onnx"}, "decodegap ort: -open needs -gap > 0, the mean time between arrivals (e.g. -gap 32ms: 31.25 arrivals/s per session)\n"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, runORT(c.args, &out, &errb), "%v", c.args)
		assert.True(t, strings.HasPrefix(errb.String(), c.want), "%v: %s", c.args, errb.String())
	}
}

func TestORTSLOTally(t *testing.T) {
	rs := testutil.ResultsString(t, `arm: a
BenchmarkModel 100 1000 ns/op 1 slo-met
BenchmarkModel 100 1000 ns/op 0 slo-met
BenchmarkModel 100 1000 ns/op
arm: null
BenchmarkModel 100 1000 ns/op 1 slo-met
`)
	var w bytes.Buffer
	printSLOTally(&w, ortFlags{slo: "p99.9=20ms@90%", open: true}, "o.txt.log", []string{"a", "b", "null"}, rs)
	assert.Equal(t, `== -slo p99.9=20ms@90%: response time p99.9 ≤ 20ms, judged on each block's 90% bound (slo-met)
  a: met in 1 of 3 blocks, missed in 1, undecided in 1
  b: met in 0 of 0 blocks, missed in 0, undecided in 0
  null: met in 1 of 1 block, missed in 0, undecided in 0
  undecided: too few steps bound the percentile or its bound straddles the limit; raise -benchtime (each block's SLO line in o.txt.log says which)

`, w.String())
	w.Reset()
	printSLOTally(&w, ortFlags{slo: "p99=5ms"}, "o.txt.log", []string{"null"}, rs[3:])
	assert.Equal(t, "== -slo p99=5ms: step latency p99 ≤ 5ms, judged on each block's 95% bound (slo-met)\n  null: met in 1 of 1 block, missed in 0, undecided in 0\n\n", w.String())
}

func TestORTSearchSummary(t *testing.T) {
	out := `BenchmarkModel/rate=100/s-2 64 1000 ns/op
--- BENCH: BenchmarkModel/rate=100/s-2
    ortchild.go:1: steady state: flat
        SLO response time p99 ≤ 5ms (RunConfig.SLO, 95% bound over 64 steps): undecided
    --- decodegap.SearchRate: BenchmarkModel: response p99 ≤ 5ms at 95% confidence
    no probed rate passed (lowest probed 100/s): lower Rates.Start
    100/s: undecided (64 steps; a pass needs ≥ 299)
PASS
`
	assert.Equal(t, []string{
		"  --- decodegap.SearchRate: BenchmarkModel: response p99 ≤ 5ms at 95% confidence",
		"  no probed rate passed (lowest probed 100/s): lower Rates.Start",
		"  100/s: undecided (64 steps; a pass needs ≥ 299)",
	}, searchSummary(out))
	assert.Empty(t, searchSummary("PASS\n"))
}

// vadArgs are the flags that run Silero VAD.
func vadArgs(t *testing.T) []string {
	return []string{"-lock=false", "-screen=false", "-warmup", "4", "-parity", "4",
		"-shape", "input=1x512", "-shape", "state=2x1x128", "-input", "sr=16000", "-input", "input=file:" + writeClip(t, 8)}
}

// TestORTSLOVAD judges every block of a short open-loop run of Silero VAD on
// an objective far above its step (a p50 of 1s: only a queue that grows
// through a block, on an overloaded host, misses it) and counts them.
func TestORTSLOVAD(t *testing.T) {
	parts := ort.Require(t)
	bin := buildDecodegap(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	args := append(append([]string{"ort"}, vadArgs(t)...), "-rounds", "2", "-benchtime", "64x", "-seed", "3",
		"-open", "-gap", "2ms", "-slo", "p50=1s", "-arm", "intra=1", "-arm", "again:intra=1", "-o", out, parts.Model)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())

	assert.Contains(t, stdout.String(), "== -slo p50=1s: response time p50 ≤ 1s, judged on each block's 95% bound (slo-met)\n")
	met := map[string]int{}
	for _, r := range testutil.ResultsFile(t, out) {
		v, ok := r.Value("slo-met")
		require.True(t, ok, "every block is decided: 64 steps bound a p50")
		met[r.GetConfig("arm")] += int(v)
		_, ok = r.Value("resp-p50-sec/op")
		assert.True(t, ok, "-open reports response times")
	}
	for _, arm := range []string{"intra1", "again", "null"} {
		assert.Contains(t, stdout.String(), fmt.Sprintf("\n  %s: met in %d of 2 blocks, missed in %d, undecided in 0\n", arm, met[arm], 2-met[arm]))
	}
	log, err := os.ReadFile(out + ".log")
	require.NoError(t, err)
	assert.Equal(t, 6, strings.Count(string(log), "SLO response time p50 ≤ 1s (RunConfig.SLO, 95% bound over 64 steps): "))
	assert.Contains(t, stdout.String(), "  intra1: open loop: response (arrival to end)")
}

// TestORTSearchVAD searches Silero VAD's rate for an objective far above
// its step, from 100/s capped at 200/s: two short probes.
func TestORTSearchVAD(t *testing.T) {
	parts := ort.Require(t)
	bin := buildDecodegap(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	args := append(append([]string{"ort"}, vadArgs(t)...), "-benchtime", "64x", "-seed", "3",
		"-search", "-gap", "10ms", "-max-rate", "200", "-slo", "p50=1s", "-arm", "intra=1", "-o", out, parts.Model)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())

	assert.Contains(t, stderr.String(), "decodegap ort: searching each of 1 arm for the highest arrival rate per session that meets -slo p50=1s, into "+out)
	so := stdout.String()
	log, _ := os.ReadFile(out + ".log")
	require.Contains(t, so, "  --- decodegap.SearchRate: BenchmarkModel/input=1x512/state=2x1x128: response p50 ≤ 1s at 95% confidence\n", "log:\n%s", log)
	assert.Contains(t, so, "  100/s: ")
	rs := testutil.ResultsFile(t, out)
	require.NotEmpty(t, rs)
	assert.Contains(t, so, fmt.Sprintf("== arm intra1: %d %s\n", len(rs), plural(len(rs), "probe", "probes")))
	for i, r := range rs {
		assert.Equal(t, "intra1", r.GetConfig("arm"))
		assert.Equal(t, "silero_vad_v5", r.GetConfig("model"))
		assert.Empty(t, r.GetConfig("gap"), "a probe's gap is its rate")
		assert.True(t, strings.HasPrefix(testutil.Name(r), "Model/input=1x512/state=2x1x128/rate="), testutil.Name(r))
		_, ok := r.Value("slo-met")
		assert.True(t, ok, "probe %d is decided", i)
	}
	assert.Equal(t, "Model/input=1x512/state=2x1x128/rate=100/s", testutil.Name(rs[0]), "the key dims, then the probe's rate")
	head, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(head), "-search: seed 3, from 100/s per session (gap 10ms, hybrid, constant), open loop, -slo p50=1s, windowed step, -benchtime 64x\n")
}
