package sim

import (
	"hash/fnv"
	"math"
	"runtime"
	"sync"
)

// Counts tallies the calls of one method over the trials of one case.
type Counts struct {
	// Trials is the number of trials judged.
	Trials int
	// Calls counts each Call, indexed by Call.
	Calls [4]int
	// RoundsSum is the total number of rounds used over all trials (the
	// trial's rounds in fixed mode; the rounds up to the stop in
	// sequential mode).
	RoundsSum int
	// PerTrial is the call of each trial, by trial index, so that two
	// methods can be compared trial by trial (Discordant).
	PerTrial []Call
}

// Rate returns the share of trials that got call c.
func (c Counts) Rate(call Call) float64 {
	if c.Trials == 0 {
		return math.NaN()
	}
	return float64(c.Calls[call]) / float64(c.Trials)
}

// Decisive returns the share of trials called faster or slower: the
// false-positive rate when the true effect is 0.
func (c Counts) Decisive() float64 { return c.Rate(Faster) + c.Rate(Slower) }

// MeanRounds returns the mean rounds used per trial.
func (c Counts) MeanRounds() float64 {
	if c.Trials == 0 {
		return math.NaN()
	}
	return float64(c.RoundsSum) / float64(c.Trials)
}

func (c *Counts) add(o Counts) {
	c.Trials += o.Trials
	for i := range c.Calls {
		c.Calls[i] += o.Calls[i]
	}
	c.RoundsSum += o.RoundsSum
}

// Case is one cell of the suite: a model, a true effect on B, the rounds
// per trial and the number of trials.
type Case struct {
	Model  Model
	Effect float64
	Rounds int
	Trials int
	// Seed is the suite's base seed; the trials' seed also depends on the
	// model and the rounds, not on the effect or the method, so every
	// method judges the same data and effects share their noise.
	Seed uint64
}

func (c Case) seed() uint64 {
	h := fnv.New64a()
	h.Write([]byte(c.Model.Name))
	return c.Seed ^ h.Sum64() ^ uint64(c.Rounds)*0x9e3779b97f4a7c15
}

// Fixed judges c's trials with m.Fixed, all rounds at once.
func Fixed(c Case, m Method) Counts {
	return parallel(c.Trials, func(i int) (Call, int) {
		t := c.Model.Generate(c.seed(), i, c.Rounds, c.Effect)
		return m.Fixed(t), c.Rounds
	})
}

// Sequential judges c's trials with m.Sequential, c.Rounds being the
// maximum rounds. It panics when m has no sequential mode.
func Sequential(c Case, m Method) Counts {
	return parallel(c.Trials, func(i int) (Call, int) {
		t := c.Model.Generate(c.seed(), i, c.Rounds, c.Effect)
		return m.Sequential(t, c.Rounds)
	})
}

// parallel runs judge for trials 0..n-1 over GOMAXPROCS workers and sums the
// counts; the result does not depend on the scheduling.
func parallel(n int, judge func(i int) (Call, int)) Counts {
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	parts := make([]Counts, workers)
	per := make([]Call, n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				call, used := judge(i)
				per[i] = call
				parts[w].Trials++
				parts[w].Calls[call]++
				parts[w].RoundsSum += used
			}
		}()
	}
	wg.Wait()
	var total Counts
	for _, p := range parts {
		total.add(p)
	}
	total.PerTrial = per
	return total
}

// Discordant counts the trials, judged by two methods, in which only a and
// only b made call want. The trials must be the same (same Case).
func Discordant(a, b Counts, want Call) (onlyA, onlyB int) {
	for i := range min(len(a.PerTrial), len(b.PerTrial)) {
		ra, rb := a.PerTrial[i] == want, b.PerTrial[i] == want
		switch {
		case ra && !rb:
			onlyA++
		case rb && !ra:
			onlyB++
		}
	}
	return onlyA, onlyB
}

// FamilyZ returns the normal quantile for k one-sided checks made at once
// at 2.5% in all (Bonferroni): with many cells, a true rate exactly at its
// target would otherwise miss one of them by chance.
func FamilyZ(k int) float64 {
	return math.Sqrt2 * math.Erfinv(1-2*0.025/float64(max(k, 1)))
}

// MarginZ is Margin at normal quantile z instead of 1.96.
func MarginZ(p float64, n int, z float64) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	return z * math.Sqrt(p*(1-p)/float64(n))
}

