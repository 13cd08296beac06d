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
		switch {
		case v.Outcome == Slower && v.Has(NullShifted):
			// A' strays from A, and B is slower than A' too: a caveat.
			slower++
			assert.Greater(t, v.VsNullLo, 1.0)
			assert.Equal(t, []Reason{NullShifted}, v.Reasons)
		case v.Outcome == Slower:
			slower++
			assert.Empty(t, v.Reasons)
			assert.Zero(t, v.RoundsToDecide)
			assert.Zero(t, v.VsNullLo, "B/A' is only judged when A' strays")
		default:
			assert.Equal(t, []Reason{NullShifted}, v.Reasons, "seed %d", seed)
			assert.LessOrEqual(t, v.VsNullLo, 1.0)
		}
	}
	assert.GreaterOrEqual(t, slower, 38, "NullShifted withholds rarely")
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
	assert.Equal(t, v.Looks, len(v.Rounds)-3, "looks from round 4")
	// Later rounds never change an earlier look's decision.
	s2 := s
	s2.Base = append([]float64(nil), s.Base[:len(v.Rounds)]...)
	s2.Candidate, s2.Null = s.Candidate[:len(v.Rounds)], s.Null[:len(v.Rounds)]
	v2, err := Judge(s2, Options{MaxRounds: 30})
	require.NoError(t, err)
	assert.Equal(t, 30, v.Given)
	v2.Given = 30
	assert.True(t, math.IsNaN(v.SpreadLimit) && math.IsNaN(v2.SpreadLimit), "no extreme rule with a null arm")
	v.SpreadLimit, v2.SpreadLimit = 0, 0 // NaN ≠ NaN
	assert.Equal(t, v, v2)
}

// With a null arm no round is set aside for its values (issue 33): only a
// missing or non-positive value quarantines, so swapping arms in any round
// changes no round's quarantine and the screen cannot select on B's
// difference. Without one the contended and extreme rules read |ln B −
// ln A|, symmetric in A and B (TestQuarantineWithoutNullArm).
func TestQuarantineSymmetricInArms(t *testing.T) {
	s := synth(11, 30, 0.10, 0.01, 1.0)
	s.Base[3] *= 3      // an odd A block
	s.Candidate[7] *= 3 // an odd B block
	s.Null[12] *= 0.3   // an odd A' block
	s.Contended = make([]bool, 30)
	s.Contended[20] = true  // marked, and its values show it (over 2× the median spread)
	s.Candidate[20] *= 1.05 //
	s.Contended[17] = true  // marked, but its values lie as close as most
	s.Base[25] = math.NaN()
	s.Null[26] = -1
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	causes := map[int]Cause{}
	for _, r := range v.Rounds {
		if r.Quarantined {
			causes[r.Label] = r.Cause
		}
	}
	assert.Equal(t, map[int]Cause{26: Missing, 27: NonPositive}, causes)
	assert.Equal(t, 2, v.Quarantined)
	assert.Equal(t, 28, v.Used)
	assert.True(t, math.IsNaN(v.SpreadLimit))
	assert.Greater(t, v.Rounds[7].Spread, 0.5, "the spread is still reported")

	r := rand.New(rand.NewPCG(5, 5))
	for range 20 {
		sw := Samples{Base: append([]float64(nil), s.Base...), Candidate: append([]float64(nil), s.Candidate...),
			Null: append([]float64(nil), s.Null...), Contended: s.Contended}
		for i := range sw.Base {
			switch r.IntN(3) {
			case 1:
				sw.Base[i], sw.Candidate[i] = sw.Candidate[i], sw.Base[i]
			case 2:
				sw.Base[i], sw.Null[i] = sw.Null[i], sw.Base[i]
			}
		}
		w, err := Judge(sw, Options{})
		require.NoError(t, err)
		for i := range w.Rounds {
			assert.Equal(t, v.Rounds[i].Quarantined, w.Rounds[i].Quarantined, "round %d", i+1)
			assert.InDelta(t, v.Rounds[i].Spread, w.Rounds[i].Spread, 1e-12)
		}
	}
	// Swapping A and A' in every round changes nothing: B is judged
	// against both alike.
	sw := s
	sw.Base, sw.Null = s.Null, s.Base
	w, err := Judge(sw, Options{})
	require.NoError(t, err)
	assert.InDelta(t, v.Ratio, w.Ratio, 1e-12)
	assert.InDelta(t, v.Lo, w.Lo, 1e-12)
	assert.InDelta(t, v.Hi, w.Hi, 1e-12)
	assert.InDelta(t, v.P, w.P, 1e-12)
	// Inverting every value mirrors the verdict exactly.
	inv := func(x []float64) []float64 {
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = 1 / v
		}
		return y
	}
	sw = s
	sw.Base, sw.Candidate, sw.Null = inv(s.Base), inv(s.Candidate), inv(s.Null)
	w, err = Judge(sw, Options{})
	require.NoError(t, err)
	assert.InDelta(t, 1/v.Ratio, w.Ratio, 1e-12)
	assert.InDelta(t, 1/v.Hi, w.Lo, 1e-12)
	assert.InDelta(t, 1/v.Lo, w.Hi, 1e-12)
	assert.InDelta(t, v.P, w.P, 1e-12)
}

