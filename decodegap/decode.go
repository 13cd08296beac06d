package decodegap

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
)

// Decoder is a step that holds a growing context, such as a language
// model's decoder with its key/value cache (ort.Decoder is one).
type Decoder interface {
	// Prefill starts a generation: it empties the context and runs the
	// prompt. Its time is the time to first token.
	Prefill() error
	// Token runs one token at the current context and adds it.
	Token() error
	// Depth returns the context the next Token runs at, in tokens.
	Depth() int
	// Reset empties the context.
	Reset()
}

// BatchDecoder is a Decoder that runs Batch() sequences side by side:
// one Token call adds a token to each. RunDecode then counts Batch()
// tokens a step in tok/s, prompt-tok/s and tokens; a Decoder without the
// method runs one sequence.
type BatchDecoder interface {
	Decoder
	// Batch returns the number of sequences a step runs, ≥ 1.
	Batch() int
}

// DecoderOpener opens a fresh, independent Decoder; close may be nil.
type DecoderOpener func() (d Decoder, close func() error, err error)

// Decode configures RunDecode: a growing-context decode.
type Decode struct {
	// Open opens the decoder; required.
	Open DecoderOpener
	// Tokens is the number of tokens each generation decodes after its
	// prefill, ≥ 1. A generation then restarts from the prefill, so a
	// block holds whole generations.
	Tokens int
	// Buckets are the lower bounds of the depth buckets, ascending: bucket
	// k holds the tokens run at a context from Buckets[k] to
	// Buckets[k+1]−1 (the last to the deepest). Depths below the first
	// bound are left out. nil: four equal buckets from the prompt's end.
	Buckets []int
	// Generations is the number of generations measured; 0 reads
	// -benchtime: Nx runs ⌈N/Tokens⌉ generations (N tokens or more), a
	// duration D runs generations until D has passed (at least one).
	Generations int
}

// RunDecode measures a growing-context decode as a benchmark: RunConfig's
// Warmup tokens rounded up to whole throwaway generations (so that every
// depth has run before it is timed), then generations of a prefill
// (the time to first token) and Decode.Tokens tokens, each after the gap
// of cfg.Gap (the prefill too: a request arriving). It reports, as
// sub-benchmarks (one benchfmt line each, so that benchstat and the
// verdicts judge each on its own; tok/s, prompt-tok/s and tokens count
// every sequence of a BatchDecoder, steps × Batch()):
//
//	prefill=P/ttft          the prefill: ns/op (mean), p50-ns/op, p90-ns/op, prompt-tok/s, cpu-ns/op
//	prefill=P/ctx=A..B      the tokens at a context of A to B: ns/op, p50-ns/op,
//	                        p90-ns/op, gap-ns/op and gap-p50-ns/op (achieved), tok/s,
//	                        tokens, cpu-ns/op
//	prefill=P/ctx=all       every token: the same, and tok/s over the tokens' own time
//
// Of RunConfig it uses Gap (a closed loop: Gap.Open is refused), Warmup and
// Seed; a field it does not honour (Sessions, Null, SLO, Budget, Counters,
// Trace) is refused, naming it. The gap spec and the decode's settings are
// written as benchfmt configuration lines (gap:, decode:). Each line's
// iteration count is testing's, not the tokens measured: read tokens. RunDecode must be
// the whole body of its benchmark function; the loop locks its OS thread.
func RunDecode(b *testing.B, cfg RunConfig, d Decode) {
	b.Helper()
	if err := d.check(&cfg); err != nil {
		b.Fatalf("decodegap.RunDecode: %v", err)
	}
	var dur time.Duration
	if d.Generations == 0 {
		p, err := readPlan()
		if err != nil {
			b.Fatalf("decodegap.RunDecode: %v", err)
		}
		if p.iters > 0 {
			d.Generations = (p.iters + d.Tokens - 1) / d.Tokens
		} else {
			dur = p.duration
		}
	}
	m, err := measureDecode(&cfg, &d, dur)
	if err != nil {
		b.Fatalf("decodegap.RunDecode: %v", err)
	}
	m.report(b)
}

