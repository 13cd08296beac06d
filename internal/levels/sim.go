package levels

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Truth is a three-level noise model to simulate: the true components, as
// standard deviations of ln(p50), and the spread of single steps.
type Truth struct {
	// StepSigma is the lognormal σ of one step within a block.
	StepSigma float64
	// BetweenSigma is the σ of a block's own level.
	BetweenSigma float64
	// RoundSigma is the σ of a round's weather, shared by its blocks.
	RoundSigma float64
}

// Components returns t's true components for blocks of n steps.
func (t Truth) Components(n int) Components {
	return Components{
		Within:  math.Pi / 2 * t.StepSigma * t.StepSigma / float64(n),
		Steps:   float64(n),
		Between: t.BetweenSigma * t.BetweenSigma,
		Rounds:  t.RoundSigma * t.RoundSigma,
	}
}

// CalibrationRun simulates the A/A run calibrate makes: rounds rounds of
// blocks blocks of steps steps each, every step drawn, and returns the
// blocks' medians and 90th percentiles as Estimate takes them.
func (t Truth) CalibrationRun(r *rand.Rand, rounds, blocks, steps int) []Block {
	out := make([]Block, 0, rounds*blocks)
	x := make([]float64, steps)
	for i := range rounds {
		w := t.RoundSigma * r.NormFloat64()
		for range blocks {
			b := w + t.BetweenSigma*r.NormFloat64()
			for s := range x {
				x[s] = math.Exp(b + t.StepSigma*r.NormFloat64())
			}
			slices.Sort(x)
			out = append(out, Block{Round: i, P50: x[steps/2], P90: x[steps*9/10], Steps: steps})
		}
	}
	return out
}

// SimulatedMDE returns the median, over trials simulated comparisons of
// plan p, of the MDE each would report from its own rounds' spread of
// ln(B/A) (an A/A comparison: B is a second instance of A). Every block's
// median is drawn as the model says: round weather, block level, and the
// median of p.Steps steps (its sampling noise drawn from the median's
// normal approximation). Deterministic in seed.
func (t Truth) SimulatedMDE(p Plan, conf float64, trials int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, uint64(p.Steps)<<32|uint64(p.Blocks)<<16|uint64(p.Rounds)))
	within := math.Sqrt(t.Components(p.Steps).Within)
	block := func() float64 { return t.BetweenSigma*r.NormFloat64() + within*r.NormFloat64() }
	mdes := make([]float64, trials)
	d := make([]float64, p.Rounds)
	for i := range mdes {
		for j := range d {
			w := t.RoundSigma * r.NormFloat64()
			var a, b float64
			for range p.Blocks {
				a += w + block()
				b += w + block()
			}
			d[j] = (b - a) / float64(p.Blocks)
		}
		mdes[i] = MDEAt(sd(d), p.Rounds, conf)
	}
	slices.Sort(mdes)
	return mdes[trials/2]
}

// sd is the sample standard deviation.
func sd(x []float64) float64 {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}

// SimulatedRounds returns the fewest rounds in [minR, maxR] at which plan
// p's steps and blocks give a SimulatedMDE of at most target, and false
// when maxR rounds do not.
func (t Truth) SimulatedRounds(p Plan, target, conf float64, minR, maxR, trials int, seed uint64) (int, bool) {
	at := func(r int) float64 { q := p; q.Rounds = r; return t.SimulatedMDE(q, conf, trials, seed) }
	if at(maxR) > target {
		return 0, false
	}
	lo, hi := minR, maxR
	for lo < hi {
		mid := (lo + hi) / 2
		if at(mid) <= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}