// Without a null arm the contended and extreme rules act on |ln B − ln A|:
// symmetric in A and B, and capped by MaxQuarantined.
func TestQuarantineWithoutNullArm(t *testing.T) {
	s := synth(11, 30, 0.10, 0.01, 1.0)
	s.Null = nil
	s.Base[3] *= 3      // an odd A block
	s.Candidate[7] *= 3 // an odd B block
	s.Contended = make([]bool, 30)
	s.Contended[20] = true  // marked, and its values show it (over 2× the median spread)
	s.Candidate[20] *= 1.05 //
	s.Contended[17] = true  // marked, but its values lie as close as most: kept
	s.Base[25] = math.NaN()
	s.Candidate[26] = -1
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	causes := map[int]Cause{}
	for _, r := range v.Rounds {
		if r.Quarantined {
			causes[r.Label] = r.Cause
		}
	}
	assert.Equal(t, map[int]Cause{4: Extreme, 8: Extreme, 21: Contended, 26: Missing, 27: NonPositive}, causes)
	assert.Greater(t, v.Rounds[3].Spread, v.SpreadLimit)
	assert.Less(t, v.Rounds[17].Spread, ContendedFactor*v.SpreadLimit/3, "round 18's values do not show the weather")
	r := rand.New(rand.NewPCG(5, 5))
	for range 20 {
		sw := Samples{Base: append([]float64(nil), s.Base...), Candidate: append([]float64(nil), s.Candidate...), Contended: s.Contended}
		for i := range sw.Base {
			if r.IntN(2) == 1 {
				sw.Base[i], sw.Candidate[i] = sw.Candidate[i], sw.Base[i]
			}
		}
		w, err := Judge(sw, Options{})
		require.NoError(t, err)
		for i := range w.Rounds {
			assert.Equal(t, v.Rounds[i].Quarantined, w.Rounds[i].Quarantined, "round %d", i+1)
			assert.InDelta(t, v.Rounds[i].Spread, w.Rounds[i].Spread, 1e-12)
		}
	}
}

func TestTooManyQuarantined(t *testing.T) {
	s := synth(12, 10, 0.10, 0.01, 1.10)
	s.Null = nil
	s.Contended = []bool{true, true, true, true, true, true, true, false, false, false}
	for i := range 7 {
		s.Candidate[i] *= 1.3 // the weather the marked rounds' arms did not share
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Undecided, v.Outcome)
	assert.Equal(t, []Reason{TooManyQuarantined, NoNullArm}, v.Reasons)
	assert.Equal(t, -1, v.RoundsToDecide)
	v, err = Judge(s, Options{MaxQuarantined: 1})
	require.NoError(t, err)
	assert.Equal(t, []Reason{TooFewRounds, NoNullArm}, v.Reasons, "3 used rounds give no interval")
	assert.Equal(t, 6, v.NeedRounds)
	assert.True(t, math.IsInf(v.MDE, 1))
}

