package steady

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = 1e6 // ns

// series builds n samples whose level at index i is level(i) ns, with
// multiplicative log-normal noise of relative spread noise, from seed.
func series(seed uint64, n int, noise float64, level func(i int) float64) []int64 {
	r := rand.New(rand.NewPCG(seed, 42))
	x := make([]int64, n)
	for i := range x {
		x[i] = int64(level(i) * math.Exp(noise*r.NormFloat64()))
	}
	return x
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

func step(at int, before, after float64) func(int) float64 {
	return func(i int) float64 {
		if i < at {
			return before
		}
		return after
	}
}

// seeds is how many seeds each shape is tried with.
const seeds = 10

// checkReason asserts what every Result must satisfy: a Reason that belongs
// to its Class, Suggest set exactly when the series is unsettled (but too
// long) or its steady window short, and never a change of level between two
// medians equal to six digits.
func checkReason(t *testing.T, r Result) {
	t.Helper()
	classOf := map[Reason]Class{InvalidParams: NoSteadyState, TooShort: NoSteadyState, TooLong: NoSteadyState,
		StillChanging: NoSteadyState, Drifting: NoSteadyState, OneLevel: Flat, WithinMargin: Flat, Faster: Warmup, Slower: Slowdown}
	assert.Equal(t, classOf[r.Reason], r.Class, "reason %v", r.Reason)
	wantSuggest := r.ShortTail || r.Reason == TooShort || r.Reason == StillChanging || r.Reason == Drifting
	assert.Equal(t, wantSuggest, r.Suggest > 0, "reason %v, short tail %v, suggest %d", r.Reason, r.ShortTail, r.Suggest)
	if r.Reason == Faster || r.Reason == Slower {
		assert.False(t, same6(r.Ref.Median, r.Levels[len(r.Levels)-1].Median), "a change claimed beside equal medians")
	}
	if r.Class != NoSteadyState {
		assert.Equal(t, r.ShortTail, r.TailWindows < ShortTailWindows)
	}
}

func TestFlat(t *testing.T) {
	for seed := range uint64(seeds) {
		x := series(seed, 2000, 0.03, constant(1*ms))
		r := Detect(x, Params{})
		require.Equal(t, Flat, r.Class, "seed %d: %s", seed, r.Reason)
		assert.Equal(t, 0, r.Start)
		assert.Empty(t, r.Changepoints)
		require.Len(t, r.Levels, 1)
		assert.Equal(t, Segment{0, 2000, r.Levels[0].Median}, r.Levels[0])
		assert.InEpsilon(t, 1*ms, r.Levels[0].Median, 0.01)
		assert.Zero(t, r.Suggest)
		assert.Equal(t, OneLevel, r.Reason)
		assert.Equal(t, 62, r.Windows)
		checkReason(t, r)
	}
}

// assertChangesNear asserts that there is one changepoint, at the first
// window boundary after at: the window in which a step happens mixes both
// levels and goes with the earlier one.
func assertChangesNear(t *testing.T, cps []int, at int) {
	t.Helper()
	require.Len(t, cps, 1)
	assert.Equal(t, (at+31)/32*32, cps[0])
}

func TestWarmupStep(t *testing.T) {
	for seed := range uint64(seeds) {
		x := series(seed, 2000, 0.03, step(300, 2*ms, 1*ms))
		r := Detect(x, Params{})
		require.Equal(t, Warmup, r.Class, "seed %d: %s", seed, r.Reason)
		assert.InDelta(t, 300, r.Start, 32, "seed %d", seed)
		assert.Zero(t, r.Start%32)
		assertChangesNear(t, r.Changepoints, 300)
		assert.Less(t, slices.Max(x[r.Start:]), int64(1.5*ms), "no sample of the 2 ms level in the steady window")
		assert.Zero(t, r.Suggest)
		assert.Equal(t, Faster, r.Reason)
		assert.Equal(t, Segment{0, 320, r.Ref.Median}, r.Ref)
		assert.InEpsilon(t, 2*ms, r.Ref.Median, 0.03)
		assert.InEpsilon(t, 1*ms, r.Levels[len(r.Levels)-1].Median, 0.03)
		checkReason(t, r)
	}
}

func TestWarmupExponential(t *testing.T) {
	// 2 ms at the start, decaying with a time constant of 300/ln(50) samples
	// to within 2% of the 1 ms steady level by sample 300.
	tau := 300 / math.Log(50)
	for seed := range uint64(seeds) {
		x := series(seed, 2000, 0.03, func(i int) float64 { return ms * (1 + math.Exp(-float64(i)/tau)) })
		r := Detect(x, Params{})
		require.Equal(t, Warmup, r.Class, "seed %d: %s", seed, r.Reason)
		// A decay has no sharp end: the windows just before 300 are
		// within the margin too, so the steady window may start up to two
		// windows either side; what matters is that the transient left in
		// it is negligible.
		assert.InDelta(t, 300, r.Start, 64, "seed %d: %v", seed, r.Changepoints)
		var sum float64
		for _, v := range x[r.Start:] {
			sum += float64(v)
		}
		mean := sum / float64(len(x)-r.Start)
		assert.InEpsilon(t, 1*ms*math.Exp(0.03*0.03/2), mean, 0.005, "the steady mean is within 0.5%% of the level's")
		checkReason(t, r)
	}
}

func TestSlowdown(t *testing.T) {
	for seed := range uint64(seeds) {
		x := series(seed, 2000, 0.03, step(1200, 1*ms, 1.2*ms))
		r := Detect(x, Params{})
		require.Equal(t, Slowdown, r.Class, "seed %d: %s", seed, r.Reason)
		assert.InDelta(t, 1200, r.Start, 32)
		assertChangesNear(t, r.Changepoints, 1200)
		assert.Zero(t, r.Suggest)
		assert.Equal(t, Slower, r.Reason)
		assert.Equal(t, Segment{0, 1216, r.Ref.Median}, r.Ref)
		assert.InEpsilon(t, 1*ms, r.Ref.Median, 0.03)
		checkReason(t, r)
	}
}

func TestStepNearEnd(t *testing.T) {
	for seed := range uint64(seeds) {
		x := series(seed, 2000, 0.03, step(1900, 1*ms, 1.5*ms))
		r := Detect(x, Params{})
		require.Equal(t, NoSteadyState, r.Class, "seed %d: %s", seed, r.Reason)
		assert.Equal(t, -1, r.Start)
		assert.Greater(t, r.Suggest, len(x))
		assert.Equal(t, 4000, r.Suggest)
		require.NotEmpty(t, r.Changepoints)
		assert.Equal(t, []int{1920}, r.Changepoints)
		assert.Equal(t, StillChanging, r.Reason)
		assert.Equal(t, []int{2, 62, 13}, []int{r.TailWindows, r.Windows, r.MinTail})
		assert.InEpsilon(t, 1*ms, r.Ref.Median, 0.03)
		assert.InEpsilon(t, 1.5*ms, r.Levels[1].Median, 0.05)
		assert.False(t, r.SameMedian)
		checkReason(t, r)
	}
}

func TestDrift(t *testing.T) {
	for _, end := range []float64{1.5, 1.2} {
		for seed := range uint64(seeds) {
			x := series(seed, 2000, 0.03, func(i int) float64 { return ms * (1 + (end-1)*float64(i)/2000) })
			r := Detect(x, Params{})
			require.Equal(t, NoSteadyState, r.Class, "end %v seed %d: %s %v", end, seed, r.Reason, r.Levels)
			assert.Equal(t, -1, r.Start)
			assert.Equal(t, 4000, r.Suggest)
			checkReason(t, r)
		}
	}
}

// TestBimodal: every sample is drawn at random from one of two levels (1 ms
// and 1.5 ms), independently. That is one distribution throughout, so the
// series is flat; the rank test makes no assumption of unimodality.
func TestBimodal(t *testing.T) {
	for _, p := range []float64{0.5, 0.3} {
		for seed := range uint64(seeds) {
			r := rand.New(rand.NewPCG(seed, 7))
			x := series(seed, 2000, 0.02, func(int) float64 {
				if r.Float64() < p {
					return 1.5 * ms
				}
				return 1 * ms
			})
			res := Detect(x, Params{})
			require.Equal(t, Flat, res.Class, "p %v seed %d: %s", p, seed, res.Reason)
			assert.Equal(t, 0, res.Start)
			checkReason(t, res)
		}
	}
}

// ar1 returns n samples around 1 ms with log-normal noise of spread 3%
// whose logarithm is an AR(1) process with coefficient phi: each sample is
// correlated with its neighbours over about (1+phi)/(1-phi) samples.
func ar1(seed uint64, n int, phi float64) []int64 {
	r := rand.New(rand.NewPCG(seed, 13))
	x := make([]int64, n)
	e := r.NormFloat64()
	for i := range x {
		e = phi*e + math.Sqrt(1-phi*phi)*r.NormFloat64()
		x[i] = int64(ms * math.Exp(0.03*e))
	}
	return x
}

// TestAutocorrelatedNoise: on a real host neighbouring steps are correlated.
// Tests that assume independence would see changes in that noise; the
// batch-means factor keeps them from doing so for correlation shorter than a
// window (phi 0.9: about 19 samples). Slower weather (phi 0.97, about 65
// samples) is left to the margin and is sometimes called a change.
func TestAutocorrelatedNoise(t *testing.T) {
	for seed := range uint64(5) {
		x := ar1(seed, 20_000, 0.9)
		r := Detect(x, Params{})
		require.Equal(t, Flat, r.Class, "seed %d: %s", seed, r.Reason)
		checkReason(t, r)
	}
	// And a real warm-up in the same noise is still found.
	x := ar1(1, 20_000, 0.9)
	for i := range 3000 {
		x[i] *= 2
	}
	r := Detect(x, Params{})
	require.Equal(t, Warmup, r.Class, r.Reason)
	assert.InDelta(t, 3000, r.Start, 32)
}

func TestInflation(t *testing.T) {
	d := newDetector(series(1, 20_000, 0.03, constant(ms)), Params{})
	d.prepare()
	assert.InDelta(t, 1, d.infl, 0.25, "independent samples")
	d = newDetector(ar1(1, 20_000, 0.9), Params{})
	d.prepare()
	// AR(1) with phi 0.9: (1+phi)/(1-phi) = 19 for long batches; batches of
	// 32 see about 12.
	assert.InDelta(t, 12, d.infl, 4)
	d = newDetector(series(1, 20_000, 0.03, step(10_000, 2*ms, ms)), Params{})
	d.prepare()
	assert.InDelta(t, 1, d.infl, 0.25, "a level change is not autocorrelation")
	d = newDetector(make([]int64, 5*32), Params{})
	d.prepare()
	assert.Equal(t, 1.0, d.infl, "fewer than 6 windows")
	d = newDetector(make([]int64, 10*32), Params{})
	d.prepare()
	assert.Equal(t, 1.0, d.infl, "all samples equal")
}

func TestHeavyTails(t *testing.T) {
	t.Run("1% of samples x10", func(t *testing.T) {
		for seed := range uint64(seeds) {
			r := rand.New(rand.NewPCG(seed, 9))
			x := series(seed, 2000, 0.03, func(int) float64 {
				if r.Float64() < 0.01 {
					return 10 * ms
				}
				return 1 * ms
			})
			res := Detect(x, Params{})
			require.Equal(t, Flat, res.Class, "seed %d: %s", seed, res.Reason)
			checkReason(t, res)
		}
	})
	t.Run("Pareto", func(t *testing.T) {
		for seed := range uint64(seeds) {
			r := rand.New(rand.NewPCG(seed, 11))
			x := make([]int64, 2000)
			for i := range x {
				// Pareto with shape 1.2 and scale 1 ms: infinite variance.
				x[i] = int64(ms / math.Pow(1-r.Float64(), 1/1.2))
			}
			res := Detect(x, Params{})
			require.Equal(t, Flat, res.Class, "seed %d: %s", seed, res.Reason)
			checkReason(t, res)
		}
	})
	t.Run("outliers do not hide a warm-up", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 9))
		x := series(3, 2000, 0.03, func(i int) float64 {
			if r.Float64() < 0.01 {
				return 10 * ms
			}
			return step(300, 2*ms, 1*ms)(i)
		})
		res := Detect(x, Params{})
		require.Equal(t, Warmup, res.Class, res.Reason)
		assert.InDelta(t, 300, res.Start, 32)
	})
}

