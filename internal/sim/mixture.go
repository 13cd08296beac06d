package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/gapbench/gapbench/nullband"
)

// MixtureMetrics names the rows of one arm that the mixture suite judges
// together, in the order mixtureTrial generates them: the mean step, the
// median step and a tail (the 90th percentile step).
var MixtureMetrics = []string{"sec/op", "p50-sec/op", "p90-sec/op"}

// MixtureWeights are the weights of those rows under weighted Holm, as
// internal/judge gives them (a median step weighs 2).
var MixtureWeights = []float64{1, 2, 1}

// MixtureParams states the mixture model in one line, for the accuracy
// document.
const MixtureParams = "per block one factor lnN(0, 1.5%) shared by the block's three rows; the mean step × lnN(0, 2%) more and, in 5% of blocks, × U(1.5, 3); the median × lnN(0, 1%); the tail (p90) × lnN(0, 3%). In a share p of the rounds (drawn per round) B's block is slow: all three rows × (1 + e). Adversary: the screen marks 80% of B's slow rounds and 10% of the others (Samples.Contended), so the marks follow the effect"

// MixtureCell is one cell of the mixture suite: B slow by Effect in a
// share Share of the rounds, with or without the adversary's marks.
type MixtureCell struct {
	Effect, Share float64
	// Marked: the screen's marks follow B's slow rounds (the adversary).
	Marked bool
}

// MixtureCells are the suite's cells: B worse by 5, 10 and 20% in 20, 35
// and 50% of rounds, marked; and the clean A/A (effect 0), marked at 10%.
func MixtureCells() []MixtureCell {
	cells := []MixtureCell{{Effect: 0, Share: 0, Marked: true}}
	for _, e := range []float64{0.05, 0.10, 0.20} {
		for _, p := range []float64{0.20, 0.35, 0.50} {
			cells = append(cells, MixtureCell{Effect: e, Share: p, Marked: true})
		}
	}
	return cells
}

// mixtureTrial generates one arm's three rows over n rounds (per round A,
// B and A' in a random order), B slow in a share of the rounds.
// Deterministic in (seed, i, n, cell); the noise does not depend on the
// effect.
func mixtureTrial(seed uint64, i, n int, c MixtureCell) [3]nullband.Samples {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	var t [3]nullband.Samples
	for m := range t {
		t[m] = nullband.Samples{Base: make([]float64, n), Candidate: make([]float64, n), Null: make([]float64, n)}
	}
	marks := make([]bool, n)
	for round := range n {
		slow := r.Float64() < c.Share
		mark := r.Float64()
		marks[round] = c.Marked && ((slow && mark < 0.8) || (!slow && mark < 0.1))
		for _, arm := range r.Perm(3) {
			shared := lnN(r, 0.015)
			mean := shared * lnN(r, 0.02)
			if r.Float64() < 0.05 {
				mean *= 1.5 + 1.5*r.Float64()
			}
			v := [3]float64{mean, shared * lnN(r, 0.01), shared * lnN(r, 0.03)}
			for m := range t {
				switch arm {
				case 0:
					t[m].Base[round] = v[m]
				case 1:
					if slow {
						v[m] *= 1 + c.Effect
					}
					t[m].Candidate[round] = v[m]
				case 2:
					t[m].Null[round] = v[m]
				}
			}
		}
	}
	for m := range t {
		t[m].Contended = marks
	}
	return t
}

// MixtureCounts tallies the mixture suite's calls of one cell over its
// trials, the arm's rows judged as one weighted-Holm family in sequential
// mode (Options.MaxRounds the rounds), as Compare judges them.
type MixtureCounts struct {
	Trials int
	// Slower and Equivalent count, per row (MixtureMetrics), the trials
	// in which it was called slower or equivalent; Faster the trials in
	// which any row was called faster.
	Slower, Equivalent [3]int
	Faster             int
	// AnySlower counts the trials in which the mean or the tail row
	// (or the median) was called slower: the regression caught.
	AnySlower int
	// ArmEquivalent counts the trials in which the median row was called
	// equivalent and no row slower or faster: the arm certified.
	ArmEquivalent int
	// P50Equivalent counts the trials in which the median row was called
	// equivalent, whatever the other rows said.
	P50Equivalent int
	// Quarantined is the total of rounds set aside over the trials' median
	// rows, and Rounds the total of their rounds judged.
	Quarantined, Rounds int
}

// Mixture judges trials trials of cell c with up to rounds rounds.
func Mixture(seed uint64, trials, rounds int, c MixtureCell) MixtureCounts {
	return inParallel(trials, func(i int) MixtureCounts {
		return judgeMixtureTrial(mixtureTrial(seed, i, rounds, c), rounds)
	}, (*MixtureCounts).add)
}

func (c *MixtureCounts) add(o MixtureCounts) {
	c.Trials += o.Trials
	c.Faster += o.Faster
	c.AnySlower += o.AnySlower
	c.ArmEquivalent += o.ArmEquivalent
	c.P50Equivalent += o.P50Equivalent
	c.Quarantined += o.Quarantined
	c.Rounds += o.Rounds
	for m := range 3 {
		c.Slower[m] += o.Slower[m]
		c.Equivalent[m] += o.Equivalent[m]
	}
}

// judgeMixtureTrial judges one trial's rows as one family and counts it.
func judgeMixtureTrial(t [3]nullband.Samples, rounds int) MixtureCounts {
	c := MixtureCounts{Trials: 1}
	f, err := nullband.JudgeWeighted(t[:], MixtureWeights, nullband.Options{MaxRounds: rounds})
	if err != nil {
		panic(fmt.Sprintf("sim: nullband.JudgeWeighted refused a mixture trial: %v", err))
	}
	slower, faster := false, false
	for m, v := range f.Verdicts {
		switch v.Outcome {
		case nullband.Slower:
			c.Slower[m]++
			slower = true
		case nullband.Faster:
			faster = true
		case nullband.Equivalent:
			c.Equivalent[m]++
		}
	}
	if slower {
		c.AnySlower++
	}
	if faster {
		c.Faster++
	}
	if f.Verdicts[1].Outcome == nullband.Equivalent {
		c.P50Equivalent++
		if !slower && !faster {
			c.ArmEquivalent++
		}
	}
	c.Quarantined, c.Rounds = f.Verdicts[1].Quarantined, len(f.Verdicts[1].Rounds)
	return c
}