func TestNoNullArmAndCaveats(t *testing.T) {
	s := synth(13, 20, 0.10, 0.002, 1.005)
	s.Null = nil
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome)
	assert.Equal(t, []Reason{WithinDelta, NoNullArm}, v.Reasons)
	assert.True(t, math.IsNaN(v.NullRatio))
	assert.True(t, math.IsNaN(v.Rounds[0].Null))
	assert.Less(t, v.Hi, 1.02)
}

func TestUndecidedCarriesMDEAndRounds(t *testing.T) {
	// 3% noise, a 1% effect: 10 rounds cannot tell.
	v, err := Judge(synth(16, 10, 0.10, 0.03, 1.01), Options{})
	require.NoError(t, err)
	require.Equal(t, Undecided, v.Outcome)
	assert.Equal(t, []Reason{Straddles}, v.Reasons)
	assert.Greater(t, v.RoundsToDecide, 10)
	assert.Greater(t, v.MDE, 0.01)
	assert.Less(t, v.MDE, 0.2)
	// MDEAt from the same noise shrinks like 1/√rounds, a little faster
	// at few rounds (Student's t: 2.26 + 0.88 at 10 rounds, 2.02 + 0.85
	// at 40).
	s := synth(15, 20, 0.10, 0.03, 1.0)
	m10, m40 := MDEAt(s, 10, Options{}), MDEAt(s, 40, Options{})
	assert.InDelta(t, 2*(2.262+0.883)/(2.023+0.851), math.Log1p(m10)/math.Log1p(m40), 0.01)
	own, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.InDelta(t, 1.0, math.Log1p(MDEAt(s, own.Used, Options{}))/math.Log1p(own.MDE), 1e-12,
		"at its own used rounds, MDEAt is the verdict's MDE")
	assert.True(t, math.IsInf(MDEAt(synth(1, 3, 0.1, 0.03, 1), 10, Options{}), 1))
	assert.True(t, math.IsNaN(MDEAt(s, 0, Options{})))
}

func TestSequentialDeterministicAndPrefixStable(t *testing.T) {
	s := synth(16, 40, 0.10, 0.03, 1.02)
	opt := Options{MaxRounds: 40}
	a, err := Judge(s, opt)
	require.NoError(t, err)
	b, err := Judge(s, opt)
	require.NoError(t, err)
	a.SpreadLimit, b.SpreadLimit = 0, 0 // NaN with a null arm, and NaN ≠ NaN
	assert.Equal(t, a, b, "same input, same seed: same verdict")
	// Each prefix's verdict is what the run would have said after that
	// many rounds; none decides before the full run's reported look.
	for n := 6; n < len(a.Rounds); n++ {
		p := Samples{Base: s.Base[:n], Candidate: s.Candidate[:n], Null: s.Null[:n]}
		v, err := Judge(p, opt)
		require.NoError(t, err)
		assert.Equal(t, Undecided, v.Outcome, "n=%d", n)
		assert.Contains(t, v.Reasons, Continuing)
	}
	// Boundaries widen as less α is spent: a look's index never exceeds
	// the fixed-sample one at the same rounds.
	d := make([]float64, 30)
	looks := make([][]int, 25)
	spend := make([]float64, 25)
	for j := range looks {
		for i := range j + 6 {
			looks[j] = append(looks[j], i)
		}
		spend[j] = Pocock.spent(0.05, float64(j+6)/30, 2)
	}
	for i := range d {
		d[i] = float64(i%7) - 3.1
	}
	ks := seqK(d, 0, looks, spend, twoSided, newSigns(4000, 30, 1))
	for j, k := range ks {
		assert.LessOrEqual(t, k, critK(j+6, 0.025), "look %d", j)
	}
	assert.Equal(t, ks, seqK(d, 0, looks, spend, twoSided, newSigns(4000, 30, 1)))
}

