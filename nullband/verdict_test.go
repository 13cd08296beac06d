package nullband

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestJudgeAAIsEquivalent(t *testing.T) {
	// A/A at 0.5% noise: the 90% interval fits in ±2% at 20 rounds; the
	// 95% interval excludes 1 in about 5% of trials (the test's level),
	// and NullShifted withholds about 1%.
	cnt := map[Outcome]int{}
	for seed := range uint64(200) {
		v, err := Judge(synth(seed, 20, 0.10, 0.005, 1.0), Options{})
		require.NoError(t, err)
		cnt[v.Outcome]++
		assert.Equal(t, 20, v.Used+v.Quarantined)
		if v.Outcome == Equivalent {
			assert.Less(t, v.EqHi, 1.02)
			assert.Greater(t, v.EqLo, 1/1.02)
			assert.LessOrEqual(t, v.Lo, 1.0)
			assert.GreaterOrEqual(t, v.Hi, 1.0)
		}
	}
	assert.GreaterOrEqual(t, cnt[Equivalent], 180, cnt)
	assert.LessOrEqual(t, cnt[Faster]+cnt[Slower], 18, cnt) // 5% + 3 sd of 200
}

func TestJudgeTenPercentIsSlower(t *testing.T) {
	slower := 0
	for seed := range uint64(40) {
		v, err := Judge(synth(seed, 12, 0.10, 0.01, 1.10), Options{})
		require.NoError(t, err)
		assert.InDelta(t, 1.10, v.Ratio, 0.015, "seed %d", seed)
		assert.Less(t, v.Lo, v.Ratio)
		assert.Greater(t, v.Hi, v.Ratio)
		assert.Greater(t, v.Lo, 1.0)
		if v.Outcome == Slower {
			slower++
			assert.Empty(t, v.Reasons)
			assert.Zero(t, v.RoundsToDecide)
		} else {
			assert.Equal(t, []Reason{NullShifted}, v.Reasons, "seed %d", seed)
		}
	}
	assert.GreaterOrEqual(t, slower, 37, "NullShifted withholds about 1%")
	v, err := Judge(synth(1, 12, 0.10, 0.01, 1/1.10), Options{})
	require.NoError(t, err)
	assert.Equal(t, Faster, v.Outcome, v.Reasons)
}

func TestJudgeSequentialStopsEarly(t *testing.T) {
	s := synth(3, 30, 0.10, 0.01, 1.10)
	v, err := Judge(s, Options{MaxRounds: 30})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome, v.Reasons)
	assert.Less(t, len(v.Rounds), 30, "a 10% effect at 1% noise is decided before the last look")
	assert.Equal(t, v.Looks, len(v.Rounds)-5)
	// Later rounds never change an earlier look's decision.
	s2 := s
	s2.Base = append([]float64(nil), s.Base[:len(v.Rounds)]...)
	s2.Candidate, s2.Null = s.Candidate[:len(v.Rounds)], s.Null[:len(v.Rounds)]
	v2, err := Judge(s2, Options{MaxRounds: 30})
	require.NoError(t, err)
	assert.Equal(t, 30, v.Given)
	v2.Given = 30
	assert.Equal(t, v, v2)
}