// Shortfall reports whether method a's right calls fall short of b's on the
// same trials beyond chance: onlyB − onlyA > z·√(onlyA + onlyB), a McNemar
// test on the discordant trials.
func Shortfall(onlyA, onlyB int, z float64) bool {
	return float64(onlyB-onlyA) > z*math.Sqrt(float64(onlyA+onlyB))
}

// EquivalenceBound is the best share of trials any test of n rounds can call
// equivalent within ±delta when the round's contrast (ln(B/A) for two arms,
// ln B − ½(ln A + ln A') for three: √2 or √1.5 times the per-block σ of
// normal blocks) is normal with standard deviation sigma and no true
// difference: a TOST at level alpha with sigma known calls equivalent when
// |mean| < ln(1+delta) − z₁₋α·σ/√n.
func EquivalenceBound(sigma float64, n int, delta, alpha float64) float64 {
	se := sigma / math.Sqrt(float64(n))
	w := math.Log1p(delta) - math.Sqrt2*math.Erfinv(1-2*alpha)*se
	if w <= 0 {
		return 0
	}
	return math.Erf(w / se / math.Sqrt2)
}

// Margin returns the half-width of the normal-approximation 95% interval of
// a binomial rate p estimated from n trials: 1.96·√(p(1−p)/n). A test that
// a true rate is at most (at least) p allows an observed rate up to p + Margin
// (down to p − Margin); a true rate of exactly p then fails it in about 2.5%
// of seeds.
func Margin(p float64, n int) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	return 1.96 * math.Sqrt(p*(1-p)/float64(n))
}

// Target returns the call that is right for a true effect: Slower for an
// effect > 0 (B does more work), Faster for < 0, Equivalent for 0.
func Target(effect float64) Call {
	switch {
	case effect > 0:
		return Slower
	case effect < 0:
		return Faster
	}
	return Equivalent
}

// Wrong returns the share of trials given a call that is wrong for the true
// effect: faster or slower at 0, the opposite direction otherwise.
func Wrong(c Counts, effect float64) float64 {
	switch {
	case effect > 0:
		return c.Rate(Faster)
	case effect < 0:
		return c.Rate(Slower)
	}
	return c.Decisive()
}

// Savings compares a sequential run with fixed-N runs of the same model and
// effect.
type Savings struct {
	// Seq is the sequential run's counts (MaxRounds = its case's Rounds).
	Seq Counts
	// Grid is the fixed round counts tried, up to the first that matched,
	// and Fixed their counts.
	Grid  []int
	Fixed []Counts
	// FixedN is the fixed number of rounds needed for the sequential run's
	// rate of the right call (Target), linearly interpolated between the
	// grid's points; +Inf when the grid's largest N falls short.
	FixedN float64
	// Fewer is 1 − Seq.MeanRounds()/FixedN: the share of rounds saved.
	Fewer float64
}

// CompareSequential runs c sequentially with m (c.Rounds as MaxRounds) and
// fixed with m.Fixed at each N of grid (increasing) until one matches the
// sequential run's rate of the right call. An N whose wrong-call rate is
// above both the sequential run's and the nominal 5% by more than the
// binomial margin does not match: the error rates must be equal.
func CompareSequential(c Case, m Method, grid []int) Savings {
	s := Savings{Seq: Sequential(c, m), FixedN: math.Inf(1)}
	goal := s.Seq.Rate(Target(c.Effect))
	wrongSeq := Wrong(s.Seq, c.Effect)
	prevN, prevRate := 0.0, 0.0
	for _, n := range grid {
		fc := c
		fc.Rounds = n
		counts := Fixed(fc, m)
		s.Grid = append(s.Grid, n)
		s.Fixed = append(s.Fixed, counts)
		rate := counts.Rate(Target(c.Effect))
		if rate >= goal && Wrong(counts, c.Effect) <= math.Max(wrongSeq, 0.05)+Margin(math.Max(wrongSeq, 0.05), c.Trials) {
			s.FixedN = float64(n)
			if prevN > 0 && rate > prevRate && goal > prevRate {
				s.FixedN = prevN + (float64(n)-prevN)*(goal-prevRate)/(rate-prevRate)
			}
			break
		}
		prevN, prevRate = float64(n), rate
	}
	s.Fewer = 1 - s.Seq.MeanRounds()/s.FixedN
	return s
}