func TestSpending(t *testing.T) {
	for _, s := range []Spending{Pocock, OBrienFleming} {
		assert.Zero(t, s.spent(0.05, 0, 2))
		assert.Equal(t, 0.05, s.spent(0.05, 1, 2))
		prev := 0.0
		for t1 := 0.1; t1 < 1; t1 += 0.1 {
			x := s.spent(0.05, t1, 2)
			assert.Greater(t, x, prev, "%v increases", s)
			prev = x
		}
	}
	assert.Less(t, OBrienFleming.spent(0.05, 0.3, 2), Pocock.spent(0.05, 0.3, 2))
	assert.InDelta(t, 0.05*math.Log(1+(math.E-1)*0.5), Pocock.spent(0.05, 0.5, 2), 1e-15)
	assert.InDelta(t, 2*(1-0.5*math.Erfc(-1.959964/math.Sqrt(0.5)/math.Sqrt2)), OBrienFleming.spent(0.05, 0.5, 2), 1e-5)
	assert.Equal(t, "obrien-fleming", OBrienFleming.String())
}

func TestJudgeErrors(t *testing.T) {
	ok := synth(1, 10, 0, 0.01, 1)
	for _, c := range []struct {
		s   Samples
		opt Options
		msg string
	}{
		{Samples{}, Options{}, "nullband: Samples.Base is empty"},
		{Samples{Base: []float64{1, 2}, Candidate: []float64{1}}, Options{}, "nullband: Samples lengths differ: Base 2, Candidate 1, Null 0, Round 0, Contended 0"},
		{ok, Options{Confidence: 1.5}, "nullband: Options.Confidence 1.5: want a value in (0.5, 1), e.g. 0.95"},
		{ok, Options{Delta: -1}, "nullband: Options.Delta -1: want a fraction > 0, e.g. 0.02"},
		{ok, Options{MaxQuarantined: 2}, "nullband: Options.MaxQuarantined 2: want a share in (0, 1]"},
		{ok, Options{MaxRounds: 5, MinRounds: 6}, "nullband: Options.MinRounds 6: want 1 … MaxRounds (5)"},
		{ok, Options{Spending: 7}, "nullband: Options.Spending Spending(7): unknown"},
	} {
		_, err := Judge(c.s, c.opt)
		assert.EqualError(t, err, c.msg)
	}
}

func TestStrings(t *testing.T) {
	assert.Equal(t, []string{"undecided", "faster", "slower", "equivalent"},
		[]string{Undecided.String(), Faster.String(), Slower.String(), Equivalent.String()})
	assert.Equal(t, "null-shifted", NullShifted.String())
	assert.Equal(t, "extreme", Extreme.String())
	assert.Equal(t, "", Cause(0).String())
}

func TestSequentialEvery(t *testing.T) {
	s := synth(17, 30, 0.10, 0.01, 1.10)
	v, err := Judge(s, Options{MaxRounds: 30, MinRounds: 10, Every: 5})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome)
	assert.Equal(t, 10, len(v.Rounds), "decided at the first look")
	assert.Equal(t, 1, v.Looks)
	// Between looks the verdict is the last look's: 14 rounds show the
	// look at 10 (A/A here, so undecided and continuing).
	aa := synth(18, 14, 0.10, 0.03, 1.0)
	v, err = Judge(aa, Options{MaxRounds: 30, MinRounds: 10, Every: 5})
	require.NoError(t, err)
	assert.Equal(t, 10, len(v.Rounds))
	assert.Equal(t, 14, v.Given)
	assert.Contains(t, v.Reasons, Continuing)
}

func TestTQuantile(t *testing.T) {
	// Student's t table: t(0.975, 9) = 2.262, t(0.975, 19) = 2.093,
	// t(0.80, 9) = 0.883.
	assert.InDelta(t, 2.262, tQuantile(0.975, 9), 1e-3)
	assert.InDelta(t, 2.093, tQuantile(0.975, 19), 1e-3)
	assert.InDelta(t, 0.883, tQuantile(0.80, 9), 1e-3)
}