func TestTooShort(t *testing.T) {
	for _, n := range []int{0, 1, 20, 63} {
		x := series(1, n, 0.03, constant(1*ms))
		r := Detect(x, Params{})
		require.Equal(t, NoSteadyState, r.Class)
		assert.Equal(t, -1, r.Start)
		assert.Equal(t, 640, r.Suggest, "20 windows of 32")
		assert.Empty(t, r.Levels)
		wholes := "0 whole windows"
		if n >= 32 {
			wholes = "1 whole window"
		}
		assert.Equal(t, TooShort, r.Reason)
		assert.Equal(t, n/32, r.Windows, wholes)
		checkReason(t, r)
	}
	r := Detect(make([]int64, 150), Params{Window: 100})
	assert.Equal(t, NoSteadyState, r.Class)
	assert.Equal(t, 2000, r.Suggest, "20 windows of 100 is more than twice 150")
}

func TestShortTailSuggests(t *testing.T) {
	// 2 ms for 8 windows, then 1 ms for 5 windows: a warm-up with a steady
	// window of 5 windows, fewer than 2×MinTail (4).
	x := series(5, 13*32, 0.02, step(8*32, 2*ms, 1*ms))
	r := Detect(x, Params{})
	require.Equal(t, Warmup, r.Class, r.Reason)
	assert.Equal(t, 8*32, r.Start)
	assert.Equal(t, 840, r.Suggest, "twice 416, rounded up to two digits")
	assert.True(t, r.ShortTail)
	assert.Equal(t, 5, r.TailWindows)
	checkReason(t, r)
}