// check refuses what RunDecode does not honour.
func (d *Decode) check(cfg *RunConfig) error {
	switch {
	case d.Open == nil:
		return fmt.Errorf("Decode.Open is nil: pass a DecoderOpener")
	case d.Tokens < 1:
		return fmt.Errorf("Decode.Tokens = %d: want ≥ 1 tokens a generation", d.Tokens)
	case d.Generations < 0:
		return fmt.Errorf("Decode.Generations = %d: want ≥ 0 (0 reads -benchtime)", d.Generations)
	case !slices.IsSorted(d.Buckets) || len(slices.Compact(slices.Clone(d.Buckets))) != len(d.Buckets):
		return fmt.Errorf("Decode.Buckets = %v: want strictly ascending lower bounds", d.Buckets)
	case len(d.Buckets) > 0 && d.Buckets[0] < 0:
		return fmt.Errorf("Decode.Buckets = %v: depths are ≥ 0", d.Buckets)
	case cfg.Gap.Open:
		return fmt.Errorf("RunConfig.Gap.Open: RunDecode runs a closed loop (a gap before each token)")
	case cfg.Sessions > 1, cfg.Null, cfg.SLO.on(), len(cfg.Counters) > 0, cfg.Trace != "",
		len(cfg.Budget.CPUs) > 0 || cfg.Budget.Cores > 0:
		return fmt.Errorf("RunConfig.Sessions, Null, SLO, Counters, Trace and Budget are not supported by RunDecode: leave them zero")
	}
	// Window does not apply (no steady-state detection): n is any size
	// that passes its check.
	return cfg.settings().validate(1 << 20)
}

// decodeRun is one measured decode: every generation's prefill time and
// every token's latency, gap and depth, in order.
type decodeRun struct {
	d       *Decode
	prefill int // the context after the prefill
	batch   int // sequences a step runs (BatchDecoder), ≥ 1
	ttft    []int64
	lat     []int64
	gaps    []int64
	depth   []int32
	wallNs  int64
	bounds  []int // the bucket bounds used
	gapSpec string
	// cpu is the tokens' CPU cost by bucket (cpu[k+1] for bucket k,
	// cpu[0] the tokens below the first bound), ttftCPU the prefills',
	// in cpu-ns/op's definition: the process's CPU clock read at the
	// bucket and generation boundaries only (at the start of a gap, which
	// the reading does not make late), less the gaps' CPU (Waiter.CPU)
	// and the loop's bookkeeping per step. cpuOK is false when the clock
	// could not be read.
	cpu     []cpuTally
	ttftCPU cpuTally
	cpuOK   bool
}

// cpuTally sums a line's CPU time and its steps.
type cpuTally struct {
	ns    float64
	steps int
}

// perStep is the tally's CPU time per step, false when it has none.
func (c cpuTally) perStep() (float64, bool) {
	if c.steps == 0 {
		return 0, false
	}
	return max(c.ns, 0) / float64(c.steps), true
}

