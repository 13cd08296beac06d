package nullband

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// familySamples draws n rounds of A, B and A' with B's level A's × (1+effect):
// a weather factor lnN(0, 5%) shared by the round, each value × lnN(0, 1%).
func familySamples(seed uint64, n int, effect float64) Samples {
	r := rand.New(rand.NewPCG(seed, 7))
	var s Samples
	for range n {
		w := math.Exp(0.05 * r.NormFloat64())
		s.Base = append(s.Base, w*math.Exp(0.01*r.NormFloat64()))
		s.Candidate = append(s.Candidate, (1+effect)*w*math.Exp(0.01*r.NormFloat64()))
		s.Null = append(s.Null, w*math.Exp(0.01*r.NormFloat64()))
	}
	return s
}

func TestJudgeFamilyNull(t *testing.T) {
	var fam []Samples
	for i := range 6 {
		fam = append(fam, familySamples(uint64(i+1), 20, 0))
	}
	f, err := JudgeFamily(fam, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, f.Steps, "no member called different: one step")
	assert.InDelta(t, 0.05, f.Alpha, 1e-12)
	for i, v := range f.Verdicts {
		assert.NotContains(t, []Outcome{Faster, Slower}, v.Outcome, "member %d", i)
		assert.InDelta(t, 1-0.05/6, f.Levels[i], 1e-12, "member %d: Bonferroni level", i)
	}
}

// TestJudgeFamilyStepsDown finds a member that Judge calls slower at 95%
// but not at 97.5%, and checks that Holm calls it slower in a family of
// two beside a member with a large effect (step 2 at 95%), and not beside
// an unchanged member (one step at 97.5%).
func TestJudgeFamilyStepsDown(t *testing.T) {
	opt := Options{MaxRounds: 30}
	var border Samples
	found := false
	for i := 0; i < 400 && !found; i++ {
		s := familySamples(uint64(100+i), 12, 0.002+0.0001*float64(i))
		o95, o975 := opt, opt
		o95.Confidence, o975.Confidence = 0.95, 0.975
		v95, err := Judge(s, o95)
		require.NoError(t, err)
		v975, err := Judge(s, o975)
		require.NoError(t, err)
		if v95.Outcome == Slower && v975.Outcome != Slower {
			border, found = s, true
		}
	}
	require.True(t, found, "no member decided at 95% but not at 97.5% in the search")

	strong := familySamples(7, 12, 0.30)
	f, err := JudgeFamily([]Samples{strong, border}, opt)
	require.NoError(t, err)
	assert.Equal(t, Slower, f.Verdicts[0].Outcome)
	assert.Equal(t, Slower, f.Verdicts[1].Outcome, "step 2 judges it at 95%")
	assert.Equal(t, []float64{0.975, 0.95}, []float64{round6(f.Levels[0]), round6(f.Levels[1])})
	assert.Equal(t, 2, f.Steps)

	f, err = JudgeFamily([]Samples{familySamples(8, 12, 0), border}, opt)
	require.NoError(t, err)
	assert.NotEqual(t, Slower, f.Verdicts[1].Outcome, "without a rejection it stays at 97.5%")
	assert.InDelta(t, 0.975, f.Levels[1], 1e-12)

	// Coherence: each verdict is exactly Judge's at its level.
	for i, s := range []Samples{familySamples(8, 12, 0), border} {
		o := opt
		o.Confidence, o.EqConfidence = f.Levels[i], 0.95
		v, err := Judge(s, o)
		require.NoError(t, err)
		assert.Equal(t, v.Outcome, f.Verdicts[i].Outcome)
		assert.Equal(t, v.Lo, f.Verdicts[i].Lo)
		assert.Equal(t, v.Hi, f.Verdicts[i].Hi)
	}
}