func TestEqualLevelsAreNotAChange(t *testing.T) {
	// A 1% step is below the 2% tolerance: one level.
	x := series(2, 2000, 0.01, step(1000, 1*ms, 1.01*ms))
	r := Detect(x, Params{})
	assert.Equal(t, Flat, r.Class, r.Reason)
	// With a 0.5% tolerance the same step is a slowdown.
	r = Detect(x, Params{Tolerance: 0.005})
	assert.Equal(t, Slowdown, r.Class, r.Reason)
	assert.InDelta(t, 1000, r.Start, 32)
	checkReason(t, r)
}

func TestManyChangesNamed(t *testing.T) {
	// A staircase: 1.0, 1.2, 1.4 ms, the last step in the final 4 windows.
	x := series(3, 2000, 0.02, func(i int) float64 { return ms * (1 + 0.2*float64(i/800) + 0.2*float64(i/1856)) })
	r := Detect(x, Params{})
	require.Equal(t, NoSteadyState, r.Class, r.Reason)
	require.Len(t, r.Changepoints, 3, r.Reason)
	assert.Equal(t, StillChanging, r.Reason)
	assert.Equal(t, 4, r.TailWindows)
	assert.InEpsilon(t, 1.4*ms, r.Ref.Median, 0.05)
	checkReason(t, r)
}

