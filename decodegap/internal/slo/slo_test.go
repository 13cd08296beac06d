package slo

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/tail"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queue simulates a single server with service time s (seconds, from draws
// that are the same at every rate: common random numbers) and Poisson
// arrivals at rate, by Lindley's recursion, and returns the ascending
// response times (queueing plus service). Response times grow with the rate
// for the same draws, so pass/fail is monotone in the rate.
type queue struct {
	gaps, service []float64
}

func newQueue(n int, seed uint64) *queue {
	r := rand.New(rand.NewPCG(seed, 1))
	q := &queue{gaps: make([]float64, n), service: make([]float64, n)}
	for i := range n {
		q.gaps[i] = r.ExpFloat64()
		q.service[i] = 1e-3 * (0.8 + 0.4*r.Float64()) // 0.8-1.2 ms: capacity ~1000/s
	}
	return q
}

func (q *queue) responses(rate float64) []float64 {
	out := make([]float64, len(q.gaps))
	wait := 0.0
	for i := range q.gaps {
		if i > 0 {
			wait = math.Max(0, wait+q.service[i-1]-q.gaps[i]/rate)
		}
		out[i] = wait + q.service[i]
	}
	sort.Float64s(out)
	return out
}

func TestSearchFindsTheRateOfAKnownQueue(t *testing.T) {
	q := newQueue(20000, 3)
	obj := tail.Objective{Q: 0.99, Limit: 5e-3, Confidence: 0.95}
	// The truth: the rate where the sample's own p99 crosses the limit,
	// bisected finely on the same draws.
	p99 := func(rate float64) float64 { r := q.responses(rate); return r[int(math.Ceil(0.99*float64(len(r))))-1] }
	lo, hi := 100.0, 1000.0
	for hi/lo > 1.0001 {
		if m := math.Sqrt(lo * hi); p99(m) <= obj.Limit {
			lo = m
		} else {
			hi = m
		}
	}
	truth := lo
	res, err := Search{Start: 50}.Run(func(rate float64) (tail.Judgement, error) {
		return obj.Judge(q.responses(rate)), nil
	})
	require.NoError(t, err)
	assert.InEpsilon(t, truth, res.Rate, 0.05, "found %.1f/s, truth %.1f/s", res.Rate, truth)
	assert.LessOrEqual(t, res.Rate, truth*1.001, "a bound-based pass never exceeds the point-estimate boundary by much")
	assert.LessOrEqual(t, res.Ceiling/res.Rate, 1.02+1e-9)
	assert.False(t, res.Exhausted)
	assert.NotEmpty(t, res.Steps)
	// Every probe is kept, in order, with its judgement.
	for _, s := range res.Steps {
		assert.Equal(t, len(q.gaps), s.Judgement.N)
	}
}

func TestSearchBracketsDownward(t *testing.T) {
	res, err := Search{Start: 1000}.Run(func(rate float64) (tail.Judgement, error) {
		if rate <= 37 {
			return tail.Judgement{Verdict: tail.Pass}, nil
		}
		return tail.Judgement{Verdict: tail.Fail}, nil
	})
	require.NoError(t, err)
	assert.LessOrEqual(t, res.Rate, 37.0)
	assert.Greater(t, res.Rate, 37/1.02)
}

func TestSearchCapAndUndecided(t *testing.T) {
	res, err := Search{Start: 10, Max: 100}.Run(func(float64) (tail.Judgement, error) {
		return tail.Judgement{Verdict: tail.Pass}, nil
	})
	require.NoError(t, err)
	assert.True(t, res.Capped)
	assert.Equal(t, 100.0, res.Rate)

	res, err = Search{Start: 10, MaxProbes: 5}.Run(func(rate float64) (tail.Judgement, error) {
		return tail.Judgement{Verdict: tail.Undecided}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 0.0, res.Rate, "undecided never counts as a pass")
	assert.True(t, res.Exhausted)
	assert.Equal(t, 5, res.Undecided)
}

func TestSearchErrors(t *testing.T) {
	_, err := Search{}.Run(nil)
	assert.ErrorContains(t, err, "Search.Start")
	_, err = Search{Start: 10, Max: 5}.Run(nil)
	assert.ErrorContains(t, err, "Search.Max")
	boom := errors.New("boom")
	_, err = Search{Start: 10}.Run(func(float64) (tail.Judgement, error) { return tail.Judgement{}, boom })
	assert.ErrorIs(t, err, boom)
}

// TestSearchStopsWithAReason: a probe that returns a *Stop ends the search
// at once, without an error, with the reason and the rate (a service time
// that alone misses the objective would otherwise halve the rate, and
// double the probe's length, until MaxProbes ran out).
func TestSearchStopsWithAReason(t *testing.T) {
	probes := 0
	res, err := Search{Start: 1000}.Run(func(rate float64) (tail.Judgement, error) {
		probes++
		return tail.Judgement{}, &Stop{Reason: ServiceMisses, Judgement: tail.Judgement{Verdict: tail.Fail, N: 7}}
	})
	require.NoError(t, err)
	assert.Equal(t, 1, probes)
	assert.Equal(t, ServiceMisses, res.Stopped)
	assert.Equal(t, 1000.0, res.StopRate)
	require.Len(t, res.Steps, 1)
	assert.Equal(t, 7, res.Steps[0].Judgement.N)
	assert.Zero(t, res.Rate)

	res, err = Search{Start: 1000}.Run(func(rate float64) (tail.Judgement, error) {
		if rate < 300 {
			return tail.Judgement{}, &Stop{Reason: ProbeTooLong}
		}
		return tail.Judgement{Verdict: tail.Fail}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, ProbeTooLong, res.Stopped)
	assert.Equal(t, 250.0, res.StopRate)
	assert.Len(t, res.Steps, 2, "the probe that would run too long is not a step")
}
