package edivisive

// Otava's variant (Fleming et al., "Hunter: Using Change Point Detection
// to Hunt for Performance Regressions", ICPE 2023; Apache Otava's
// otava/analysis.py compute_change_points):
//
//   - Split: windows of Window points, each starting half a window after
//     the last (or at the last change point found, when that is later).
//     In each window, E-Divisive's hierarchical search proposes the best
//     split of the window's segments, and a two-sided Student t test of
//     the segment's two sides accepts it at p ≤ 10·PValue (Otava's
//     first-pass level; 2·PValue for PValue in [0.05, 0.5)), or ends the
//     window's search. The union over windows are the weak change points.
//   - Merge: each weak change point is t-tested between its neighbours
//     over the whole series; while the weakest has p ≥ PValue (or, all
//     passing, the smallest has magnitude ≤ MinMagnitude) it is removed
//     and its neighbours are tested again.
//
// Two choices differ from Otava's code, both stated here: after a
// removal this package tests again the two change points beside the
// removed one (Otava's merge re-tests the one after it and the next,
// leaving the one before it with stale sides); and the best split of a
// segment maximises Q̂ over the split τ and the segment's right end κ,
// as Otava's calculator and Matteson & James do (Detect's search keeps
// κ at the segment's end).

import (
	"errors"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// OtavaOptions are the settings of DetectOtava; the zero value means
// Otava's defaults (AnalysisOptions: window_len 50, max_pvalue 0.001,
// min_magnitude 0).
type OtavaOptions struct {
	// Window is the split step's window length in points; 0 means 50.
	Window int
	// PValue is the largest t-test p-value of a change point after the
	// merge; 0 means 0.001. The split step accepts at 10·PValue.
	PValue float64
	// MinMagnitude drops, in the merge, change points whose magnitude
	// max(|m2/m1 − 1|, |m1/m2 − 1|) of the two sides' means is at most
	// it; 0 keeps every one that passes the t test.
	MinMagnitude float64
	// Log says x holds logarithms (history.Detect searches ln of
	// positive values): the magnitude is then exp(|m2 − m1|) − 1, the
	// ratio of the sides' geometric means, not a ratio of the logs.
	Log bool
}

func (o OtavaOptions) withDefaults() OtavaOptions {
	if o.Window == 0 {
		o.Window = 50
	}
	if o.PValue == 0 {
		o.PValue = 0.001
	}
	return o
}

// firstPass is Otava's split-step level for PValue p.
func firstPass(p float64) float64 {
	switch {
	case p < 0.05:
		return 10 * p
	case p < 0.5:
		return 2 * p
	}
	return p
}

// DetectOtava returns the change points of x in index order, found with
// Otava's split-and-merge variant (see the comment at the top of this
// file). Each one's P is its t-test p-value between its neighbours in
// the final set, Q its Q̂ in the window that proposed it, Order its rank
// in index order. Deterministic: there is no permutation. It returns an
// error for a NaN or infinite value, a Window below 2, or a PValue
// outside (0, 1).
func DetectOtava(x []float64, opt OtavaOptions) ([]ChangePoint, error) {
	opt = opt.withDefaults()
	if opt.Window < 2 {
		return nil, errors.New("edivisive: OtavaOptions.Window must be at least 2")
	}
	if !(opt.PValue > 0 && opt.PValue < 1) {
		return nil, errors.New("edivisive: OtavaOptions.PValue must be in (0, 1)")
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("edivisive: the series holds a NaN or an infinite value")
		}
	}
	weak := otavaSplit(x, opt.Window, firstPass(opt.PValue))
	cps := otavaMerge(x, weak, opt.PValue, opt.MinMagnitude, opt.Log)
	for i := range cps {
		cps[i].Order = i
	}
	return cps, nil
}

// otavaSplit is the split step: the weak change points, in index order,
// with their t-test p-values between their neighbours among them.
func otavaSplit(x []float64, window int, p float64) []ChangePoint {
	step := window / 2
	var idx []int
	q := map[int]float64{}
	for start := 0; start < len(x); {
		end := min(start+window, len(x))
		found := windowSearch(x[start:end], p)
		last := 0
		for _, c := range found {
			if _, dup := q[c.Index+start]; !dup {
				idx = append(idx, c.Index+start)
				q[c.Index+start] = c.Q
			}
			last = max(last, c.Index+start)
		}
		start = max(last, start+step)
	}
	slices.Sort(idx)
	out := make([]ChangePoint, len(idx))
	for i, k := range idx {
		out[i] = ChangePoint{Index: k, Q: q[k], P: sidesP(x, idx, i)}
	}
	return out
}

// windowSearch is E-Divisive's hierarchical search in one window with
// the t test: the best split over every segment bounded by the change
// points found so far is proposed, and accepted when the t test of its
// segment's two sides gives p ≤ level; the first refused ends it.
func windowSearch(w []float64, level float64) []ChangePoint {
	d := newDistances(w)
	bounds := []int{0, len(w)}
	var found []ChangePoint
	for {
		best, bq, seg := -1, math.Inf(-1), 0
		for i := 0; i+1 < len(bounds); i++ {
			if bounds[i+1]-bounds[i] < 2 {
				continue
			}
			if tau, q := d.bestSplitKappa(bounds[i], bounds[i+1]); q > bq {
				best, bq, seg = tau, q, i
			}
		}
		if best < 0 {
			return found
		}
		p := tTest(w[bounds[seg]:best], w[best:bounds[seg+1]])
		if !(p <= level) {
			return found
		}
		found = append(found, ChangePoint{Index: best, Q: bq, P: p})
		bounds = append(bounds, best)
		slices.Sort(bounds)
	}
}

