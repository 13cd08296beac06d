package history

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/history/edivisive"
)

func TestDetectReportsShiftWithRangeAndInterval(t *testing.T) {
	m := simModels[0]
	m.NightLen = 0
	rng := rand.New(rand.NewPCG(11, 12))
	sr := m.simulate(rng, 0.05, 90)
	cps, _, err := Detect(context.Background(), []Series{sr}, DetectOptions{})
	require.NoError(t, err)
	require.Len(t, cps, 1)
	c := cps[0]
	assert.InDelta(t, 90, c.Index, 2)
	assert.Equal(t, sr.Points[c.Index-1].Commit, c.Good.Commit)
	assert.Equal(t, sr.Points[c.Index].Commit, c.Bad.Commit)
	assert.InDelta(t, 0.05, c.Magnitude(), 0.015)
	assert.Less(t, c.Lo, c.Ratio)
	assert.Greater(t, c.Hi, c.Ratio)
	assert.Greater(t, c.Lo, 1.0, "a 5%% shift over 90 | 50 points has an interval above no change")
	assert.LessOrEqual(t, c.P, 0.05)
	assert.Equal(t, 0.95, c.Level)
	assert.Equal(t, "h1", c.Host)

	// -min-magnitude above the shift drops it.
	cps, _, err = Detect(context.Background(), []Series{sr}, DetectOptions{MinMagnitude: 0.2})
	require.NoError(t, err)
	assert.Empty(t, cps)
}

func TestDetectNeverReportsTheHostChange(t *testing.T) {
	// The model's host change lowers the level 15%: within one host's
	// stretch there is nothing to find.
	m := simModels[0]
	m.NightLen = 0
	rng := rand.New(rand.NewPCG(13, 14))
	sr := m.simulate(rng, 0, 0)
	cps, _, err := Detect(context.Background(), []Series{sr}, DetectOptions{})
	require.NoError(t, err)
	assert.Empty(t, cps)

	// The same points with one host name: the 15% step is found.
	for i := range sr.Points {
		sr.Points[i].Host = "h1"
	}
	cps, _, err = Detect(context.Background(), []Series{sr}, DetectOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, cps)
	assert.InDelta(t, m.HostAt, cps[0].Index, 2)
}

func TestQuarantineKeepsNoisyNightOut(t *testing.T) {
	// Regression: without quarantine, the noisy night's biased, spread
	// runs showed as change points in most quiet histories.
	m := simModels[0]
	rng := rand.New(rand.NewPCG(15, 16))
	with, without := 0, 0
	for i := 0; i < 10; i++ {
		sr := m.simulate(rng, 0, 0)
		a, _, err := Detect(context.Background(), []Series{sr}, DetectOptions{EDivisive: edivisive.Options{Seed: uint64(i)}})
		require.NoError(t, err)
		b, _, err := Detect(context.Background(), []Series{sr}, DetectOptions{EDivisive: edivisive.Options{Seed: uint64(i)}, Quarantine: -1})
		require.NoError(t, err)
		with += len(a)
		without += len(b)
	}
	assert.LessOrEqual(t, with, 1)
	assert.GreaterOrEqual(t, without, 3)
	t.Logf("10 quiet histories with a noisy night: %d change points with quarantine, %d without", with, without)
}

// fakeComparer answers from a step function: commits at index ≥ first
// are slower; answers for listed candidates can be overridden.
type fakeComparer struct {
	index    map[string]int
	first    int
	override map[int]StepOutcome
	confs    []float64
}

func (f *fakeComparer) Compare(_ context.Context, good, cand string, conf float64) (StepResult, error) {
	f.confs = append(f.confs, conf)
	if o, ok := f.override[f.index[cand]]; ok {
		return NaNStep(o), nil
	}
	if f.first >= 0 && f.index[cand] >= f.first && f.index[good] < f.first {
		return NaNStep(StepChanged), nil
	}
	return NaNStep(StepUnchanged), nil
}

func commitsOf(n int) ([]string, map[string]int) {
	c := make([]string, n+1)
	idx := map[string]int{}
	for i := range c {
		c[i] = string(rune('A'+i%26)) + string(rune('a'+i/26))
		idx[c[i]] = i
	}
	return c, idx
}

func TestBisectNamesFirstSlowerCommit(t *testing.T) {
	commits, idx := commitsOf(32)
	for first := 1; first <= 32; first++ {
		f := &fakeComparer{index: idx, first: first}
		r, err := Bisect(context.Background(), commits, f, 0.05, Slower)
		require.NoError(t, err)
		require.Equal(t, WhyNamed, r.Why, "first %d", first)
		assert.Equal(t, first, r.First)
		assert.Equal(t, 6, r.Tests, "1 + ⌈log2 32⌉")
		assert.LessOrEqual(t, len(r.Steps), r.Tests)
		for _, c := range f.confs {
			assert.InDelta(t, 1-0.05/6, c, 1e-12, "Bonferroni: each step at α/Tests")
		}
	}
	_, idx7 := commitsOf(7)
	c7, _ := commitsOf(7)
	r, err := Bisect(context.Background(), c7, &fakeComparer{index: idx7, first: 3}, 0.05, Slower)
	require.NoError(t, err)
	assert.Equal(t, 4, r.Tests, "1 + ⌈log2 7⌉")
	assert.Equal(t, 3, r.First)
}

