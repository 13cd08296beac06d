// Package levels estimates where a benchmark's noise sits (within a block,
// between blocks of one arm in a round, between rounds) and chooses the
// plan (steps per block × blocks per round × rounds) that reaches a given
// minimal detectable effect in the least time, in the spirit of Kalibera &
// Jones, "Rigorous benchmarking in reasonable time" (ISMM 2013): estimate
// the variance at each level of the experiment, then spend repetitions
// where they pay for their cost.
//
// The statistic is the natural logarithm of a block's median step, so every
// variance is of ln(p50), a relative scale (σ² of 0.01 is about ±10%). The
// model, for block j of round r:
//
//	ln p50[r][j] = μ + R[r] + B[r][j] + W[r][j]
//
// R ~ (0, Rounds) is shared by every block of round r, the weather; B ~
// (0, Between) is the block's own level (its session, process and
// placement); W ~ (0, w/n) is the sampling noise of the median of the
// block's n steps, w = Within × n. In a comparison, the ratio of two arms
// measured in the same round cancels R; it keeps B and W of both arms.
//
// Numbers only: the package returns fields; cmd/decodegap writes the words.
package levels

import (
	"errors"
	"fmt"
	"math"
)

// Block is one block of an A/A run: the same configuration measured again
// and again, several blocks per round.
type Block struct {
	// Round is the block's round; blocks of one round share its weather.
	Round int
	// P50 and P90 are the block's median and 90th-percentile step, in any
	// one unit, P90 ≥ P50 > 0.
	P50, P90 float64
	// Steps is the number of steps the percentiles came from, ≥ 2.
	Steps int
}

// withinVar returns the sampling variance of ln(P50) of one block: the
// variance of the median of Steps lognormal steps, σ = ln(P90/P50)/z₀.₉,
// var ≈ (π/2)·σ²/n (the median's asymptotic variance for a normal law,
// on the log scale).
func (b Block) withinVar() float64 {
	s := math.Log(b.P90/b.P50) / z90
	return math.Pi / 2 * s * s / float64(b.Steps)
}

// z90 is the standard normal's 90th percentile.
const z90 = 1.2815515655446004

// Components are the variances of ln(p50) at each level, with what they
// were estimated from.
type Components struct {
	// Within is the median's sampling variance within a block of Steps
	// steps (it scales as 1/steps: WithinAt).
	Within float64
	// Steps is the mean number of steps per block that Within is for.
	Steps float64
	// Between is the variance between blocks of one configuration in one
	// round, beyond Within: sessions, processes, placement.
	Between float64
	// Rounds is the variance between rounds shared by a round's blocks:
	// the weather.
	Rounds float64
	// Blocks and NRounds count what the estimate used: blocks in rounds
	// with at least two blocks, and such rounds.
	Blocks, NRounds int
	// BetweenDF and RoundsDF are the degrees of freedom Between and Rounds
	// were estimated from: Blocks − NRounds, and NRounds − 1.
	BetweenDF, RoundsDF int
	// BetweenZero and RoundsZero say whether Between and Rounds read 0,
	// and whether that 0 is an estimate or a part the data could not
	// estimate (ZeroFromFew).
	BetweenZero, RoundsZero Zero
}

// Zero says why a part of Components reads 0, or that it does not.
type Zero int

const (
	// NotZero is a part estimated above 0.
	NotZero Zero = iota
	// ZeroFromFew is a part whose moment estimate fell to 0 or below (it
	// reads 0) from fewer than MinZeroDF degrees of freedom: a part as
	// large as the within-block one reads 0 that often (more than one run
	// in ten at 8 degrees of freedom), so the data cannot tell it from
	// none. The part is not estimable, and no MDE should be built on it.
	ZeroFromFew
	// ZeroEstimated is a part that fell to 0 or below from MinZeroDF or
	// more degrees of freedom: it is small beside the others, and 0 is
	// its estimate.
	ZeroEstimated
)

// String returns "not zero", "zero from too few" or "zero estimated".
func (z Zero) String() string {
	switch z {
	case NotZero:
		return "not zero"
	case ZeroFromFew:
		return "zero from too few"
	case ZeroEstimated:
		return "zero estimated"
	}
	return fmt.Sprintf("Zero(%d)", int(z))
}