// TestFlatWithinMargin drives classify with levels that are all within the
// margin of the last (as when merging them was refused because the merged
// segment would drift): flat, steady from the last changepoint.
func TestFlatWithinMargin(t *testing.T) {
	d := newDetector(series(1, 2000, 0.01, constant(ms)), Params{})
	d.prepare()
	var r Result
	d.classify([]seg{{0, 31, 1.01 * ms}, {31, 62, 1.0 * ms}}, &r)
	assert.Equal(t, Flat, r.Class)
	assert.Equal(t, 31*32, r.Start)
	assert.Zero(t, r.Suggest)
	assert.Equal(t, WithinMargin, r.Reason)
	assert.InDelta(t, 20e3, r.Margin, 1e-6)
	// Beyond the margin the same levels make a warm-up.
	r = Result{}
	d.classify([]seg{{0, 31, 1.03 * ms}, {31, 62, 1.0 * ms}}, &r)
	assert.Equal(t, Warmup, r.Class)
	assert.Equal(t, Faster, r.Reason)
	assert.Equal(t, Segment{0, 992, 1.03 * ms}, r.Ref)
}

func TestMinTail(t *testing.T) {
	// The level rises at sample 1728 (window 54): the last 8 of 62 windows.
	x := series(4, 2000, 0.03, step(1728, 1*ms, 1.5*ms))
	r := Detect(x, Params{})
	assert.Equal(t, NoSteadyState, r.Class, "a tail of 8 windows is shorter than the default MinTail ⌈62/5⌉")
	assert.Equal(t, []int{8, 62, 13}, []int{r.TailWindows, r.Windows, r.MinTail})
	checkReason(t, r)
	r = Detect(x, Params{MinTail: 8})
	assert.Equal(t, Slowdown, r.Class, r.Reason)
	assert.Equal(t, 1728, r.Start)
	checkReason(t, r)
}