func TestBisectNamesNothingWithoutSlowdownOrWhenUndecided(t *testing.T) {
	commits, idx := commitsOf(32)
	r, err := Bisect(context.Background(), commits, &fakeComparer{index: idx, first: -1}, 0.05, Slower)
	require.NoError(t, err)
	assert.Equal(t, WhyNoChange, r.Why)
	assert.Equal(t, -1, r.First)
	assert.Len(t, r.Steps, 1, "the first comparison, bad against good, decides")

	f := &fakeComparer{index: idx, first: 20, override: map[int]StepOutcome{16: StepUndecided}}
	r, err = Bisect(context.Background(), commits, f, 0.05, Slower)
	require.NoError(t, err)
	assert.Equal(t, WhyUndecided, r.Why)
	assert.Equal(t, -1, r.First)
	assert.Equal(t, 0, r.Lo)
	assert.Equal(t, 32, r.Hi)

	_, err = Bisect(context.Background(), commits[:1], f, 0.05, Slower)
	assert.Error(t, err)
	// Regression: a failed first step left Why at WhyNamed (its zero)
	// with First −1, and the report indexed Commits[−1].
	r, err = Bisect(context.Background(), commits, errComparer{}, 0.05, Slower)
	assert.ErrorContains(t, err, "build failed")
	assert.Equal(t, WhyFailed, r.Why)
	assert.Equal(t, -1, r.First)
	assert.Empty(t, r.Steps)
}

// valueComparer is a fake judge with a true value per commit: a step
// changed when the candidate's value moved from good's by more than
// threshold in the search's direction (faster: good/candidate − 1 above
// it), with no noise.
type valueComparer struct {
	index     map[string]int
	values    []float64
	threshold float64
	dir       Direction
}

func (v *valueComparer) Compare(_ context.Context, good, cand string, _ float64) (StepResult, error) {
	g, c := v.values[v.index[good]], v.values[v.index[cand]]
	res := NaNStep(StepUnchanged)
	res.Ratio = c / g
	if (v.dir == Slower && c/g-1 > v.threshold) || (v.dir == Faster && g/c-1 > v.threshold) {
		res.Outcome = StepChanged
	}
	return res, nil
}

// TestBisectFasterNamesFirstFasterCommit: a Faster search names the
// commit of a speed-up wherever it is, with the same Bonferroni split as
// a Slower one; a Slower search of the same history names nothing, and a
// Faster search of a slowdown names nothing either. A slowdown before
// the speed-up (values 1, 1.3, 0.5) does not hide it.
func TestBisectFasterNamesFirstFasterCommit(t *testing.T) {
	commits, idx := commitsOf(24)
	step := func(at int, before, after float64) []float64 {
		v := make([]float64, len(commits))
		for i := range v {
			v[i] = before
			if i >= at {
				v[i] = after
			}
		}
		return v
	}
	for at := 1; at <= 24; at++ {
		c := &valueComparer{index: idx, values: step(at, 140, 113), threshold: 0.01, dir: Faster}
		r, err := Bisect(context.Background(), commits, c, 0.05, Faster)
		require.NoError(t, err)
		require.Equal(t, WhyNamed, r.Why, "speed-up at %d", at)
		assert.Equal(t, at, r.First)
		assert.Equal(t, Faster, r.Direction)
		assert.Equal(t, 6, r.Tests, "1 + ⌈log2 24⌉")
		for _, s := range r.Steps {
			assert.InDelta(t, 1-0.05/6, s.Confidence, 1e-12)
		}

		c.dir = Slower
		r, err = Bisect(context.Background(), commits, c, 0.05, Slower)
		require.NoError(t, err)
		assert.Equal(t, WhyNoChange, r.Why, "a speed-up is no slowdown (at %d)", at)

		c = &valueComparer{index: idx, values: step(at, 113, 140), threshold: 0.01, dir: Faster}
		r, err = Bisect(context.Background(), commits, c, 0.05, Faster)
		require.NoError(t, err)
		assert.Equal(t, WhyNoChange, r.Why, "a slowdown is no speed-up (at %d)", at)
	}
	v := step(13, 1, 0.5)
	for i := 5; i < 13; i++ {
		v[i] = 1.3
	}
	r, err := Bisect(context.Background(), commits, &valueComparer{index: idx, values: v, threshold: 0.01, dir: Faster}, 0.05, Faster)
	require.NoError(t, err)
	assert.Equal(t, 13, r.First)
}

func TestStepOutcomeWords(t *testing.T) {
	assert.Equal(t, "faster", StepChanged.Word(Faster))
	assert.Equal(t, "not faster", StepUnchanged.Word(Faster))
	assert.Equal(t, "undecided", StepUndecided.Word(Faster))
	assert.Equal(t, "slower", StepChanged.Word(Slower))
	assert.Equal(t, "not slower", StepUnchanged.String())
}

type errComparer struct{}

func (errComparer) Compare(context.Context, string, string, float64) (StepResult, error) {
	return StepResult{}, errors.New("build failed")
}

func TestQuarantinedCounts(t *testing.T) {
	pts := make([]Point, 20)
	for i := range pts {
		pts[i] = Point{Host: "h", Value: 1, N: 5, Spread: 0.01}
	}
	pts[7].Spread = 0.05 // 5× the median spread: left out
	pts[8].Spread = 0.02 // 2×: kept
	pts[9].Spread = math.NaN()
	sr := []Series{{Benchmark: "B", Unit: "sec/op", Points: pts}}
	assert.Equal(t, 1, Quarantined(sr, 0))
	assert.Equal(t, 2, Quarantined(sr, 1.5))
	assert.Equal(t, 0, Quarantined(sr, -1))
}
