package edivisive

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bruteQ computes Q̂ of the split at tau from the definition.
func bruteQ(x []float64, tau int) float64 {
	X, Y := x[:tau], x[tau:]
	m, n := float64(len(X)), float64(len(Y))
	var c, a, b float64
	for _, u := range X {
		for _, v := range Y {
			c += math.Abs(u - v)
		}
	}
	for i := range X {
		for j := i + 1; j < len(X); j++ {
			a += math.Abs(X[i] - X[j])
		}
	}
	for i := range Y {
		for j := i + 1; j < len(Y); j++ {
			b += math.Abs(Y[i] - Y[j])
		}
	}
	e := 2*c/(m*n) - a/(m*(m-1)/2) - b/(n*(n-1)/2)
	return m * n / (m + n) * e
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		x := make([]float64, 5+rng.IntN(30))
		for i := range x {
			x[i] = rng.NormFloat64()
			if i > len(x)/2 {
				x[i] += float64(trial%3) * 0.5
			}
		}
		for _, minSize := range []int{2, 3} {
			got := bestSplit(x, minSize)
			wantTau, wantQ := -1, math.Inf(-1)
			for tau := minSize; tau <= len(x)-minSize; tau++ {
				if q := bruteQ(x, tau); q > wantQ {
					wantTau, wantQ = tau, q
				}
			}
			require.Equal(t, wantTau, got.tau, "trial %d minSize %d", trial, minSize)
			assert.InDelta(t, wantQ, got.q, 1e-9*math.Max(1, math.Abs(wantQ)))
		}
	}
}

func series(rng *rand.Rand, n int, shifts map[int]float64, sd float64) []float64 {
	x := make([]float64, n)
	level := 1.0
	for i := range x {
		if s, ok := shifts[i]; ok {
			level *= 1 + s
		}
		x[i] = level * (1 + sd*rng.NormFloat64())
	}
	return x
}

func TestDetectFindsPlantedSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := series(rng, 120, map[int]float64{40: 0.10, 85: -0.08}, 0.02)
	cps, err := Detect(x, Options{Seed: 1})
	require.NoError(t, err)
	require.Len(t, cps, 2)
	assert.InDelta(t, 40, cps[0].Index, 1)
	assert.InDelta(t, 85, cps[1].Index, 1)
	for _, c := range cps {
		assert.LessOrEqual(t, c.P, 0.05)
		assert.Greater(t, c.Q, 0.0)
	}
}

func TestDetectQuietSeriesFindsNone(t *testing.T) {
	// Over 40 series without a change, the permutation test at 0.05
	// accepts a first split in about 5%: allow up to 5 of 40.
	rng := rand.New(rand.NewPCG(5, 6))
	falseCPs := 0
	for i := 0; i < 40; i++ {
		cps, err := Detect(series(rng, 100, nil, 0.03), Options{Seed: uint64(i)})
		require.NoError(t, err)
		falseCPs += len(cps)
	}
	assert.LessOrEqual(t, falseCPs, 5)
}

func TestDetectDeterministicAndValidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := series(rng, 80, map[int]float64{30: 0.05}, 0.02)
	a, err := Detect(x, Options{Seed: 9})
	require.NoError(t, err)
	b, err := Detect(x, Options{Seed: 9})
	require.NoError(t, err)
	assert.Equal(t, a, b)

	_, err = Detect([]float64{1, math.NaN(), 2, 3}, Options{})
	assert.ErrorContains(t, err, "NaN")
	cps, err := Detect([]float64{1, 2, 3}, Options{})
	require.NoError(t, err)
	assert.Empty(t, cps)
	_, err = Detect(x, Options{PValue: 2})
	assert.Error(t, err)
}

// A done context stops the permutation test: its error, no change points.
func TestDetectContextStops(t *testing.T) {
	x := make([]float64, 60)
	for i := range x {
		x[i] = float64(i / 30)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cps, err := DetectContext(ctx, x, Options{Permutations: 1000})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, cps)
	cps, err = DetectContext(context.Background(), x, Options{})
	require.NoError(t, err)
	require.Len(t, cps, 1)
	assert.Equal(t, 30, cps[0].Index)
}
