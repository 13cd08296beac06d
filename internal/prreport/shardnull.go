package prreport

import (
	"cmp"
	"math"
	"slices"

	"github.com/gapbench/gapbench/internal/judge"
)

// RunnerNull is the check of one runner's null arm against base.
//
// With the arms' order drawn at random in each round, base and null are
// exchangeable within a round on every runner, whatever its speed or
// noise: dᵣ = ln(A'ᵣ/Aᵣ) is symmetric about 0 given |dᵣ|, independently
// across rounds. The check uses each job's first row (its sub-benchmarks
// and other units come from the same processes, so they would repeat the
// same rounds); it weighs each dᵣ by the mid-rank of |dᵣ| among the row's
// rounds on all runners, divided by their count (so every row weighs
// alike, whatever its noise), and sums the signed weights of the runner's
// rounds: W = Σ sign(dᵣ)·wᵣ. Given the magnitudes, W's null mean is 0 and
// its variance Σ wᵣ², exactly; Z = W/√Σwᵣ² is judged as normal, and
// Holm's procedure across the runners keeps the chance of flagging any
// runner whose arms did share their weather at most Fleet.NullAlpha.
type RunnerNull struct {
	// Values is the number of rounds with a complete base and null pair;
	// Ratio the median A'/A over them (NaN without any).
	Values int
	Ratio  float64
	// Z and P are the test's statistic and two-sided p-value (NaN with
	// fewer than MinNullValues values).
	Z, P float64
	// Others is the median A'/A over the other runners' rounds.
	Others float64
	// Disagrees is true when Holm's procedure across runners rejects
	// this runner's null arm.
	Disagrees bool
}

// MinNullValues is the fewest base/null pairs a runner needs for its
// null-arm check.
const MinNullValues = 6

// NullAgreement checks every runner's null arm (see RunnerNull) over the
// merged jobs and sets fl.Runners[i].Null, with Holm's procedure across
// the runners at family-wise rate alpha (fl.NullAlpha).
func NullAgreement(fl *Fleet, jobs []*Job, alpha float64) {
	fl.NullAlpha = alpha
	n := len(fl.Runners)
	index := map[int]int{} // shard index → runner position
	for i, r := range fl.Runners {
		index[r.ID.Shard.I] = i
	}
	w, w2 := make([]float64, n), make([]float64, n)
	logs := make([][]float64, n)
	for _, j := range jobs {
		t := j.Table()
		bench, unit, ok := firstRow(t)
		if !ok {
			continue
		}
		type pair struct {
			runner int
			d      float64
		}
		var ps []pair
		for _, r := range t.Rounds() {
			base, null := t.Value(bench, unit, ArmBase, r), t.Value(bench, unit, ArmNull, r)
			if !(base > 0 && null > 0) {
				continue
			}
			k, ok := index[(r-1)%fl.N+1]
			if !ok {
				continue
			}
			ps = append(ps, pair{k, math.Log(null / base)})
		}
		abs := make([]float64, len(ps))
		for i, p := range ps {
			abs[i] = math.Abs(p.d)
		}
		ranks := midRanks(abs)
		for i, p := range ps {
			x := ranks[i] / float64(len(ps))
			switch {
			case p.d > 0:
				w[p.runner] += x
			case p.d < 0:
				w[p.runner] -= x
			}
			if p.d != 0 {
				w2[p.runner] += x * x
			}
			logs[p.runner] = append(logs[p.runner], p.d)
		}
	}
	var ps []float64
	var who []int
	for k := range fl.Runners {
		rn := RunnerNull{Values: len(logs[k]), Ratio: math.NaN(), Z: math.NaN(), P: math.NaN(), Others: math.NaN()}
		if len(logs[k]) > 0 {
			rn.Ratio = math.Exp(medianOf(logs[k]))
		}
		var others []float64
		for o := range fl.Runners {
			if o != k {
				others = append(others, logs[o]...)
			}
		}
		if len(others) > 0 {
			rn.Others = math.Exp(medianOf(others))
		}
		if len(logs[k]) >= MinNullValues && w2[k] > 0 {
			rn.Z = w[k] / math.Sqrt(w2[k])
			rn.P = math.Erfc(math.Abs(rn.Z) / math.Sqrt2)
			ps = append(ps, rn.P)
			who = append(who, k)
		}
		fl.Runners[k].Null = rn
	}
	// Holm's step-down over the runners that have a p-value.
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	for step, i := range order {
		if ps[i] > alpha/float64(len(ps)-step) {
			break
		}
		fl.Runners[who[i]].Null.Disagrees = true
	}
}

// midRanks returns the mid-ranks (from 1) of x.
func midRanks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, len(x))
	for p := 0; p < len(idx); {
		q := p
		for q+1 < len(idx) && x[idx[q+1]] == x[idx[p]] {
			q++
		}
		for k := p; k <= q; k++ {
			r[idx[k]] = float64(p+q)/2 + 1
		}
		p = q + 1
	}
	return r
}

// medianOf returns the median of x (which it sorts); NaN when empty.
func medianOf(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	slices.Sort(x)
	if n := len(x); n%2 == 1 {
		return x[n/2]
	} else {
		return (x[n/2-1] + x[n/2]) / 2
	}
}

// firstRow returns a job's first row: its first benchmark and the first of
// judge.DefaultUnits (else of the table's units) that the base and the
// null arm both report.
func firstRow(t *judge.Table) (bench, unit string, ok bool) {
	if len(t.Benchmarks()) == 0 {
		return "", "", false
	}
	bench = t.Benchmarks()[0]
	for _, u := range append(append([]string(nil), judge.DefaultUnits...), t.Units()...) {
		if t.Has(bench, u, ArmBase) && t.Has(bench, u, ArmNull) {
			return bench, u, true
		}
	}
	return "", "", false
}
