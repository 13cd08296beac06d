package decodegap

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ortgo "github.com/yalue/onnxruntime_go"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// kvModel is the 2-layer KV decoder of decodegap/ort/testdata.
var kvModel = filepath.Join("ort", "testdata", "decoder_kv.onnx")

// handDecode is a plain by-hand decode loop over onnxruntime_go on the
// same session type ort.Decoder runs (a DynamicAdvancedSession of one
// intra-op thread), written as a careful user writes it: the caches live
// in two preallocated slices per input, and every step wraps their
// prefixes as the past and present tensors, runs, and swaps them. It
// times each token with the monotonic clock after the same gap.Waiter
// wait, and returns the latencies and the depth each ran at.
func handDecode(tb testing.TB, prefill, tokens int, gapMean time.Duration) (lat []int64, depth []int32) {
	tb.Helper()
	sig, err := ort.Inspect(kvModel)
	require.NoError(tb, err)
	require.NoError(tb, ort.Init(""))
	so, err := ortgo.NewSessionOptions()
	require.NoError(tb, err)
	require.NoError(tb, so.SetIntraOpNumThreads(1))
	var ins, outs []string
	for _, p := range sig.Inputs {
		ins = append(ins, p.Name)
	}
	for _, p := range sig.Outputs {
		outs = append(outs, p.Name)
	}
	s, err := ortgo.NewDynamicAdvancedSession(kvModel, ins, outs, so)
	so.Destroy()
	require.NoError(tb, err)
	defer s.Destroy()
	heads, hd, vocab := sig.Inputs[2].Shape[1], sig.Inputs[2].Shape[3], sig.Outputs[0].Shape[2]
	maxCtx := int64(prefill + tokens)
	nCache := len(sig.Inputs) - 2
	past, present := make([][]float32, nCache), make([][]float32, nCache)
	for i := range past {
		past[i], present[i] = make([]float32, heads*maxCtx*hd), make([]float32, heads*maxCtx*hd)
	}
	logits := make([]float32, int64(prefill)*vocab)
	spec := gap.Spec{Kind: gap.Kind(GapHybrid), Mean: gapMean}
	seq, w := gap.NewSequence(spec), gap.NewWaiter(spec)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(tb, w.Begin())
	defer w.End()
	ids := make([]int64, prefill)
	mask := make([]int64, maxCtx)
	for i := range mask {
		mask[i] = 1
	}
	ctx := int64(0)
	in, out := make([]ortgo.Value, len(ins)), make([]ortgo.Value, len(outs))
	step := func(n int64) {
		in[0], err = ortgo.NewTensor(ortgo.NewShape(1, n), ids[:n])
		require.NoError(tb, err)
		in[1], err = ortgo.NewTensor(ortgo.NewShape(1, ctx+n), mask[:ctx+n])
		require.NoError(tb, err)
		out[0], err = ortgo.NewTensor(ortgo.NewShape(1, n, vocab), logits[:n*vocab])
		require.NoError(tb, err)
		for i := range nCache {
			if ctx == 0 {
				in[2+i], err = ortgo.NewEmptyTensor[float32](ortgo.NewShape(1, heads, 0, hd))
			} else {
				in[2+i], err = ortgo.NewTensor(ortgo.NewShape(1, heads, ctx, hd), past[i][:heads*ctx*hd])
			}
			require.NoError(tb, err)
			out[1+i], err = ortgo.NewTensor(ortgo.NewShape(1, heads, ctx+n, hd), present[i][:heads*(ctx+n)*hd])
			require.NoError(tb, err)
		}
		require.NoError(tb, s.Run(in, out))
		for _, v := range append(in, out...) {
			v.Destroy()
		}
		past, present = present, past
		ctx += n
	}
	prevEnd := gap.Now()
	w.WaitUntil(prevEnd + int64(seq.Next()))
	step(int64(prefill))
	prevEnd = gap.Now()
	for range tokens {
		w.WaitUntil(prevEnd + int64(seq.Next()))
		d := ctx
		t0 := gap.Now()
		step(1)
		prevEnd = gap.Now()
		lat, depth = append(lat, prevEnd-t0), append(depth, int32(d))
	}
	return lat, depth
}

// bucketP50s returns the p50 of each bucket of bounds (lower bounds).
func bucketP50s(lat []int64, depth []int32, bounds []int) []float64 {
	p := make([]float64, len(bounds))
	for k, lo := range bounds {
		hi := int32(1 << 30)
		if k+1 < len(bounds) {
			hi = int32(bounds[k+1])
		}
		var xs []int64
		for i, d := range depth {
			if d >= int32(lo) && d < hi {
				xs = append(xs, lat[i])
			}
		}
		slices.Sort(xs)
		if len(xs) > 0 {
			p[k] = nearestRank(xs, 0.5)
		}
	}
	return p
}

// openDecoder opens ort.Decoder on model at one intra-op thread and batch
// 1, for prefill and tokens a generation.
func openDecoder(model string, prefill, tokens int) DecoderOpener {
	dc := ort.DecoderConfig{Model: ort.ModelConfig{Path: model, Options: ort.Options{IntraOpThreads: 1}, Dims: map[string]int64{"batch": 1}},
		Prefill: prefill, MaxContext: prefill + tokens}
	return func() (Decoder, func() error, error) {
		d, err := ort.OpenDecoder(dc)
		if err != nil {
			return nil, nil, err
		}
		return d, d.Close, nil
	}
}