// measureDecode runs the warm-up and the generations.
func measureDecode(cfg *RunConfig, d *Decode, dur time.Duration) (*decodeRun, error) {
	dec, closeFn, err := d.Open()
	if closeFn != nil {
		defer closeFn()
	}
	if err != nil {
		return nil, fmt.Errorf("opening the decoder: %w", err)
	}
	if dec == nil {
		return nil, fmt.Errorf("opening the decoder returned a nil Decoder")
	}
	batch := 1
	if bd, ok := dec.(BatchDecoder); ok {
		if batch = bd.Batch(); batch < 1 {
			return nil, fmt.Errorf("the decoder's Batch() is %d: want 1 or more sequences a step", batch)
		}
	}
	if cfg.Parity != nil {
		if err := cfg.Parity(); err != nil {
			return nil, fmt.Errorf("parity check failed (RunConfig.Parity), nothing was timed: %w", err)
		}
	}
	spec := gapSpecOf(cfg)
	seq, w := gap.NewSequence(spec), gap.NewWaiter(spec)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	overhead := loopOverhead(cfg.settings())
	if err := w.Begin(); err != nil {
		return nil, fmt.Errorf("preparing gaps (RunConfig.Gap.Kind = %v): %w", cfg.Gap.Kind, err)
	}
	defer w.End()
	noGap := cfg.Gap.Shape == GapConstant && cfg.Gap.Mean == 0
	wait := func(prevEnd int64) {
		if !noGap {
			w.WaitUntil(prevEnd + int64(seq.Next()))
		}
	}
	// Warm-up: Warmup tokens rounded up to whole generations, discarded,
	// so that every depth the measurement visits has run before it is
	// timed. A decoder's first pass at a depth sizes its buffers for it
	// (ONNX Runtime plans memory per shape): warmed to 32 tokens of 64,
	// the deeper half read 1.25–1.29× its warm p50 (BenchmarkDecodeWarmup,
	// 2026-12-07).
	for g := range warmGenerations(cfg.Warmup, d.Tokens) {
		if _, _, err := timeStep(dec.Prefill); err != nil {
			return nil, fmt.Errorf("warm-up generation %d, prefill: %w", g+1, err)
		}
		for i := range d.Tokens {
			if _, _, err := timeStep(dec.Token); err != nil {
				return nil, fmt.Errorf("warm-up generation %d, token %d: %w", g+1, i+1, err)
			}
		}
	}
	r := &decodeRun{d: d, batch: batch, gapSpec: GapSpec(cfg.Gap), cpuOK: true}
	// mark reads the process's CPU clock and the gaps' so far; since
	// returns the CPU spent since the last mark on the steps, less the
	// gaps' and n steps' bookkeeping.
	var lastProc, lastGap int64
	mark := func() {
		p, err := readProcessCPU()
		if err != nil {
			r.cpuOK = false
		}
		g, _ := w.CPU()
		lastProc, lastGap = p, g
	}
	since := func(n int) float64 {
		p0, g0 := lastProc, lastGap
		mark()
		return float64(lastProc-p0) - float64(lastGap-g0) - overhead*float64(n)
	}
	n := d.Generations * d.Tokens
	r.lat, r.gaps, r.depth = make([]int64, 0, n), make([]int64, 0, n), make([]int32, 0, n)
	start := gap.Now()
	prevEnd := start
	more := func(g int) bool {
		if d.Generations > 0 {
			return g < d.Generations
		}
		return g == 0 || time.Duration(gap.Now()-start) < dur
	}
	mark()
	for g := 0; more(g); g++ {
		wait(prevEnd)
		t0, end, err := timeStep(dec.Prefill)
		if err != nil {
			return nil, fmt.Errorf("generation %d, prefill: %w", g+1, err)
		}
		prevEnd = end
		r.ttft = append(r.ttft, prevEnd-t0)
		r.prefill = dec.Depth()
		r.ttftCPU.ns += since(1)
		r.ttftCPU.steps++
		if g == 0 {
			r.bounds = bucketBounds(d.Buckets, r.prefill, r.prefill+d.Tokens)
			r.cpu = make([]cpuTally, len(r.bounds)+1)
		}
		cur, run := -1, 0 // the bucket of the tokens since the last mark, and how many
		for i := range d.Tokens {
			depth := dec.Depth()
			if k := bucketOf(r.bounds, depth); k != cur {
				if run > 0 {
					r.cpu[cur+1].ns += since(run)
					r.cpu[cur+1].steps += run
				}
				cur, run = k, 0
			}
			wait(prevEnd)
			t0, end, err := timeStep(dec.Token)
			if err != nil {
				return nil, fmt.Errorf("generation %d, token %d (context %d): %w", g+1, i+1, depth, err)
			}
			r.lat, r.gaps, r.depth = append(r.lat, end-t0), append(r.gaps, t0-prevEnd), append(r.depth, int32(depth))
			prevEnd = end
			run++
		}
		if run > 0 {
			r.cpu[cur+1].ns += since(run)
			r.cpu[cur+1].steps += run
		}
	}
	r.wallNs = gap.Now() - start
	return r, nil
}