// MinZeroDF is the fewest degrees of freedom from which a part read as 0
// is taken as an estimate: at 20, a Between as large as Within reads 0
// in about 3% of calibrations (P(χ²₂₀/20 < ½)), at 8 (4 rounds of three
// blocks) in about 14% (TestZeroFromFewRoundsIsCommon).
const MinZeroDF = 20

// zeroOf classifies a moment estimate est from df degrees of freedom.
func zeroOf(est float64, df int) Zero {
	switch {
	case est > 0:
		return NotZero
	case df < MinZeroDF:
		return ZeroFromFew
	}
	return ZeroEstimated
}

// Estimable reports whether the parts an MDE is built on (Within and
// Between; Rounds cancels in a ratio of one round's arms) were estimated:
// false when Between is ZeroFromFew.
func (c Components) Estimable() bool { return c.BetweenZero != ZeroFromFew }

// RoundsForBetween returns the fewest rounds, at the estimate's blocks
// per round (Blocks / NRounds, at least 2), that give Between MinZeroDF
// degrees of freedom.
func (c Components) RoundsForBetween() int {
	m := 2.0
	if c.NRounds > 0 {
		m = max(m, float64(c.Blocks)/float64(c.NRounds))
	}
	return int(math.Ceil(MinZeroDF / (m - 1)))
}

// WithinAt returns the within-block variance for blocks of n steps.
func (c Components) WithinAt(n int) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	return c.Within * c.Steps / float64(n)
}

// Shares returns the fraction of one block's total variance (Within +
// Between + Rounds) at each level; NaN when the total is 0.
func (c Components) Shares() (within, between, rounds float64) {
	t := c.Within + c.Between + c.Rounds
	return c.Within / t, c.Between / t, c.Rounds / t
}

// ErrTooFew is returned by Estimate when fewer than two rounds have two or
// more blocks each.
var ErrTooFew = errors.New("levels: need at least two rounds with two or more blocks each")

// Estimate returns the variance components of blocks by the method of
// moments of a nested one-way design (each round a group of blocks): the
// pooled variance inside rounds, less the mean within-block variance, is
// Between; the variance of round means, less what Between and Within
// contribute to a mean of m blocks, is Rounds. A component the data put
// below zero is 0, marked ZeroFromFew or ZeroEstimated by its degrees of
// freedom (MinZeroDF). Rounds with a single block are left out.
func Estimate(blocks []Block) (Components, error) {
	byRound := map[int][]Block{}
	var order []int
	for i, b := range blocks {
		if !(b.P50 > 0) || !(b.P90 >= b.P50) || math.IsInf(b.P90, 0) || b.Steps < 2 {
			return Components{}, fmt.Errorf("levels: blocks[%d] = %+v: want 0 < P50 ≤ P90 < ∞ and Steps ≥ 2", i, b)
		}
		if _, ok := byRound[b.Round]; !ok {
			order = append(order, b.Round)
		}
		byRound[b.Round] = append(byRound[b.Round], b)
	}
	var c Components
	var ss, df, wsum, nsum, msum float64
	var means []float64
	for _, r := range order {
		bs := byRound[r]
		if len(bs) < 2 {
			continue
		}
		var m float64
		for _, b := range bs {
			m += math.Log(b.P50)
		}
		m /= float64(len(bs))
		for _, b := range bs {
			d := math.Log(b.P50) - m
			ss += d * d
			wsum += b.withinVar()
			nsum += float64(b.Steps)
		}
		df += float64(len(bs) - 1)
		msum += float64(len(bs))
		means = append(means, m)
		c.Blocks += len(bs)
		c.NRounds++
	}
	if c.NRounds < 2 {
		return Components{}, ErrTooFew
	}
	inRound := ss / df
	c.Within = wsum / float64(c.Blocks)
	c.Steps = nsum / float64(c.Blocks)
	c.BetweenDF, c.RoundsDF = c.Blocks-c.NRounds, c.NRounds-1
	c.Between = max(0, inRound-c.Within)
	c.BetweenZero = zeroOf(inRound-c.Within, c.BetweenDF)
	var mm float64
	for _, m := range means {
		mm += m
	}
	mm /= float64(len(means))
	var vm float64
	for _, m := range means {
		vm += (m - mm) * (m - mm)
	}
	vm /= float64(len(means) - 1)
	perRound := msum / float64(c.NRounds)
	c.Rounds = max(0, vm-inRound/perRound)
	c.RoundsZero = zeroOf(vm-inRound/perRound, c.RoundsDF)
	return c, nil
}