func TestJudgeFamilyEdges(t *testing.T) {
	f, err := JudgeFamily(nil, Options{})
	require.NoError(t, err)
	assert.Empty(t, f.Verdicts)
	_, err = JudgeFamily([]Samples{familySamples(1, 10, 0)}, Options{Confidence: 1})
	assert.ErrorContains(t, err, "Options.Confidence 1 must be in (0, 1)")

	l, err := BonferroniLevel(0, 10)
	require.NoError(t, err)
	assert.InDelta(t, 0.995, l, 1e-12)
	_, err = BonferroniLevel(0.95, 0)
	assert.ErrorIs(t, err, ErrNoMembers)
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func TestFamilyReplicates(t *testing.T) {
	assert.Equal(t, 4000, FamilyReplicates(0.95))
	assert.Equal(t, 24000, FamilyReplicates(1-0.05/60))
}

// TestJudgeFamilyJudgesEquivalenceAtTheNominalLevel: Holm raises the level
// of the difference test only; each member's equivalence interval is the
// one Judge gives alone at the family's level (90% for 5%), so a family of
// unchanged members is called equivalent as often as one member would be.
func TestJudgeFamilyJudgesEquivalenceAtTheNominalLevel(t *testing.T) {
	var fam []Samples
	for i := range 3 {
		fam = append(fam, familySamples(uint64(40+i), 20, 0))
	}
	for _, opt := range []Options{{}, {MaxRounds: 30}} {
		f, err := JudgeFamily(fam, opt)
		require.NoError(t, err)
		for i, v := range f.Verdicts {
			alone, err := Judge(fam[i], opt)
			require.NoError(t, err)
			assert.InDelta(t, 1-0.05/3, v.Confidence, 1e-12, "member %d: the difference test at Holm's first level", i)
			assert.InDelta(t, 0.95, v.EqConfidence, 1e-12, "member %d", i)
			assert.Equal(t, 3, v.FamilySize)
			assert.InDelta(t, 0.05, v.FamilyAlpha, 1e-12)
			if opt.MaxRounds == 0 {
				assert.Equal(t, alone.EqLo, v.EqLo, "member %d: the same equivalence interval as alone", i)
				assert.Equal(t, alone.EqHi, v.EqHi, "member %d", i)
			}
			assert.Equal(t, alone.Outcome == Equivalent, v.Outcome == Equivalent, "member %d: %v alone, %v in the family", i, alone.Outcome, v.Outcome)
			if v.Looks == alone.Looks {
				assert.LessOrEqual(t, v.Lo, alone.Lo, "member %d: the difference interval is wider in the family", i)
				assert.GreaterOrEqual(t, v.Hi, alone.Hi, "member %d", i)
			}
		}
	}
	v, err := Judge(fam[0], Options{})
	require.NoError(t, err)
	assert.Zero(t, v.FamilySize, "a verdict judged alone has no family")
}

// Weighted Holm: a member weighing 2 of a total 4 is judged at α/2 at the
// first step, the others at α/4; after the heavy member is called, the two
// left share α. Bad weights are refused.
func TestJudgeWeightedLevels(t *testing.T) {
	fam := []Samples{familySamples(1, 20, 0), familySamples(2, 20, 0.2), familySamples(3, 20, 0)}
	f, err := JudgeWeighted(fam, []float64{1, 2, 1}, Options{})
	require.NoError(t, err)
	require.Equal(t, Slower, f.Verdicts[1].Outcome)
	assert.InDelta(t, 1-0.05/2, f.Levels[1], 1e-12, "the heavy member at its first-step level")
	assert.InDelta(t, 1-0.05/2, f.Levels[0], 1e-12, "after it is called, the two left share α")
	assert.InDelta(t, 1-0.05/2, f.Levels[2], 1e-12)
	assert.Equal(t, 2, f.Steps)

	eq, err := JudgeWeighted(fam, nil, Options{})
	require.NoError(t, err)
	plain, err := JudgeFamily(fam, Options{})
	require.NoError(t, err)
	assert.Equal(t, plain.Levels, eq.Levels, "nil weights are Holm's procedure")

	for _, w := range [][]float64{{1, 2}, {1, 0, 1}, {1, math.Inf(1), 1}, {1, math.NaN(), 1}} {
		_, err := JudgeWeighted(fam, w, Options{})
		assert.Error(t, err, "%v", w)
	}
}
