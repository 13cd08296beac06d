package sim

import (
	"math"
	"math/rand/v2"
)

// Trial is one synthetic interleaved run of one metric: for each round i,
// one block's value of A, B and A' (a second process or instance of A), in
// arbitrary units where A's typical block is 1. Lower is faster.
type Trial struct {
	// A, B and Null have one value per round, all of the same length.
	A, B, Null []float64
	// Contended marks the rounds a contention screen would have flagged;
	// nil when the model has no screen.
	Contended []bool
}

// Rounds returns the number of rounds in t.
func (t Trial) Rounds() int { return len(t.A) }

// Prefix returns t's first n rounds (shared storage).
func (t Trial) Prefix(n int) Trial {
	p := Trial{A: t.A[:n], B: t.B[:n], Null: t.Null[:n]}
	if t.Contended != nil {
		p.Contended = t.Contended[:n]
	}
	return p
}

// Model is a seeded noise model of interleaved blocks on a shared host.
// Generate is deterministic in (seed, trial index, rounds, effect); the
// noise of trial i does not depend on the effect (common random numbers), so
// effects are compared on the same weather.
type Model struct {
	// Name is a short identifier ("lognormal-p50").
	Name string
	// Params states the model and its parameters in one line, for the
	// accuracy document.
	Params string
	// HostLike marks the models whose per-block noise is in the range
	// measured on this host class (1–3% for the median step); the
	// equivalence target applies to them.
	HostLike bool
	// Sigma is the per-block lognormal σ of the noise that does not
	// cancel in B/A (before outliers, bursts and levels).
	Sigma float64
	// gen fills a trial of n rounds; B's true level is A's × (1+effect).
	gen func(r *rand.Rand, n int, effect float64) Trial
}

// Generate returns trial number i of n rounds with B slower than A by the
// fraction effect (0.05 is 5% more time per block).
func (m Model) Generate(seed uint64, i, n int, effect float64) Trial {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	return m.gen(r, n, effect)
}

// Noise levels, calibrated to a shared 2-vCPU host running a ~35 µs
// pure-Go step, 2000 steps per block, 100 µs hybrid gap (DESIGN.md; issue 9):
// the median step's per-block noise is 1–3% (lognormal σ); the mean step's is
// larger and heavy-tailed.
const (
	p50Sigma  = 0.015 // per-block lognormal σ of the median step (host: 1–3%)
	wideSigma = 0.03  // the top of the host's range
	meanSigma = 0.03  // per-block σ of the mean step, before its outliers
)

// Models returns the suite's noise models in report order.
func Models() []Model {
	return []Model{
		{
			Name:     "lognormal-p50",
			Sigma:    p50Sigma,
			Params:   "each block × lnN(0, 1.5%), independent (the median step on a quiet host)",
			HostLike: true,
			gen: func(r *rand.Rand, n int, e float64) Trial {
				return blocks(r, n, e, func(int, int) float64 { return lnN(r, p50Sigma) })
			},
		},
		{
			Name:     "lognormal-wide",
			Sigma:    wideSigma,
			Params:   "each block × lnN(0, 3%) (the top of the host's 1–3% range for the median)",
			HostLike: true,
			gen: func(r *rand.Rand, n int, e float64) Trial {
				return blocks(r, n, e, func(int, int) float64 { return lnN(r, wideSigma) })
			},
		},
		{
			Name:     "weather",
			Sigma:    0.01,
			Params:   "per round one factor lnN(0, 10%) shared by all arms, each block × lnN(0, 1%)",
			HostLike: true,
			gen: func(r *rand.Rand, n int, e float64) Trial {
				w := make([]float64, n)
				for i := range w {
					w[i] = lnN(r, 0.10)
				}
				return blocks(r, n, e, func(round, _ int) float64 { return w[round] * lnN(r, 0.01) })
			},
		},
		{
			Name:     "outliers",
			Sigma:    meanSigma,
			Params:   "each block × lnN(0, 3%); 5% of blocks × U(2, 5) (the mean step: heavy tails)",
			HostLike: true,
			gen: func(r *rand.Rand, n int, e float64) Trial {
				return blocks(r, n, e, func(int, int) float64 {
					x := lnN(r, meanSigma)
					if r.Float64() < 0.05 {
						x *= 2 + 3*r.Float64()
					}
					return x
				})
			},
		},
		{
			Name:  "burst",
			Sigma: p50Sigma,
			Params: "each block × lnN(0, 1.5%); rounds in the second half × U(1.1, 1.4) for all arms " +
				"and each block × lnN(0, 5%) more; the screen marks 60% of those rounds contended",
			HostLike: true,
			gen: func(r *rand.Rand, n int, e float64) Trial {
				c := make([]float64, n)
				cont := make([]bool, n)
				for i := range c {
					c[i] = 1
					if i >= n/2 {
						c[i] = 1.1 + 0.3*r.Float64()
						cont[i] = r.Float64() < 0.6
					}
				}
				t := blocks(r, n, e, func(round, _ int) float64 {
					x := lnN(r, p50Sigma)
					if round >= n/2 {
						x *= c[round] * lnN(r, 0.05)
					}
					return x
				})
				t.Contended = cont
				return t
			},
		},
		{
			Name:     "drift",
			Sigma:    p50Sigma,
			Params:   "each block × lnN(0, 1.5%) × (1 + 15%·t), t from 0 to 1 over the run by block position in the random per-round order",
			HostLike: true,
			gen: func(r *rand.Rand, n int, e float64) Trial {
				return blocks(r, n, e, func(round, pos int) float64 {
					t := (float64(round) + float64(pos)/3) / float64(n)
					return (1 + 0.15*t) * lnN(r, p50Sigma)
				})
			},
		},
		{
			Name:   "bimodal",
			Sigma:  p50Sigma,
			Params: "each block × lnN(0, 1.5%), at one of two levels 1 or 1+g (p = ½ each), g ~ U(5%, 15%) per trial (separate processes)",
			gen: func(r *rand.Rand, n int, e float64) Trial {
				g := 0.05 + 0.10*r.Float64()
				return blocks(r, n, e, func(int, int) float64 {
					x := lnN(r, p50Sigma)
					if r.IntN(2) == 1 {
						x *= 1 + g
					}
					return x
				})
			},
		},
	}
}

// ModelByName returns the model called name.
func ModelByName(name string) (Model, bool) {
	for _, m := range Models() {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// blocks builds a trial: per round, the three arms run in a random order;
// noise(round, pos) is the multiplicative noise of the block at position pos
// (0–2) of that round. B carries the effect.
func blocks(r *rand.Rand, n int, effect float64, noise func(round, pos int) float64) Trial {
	t := Trial{A: make([]float64, n), B: make([]float64, n), Null: make([]float64, n)}
	for i := range n {
		order := r.Perm(3)
		for pos, arm := range order {
			x := noise(i, pos)
			switch arm {
			case 0:
				t.A[i] = x
			case 1:
				t.B[i] = x * (1 + effect)
			case 2:
				t.Null[i] = x
			}
		}
	}
	return t
}

// lnN returns exp(N(0, σ²)).
func lnN(r *rand.Rand, sigma float64) float64 { return math.Exp(sigma * r.NormFloat64()) }