// warmGenerations is the whole generations of tokens a generation that
// warm up at least warm tokens: 0 for none.
func warmGenerations(warm, tokens int) int {
	if warm <= 0 {
		return 0
	}
	return (warm + tokens - 1) / tokens
}

// bucketOf returns the bucket of a token at context depth (the last bound
// at or below it), or −1 below the first.
func bucketOf(bounds []int, depth int) int {
	k, found := slices.BinarySearch(bounds, depth)
	if !found {
		k--
	}
	return k
}

// bucketCPU is bucket k's CPU tally (k = −1: every token).
func (r *decodeRun) bucketCPU(k int) (float64, bool) {
	if !r.cpuOK {
		return 0, false
	}
	if k >= 0 {
		return r.cpu[k+1].perStep()
	}
	var all cpuTally
	for _, c := range r.cpu {
		all.ns += c.ns
		all.steps += c.steps
	}
	return all.perStep()
}

// bucketBounds returns the buckets' lower bounds: the user's, or four
// equal ones over [from, to).
func bucketBounds(user []int, from, to int) []int {
	if len(user) > 0 {
		return user
	}
	n := to - from
	if n < 4 {
		return []int{from}
	}
	return []int{from, from + n/4, from + n/2, from + 3*n/4}
}

// gapSpecOf is the gap spec RunConfig's Gap asks for.
func gapSpecOf(cfg *RunConfig) gap.Spec {
	g := cfg.Gap
	return gap.Spec{Kind: gap.Kind(g.Kind), Shape: gap.Shape(g.Shape), Mean: g.Mean, Jitter: g.Jitter, Trace: g.Trace,
		Spin: g.Spin, MaxCPU: g.MaxCPU, Seed: cfg.Seed, Burstiness: g.Burstiness}
}

// decodeStats are one line's figures, numbers only.
type decodeStats struct {
	n                   int
	mean, p50, p90, gap float64
	// gapP50 is the achieved gap's median (the mean, gap, moves with
	// every late wake-up; the median says what most tokens got).
	gapP50 float64
	sumNs  float64
	// cpu is cpu-ns/op, when cpuOK.
	cpu   float64
	cpuOK bool
}

