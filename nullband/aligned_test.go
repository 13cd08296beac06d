package nullband

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bruteTails enumerates the 3ⁿ choices of one value per triple.
func bruteTails(r []int, t int) (upper, lower float64) {
	n := len(r) / 3
	total := int(math.Pow(3, float64(n)))
	for c := range total {
		sum, x := 0, c
		for i := range n {
			sum += r[3*i+x%3]
			x /= 3
		}
		if sum >= t {
			upper++
		}
		if sum <= t {
			lower++
		}
	}
	return upper / float64(total), lower / float64(total)
}

func TestAlignedExactNullMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	var dist, next []float64
	for n := 1; n <= 6; n++ {
		for rep := range 20 {
			tr := make([]int, 3*n)
			for i := range tr {
				// Small ranges make ties within and across triples.
				tr[i] = 2 + r.IntN(2+rep)*(1+rep%2)
			}
			lo, hi := 0, 0
			for i := range n {
				lo += min(tr[3*i], tr[3*i+1], tr[3*i+2])
				hi += max(tr[3*i], tr[3*i+1], tr[3*i+2])
			}
			for x := lo - 1; x <= hi+1; x++ {
				eu, el := exactTails(tr, x, &dist, &next)
				bu, bl := bruteTails(tr, x)
				require.InDelta(t, bu, eu, 1e-12, "n %d, ranks %v, t %d: upper", n, tr, x)
				require.InDelta(t, bl, el, 1e-12, "n %d, ranks %v, t %d: lower", n, tr, x)
			}
		}
	}
	// The ranks of noisy samples, as rank makes them.
	s := synth(4, 6, 0.10, 0.02, 1.02)
	st := newAligned(s, []int{0, 1, 2, 3, 4, 5})
	got := st.rank(0)
	eu, el := st.tailsAt(got)
	bu, bl := bruteTails(st.r, got)
	assert.InDelta(t, bu, eu, 1e-12)
	assert.InDelta(t, bl, el, 1e-12)
	sum := 0
	for _, x := range st.r {
		sum += x
	}
	assert.Equal(t, 18*19, sum, "doubled ranks of 18 values sum to 18·19")
	// The normal approximation is close at 6 rounds already.
	nu, nl := normalTails(st.r, got)
	assert.InDelta(t, eu, nu, 0.02)
	assert.InDelta(t, el, nl, 0.02)
}

func TestAlignedRanksTiesAndShift(t *testing.T) {
	// B 5% above A and A' = A in every round: aligned, B's values lie
	// above all others whatever the round's level, and every difference
	// uᵢ − v is ln 1.05 (up to rounding).
	a := []float64{1, 2, 3, 1.5}
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] * 1.05
	}
	all := []int{0, 1, 2, 3}
	st := newAligned(Samples{Base: a, Candidate: b, Null: a}, all)
	assert.Equal(t, 18+20+22+24, st.rank(0), "B's 4 values take ranks 9–12")
	for i := range 4 {
		assert.GreaterOrEqual(t, st.r[3*i], 18)
		assert.Equal(t, st.r[3*i+1], st.r[3*i+2], "A and A' tie in round %d", i)
	}
	assert.InDelta(t, math.Log(1.05), st.estimate(), 1e-12)
	up, _ := st.tails(0)
	assert.InDelta(t, 1/81.0, up, 1e-12, "B on top in all 4 rounds: (1/3)⁴")

	// The same at one level: the values tie exactly, and shifted by the
	// true effect all 12 tie.
	one := []float64{1, 1, 1, 1}
	st = newAligned(Samples{Base: one, Candidate: []float64{1.05, 1.05, 1.05, 1.05}, Null: one}, all)
	assert.Equal(t, 4*21, st.rank(0))
	assert.Equal(t, []int{21, 9, 9, 21, 9, 9, 21, 9, 9, 21, 9, 9}, st.r, "8 ties at ranks 1–8 (doubled 9), 4 at 9–12 (21)")
	assert.Equal(t, 4*13, st.rank(math.Log(1.05)))
	up, low := st.tails(math.Log(1.05))
	assert.Equal(t, 1.0, up)
	assert.Equal(t, 1.0, low)
	assert.Equal(t, 4, alignedMinRounds(0.025))
	assert.Equal(t, 5, alignedMinRounds(0.005))
}

// The calls the direct tests make are those the inverted intervals give,
// fixed and sequential, and the estimate lies inside the interval.
func TestAlignedIntervalAgreesWithTheTests(t *testing.T) {
	calls := map[Outcome]int{}
	seeds := uint64(60)
	if raceOn {
		seeds = 32 // 8 of them at 40 rounds: equivalence needs EqFloor (14)
	}
	for seed := range seeds {
		for _, e := range []float64{1, 1.02} {
			rounds := 12
			if seed%4 == 0 {
				rounds = 40
			}
			s := synth(seed, rounds, 0.10, 0.02, e)
			for _, opt := range []Options{{}, {MaxRounds: 40}} {
				v, err := Judge(s, opt)
				require.NoError(t, err)
				want := Undecided
				switch {
				case v.Has(NullShifted):
					continue
				case v.Lo > 1:
					want = Slower
				case v.Hi < 1:
					want = Faster
				case v.EqLo > 1/1.02 && v.EqHi < 1.02 && !v.Has(BelowEqFloor) && !v.Has(QuarantineChangesCall):
					want = Equivalent
				}
				if opt.MaxRounds == 0 || want != Equivalent {
					// In sequential mode each equivalence side decides on
					// its own looks; the interval is the stopping look's.
					assert.Equal(t, want, v.Outcome, "seed %d, effect %g, %+v: %+v", seed, e, opt, v)
				}
				assert.True(t, v.Lo <= v.Ratio && v.Ratio <= v.Hi, "%+v", v)
				calls[v.Outcome]++
			}
		}
	}
	assert.Greater(t, calls[Slower], 10, calls)
	assert.Greater(t, calls[Equivalent], 10, calls)
}

