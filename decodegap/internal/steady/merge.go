package steady

import (
	"container/heap"
	"math"
	"slices"
)

// mergeCand is a candidate merge of segment l with the next one r, valid
// while both are at the versions recorded.
type mergeCand struct {
	l, r   int
	vl, vr int
	rel    float64 // relative difference of their levels
	start  int     // window where l starts, to break ties
}

type mergeHeap []mergeCand

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if h[i].rel != h[j].rel {
		return h[i].rel < h[j].rel
	}
	return h[i].start < h[j].start
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(mergeCand)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge merges adjacent segments whose levels are within the margin,
// closest pair first, unless the merged segment would drift, and returns the
// segments left.
func (d *detector) merge(segs []seg) []seg {
	s := len(segs)
	next, ver := make([]int, s), make([]int, s)
	alive := make([]bool, s)
	for i := range s {
		next[i], alive[i] = i+1, true
	}
	next[s-1] = -1
	prev := func(i int) int {
		for j := i - 1; j >= 0; j-- {
			if alive[j] {
				return j
			}
		}
		return -1
	}
	h := &mergeHeap{}
	push := func(l int) {
		if l < 0 || next[l] < 0 {
			return
		}
		r := next[l]
		a, b := segs[l].med, segs[r].med
		if diff := math.Abs(a - b); diff <= d.margin(a, b) {
			heap.Push(h, mergeCand{l, r, ver[l], ver[r], diff / max(math.Abs(min(a, b)), 1), segs[l].a})
		}
	}
	for i := range s {
		push(i)
	}
	for h.Len() > 0 {
		c := heap.Pop(h).(mergeCand)
		if !alive[c.l] || !alive[c.r] || ver[c.l] != c.vl || ver[c.r] != c.vr || next[c.l] != c.r {
			continue
		}
		l, r := segs[c.l], segs[c.r]
		lo, mid, hi := d.bound(l.a), d.bound(r.a), d.bound(r.b)
		merged := d.tmp[lo:hi]
		d.mergeRuns(merged, d.srt[lo:mid], d.srt[mid:hi])
		u := seg{a: l.a, b: r.b, med: d.medianOf(merged)}
		if dr, _, _ := d.drift(u, merged); dr {
			continue
		}
		copy(d.srt[lo:hi], merged)
		segs[c.l] = u
		ver[c.l]++
		alive[c.r] = false
		next[c.l] = next[c.r]
		push(prev(c.l))
		push(c.l)
	}
	out := segs[:0]
	for i := range s {
		if alive[i] {
			out = append(out, segs[i])
		}
	}
	return out
}

// joinSteps joins each one-window segment whose level lies strictly between
// its neighbours' to the segment before it: that window is where a step
// happened, its samples a mix of both levels, and joining it to the earlier
// side keeps it out of the steady window.
func (d *detector) joinSteps(segs []seg) []seg {
	for i := 1; i+1 < len(segs); {
		p, s, q := segs[i-1], segs[i], segs[i+1]
		between := (p.med < s.med && s.med < q.med) || (p.med > s.med && s.med > q.med)
		if s.b-s.a != 1 || !between {
			i++
			continue
		}
		lo, mid, hi := d.bound(p.a), d.bound(s.a), d.bound(s.b)
		d.mergeRuns(d.tmp[lo:hi], d.srt[lo:mid], d.srt[mid:hi])
		copy(d.srt[lo:hi], d.tmp[lo:hi])
		segs[i-1] = seg{a: p.a, b: s.b, med: d.medianOf(d.srt[lo:hi])}
		segs = slices.Delete(segs, i, i+1)
	}
	return segs
}

// trimAlpha is the false-alarm probability of trimSteady's test. It is
// looser than Alpha because the errors are not alike: a false trim costs the
// steady window one window, a missed one leaves samples of the earlier level
// in its tail percentiles.
const trimAlpha = 0.01

