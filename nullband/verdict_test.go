package nullband

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"
)

// synth returns n rounds of known truth: every round has its own weather w
// (shared by the three arms of the round, up to ±weather), each measurement
// its own noise (lognormal, sigma noise), and B = effect × A in truth.
func synth(seed uint64, n int, weather, noise, effect float64) Samples {
	r := rand.New(rand.NewPCG(seed, 42))
	s := Samples{Base: make([]float64, n), Candidate: make([]float64, n), Null: make([]float64, n)}
	for i := range n {
		w := 1e-3 * (1 + weather*(2*r.Float64()-1))
		s.Base[i] = w * math.Exp(noise*r.NormFloat64())
		s.Null[i] = w * math.Exp(noise*r.NormFloat64())
		s.Candidate[i] = w * effect * math.Exp(noise*r.NormFloat64())
	}
	return s
}

func TestJudgeAAIsNoise(t *testing.T) {
	for seed := range uint64(20) {
		// The null arm is A again, and so is the candidate.
		v, err := Judge(synth(seed, 12, 0.10, 0.01, 1.0), Options{})
		require.NoError(t, err)
		assert.Equal(t, Inside, v.Kind, "seed %d: %s", seed, v.Reason)
		assert.Contains(t, v.Reason, "inside the null band")
		assert.Zero(t, v.Rejected)
	}
}

func TestJudgeTenPercentIsEffect(t *testing.T) {
	for seed := range uint64(20) {
		v, err := Judge(synth(seed, 12, 0.10, 0.01, 1.10), Options{})
		require.NoError(t, err)
		assert.Equal(t, Outside, v.Kind, "seed %d: %s", seed, v.Reason)
		assert.InDelta(t, 1.10, v.Ratio.Center, 0.015, "seed %d", seed)
		assert.Less(t, v.Ratio.Lo, v.Ratio.Center)
		assert.Greater(t, v.Ratio.Hi, v.Ratio.Center)
		assert.Contains(t, v.Reason, "lies above the null band")
		assert.Less(t, v.Band.Width(), 1.05, "a 1%% noise band")
	}
	v, err := Judge(synth(1, 12, 0.10, 0.01, 1/1.10), Options{})
	require.NoError(t, err)
	assert.Equal(t, Outside, v.Kind, v.Reason)
	assert.Contains(t, v.Reason, "lies below the null band")
}

func TestJudgeSmallEffectInWideBand(t *testing.T) {
	for seed := range uint64(20) {
		// 8% noise per measurement: A'/A spreads about ±20%.
		v, err := Judge(synth(seed, 12, 0.10, 0.08, 1.03), Options{RejectRatio: math.Inf(1)})
		require.NoError(t, err)
		assert.NotEqual(t, Outside, v.Kind, "seed %d: %s", seed, v.Reason)
		if v.Kind == Unmeasurable && v.Band.Contains(v.Ratio.Center) {
			assert.Greater(t, v.Band.Width(), 1.10)
			assert.Contains(t, v.Reason, "is wider than ±10.0% (Options.MaxBand)")
		}
	}
	v, err := Judge(synth(3, 12, 0.10, 0.08, 1.03), Options{RejectRatio: math.Inf(1)})
	require.NoError(t, err)
	require.Equal(t, Unmeasurable, v.Kind, v.Reason)
	assert.Greater(t, v.Band.Width(), 1.15)
}

// The figures benchstat prints come from benchmath: Judge's must be the same
// numbers on the same input, and the medians must be the plain medians.
func TestJudgeAgreesWithBenchmath(t *testing.T) {
	s := synth(7, 15, 0.10, 0.03, 1.05)
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	for _, c := range []struct {
		got benchmath.Summary
		in  []float64
	}{{v.Base, s.Base}, {v.Candidate, s.Candidate}, {v.Null, s.Null}} {
		in := append([]float64(nil), c.in...)
		want := benchmath.AssumeNothing.Summary(benchmath.NewSample(in, &benchmath.DefaultThresholds), 0.95)
		assert.Equal(t, want.Center, c.got.Center)
		assert.Equal(t, want.Lo, c.got.Lo)
		assert.Equal(t, want.Hi, c.got.Hi)
		sort.Float64s(in)
		assert.Equal(t, in[len(in)/2], c.got.Center, "odd n: the middle value")
	}
	want := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(append([]float64(nil), s.Base...), &benchmath.DefaultThresholds),
		benchmath.NewSample(append([]float64(nil), s.Candidate...), &benchmath.DefaultThresholds))
	assert.Equal(t, want.P, v.Comparison.P)
	assert.Equal(t, 15, v.Comparison.N1)
	assert.InDelta(t, v.Candidate.Center/v.Base.Center, v.CenterRatio, 1e-15)
	// The paired ratio is the median of per-round B/A.
	r := make([]float64, len(s.Base))
	for i := range r {
		r[i] = s.Candidate[i] / s.Base[i]
	}
	sort.Float64s(r)
	assert.Equal(t, r[len(r)/2], v.Ratio.Center)
}