// TestStride: with every 8th iteration kept, indices stay sample indices,
// while Suggest counts iterations.
func TestStride(t *testing.T) {
	x := series(1, 2000, 0.03, step(320, 2*ms, ms))
	r1, r8 := Detect(x, Params{}), Detect(x, Params{Stride: 8})
	assert.Equal(t, r1.Start, r8.Start)
	assert.Equal(t, r1.Changepoints, r8.Changepoints)
	assert.Equal(t, r1.Levels, r8.Levels)
	assert.Equal(t, r1.Ref, r8.Ref)

	short := Detect(x[:40], Params{Stride: 8})
	assert.Equal(t, 5200, short.Suggest, "20 windows of 32 samples of 8 iterations")
	assert.Equal(t, []any{TooShort, 1}, []any{short.Reason, short.Windows})
}

// TestWideValues: values spanning more than 2^40 take the comparison sort;
// scaling every value keeps the order, so the verdict is the same.
func TestWideValues(t *testing.T) {
	x := series(2, 2000, 0.03, step(640, 2*ms, ms))
	wide := make([]int64, len(x))
	for i, v := range x {
		wide[i] = v << 22 // 1 ms << 22 > 2^40
	}
	d, dw := newDetector(x, Params{}), newDetector(wide, Params{})
	idx, scratch := d.sortedIndices()
	idxw, scratchw := dw.sortedIndices()
	assert.Equal(t, idx, idxw)
	assert.Len(t, scratch, len(x))
	assert.Len(t, scratchw, len(x))
	assert.True(t, slices.IsSortedFunc(idx, d.cmp), "packed keys: sorted by (value, index)")
	r, rw := Detect(x, Params{}), Detect(wide, Params{})
	assert.Equal(t, r.Class, rw.Class)
	assert.Equal(t, r.Changepoints, rw.Changepoints)
	assert.Equal(t, Warmup, rw.Class)
	assert.Equal(t, 640, rw.Start)
}

func TestRemainderJoinsLastWindow(t *testing.T) {
	x := series(6, 2000+31, 0.03, constant(1*ms))
	r := Detect(x, Params{})
	require.Equal(t, Flat, r.Class)
	assert.Equal(t, 2031, r.Levels[0].End)
}

func TestDeterministic(t *testing.T) {
	x := series(8, 3000, 0.05, func(i int) float64 { return ms * (1 + 0.5*math.Exp(-float64(i)/200)) })
	in := append([]int64(nil), x...)
	assert.Equal(t, Detect(x, Params{}), Detect(x, Params{}))
	assert.Equal(t, in, x, "Detect must not modify samples")
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Window: 3}, "steady: Params.Window is 3; it must be 0 (meaning 32) or at least 4"},
		{Params{Window: -1}, "steady: Params.Window is -1; it must be 0 (meaning 32) or at least 4"},
		{Params{Tolerance: 1}, "steady: Params.Tolerance is 1; it must be in [0, 1) (0 means 0.02)"},
		{Params{Tolerance: -0.1}, "steady: Params.Tolerance is -0.1; it must be in [0, 1) (0 means 0.02)"},
		{Params{Alpha: 1.5}, "steady: Params.Alpha is 1.5; it must be in (0, 1) (0 means 0.001)"},
		{Params{Stride: -1}, "steady: Params.Stride is -1; it must be 0 (meaning 1) or at least 1"},
		{Params{MinTail: -2}, "steady: Params.MinTail is -2; it must be 0 (meaning max(4, windows/5)) or at least 1"},
	} {
		require.EqualError(t, c.p.Validate(), c.want)
		r := Detect(make([]int64, 1000), c.p)
		assert.Equal(t, Result{Class: NoSteadyState, Start: -1, Reason: InvalidParams, Err: c.p.Validate()}, r)
	}
	assert.NoError(t, Params{Window: 4, Tolerance: 0.5, Alpha: 0.05, MinTail: 1}.Validate())
}

func TestClassString(t *testing.T) {
	assert.Equal(t, "flat", Flat.String())
	assert.Equal(t, "warm-up", Warmup.String())
	assert.Equal(t, "slowdown", Slowdown.String())
	assert.Equal(t, "no steady state", NoSteadyState.String())
	assert.Equal(t, "Class(9)", Class(9).String())
}

func TestBinomTail(t *testing.T) {
	assert.Equal(t, 1.0, binomTail(32, 0, 0.1))
	assert.InDelta(t, 1-math.Pow(0.9, 32), binomTail(32, 1, 0.1), 1e-12)
	assert.InDelta(t, math.Pow(0.1, 32), binomTail(32, 32, 0.1), 1e-40)
	assert.InDelta(t, 0.5, binomTail(31, 16, 0.5), 1e-12, "symmetric")
}

