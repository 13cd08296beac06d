package decodegap

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

// fakeDecoder counts its context; Token fails past fail (when > 0).
type fakeDecoder struct {
	prompt, depth, fail int
	tokens              int
}

func (f *fakeDecoder) Prefill() error { f.depth = f.prompt; return nil }
func (f *fakeDecoder) Token() error {
	f.tokens++
	if f.fail > 0 && f.tokens == f.fail {
		return errors.New("cache corrupt")
	}
	f.depth++
	return nil
}
func (f *fakeDecoder) Depth() int { return f.depth }
func (f *fakeDecoder) Reset()     { f.depth = 0 }

// batchDecoder is a fakeDecoder that runs two sequences a step.
type batchDecoder struct{ fakeDecoder }

func (b *batchDecoder) Batch() int { return 2 }

// BenchmarkDecodeChild is run in a child process by TestRunDecode*.
func BenchmarkDecodeChild(b *testing.B) {
	mode := os.Getenv(childEnv)
	open := func(fail int) DecoderOpener {
		return func() (Decoder, func() error, error) { return &fakeDecoder{prompt: 4, fail: fail}, nil, nil }
	}
	cfg := RunConfig{Gap: Gap{Kind: GapBusy, Mean: 10 * time.Microsecond}, Warmup: 3}
	switch mode {
	case "decode":
		RunDecode(b, cfg, Decode{Open: open(0), Tokens: 16, Buckets: []int{4, 8, 16}})
	case "decode-batch":
		RunDecode(b, cfg, Decode{Open: func() (Decoder, func() error, error) {
			return &batchDecoder{fakeDecoder{prompt: 4}}, nil, nil
		}, Tokens: 16, Buckets: []int{4}})
	case "decode-default":
		RunDecode(b, cfg, Decode{Open: open(0), Tokens: 16})
	case "decode-fail":
		// The warm-up is one whole generation (Warmup 3 of 16 tokens,
		// rounded up): 16 calls, 16 more in generation 1, the 33rd fails.
		RunDecode(b, cfg, Decode{Open: open(33), Tokens: 16})
	default:
		b.Skip("run by TestRunDecode* in a child process")
	}
}

func decodeResults(t *testing.T, out string) map[string]*benchfmt.Result {
	t.Helper()
	got := map[string]*benchfmt.Result{}
	rd := benchfmt.NewReader(strings.NewReader(out), "child")
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			got[procsSuffix.ReplaceAllString(string(r.Name), "")] = r.Clone()
		}
	}
	require.NoError(t, rd.Err())
	return got
}

// procsSuffix is testing's -GOMAXPROCS suffix of a benchmark name.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// TestRunDecodeReportsEachDepthBucket: one line for the prefill, one per
// depth bucket and one for every token, each carrying the gap: and decode:
// configuration lines; -benchtime=40x runs ⌈40/16⌉ = 3 whole generations.
func TestRunDecodeReportsEachDepthBucket(t *testing.T) {
	out, err := runChildBench(t, "^BenchmarkDecodeChild$", "decode", "-test.benchtime=40x")
	require.NoError(t, err, out)
	assert.Contains(t, out, "gap: mean=10µs kind=busy shape=constant\n")
	assert.Contains(t, out, "decode: prefill=4 tokens=16 context=4..19 buckets=4,8,16\n")
	got := decodeResults(t, out)
	tokens := map[string]float64{"ctx=4..7": 12, "ctx=8..15": 24, "ctx=16..19": 12, "ctx=all": 48}
	for part, n := range tokens {
		r := got["DecodeChild/prefill=4/"+part]
		require.NotNil(t, r, "no line for %s in:\n%s", part, out)
		v, ok := r.Value("tokens")
		assert.True(t, ok)
		assert.Equal(t, n, v, part)
		for _, unit := range []string{"sec/op", "p50-sec/op", "p90-sec/op", "tok/s", "gap-sec/op", "gap-p50-sec/op", "cpu-sec/op"} {
			_, ok := r.Value(unit)
			assert.True(t, ok, "%s has %s", part, unit)
		}
		assert.Equal(t, "process-less-harness (turns: less the other arms' open threads)", r.GetConfig("cpu-scope"), "the one CPU definition, said")
		assert.Equal(t, "mean=10µs kind=busy shape=constant", r.GetConfig("gap"))
		assert.Contains(t, r.GetConfig("decode"), "prefill=4 tokens=16")
	}
	ttft := got["DecodeChild/prefill=4/ttft"]
	require.NotNil(t, ttft, out)
	_, ok := ttft.Value("prompt-tok/s")
	assert.True(t, ok)
	assert.Contains(t, out, "decode: 3 generations of a 4-token prompt (ttft p50 ")
}