func TestJudgeRejectsRoundAndKeepsIt(t *testing.T) {
	s := synth(5, 12, 0.05, 0.01, 1.0)
	s.Round = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	s.Null[4] = s.Base[4] * 1.4
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, v.Rejected)
	assert.True(t, v.Rounds[4].Rejected)
	assert.Equal(t, "round 5: A'/A = 1.400 is outside 0.800–1.250 (Options.RejectRatio)", v.Rounds[4].Reason)
	for i, rs := range v.Rounds {
		if i != 4 {
			assert.False(t, rs.Rejected, rs.Reason)
			assert.Empty(t, rs.Reason)
		}
	}
	assert.Equal(t, 11, v.Band.N, "the band leaves the rejected round out")
	assert.Equal(t, 12, v.Comparison.N1, "benchstat's view keeps it")
	assert.Equal(t, Inside, v.Kind, v.Reason)

	// Named knobs reach the message.
	v, err = Judge(s, Options{Knobs: Knobs{RejectRatio: "-reject"}})
	require.NoError(t, err)
	assert.Contains(t, v.Rounds[4].Reason, "(-reject)")

	// A missing value rejects its round and says which arm.
	s.Null[7] = math.NaN()
	v, err = Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, "round 8 has no A' value", v.Rounds[7].Reason)
	assert.Equal(t, 2, v.Rejected)
	assert.Equal(t, 1, v.Incomplete)
	s.Base[8] = 0
	v, err = Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, "round 9 has a value ≤ 0 (A 0, B 0.0009615, A' 0.0009624): no ratio", v.Rounds[8].Reason)
}

// An interrupted run's missing values are not A and A' disagreeing.
func TestJudgeIncompleteRoundsAreNotDisagreement(t *testing.T) {
	s := synth(5, 12, 0.05, 0.01, 1.0)
	for _, i := range []int{8, 9, 10, 11} {
		s.Candidate[i] = math.NaN()
	}
	s.Null[0] = s.Base[0] * 1.5
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, 5, v.Rejected)
	assert.Equal(t, 4, v.Incomplete)
	assert.Equal(t, Inside, v.Kind, v.Reason)
	s.Null[1] = s.Base[1] * 1.5
	s.Null[2] = s.Base[2] * 1.5
	v, err = Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, "3 of 8 complete rounds rejected (more than 25%): A and A' disagreed too often for this run to resolve anything; see the rejected rounds, or loosen Options.RejectRatio", v.Reason)
}

func TestJudgeTooManyRejected(t *testing.T) {
	s := synth(5, 12, 0.05, 0.01, 1.0)
	for _, i := range []int{1, 4, 7, 10} {
		s.Null[i] = s.Base[i] * 1.5
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Unmeasurable, v.Kind)
	assert.Equal(t, "4 of 12 complete rounds rejected (more than 25%): A and A' disagreed too often for this run to resolve anything; see the rejected rounds, or loosen Options.RejectRatio", v.Reason)
	v, err = Judge(s, Options{MaxRejected: 0.5})
	require.NoError(t, err)
	assert.Equal(t, Inside, v.Kind, v.Reason)
}

func TestJudgeTooFewRounds(t *testing.T) {
	v, err := Judge(synth(1, 4, 0.05, 0.01, 1.5), Options{Knobs: Knobs{Rounds: "-rounds"}})
	require.NoError(t, err)
	assert.Equal(t, Unmeasurable, v.Kind)
	assert.Equal(t, "4 accepted rounds give no 95% confidence interval for the ratio; it needs ≥ 6: raise -rounds", v.Reason)
	assert.True(t, math.IsInf(v.MDE.Up, 1))
	assert.True(t, math.IsInf(v.MDE.Percent(), 1))
	v, err = Judge(synth(1, 6, 0.05, 0.01, 1.5), Options{})
	require.NoError(t, err)
	assert.Equal(t, Outside, v.Kind, v.Reason)
}