// trimSteady moves the first window of the last segment to the segment
// before it while that window holds more samples on the earlier level's side
// of the midpoint between the two levels than the rest of the last segment
// makes likely (binomial tail, with the rate estimated from the rest as
// (count+1)/(n+2), p < trimAlpha), at most MinTail times. A step inside a
// window leaves that window's median at the new level while part of its
// samples are at the old one; without this they would sit in the steady
// window's tail percentiles.
func (d *detector) trimSteady(segs []seg) []seg {
	for range d.tail {
		k := len(segs)
		if k < 2 {
			break
		}
		p, s := &segs[k-2], &segs[k-1]
		if s.b-s.a < 2 || p.med == s.med {
			break
		}
		lo, cut, hi := d.bound(s.a), d.bound(s.a+1), d.bound(s.b)
		mid := (p.med + s.med) / 2
		old := func(v int64) bool { // on the earlier level's side
			return (p.med > s.med && float64(v) > mid) || (p.med < s.med && float64(v) < mid)
		}
		var inWin, inRest int
		for _, v := range d.x[lo:cut] {
			if old(v) {
				inWin++
			}
		}
		for _, v := range d.x[cut:hi] {
			if old(v) {
				inRest++
			}
		}
		q := float64(inRest+1) / float64(hi-cut+2)
		if binomTail(cut-lo, inWin, q) >= trimAlpha {
			break
		}
		d.partition(lo, cut, hi)
		plo := d.bound(p.a)
		d.mergeRuns(d.tmp[plo:cut], d.srt[plo:lo], d.srt[lo:cut])
		copy(d.srt[plo:cut], d.tmp[plo:cut])
		p.b, s.a = s.a+1, s.a+1
		p.med, s.med = d.medianOf(d.srt[plo:cut]), d.medianOf(d.srt[cut:hi])
	}
	return segs
}

// binomTail returns P(X >= x) for X ~ Binomial(n, q), 0 < q < 1.
func binomTail(n, x int, q float64) float64 {
	if x <= 0 {
		return 1
	}
	lq, l1q := math.Log(q), math.Log1p(-q)
	ln, _ := math.Lgamma(float64(n + 1))
	var sum float64
	for k := x; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(ln - lk - lnk + float64(k)*lq + float64(n-k)*l1q)
	}
	return min(sum, 1)
}

// mergeRuns merges the sorted runs a and b into dst (len(a)+len(b)). Every
// index in a is below every index in b (a is the earlier of two adjacent
// stretches), so of two equal values a's comes first and the values alone
// decide: one load and one comparison per step, not d.cmp's two.
func (d *detector) mergeRuns(dst, a, b []int32) {
	x := d.x
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if ea, eb := a[i], b[j]; x[ea] <= x[eb] {
			dst[k] = ea
			i++
		} else {
			dst[k] = eb
			j++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// inflation estimates by how much autocorrelation between nearby samples
// inflates the variance of a rank statistic, by batch means over windows:
// the variance of the windows' rank sums, estimated robustly from their
// differences two windows apart (the mean of the smallest 90% of their
// squares / 0.6231, that fraction's mean for χ²₁, / 2) so that a few level
// changes do not count, over its value for independent samples. The result is at least 1, and 1 with fewer than
// minInflWindows windows. It needs d.srt sorted over the whole series.
func (d *detector) inflation() float64 {
	if d.nw < minInflWindows {
		return 1
	}
	n := len(d.x)
	ties := d.midranks(d.srt, 0)
	nf := float64(n)
	varR := (nf*nf-1)/12 - ties/(12*nf) // variance of the midranks
	if varR <= 0 {
		return 1
	}
	sums := make([]float64, d.nw)
	for k := range d.nw {
		for _, r := range d.ranks[k*d.w : (k+1)*d.w] {
			sums[k] += float64(r)
		}
	}
	// Differences two windows apart: neighbouring windows are correlated
	// when samples are, which would shrink differences one window apart.
	sq := make([]float64, d.nw-2)
	for k := range sq {
		dd := sums[k+2] - sums[k]
		sq[k] = dd * dd
	}
	// Mean of the smallest 90%: a few level changes land in the top
	// tenth. For χ²₁ the mean below its 90th percentile is 0.6231.
	slices.Sort(sq)
	keep := sq[:max(1, len(sq)*9/10)]
	var sum float64
	for _, v := range keep {
		sum += v
	}
	v := sum / float64(len(keep)) / 0.6231 / 2
	return max(1, v/(float64(d.w)*varR))
}

// diffSigma estimates the noise of a series robust to a few level shifts:
// 1.4826 × median|v[i+1]−v[i]| / √2.
func diffSigma(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	ds := make([]float64, len(v)-1)
	for i := range ds {
		ds[i] = math.Abs(v[i+1] - v[i])
	}
	return 1.4826 * medianF(ds) / math.Sqrt2
}

// medianF returns the median of v, sorting v; 0 when v is empty.
func medianF(v []float64) float64 {
	k := len(v)
	if k == 0 {
		return 0
	}
	slices.Sort(v)
	if k%2 == 1 {
		return v[k/2]
	}
	return (v[k/2-1] + v[k/2]) / 2
}