// otavaMerge is the merge step: it removes the weakest change point
// while one fails (p ≥ pvalue, or all pass and the smallest magnitude is
// at most minMag), testing its two neighbours again after each removal.
func otavaMerge(x []float64, cps []ChangePoint, pvalue, minMag float64, log bool) []ChangePoint {
	idx := make([]int, len(cps))
	for i, c := range cps {
		idx[i] = c.Index
	}
	for len(cps) > 0 {
		weak := 0
		for i, c := range cps {
			if c.P > cps[weak].P {
				weak = i
			}
		}
		if cps[weak].P < pvalue {
			weak = 0
			for i := range cps {
				if sidesMagnitude(x, idx, i, log) < sidesMagnitude(x, idx, weak, log) {
					weak = i
				}
			}
			if sidesMagnitude(x, idx, weak, log) > minMag {
				return cps
			}
		}
		cps = slices.Delete(cps, weak, weak+1)
		idx = slices.Delete(idx, weak, weak+1)
		for _, i := range []int{weak - 1, weak} {
			if i >= 0 && i < len(cps) {
				cps[i].P = sidesP(x, idx, i)
			}
		}
	}
	return cps
}

// sides returns the points between change point i of idx and its
// neighbours (or the series' ends).
func sides(x []float64, idx []int, i int) (left, right []float64) {
	lo, hi := 0, len(x)
	if i > 0 {
		lo = idx[i-1]
	}
	if i+1 < len(idx) {
		hi = idx[i+1]
	}
	return x[lo:idx[i]], x[idx[i]:hi]
}

func sidesP(x []float64, idx []int, i int) float64 { return tTest(sides(x, idx, i)) }

// sidesMagnitude is Otava's change_magnitude of change point i: the
// larger of |m2/m1 − 1| and |m1/m2 − 1| for the two sides' means; with
// log (x holds logarithms) exp(|m2 − m1|) − 1.
func sidesMagnitude(x []float64, idx []int, i int, log bool) float64 {
	l, r := sides(x, idx, i)
	m1, m2 := mean(l), mean(r)
	if log {
		return math.Expm1(math.Abs(m2 - m1))
	}
	var f, b float64
	if m1 != 0 {
		f = m2/m1 - 1
	}
	if m2 != 0 {
		b = m1/m2 - 1
	}
	return max(math.Abs(f), math.Abs(b))
}

// tTest is the two-sided p-value of Student's t test with pooled
// variance, as Otava calls scipy's ttest_ind_from_stats: with each
// side's population standard deviation (numpy's std, ddof 0) in place
// of the sample one, a quirk kept (it makes p a little smaller). It is
// 1 with fewer than 3 points in all; with no spread on either side, 0
// when the means differ and 1 when they do not.
func tTest(a, b []float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	if len(a) == 0 || len(b) == 0 || len(a)+len(b) <= 2 {
		return 1
	}
	m1, m2 := mean(a), mean(b)
	s1, s2 := popVar(a, m1), popVar(b, m2)
	df := n1 + n2 - 2
	v := ((n1-1)*s1 + (n2-1)*s2) / df
	se := math.Sqrt(v * (1/n1 + 1/n2))
	if se == 0 {
		if m1 == m2 {
			return 1
		}
		return 0
	}
	t := math.Abs(m1-m2) / se
	return 2 * (1 - stats.TDist{V: df}.CDF(t))
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// popVar is the population variance (numpy's var, ddof 0) of x about m;
// 0 for one point.
func popVar(x []float64, m float64) float64 {
	if len(x) < 2 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x))
}

// distances holds a window's column prefix sums of |x_i − x_j|:
// col[j][i] = Σ_{k<i} |x_k − x_j|, so that any segment's sums are O(1).
type distances struct {
	col [][]float64
}

func newDistances(x []float64) *distances {
	n := len(x)
	d := &distances{col: make([][]float64, n)}
	buf := make([]float64, n*(n+1))
	for j := 0; j < n; j++ {
		c := buf[j*(n+1) : (j+1)*(n+1)]
		for i := 0; i < n; i++ {
			c[i+1] = c[i] + math.Abs(x[i]-x[j])
		}
		d.col[j] = c
	}
	return d
}

// sum is Σ_{a≤k<b} |x_k − x_j|.
func (d *distances) sum(j, a, b int) float64 { return d.col[j][b] - d.col[j][a] }

// bestSplitKappa returns the split τ of segment [s, e) and the right end
// κ in (τ, e] that maximise Q̂(x[s:τ], x[τ:κ]), with at least one point
// on each side (a one-point side has no within-sample term), in
// O((e−s)²); τ is −1 for a segment of fewer than 2 points.
func (d *distances) bestSplitKappa(s, e int) (int, float64) {
	bestTau, bestQ := -1, math.Inf(-1)
	wx := 0.0 // Σ_{s≤i<j<τ} |x_i − x_j|
	for tau := s + 1; tau < e; tau++ {
		wx += d.sum(tau-1, s, tau-1)
		m := float64(tau - s)
		cross, wy := 0.0, 0.0
		for kappa := tau + 1; kappa <= e; kappa++ {
			y := kappa - 1 // the point joining Y
			cross += d.sum(y, s, tau)
			wy += d.sum(y, tau, y)
			k := float64(kappa - tau)
			div := 2 * cross / (m * k)
			if m > 1 {
				div -= wx / (m * (m - 1) / 2)
			}
			if k > 1 {
				div -= wy / (k * (k - 1) / 2)
			}
			if q := m * k / (m + k) * div; q > bestQ {
				bestTau, bestQ = tau, q
			}
		}
	}
	return bestTau, bestQ
}