// A odd in every round: B/A and A'/A both read "slower", B/A' does not, so
// the call is withheld; B slower than both instances keeps its call.
func TestNullShiftedWithholdsOnlyWhatAExplains(t *testing.T) {
	s := synth(19, 12, 0.10, 0.005, 1.0)
	for i := range s.Base {
		s.Base[i] *= 0.97
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Undecided, v.Outcome)
	assert.Equal(t, []Reason{NullShifted}, v.Reasons)
	assert.Greater(t, v.Lo, 1.0, "B/A alone would say slower")
	assert.Greater(t, v.NullLo, 1.0)
	assert.Less(t, v.VsNullLo, 1.0)
	assert.Equal(t, -1, v.RoundsToDecide)

	for i := range s.Candidate {
		s.Candidate[i] *= 1.05
	}
	v, err = Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome)
	assert.Equal(t, []Reason{NullShifted}, v.Reasons)
	assert.Greater(t, v.VsNullLo, 1.0)
}

// Block times are right-skewed. ln(B/A) is symmetric under "no
// difference" whatever the skew (A and B are exchangeable), so the test
// keeps its level at any number of rounds; an effect that mixes arms
// unevenly, such as ln B − ½(ln A + ln A'), is skewed too, and its
// signed-rank test then calls "faster" ever more often as rounds grow.
func TestSkewedNoiseKeepsTheLevel(t *testing.T) {
	const rounds = 40
	trials := 600
	if raceOn {
		trials = 200
	}
	faster, slower := 0, 0
	for i := range trials {
		r := rand.New(rand.NewPCG(uint64(i), 5))
		block := func() float64 { return math.Exp(0.005*r.NormFloat64()) * (1 + 0.02*r.ExpFloat64()) }
		s := Samples{Base: make([]float64, rounds), Candidate: make([]float64, rounds), Null: make([]float64, rounds)}
		for j := range rounds {
			s.Base[j], s.Candidate[j], s.Null[j] = block(), block(), block()
		}
		v, err := Judge(s, Options{})
		require.NoError(t, err)
		switch v.Outcome {
		case Faster:
			faster++
		case Slower:
			slower++
		}
	}
	// Each side at most 2.5% plus three binomial standard errors.
	bound := float64(trials) * (0.025 + 3*math.Sqrt(0.025*0.975/float64(trials)))
	assert.LessOrEqual(t, float64(faster), bound, "false faster")
	assert.LessOrEqual(t, float64(slower), bound, "false slower")
}

// A real Compare trial (B does 5% more work; 2026-12-01, load about 5): the
// screen marked rounds 1–6 as met by different weather, yet their median
// steps lie as close as the others'. Quarantining every marked round left 4
// and no verdict; marked rounds whose values do not show the weather stay.
func TestMarkedRoundsThatLookCleanStay(t *testing.T) {
	s := Samples{
		Base:      []float64{33243, 32441, 33203, 33193, 32762, 32752, 33243, 33253, 33253, 32751},
		Null:      []float64{33243, 33263, 33192, 33194, 33203, 32782, 33203, 33228, 32752, 33193},
		Candidate: []float64{34837, 34806, 34886, 34976, 34856, 34385, 34917, 34867, 34416, 34856},
		Contended: []bool{true, true, true, true, true, true, false, false, false, false},
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome, "%v", v.Reasons)
	assert.Equal(t, 10, v.Used)
	assert.InDelta(t, 1.05, v.Ratio, 0.01)
}