// decodeAgainstHand runs rounds of one generation each way, RunDecode's
// measurement (measureDecode on ort.Decoder) and the by-hand loop,
// alternating which goes first. Per bucket it returns the p50 of every
// round's tokens pooled, harness over hand (ratio), and the median over
// rounds of each round's ratio (roundRatio), with both pooled p50s.
func decodeAgainstHand(tb testing.TB, prefill, tokens, rounds int, gapMean time.Duration, bounds []int) (ratio, roundRatio, harness, hand []float64) {
	tb.Helper()
	open := openDecoder(kvModel, prefill, tokens)
	var hLat, gLat []int64
	var hDepth, gDepth []int32
	perRound := make([][]float64, len(bounds))
	for r := range rounds {
		var hp, gp []float64
		harnessRun := func() {
			cfg := RunConfig{Gap: Gap{Mean: gapMean}}
			d := Decode{Open: open, Tokens: tokens, Buckets: bounds, Generations: 1}
			run, err := measureDecode(&cfg, &d, 0)
			require.NoError(tb, err)
			hp = bucketP50s(run.lat, run.depth, bounds)
			hLat, hDepth = append(hLat, run.lat...), append(hDepth, run.depth...)
		}
		handRun := func() {
			lat, depth := handDecode(tb, prefill, tokens, gapMean)
			gp = bucketP50s(lat, depth, bounds)
			gLat, gDepth = append(gLat, lat...), append(gDepth, depth...)
		}
		if r%2 == 0 {
			harnessRun()
			handRun()
		} else {
			handRun()
			harnessRun()
		}
		for k := range bounds {
			perRound[k] = append(perRound[k], hp[k]/gp[k])
		}
	}
	harness, hand = bucketP50s(hLat, hDepth, bounds), bucketP50s(gLat, gDepth, bounds)
	for k := range bounds {
		s := slices.Clone(perRound[k])
		slices.Sort(s)
		ratio, roundRatio = append(ratio, harness[k]/hand[k]), append(roundRatio, s[len(s)/2])
	}
	return ratio, roundRatio, harness, hand
}

// TestDecodeAgainstHandLoopRuns runs the comparison small (it times
// nothing it asserts on): every bucket gets a finite ratio.
func TestDecodeAgainstHandLoopRuns(t *testing.T) {
	ort.RequireLibrary(t)
	ratio, _, _, _ := decodeAgainstHand(t, 4, 32, 2, 0, []int{4, 12, 20, 28})
	require.Len(t, ratio, 4)
	for k, r := range ratio {
		assert.Greater(t, r, 0.0, "bucket %d", k)
	}
}

// BenchmarkDecodeAgainstHandLoop is the issue-26 target: prefill 32 and
// decode to 2,048 tokens at a 2 ms gap, RunDecode's measurement and a
// by-hand loop interleaved, per depth bucket. Run (about 2 min a round):
//
//	GAPBENCH_CACHE=.cache DECODE_ROUNDS=6 go test -run '^$' -bench DecodeAgainstHandLoop -benchtime 1x ./decodegap/
//
// It reports per bucket ratio-ctx=A (harness p50 over hand p50, every
// round's tokens pooled), round-ratio-ctx=A (the median of the rounds'
// ratios) and both pooled p50s.
func BenchmarkDecodeAgainstHandLoop(b *testing.B) {
	ort.RequireLibrary(b)
	rounds := 4
	if v, err := strconv.Atoi(os.Getenv("DECODE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	bounds := []int{32, 512, 1024, 1536}
	ratio, roundRatio, harness, hand := decodeAgainstHand(b, 32, 2016, rounds, 2*time.Millisecond, bounds)
	for k, lo := range bounds {
		b.ReportMetric(ratio[k], fmt.Sprintf("ratio-ctx=%d", lo))
		b.ReportMetric(roundRatio[k], fmt.Sprintf("round-ratio-ctx=%d", lo))
		b.ReportMetric(harness[k], fmt.Sprintf("run-p50-ns@ctx=%d", lo))
		b.ReportMetric(hand[k], fmt.Sprintf("hand-p50-ns@ctx=%d", lo))
	}
}

// BenchmarkDecodeWarmup compares RunDecode's per-token p50 by depth bucket
// at the ort command's default warm-up (32 tokens) with a warm-up 30 times
// longer, on decodegap/ort/testdata/decoder_merged.onnx (prefill 16, 64
// tokens a generation, 2 generations measured, a 200 µs gap), the two in
// turns, 4 of each an iteration: it reports each bucket's median over
// rounds of p50(32)/p50(960) (b0/warm … b3/warm).
//
//	go test -run '^$' -bench DecodeWarmup -benchtime 1x ./decodegap/
func BenchmarkDecodeWarmup(b *testing.B) {
	ort.RequireLibrary(b)
	const prefill, tokens = 16, 64
	bounds := []int{16, 32, 48, 64}
	open := openDecoder(filepath.Join("ort", "testdata", "decoder_merged.onnx"), prefill, tokens)
	p50s := func(warm int) []float64 {
		cfg := RunConfig{Gap: Gap{Mean: 200 * time.Microsecond}, Warmup: warm}
		d := Decode{Open: open, Tokens: tokens, Buckets: bounds, Generations: 2}
		run, err := measureDecode(&cfg, &d, 0)
		require.NoError(b, err)
		return bucketP50s(run.lat, run.depth, bounds)
	}
	ratios := make([][]float64, len(bounds))
	for b.Loop() {
		for r := range 4 {
			var short, long []float64
			if r%2 == 0 {
				short, long = p50s(32), p50s(960)
			} else {
				long, short = p50s(960), p50s(32)
			}
			for k := range bounds {
				ratios[k] = append(ratios[k], short[k]/long[k])
			}
		}
	}
	for k := range bounds {
		s := slices.Clone(ratios[k])
		slices.Sort(s)
		b.ReportMetric(s[len(s)/2], fmt.Sprintf("b%d/warm", k))
	}
}