// A one-look boundary spends what it is given: the exact null
// probability of reaching its critical value is at most the spend (up to
// the Monte Carlo error of 4000 replicates) and not far below it.
func TestRankBoundaryOneLook(t *testing.T) {
	lab := newLabels(4000, 20, 1)
	s := synth(9, 20, 0.10, 0.02, 1)
	st := newAligned(s, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	for _, spend := range []float64{0.0125, 0.025, 0.05} {
		st.rank(0)
		up := newRankBoundary(lab, true).next(st, spend)
		down := newRankBoundary(lab, false).next(st, spend)
		pu, _ := st.tailsAt(up)
		_, pd := st.tailsAt(down)
		sd := math.Sqrt(spend * (1 - spend) / 4000)
		assert.LessOrEqual(t, pu, spend+3*sd, "upper, spend %g", spend)
		assert.GreaterOrEqual(t, pu, spend/2, "upper, spend %g", spend)
		assert.LessOrEqual(t, pd, spend+3*sd, "lower, spend %g", spend)
		assert.GreaterOrEqual(t, pd, spend/2, "lower, spend %g", spend)
	}
	// No budget: nothing crosses.
	st.rank(0)
	assert.Equal(t, noCross, newRankBoundary(lab, true).next(st, -1))
	assert.Equal(t, -noCross, newRankBoundary(lab, false).next(st, -1))
}

// Sequential A/A over 30 rounds, looking after every round: false faster
// or slower in at most α = 5% (plus three binomial standard errors).
func TestAlignedSequentialKeepsTheLevel(t *testing.T) {
	trials := 300
	if testing.Short() || raceOn {
		trials = 100
	}
	wrong := 0
	for i := range trials {
		// Noise of 5% a block: equivalence within ±2% rarely stops a
		// trial early, so the effect test gets every look.
		v, err := Judge(synth(uint64(1000+i), 30, 0.10, 0.05, 1), Options{MaxRounds: 30, Replicates: 1000, Seed: uint64(i)})
		require.NoError(t, err)
		if v.Outcome == Faster || v.Outcome == Slower {
			wrong++
		}
	}
	bound := float64(trials) * (0.05 + 3*math.Sqrt(0.05*0.95/float64(trials)))
	assert.LessOrEqual(t, float64(wrong), bound)
}

func TestSearchNear(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		m := r.IntN(40)
		cut := r.IntN(m + 1)
		k0 := r.IntN(m+3) - 1
		pred := func(k int) bool {
			require.True(t, k >= 0 && k < m, "pred(%d) outside [0, %d)", k, m)
			return k >= cut
		}
		require.Equal(t, cut, searchNear(m, k0, pred), "m %d, cut %d, guess %d", m, cut, k0)
	}
}

// The boundaries count the observed labelling among the replicates, which
// keeps the observed path's chance of crossing within the spend whatever
// the number of replicates: over A/A data sets, an upper boundary spending
// 2.5% over 27 looks with 200 replicates is crossed in at most 2.5% (plus
// three standard errors). Left out, the same replicates let more through.
func TestRankBoundaryKeepsItsSpendWithFewReplicates(t *testing.T) {
	const rounds, reps = 30, 200
	sets := 4000
	if raceOn {
		sets = 1000
	}
	with, without := 0, 0
	for ds := range uint64(sets) {
		s := synth(500+ds, rounds, 0.10, 0.02, 1)
		lab := newLabels(reps, rounds, ds)
		in, out := newRankBoundary(lab, true), newRankBoundary(lab[1:], true)
		crossIn, crossOut := false, false
		for m := 4; m <= rounds; m++ {
			idx := make([]int, m)
			for i := range idx {
				idx[i] = i
			}
			st := newAligned(s, idx)
			obs := st.rank(0)
			spend := Pocock.spent(0.05, float64(m)/rounds, 2) / 2
			crossIn = crossIn || obs >= in.next(st, spend)
			crossOut = crossOut || obs >= out.next(st, spend)
		}
		if crossIn {
			with++
		}
		if crossOut {
			without++
		}
	}
	bound := float64(sets) * (0.025 + 3*math.Sqrt(0.025*0.975/float64(sets)))
	assert.LessOrEqual(t, float64(with), bound, "crossed %d of %d", with, sets)
	assert.Greater(t, without, with, "left out: %d, counted: %d", without, with)
}

// Quantised values tie across arms, so B/A = 1 is a shift where the ranks
// change: the test there rejects, the interval is open at 1, and its end
// is reported just past 1.
func TestTiedValuesKeepTheIntervalOnItsSide(t *testing.T) {
	s := Samples{
		Candidate: []float64{94.5, 98, 99.5, 99.5, 107.5, 89},
		Base:      []float64{99, 99.5, 109, 104.5, 107.5, 91},
		Null:      []float64{96.5, 102, 107.5, 99.5, 103.5, 92.5},
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	require.Equal(t, Faster, v.Outcome)
	assert.Less(t, v.Hi, 1.0)
	assert.InDelta(t, 1.0, v.Hi, 1e-12)
	// A level of 1 rejects every shift.
	st := newAligned(s, []int{0, 1, 2, 3, 4, 5})
	lo, hi := st.interval(1, 0)
	assert.True(t, math.IsInf(lo, 1))
	assert.True(t, math.IsInf(hi, 1))
}