// A real interleave trial (B does 5% more work; 2026-12-01, load about 5):
// in round 2 the base's median step was 25% slow, 3.6 times the median
// spread. At the old Extreme of 5 it stayed, and its Walsh averages pulled
// the 10-round interval's lower end to 0.942: undecided, where every other
// round said 4–6% slower.
//
// With the null arm the round stays (no rule on values sets a round aside)
// and the verdict is slower: the slow block moves its round's ranks only.
// Without it the extreme rule sets the round aside, and the call on the
// other 9 would be slower; judged on all 10 the paired interval reaches
// below 1, so the call rests on the round set aside: undecided
// (QuarantineChangesCall).
func TestOneSlowBlockIsExtreme(t *testing.T) {
	s := Samples{
		Base:      []float64{32762, 41127, 33053, 33062, 32982, 32722, 32682, 32983, 32682, 33163},
		Null:      []float64{33002, 33042, 32732, 32731, 32992, 33013, 33002, 32952, 32762, 33082},
		Candidate: []float64{34646, 34716, 34645, 34655, 34305, 34374, 34440, 34706, 34657, 34645},
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome, "%v", v.Reasons)
	assert.False(t, v.Rounds[1].Quarantined)
	assert.Equal(t, 10, v.Used)
	s.Null = nil
	paired, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Extreme, paired.Rounds[1].Cause)
	assert.Equal(t, Undecided, paired.Outcome)
	assert.Equal(t, []Reason{QuarantineChangesCall, NoNullArm}, paired.Reasons)
	assert.True(t, paired.UnscreenedChecked)
	assert.Equal(t, Undecided, paired.Unscreened, "without A', the paired interval over all 10 reaches below 1")
	kept, err := Judge(s, Options{Extreme: math.Inf(1)})
	require.NoError(t, err)
	assert.Equal(t, Undecided, kept.Outcome)
}

// A sequential look spends less than α, so its boundary can allow no
// interval at the fixed-sample minimum: the verdict then asks for more
// rounds than it used, never "6 used of 6 needed".
func TestSequentialTooFewRoundsAsksForMore(t *testing.T) {
	s := synth(21, 4, 0.10, 0.01, 1.0)
	v, err := Judge(s, Options{MaxRounds: 40})
	require.NoError(t, err)
	require.True(t, v.Has(TooFewRounds), "%v", v.Reasons)
	assert.Equal(t, 4, v.Used)
	assert.Greater(t, v.NeedRounds, v.Used)
	fixed, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, 4, fixed.NeedRounds, "the fixed-sample minimum at 95%: 3⁻⁴ ≤ 2.5%")
	assert.False(t, fixed.Has(TooFewRounds))
}

// A family's strictest level can need more rounds for an interval than the
// sequential maximum (5 metrics under Holm, -count 6): the default first
// look is then the last, and the verdict says too few rounds instead of
// refusing the Options.
func TestSequentialMaxBelowTheFewestRounds(t *testing.T) {
	s := synth(22, 4, 0.10, 0.01, 1.0)
	v, err := Judge(s, Options{Confidence: 1 - 0.05/5, MaxRounds: 4})
	require.NoError(t, err)
	assert.Equal(t, Undecided, v.Outcome)
	assert.True(t, v.Has(TooFewRounds), "%v", v.Reasons)
	assert.Equal(t, 1, v.Looks)
	_, err = Judge(s, Options{Confidence: 1 - 0.05/5, MaxRounds: 4, MinRounds: 8})
	assert.Error(t, err, "a MinRounds set above MaxRounds is still refused")
}

func TestFewestRounds(t *testing.T) {
	assert.Equal(t, 4, FewestRounds(0.95, true))
	assert.Equal(t, 5, FewestRounds(1-0.05/4, true))
	assert.Equal(t, 6, FewestRounds(0.95, false))
	assert.Equal(t, 8, FewestRounds(1-0.05/4, false))
	assert.Zero(t, FewestRounds(1, true))
	for _, c := range []float64{0.95, 0.99} {
		for _, null := range []bool{true, false} {
			n := FewestRounds(c, null)
			s := synth(3, n, 0.10, 0.01, 1.10)
			if !null {
				s.Null = nil
			}
			v, err := Judge(s, Options{Confidence: c})
			require.NoError(t, err)
			assert.False(t, math.IsInf(v.Hi, 1), "%g, null arm %v: %d rounds give an interval", c, null, n)
			if null {
				s.Null = s.Null[:n-1]
			}
			v, err = Judge(Samples{Base: s.Base[:n-1], Candidate: s.Candidate[:n-1], Null: s.Null}, Options{Confidence: c})
			require.NoError(t, err)
			assert.True(t, v.Has(TooFewRounds), "%g, null arm %v: %d rounds do not", c, null, n-1)
		}
	}
}