// TestRunDecodeCountsEverySequenceOfABatch: at batch 2 a step adds two
// tokens, so tokens is twice the steps and tok/s twice the steps' rate
// (it once counted steps).
func TestRunDecodeCountsEverySequenceOfABatch(t *testing.T) {
	out, err := runChildBench(t, "^BenchmarkDecodeChild$", "decode-batch", "-test.benchtime=16x")
	require.NoError(t, err, out)
	all := decodeResults(t, out)["DecodeChild/prefill=4/ctx=all"]
	require.NotNil(t, all, out)
	n, _ := all.Value("tokens")
	assert.Equal(t, 32.0, n, "16 steps of 2 sequences")
	sec, _ := all.Value("sec/op")
	rate, ok := all.Value("tok/s")
	require.True(t, ok)
	assert.InDelta(t, 2/sec, rate, 1e-3*rate, "tok/s = batch / the step's mean")
	ttft := decodeResults(t, out)["DecodeChild/prefill=4/ttft"]
	require.NotNil(t, ttft, out)
	psec, _ := ttft.Value("sec/op")
	prate, _ := ttft.Value("prompt-tok/s")
	assert.InDelta(t, 4*2/psec, prate, 1e-3*prate, "a 4-token prompt in each of 2 sequences")
}

func TestRunDecodeDefaultBucketsAndErrors(t *testing.T) {
	out, err := runChildBench(t, "^BenchmarkDecodeChild$", "decode-default", "-test.benchtime=16x")
	require.NoError(t, err, out)
	got := decodeResults(t, out)
	for _, part := range []string{"ctx=4..7", "ctx=8..11", "ctx=12..15", "ctx=16..19"} {
		assert.NotNil(t, got["DecodeChild/prefill=4/"+part], "four equal buckets: %s in\n%s", part, out)
	}
	out, err = runChildBench(t, "^BenchmarkDecodeChild$", "decode-fail", "-test.benchtime=32x")
	require.Error(t, err)
	assert.Contains(t, out, "decodegap.RunDecode: generation 2, token 1 (context 4): cache corrupt")

	for _, c := range []struct {
		d    Decode
		cfg  RunConfig
		want string
	}{
		{Decode{Tokens: 1}, RunConfig{}, "Decode.Open is nil: pass a DecoderOpener"},
		{Decode{Open: func() (Decoder, func() error, error) { return nil, nil, nil }}, RunConfig{}, "Decode.Tokens = 0: want ≥ 1 tokens a generation"},
		{Decode{Open: func() (Decoder, func() error, error) { return nil, nil, nil }, Tokens: 2, Buckets: []int{8, 4}}, RunConfig{}, "Decode.Buckets = [8 4]: want strictly ascending lower bounds"},
		{Decode{Open: func() (Decoder, func() error, error) { return nil, nil, nil }, Tokens: 2}, RunConfig{Sessions: 2}, "RunConfig.Sessions, Null, SLO, Counters, Trace and Budget are not supported by RunDecode: leave them zero"},
		{Decode{Open: func() (Decoder, func() error, error) { return nil, nil, nil }, Tokens: 2}, RunConfig{Gap: Gap{Open: true, Mean: 1}}, "RunConfig.Gap.Open: RunDecode runs a closed loop (a gap before each token)"},
	} {
		assert.EqualError(t, c.d.check(&c.cfg), c.want)
	}
}

// TestRunWritesGapConfigLine: Run's result carries its gap spec as a
// benchfmt configuration line.
func TestRunWritesGapConfigLine(t *testing.T) {
	out, err := runChild(t, "gap", "200x")
	require.NoError(t, err, out)
	assert.Contains(t, out, "gap: mean=20µs kind=busy shape=constant\n")
	assert.Equal(t, 1, strings.Count(out, "gap: mean="), "written once, on the first call:\n%s", out)
	for _, r := range decodeResults(t, out) {
		assert.Equal(t, "mean=20µs kind=busy shape=constant", r.GetConfig("gap"))
	}
}

func TestWarmGenerationsCoverEveryDepth(t *testing.T) {
	for _, c := range []struct{ warm, tokens, want int }{
		{0, 64, 0}, {-1, 64, 0}, {1, 64, 1}, {32, 64, 1}, {64, 64, 1}, {65, 64, 2}, {960, 64, 15},
	} {
		assert.Equal(t, c.want, warmGenerations(c.warm, c.tokens), "Warmup %d, %d tokens a generation", c.warm, c.tokens)
	}
}
