package sim

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gapbench/gapbench/nullband"
)

// FamilyMetrics names the metrics of one arm that Compare judges together,
// in the order Family generates them.
var FamilyMetrics = []string{"ns/op", "p50-ns/op", "cpu/wall"}

// FamilyParams states the family model in one line, for the accuracy
// document.
const FamilyParams = "per block, one factor lnN(0, 1.5%) shared by the block's three metrics; on top, the mean step (ns/op) × lnN(0, 2%) and, in 5% of blocks, × U(1.5, 3); the median step (p50-ns/op) × lnN(0, 1%); CPU per wall second × lnN(0, 2%). B's effect is on both step times; its cpu/wall is A's"

// familyTrial generates one arm's three metrics over n interleaved rounds
// (per round A, B and A' in a random order), B's step times slower by the
// fraction effect. Deterministic in (seed, i, n, effect); the noise does not
// depend on the effect.
func familyTrial(seed uint64, i, n int, effect float64) [3]Trial {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	var t [3]Trial
	for m := range t {
		t[m] = Trial{A: make([]float64, n), B: make([]float64, n), Null: make([]float64, n)}
	}
	for round := range n {
		for _, arm := range r.Perm(3) {
			shared := lnN(r, 0.015)
			mean := shared * lnN(r, 0.02)
			if r.Float64() < 0.05 {
				mean *= 1.5 + 1.5*r.Float64()
			}
			v := [3]float64{mean, shared * lnN(r, 0.01), shared * lnN(r, 0.02)}
			for m := range t {
				switch arm {
				case 0:
					t[m].A[round] = v[m]
				case 1:
					e := effect
					if m == 2 {
						e = 0
					}
					t[m].B[round] = v[m] * (1 + e)
				case 2:
					t[m].Null[round] = v[m]
				}
			}
		}
	}
	return t
}

// FamilyWeights are the weights of the weighted Holm procedure the family
// suite checks (nullband.JudgeWeighted), by FamilyMetrics: the median step
// weighs twice the others.
var FamilyWeights = []float64{1, 2, 1}

// FamilyCounts counts, over trials of one arm's three metrics, the calls
// made with each metric judged alone (nullband.Judge at 95%), with the
// three judged as one family (nullband.JudgeFamily, Holm at 5%), and as a
// weighted family (nullband.JudgeWeighted with FamilyWeights).
type FamilyCounts struct {
	Trials int
	// AnyAlone, AnyHolm and AnyWeighted count the trials in which some
	// metric whose B equals A (all three when the effect is 0, cpu/wall
	// otherwise) was called faster or slower.
	AnyAlone, AnyHolm, AnyWeighted int
	// Slower* count, per metric, the trials called slower; Eq* those
	// called equivalent.
	SlowerAlone, SlowerHolm, SlowerWeighted, EqAlone, EqHolm, EqWeighted [3]int
}

// Family judges trials trials of rounds rounds with B's step times slower
// by effect, in fixed mode, both ways.
func Family(seed uint64, trials, rounds int, effect float64) FamilyCounts {
	return inParallel(trials, func(i int) FamilyCounts {
		return judgeFamilyTrial(familyTrial(seed, i, rounds, effect), effect)
	}, (*FamilyCounts).add)
}

// inParallel runs trial i = 0 … trials−1 on GOMAXPROCS workers and sums
// the counts with add (the order of the sum does not change a count).
func inParallel[C any](trials int, trial func(i int) C, add func(*C, C)) C {
	workers := min(runtime.GOMAXPROCS(0), max(trials, 1))
	parts := make([]C, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < trials; i += workers {
				add(&parts[w], trial(i))
			}
		}()
	}
	wg.Wait()
	var c C
	for _, p := range parts {
		add(&c, p)
	}
	return c
}

func (c *FamilyCounts) add(o FamilyCounts) {
	c.Trials += o.Trials
	c.AnyAlone += o.AnyAlone
	c.AnyHolm += o.AnyHolm
	c.AnyWeighted += o.AnyWeighted
	for m := range 3 {
		c.SlowerAlone[m] += o.SlowerAlone[m]
		c.SlowerHolm[m] += o.SlowerHolm[m]
		c.SlowerWeighted[m] += o.SlowerWeighted[m]
		c.EqAlone[m] += o.EqAlone[m]
		c.EqHolm[m] += o.EqHolm[m]
		c.EqWeighted[m] += o.EqWeighted[m]
	}
}

// judgeFamilyTrial judges one trial both ways and counts it.
func judgeFamilyTrial(t [3]Trial, effect float64) FamilyCounts {
	c := FamilyCounts{Trials: 1}
	members := make([]nullband.Samples, 3)
	for m := range t {
		members[m] = nullband.Samples{Base: t[m].A, Candidate: t[m].B, Null: t[m].Null}
	}
	f, err := nullband.JudgeFamily(members, nullband.Options{})
	if err != nil {
		panic(fmt.Sprintf("sim: nullband.JudgeFamily refused a trial: %v", err))
	}
	fw, err := nullband.JudgeWeighted(members, FamilyWeights, nullband.Options{})
	if err != nil {
		panic(fmt.Sprintf("sim: nullband.JudgeWeighted refused a trial: %v", err))
	}
	falseAlone, falseHolm, falseWeighted := false, false, false
	for m := range t {
		alone := judge(t[m], nullband.Options{})
		null := effect == 0 || m == 2
		for _, x := range []struct {
			o       nullband.Outcome
			slower  *[3]int
			eq      *[3]int
			falseOf *bool
		}{{alone.Outcome, &c.SlowerAlone, &c.EqAlone, &falseAlone}, {f.Verdicts[m].Outcome, &c.SlowerHolm, &c.EqHolm, &falseHolm},
			{fw.Verdicts[m].Outcome, &c.SlowerWeighted, &c.EqWeighted, &falseWeighted}} {
			switch x.o {
			case nullband.Slower:
				x.slower[m]++
			case nullband.Equivalent:
				x.eq[m]++
			}
			if null && (x.o == nullband.Slower || x.o == nullband.Faster) {
				*x.falseOf = true
			}
		}
	}
	if falseAlone {
		c.AnyAlone++
	}
	if falseHolm {
		c.AnyHolm++
	}
	if falseWeighted {
		c.AnyWeighted++
	}
	return c
}
