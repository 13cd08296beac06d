package nullband

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegimesBimodal(t *testing.T) {
	detected := 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		v := make([]float64, 12)
		slow := 0
		for i := range v {
			c := 1.17e-3
			if r.IntN(3) == 0 {
				c, slow = 1.85e-3, slow+1
			}
			v[i] = c * math.Exp(0.02*r.NormFloat64())
		}
		if slow < 3 || slow > 9 {
			continue // a regime of fewer than 3 values is not claimed
		}
		rs := Regimes(v, 0)
		if len(rs) == 2 {
			detected++
			assert.Equal(t, slow, rs[1].N)
			assert.InDelta(t, 1.85e-3, rs[1].Center, 0.1e-3)
			assert.InDelta(t, 1.17e-3, rs[0].Center, 0.1e-3)
			assert.Equal(t, 12, rs[0].N+rs[1].N)
		}
	}
	assert.GreaterOrEqual(t, detected, 150)
}

func TestRegimesUnimodalRarelySplit(t *testing.T) {
	for _, n := range []int{6, 10, 20, 50} {
		split := 0
		for seed := range uint64(1000) {
			r := rand.New(rand.NewPCG(seed, 2))
			v := make([]float64, n)
			for i := range v {
				// Lognormal with a heavy right tail, as benchmark times are.
				v[i] = math.Exp(0.05 * r.NormFloat64())
				if r.IntN(10) == 0 {
					v[i] *= 1 + 0.15*r.ExpFloat64()
				}
			}
			rs := Regimes(v, 0)
			require.NotEmpty(t, rs)
			if len(rs) > 1 {
				split++
			}
		}
		assert.LessOrEqual(t, split, 10, "n=%d: %d of 1000 unimodal samples split", n, split)
	}
}

func TestRegimesThree(t *testing.T) {
	v := []float64{1, 1.01, 1.02, 2, 2.01, 2.02, 3, 3.01, 3.02, 3.03}
	rs := Regimes(v, 3)
	require.Len(t, rs, 3)
	assert.Equal(t, []int{3, 3, 4}, []int{rs[0].N, rs[1].N, rs[2].N})
	assert.InDelta(t, 3.015, rs[2].Center, 1e-12)
	assert.Equal(t, []float64{1, 1.01, 1.02, 2, 2.01, 2.02, 3, 3.01, 3.02, 3.03}, v)
}

func TestRegimesSmallAndEmpty(t *testing.T) {
	assert.Nil(t, Regimes(nil, 0))
	rs := Regimes([]float64{1, 1, 5, 5, 5}, 0)
	require.Len(t, rs, 1, "fewer than 6 values are never split")
	assert.Equal(t, 5, rs[0].N)
	rs = Regimes([]float64{4, 4, 4, 4, 4, 4}, 0)
	require.Len(t, rs, 1, "equal values are one regime")
	assert.Equal(t, 4.0, rs[0].Center)
}