func TestJudgeStraddle(t *testing.T) {
	// Null ratios all within 0.99–1.01; B/A ratios 1.00–1.04 around 1.02.
	n := 9
	s := Samples{Base: make([]float64, n), Candidate: make([]float64, n), Null: make([]float64, n)}
	for i := range n {
		s.Base[i] = 1
		s.Null[i] = 0.99 + 0.0025*float64(i)
		s.Candidate[i] = 1.00 + 0.005*float64(i)
	}
	v, err := Judge(s, Options{Knobs: Knobs{Rounds: "-rounds"}})
	require.NoError(t, err)
	assert.Equal(t, Unmeasurable, v.Kind)
	assert.Greater(t, v.Ratio.Center, v.Band.Hi)
	assert.LessOrEqual(t, v.Ratio.Lo, v.Band.Hi)
	assert.Contains(t, v.Reason, "lies outside the null band 0.991–1.009 but its CI")
	assert.Contains(t, v.Reason, "overlaps it: raise -rounds")
}

// The minimal detectable effect is what it claims: scale B to just beyond
// it and the verdict becomes an effect; to just short of it and it does not.
func TestMinimalDetectableEffect(t *testing.T) {
	s := synth(11, 12, 0.10, 0.01, 1.0)
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	require.Equal(t, Inside, v.Kind, v.Reason)
	assert.Greater(t, v.MDE.Up, v.Band.Hi)
	assert.Less(t, v.MDE.Down, v.Band.Lo)
	assert.InDelta(t, 100*math.Max(v.MDE.Up-1, 1-v.MDE.Down), v.MDE.Percent(), 1e-12)
	scaled := func(f float64) Kind {
		c := s
		c.Candidate = make([]float64, len(s.Candidate))
		for i, x := range s.Candidate {
			c.Candidate[i] = x * f
		}
		w, err := Judge(c, Options{})
		require.NoError(t, err)
		return w.Kind
	}
	up := v.MDE.Up / v.Ratio.Center
	down := v.MDE.Down / v.Ratio.Center
	assert.Equal(t, Outside, scaled(up*1.002))
	assert.NotEqual(t, Outside, scaled(up*0.998))
	assert.Equal(t, Outside, scaled(down*0.998))
	assert.NotEqual(t, Outside, scaled(down*1.002))
}

func TestJudgeBimodalIsUnmeasurable(t *testing.T) {
	s := synth(2, 10, 0.0, 0.005, 1.0)
	for i := range s.Base {
		if i%3 == 0 { // 4 of 10 rounds land in the slow regime
			s.Base[i] *= 1.85 / 1.17
		}
	}
	v, err := Judge(s, Options{RejectRatio: math.Inf(1), MaxRejected: 1})
	require.NoError(t, err)
	assert.Equal(t, Unmeasurable, v.Kind)
	require.Len(t, v.BaseRegimes, 2)
	assert.Equal(t, 6, v.BaseRegimes[0].N)
	assert.Equal(t, 4, v.BaseRegimes[1].N)
	assert.InDelta(t, 1.85/1.17, v.BaseRegimes[1].Center/v.BaseRegimes[0].Center, 0.02)
	assert.Contains(t, v.Reason, "A is bimodal: ")
	assert.Len(t, v.CandidateRegimes, 1)
}

func TestJudgeErrors(t *testing.T) {
	_, err := Judge(Samples{}, Options{})
	assert.EqualError(t, err, "nullband: Judge needs at least one round: Samples.Base is empty")
	_, err = Judge(Samples{Base: []float64{1, 2}, Candidate: []float64{1}, Null: []float64{1, 2}}, Options{})
	assert.EqualError(t, err, "nullband: Samples slices differ in length (Base 2, Candidate 1, Null 2, Round 0): index i must be round i in each")
	s := synth(1, 6, 0, 0.01, 1)
	_, err = Judge(s, Options{RejectRatio: 0.9, Knobs: Knobs{RejectRatio: "-reject"}})
	assert.EqualError(t, err, "nullband: -reject 0.9 must be > 1, e.g. 1.25 (±25%)")
	_, err = Judge(s, Options{Confidence: 1})
	assert.EqualError(t, err, "nullband: Options.Confidence 1 must be in (0, 1), e.g. 0.95")
	_, err = Judge(s, Options{MaxBand: 1})
	assert.EqualError(t, err, "nullband: Options.MaxBand 1 must be > 1, e.g. 1.10 (±10%)")
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "unmeasurable", Unmeasurable.String())
	assert.Equal(t, "inside", Inside.String())
	assert.Equal(t, "outside", Outside.String())
	assert.Equal(t, "Kind(7)", Kind(7).String())
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	assert.Equal(t, 1.0, quantile(xs, 0))
	assert.Equal(t, 3.0, quantile(xs, 0.5))
	assert.Equal(t, 5.0, quantile(xs, 1))
	assert.InDelta(t, 1.2, quantile(xs, 0.05), 1e-12)
	assert.Equal(t, []float64{5, 1, 4, 2, 3}, xs, "input untouched")
	assert.Equal(t, 7.0, quantile([]float64{7}, 0.9))
}