func TestFormatting(t *testing.T) {
	assert.False(t, same6(1.000e6, 1.001e6))
	assert.True(t, same6(1e6, 1e6+0.1), "differ only past 6 digits")
	assert.Equal(t, "still-changing", StillChanging.String())
	assert.Equal(t, "Reason(99)", Reason(99).String())

	for n, want := range map[int]int{64: 64, 640: 640, 641: 650, 1234: 1300, 4000: 4000, 99999: 100000} {
		assert.Equal(t, want, roundUp2(n), "roundUp2(%d)", n)
	}
}

// TestChangeFollowsNumbers drives classify with a late change whose
// medians are equal, nearly equal, and far apart: SameMedian is set only
// when they agree to six digits.
func TestChangeFollowsNumbers(t *testing.T) {
	d := newDetector(series(1, 2000, 0.01, constant(ms)), Params{})
	d.prepare()
	for _, c := range []struct {
		last float64
		same bool
	}{{1e6, true}, {1.0004e6, false}, {1.5e6, false}} {
		var r Result
		d.classify([]seg{{0, 60, 1e6}, {60, 62, c.last}}, &r)
		assert.Equal(t, NoSteadyState, r.Class)
		assert.Equal(t, StillChanging, r.Reason)
		assert.Equal(t, c.same, r.SameMedian, "%v", c.last)
		assert.Equal(t, 4000, r.Suggest)
		checkReason(t, r)
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add(make([]byte, 8*100), uint8(4))
	f.Add([]byte(strings.Repeat("gapbench", 300)), uint8(32))
	f.Fuzz(func(t *testing.T, raw []byte, w uint8) {
		x := make([]int64, len(raw)/8)
		for i := range x {
			x[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		p := Params{Window: int(w)}
		if p.Window != 0 && p.Window < 4 {
			p.Window += 4
		}
		r := Detect(x, p)
		win := p.Window
		if win == 0 {
			win = DefaultWindow
		}
		if r.Class == NoSteadyState {
			require.Equal(t, -1, r.Start)
			require.Positive(t, r.Suggest)
		} else {
			require.GreaterOrEqual(t, r.Start, 0)
			require.Less(t, r.Start, len(x))
			require.Zero(t, r.Start%win)
			require.Equal(t, r.Levels[len(r.Levels)-1].Start, r.Start)
		}
		if len(r.Levels) > 0 {
			require.Equal(t, 0, r.Levels[0].Start)
			require.Equal(t, len(x), r.Levels[len(r.Levels)-1].End)
			require.Len(t, r.Changepoints, len(r.Levels)-1)
			for i, cp := range r.Changepoints {
				require.Equal(t, cp, r.Levels[i+1].Start)
				require.Equal(t, cp, r.Levels[i].End)
				require.Zero(t, cp%win)
			}
		}
		checkReason(t, r)
	})
}

func BenchmarkDetect100k(b *testing.B) {
	shapes := map[string]func(int) float64{
		"flat":    constant(1 * ms),
		"warm-up": step(10_000, 2*ms, 1*ms),
		"drift":   func(i int) float64 { return ms * (1 + float64(i)/100_000) },
	}
	for _, name := range []string{"flat", "warm-up", "drift"} {
		x := series(1, 100_000, 0.05, shapes[name])
		b.Run(name, func(b *testing.B) {
			var r Result
			for b.Loop() {
				r = Detect(x, Params{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/sample")
			b.Logf("%s: %v %v", name, r.Class, r.Reason)
		})
	}
}

// TestWindowMediansFromTheSort: the medians read off the sorted samples are
// those of a sort per window, with ties, odd and even windows, and a last
// window that absorbs the remainder.
func TestWindowMediansFromTheSort(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	for _, c := range []struct{ n, w int }{{1000, 32}, {1031, 32}, {999, 7}, {64, 4}} {
		x := make([]int64, c.n)
		for i := range x {
			x[i] = 1000 + r.Int64N(20) // many ties
		}
		d := newDetector(x, Params{Window: c.w})
		d.srt, d.tmp = d.sortedIndices()
		d.windowMedians()
		for k := range d.nw {
			win := slices.Clone(x[d.bound(k):d.bound(k+1)])
			slices.Sort(win)
			want := medianSorted(len(win), func(i int) int64 { return win[i] })
			require.Equal(t, want, d.wmed[k], "n=%d w=%d window %d", c.n, c.w, k)
		}
	}
}
