package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// ramp returns n values level×(1 + k·step), k = 0…n−1, in a shuffled order.
func ramp(n int, level, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		k := (i * 7) % n
		out[i] = level * (1 + float64(k)*step)
	}
	return out
}

func TestBandRule(t *testing.T) {
	a := ramp(10, 1, 0.001)
	null := make([]float64, 10)
	for i := range null {
		null[i] = a[i] * (0.99 + 0.002*float64((i*3)%10)) // A'/A from 0.990 to 1.008
	}
	scale := func(xs []float64, f float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * f
		}
		return out
	}
	assert.Equal(t, Slower, bandRule(a, scale(a, 1.10), null), "B 10% above a tight band")
	assert.Equal(t, Faster, bandRule(a, scale(a, 0.90), null), "B 10% below")
	assert.Equal(t, Equivalent, bandRule(a, scale(a, 1.0005), null), "B inside a tight band: inside")
	wide := append([]float64(nil), null...)
	for i := range 3 {
		wide[i], wide[3+i] = a[i]*0.85, a[3+i]*1.18
	}
	assert.Equal(t, Undecided, bandRule(a, scale(a, 1.0005), wide), "a band wider than ±10%: unmeasurable")
	assert.Equal(t, Undecided, bandRule(a[:5], scale(a[:5], 1.10), null[:5]), "5 rounds give no 95% CI")
	far := append([]float64(nil), null...)
	far[0], far[1], far[2] = a[0]*1.3, a[1]*1.3, a[2]*1.3
	assert.Equal(t, Undecided, bandRule(a, scale(a, 1.10), far), "3 of 10 rounds rejected (> 25%): unmeasurable")
}

func TestUTest(t *testing.T) {
	a := ramp(10, 1, 0.001)
	u := UTest()
	scale := func(f float64) []float64 {
		out := make([]float64, len(a))
		for i, x := range a {
			out[i] = x * f
		}
		return out
	}
	assert.Equal(t, Slower, u.Fixed(Trial{A: a, B: scale(1.05), Null: a}))
	assert.Equal(t, Faster, u.Fixed(Trial{A: a, B: scale(0.95), Null: a}))
	assert.Equal(t, Undecided, u.Fixed(Trial{A: a, B: scale(1), Null: a}))
	assert.Equal(t, Undecided, u.Fixed(Trial{A: a[:3], B: scale(1.05)[:3], Null: a[:3]}), "3 values a side cannot reach p ≤ 0.05")
}

// The band rule's blindness that issue 9 measured on a real host (a 2%
// slowdown found in 1 of 6 trials, benchstat 6 of 6) shows in simulation.
func TestOldBandRuleIsNearlyBlindWhereTheUTestSees(t *testing.T) {
	m, _ := ModelByName("lognormal-p50")
	c := Case{Model: m, Effect: 0.02, Rounds: 10, Trials: 300, Seed: 1}
	band, ut := Fixed(c, OldBand()), Fixed(c, UTest())
	assert.Less(t, band.Rate(Slower), 0.10, "band: %v", band.Calls)
	assert.Greater(t, ut.Rate(Slower), 0.60, "utest: %v", ut.Calls)
	assert.Equal(t, 300, band.Trials)
	assert.Equal(t, 3000, band.RoundsSum)
}