func statsOf(lat, gaps []int64) decodeStats {
	s := decodeStats{n: len(lat)}
	if s.n == 0 {
		return s
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	for _, v := range lat {
		s.sumNs += float64(v)
	}
	s.mean = s.sumNs / float64(s.n)
	s.p50, s.p90 = nearestRank(sorted, 0.5), nearestRank(sorted, 0.9)
	var g float64
	for _, v := range gaps {
		g += float64(v)
	}
	if len(gaps) > 0 {
		s.gap = g / float64(len(gaps))
		sg := slices.Clone(gaps)
		slices.Sort(sg)
		s.gapP50 = nearestRank(sg, 0.5)
	}
	return s
}

// nearestRank is the q-quantile of sorted by the nearest-rank rule.
func nearestRank(sorted []int64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return float64(sorted[max(0, min(k, len(sorted)-1))])
}

// bucket returns the tokens of bucket k and its name part "ctx=A..B".
func (r *decodeRun) bucket(k int) (lat, gaps []int64, name string) {
	lo, hi := r.bounds[k], math.MaxInt32
	if k+1 < len(r.bounds) {
		hi = r.bounds[k+1] - 1
	}
	deepest := -1
	for i, d := range r.depth {
		if int(d) >= lo && int(d) <= hi {
			lat, gaps = append(lat, r.lat[i]), append(gaps, r.gaps[i])
			deepest = max(deepest, int(d))
		}
	}
	if hi == math.MaxInt32 {
		hi = deepest
	}
	return lat, gaps, fmt.Sprintf("ctx=%d..%d", lo, hi)
}

// report writes the sub-benchmarks and the configuration line.
func (r *decodeRun) report(b *testing.B) {
	b.Helper()
	bounds := make([]string, len(r.bounds))
	for i, v := range r.bounds {
		bounds[i] = strconv.Itoa(v)
	}
	configLine("gap", r.gapSpec)
	configLine("cpu-scope", cpuScopeLine)
	// The generations a block ran are in the log and in each line's
	// tokens: a count that varies by block (-benchtime D) would split
	// benchstat's tables.
	configLine("decode", fmt.Sprintf("prefill=%d tokens=%d context=%d..%d buckets=%s",
		r.prefill, r.d.Tokens, r.prefill, r.prefill+r.d.Tokens-1, strings.Join(bounds, ",")))
	prefix := fmt.Sprintf("prefill=%d/", r.prefill)
	tt := statsOf(r.ttft, nil)
	sub(b, prefix+"ttft", func(sb *testing.B) {
		sb.ReportMetric(tt.mean, "ns/op")
		sb.ReportMetric(tt.p50, "p50-ns/op")
		sb.ReportMetric(tt.p90, "p90-ns/op")
		sb.ReportMetric(float64(r.prefill*r.batch)*1e9/tt.mean, "prompt-tok/s")
		if v, ok := r.ttftCPU.perStep(); ok && r.cpuOK {
			sb.ReportMetric(v, "cpu-ns/op")
		}
	}, nil)
	var words []string
	for k := range r.bounds {
		lat, gaps, name := r.bucket(k)
		if len(lat) == 0 {
			continue
		}
		s := statsOf(lat, gaps)
		s.cpu, s.cpuOK = r.bucketCPU(k)
		sub(b, prefix+name, tokenMetrics(s, r.batch), nil)
		words = append(words, fmt.Sprintf("%s p50 %s", name, fmtNs(s.p50)))
	}
	all := statsOf(r.lat, r.gaps)
	all.cpu, all.cpuOK = r.bucketCPU(-1)
	sub(b, prefix+"ctx=all", tokenMetrics(all, r.batch), func(sb *testing.B) {
		sb.Logf("decode: %d %s of a %d-token prompt (ttft p50 %s) and %d tokens; per-token latency by context: %s; %.1f tok/s over the tokens' own time",
			len(r.ttft), plural(len(r.ttft), "generation", "generations"), r.prefill, fmtNs(tt.p50), r.d.Tokens, strings.Join(words, ", "), float64(all.n*r.batch)*1e9/all.sumNs)
	})
}

// tokenMetrics reports a line's figures; a step adds batch tokens (one
// per sequence), so tok/s and tokens count steps × batch.
func tokenMetrics(s decodeStats, batch int) func(*testing.B) {
	return func(sb *testing.B) {
		sb.ReportMetric(s.mean, "ns/op")
		sb.ReportMetric(s.p50, "p50-ns/op")
		sb.ReportMetric(s.p90, "p90-ns/op")
		sb.ReportMetric(s.gap, "gap-ns/op")
		if s.n > 0 {
			sb.ReportMetric(s.gapP50, "gap-p50-ns/op")
		}
		sb.ReportMetric(float64(batch)*1e9/s.mean, "tok/s")
		sb.ReportMetric(float64(s.n*batch), "tokens")
		if s.cpuOK {
			sb.ReportMetric(s.cpu, "cpu-ns/op")
		}
	}
}

// sub runs a sub-benchmark that reports figures already measured, and
// logs with log on testing's last call.
func sub(b *testing.B, name string, metrics func(*testing.B), log func(*testing.B)) {
	b.Run(name, func(sb *testing.B) {
		metrics(sb)
		if log != nil && isLastCall(sb) {
			log(sb)
		}
	})
}
