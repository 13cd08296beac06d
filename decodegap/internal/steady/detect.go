package steady

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"unsafe"

	"github.com/gapbench/gapbench/decodegap/internal/mem"
	"github.com/gapbench/gapbench/decodegap/internal/radix"
)

// MaxSamples is the longest series Detect classifies (2^23, so that midranks
// are exact in float32); a longer one gets NoSteadyState with TooLong.
const MaxSamples = 1 << 23

// maxChangepoints caps binary segmentation: at most this many changepoints
// are found, the most significant first. It bounds Detect's time on series
// that change everywhere (those have no steady state anyway).
const maxChangepoints = 256

// detector holds one Detect call's state and scratch space.
//
// Cost, for n samples in windows of w and k changepoints found (k <=
// maxChangepoints = 256):
//
//   - prepare: one radix sort of the samples by packed key, O(n) (a pass
//     per byte of the keys), then the window medians in one pass over the
//     sorted samples, O(n); the autocorrelation factor is one pass over
//     the windows' rank sums, O(n + (n/w) log(n/w)).
//   - split: a segment's best split is one pass over its sorted run
//     (midranks, then rank sums at window boundaries), and a split
//     partitions that run stably, both O(segment length); the segments of
//     one level of the segmentation are disjoint, so each level is O(n),
//     and there are at most k levels (log₂ k when splits are balanced).
//   - merge: each attempt merges two sorted runs and tests the drift of the
//     union, O(its length); there are at most 2k+1 attempts.
//
// So Detect is O(n log n + n·k) at most, O(n + n·k) when the values span
// less than 2^40 ns (the radix sort): on a series with a few level changes
// (the usual warm-up) the sort dominates; a series that changes everywhere costs
// at most about 256 passes over the samples, and has no steady state. Memory
// is O(n): 4 bytes of sorted index, 4 of scratch index and 4 of midrank per
// sample (the two indices in the memory of the sort's 8-byte keys), besides
// the window summaries.
type detector struct {
	x      []int64
	w      int // window, samples
	nw     int // whole windows; the last absorbs the remainder
	tol    float64
	alpha  float64
	tail   int       // MinTail, windows
	stride int       // iterations per sample
	sigma  float64   // window-to-window noise of window medians, ns
	infl   float64   // variance inflation of rank statistics by autocorrelation, >= 1
	wmed   []float64 // window medians, ns
	// scratch is Params.Scratch, memory for the sort.
	scratch []int64
	// srt holds every current segment's samples sorted by (value, index):
	// srt[bound(s.a):bound(s.b)] for each segment s. Splitting and merging
	// keep it so (stable partition, merge of sorted runs), so no segment is
	// ever sorted again.
	srt   []int32   // sample indices; see above
	tmp   []int32   // scratch, len(x)
	ranks []float32 // scratch: midranks by position within a segment (exact: half-integers below 2^23)
	slope []float64 // scratch for drift slopes
}

// sortedIndices returns 0..n-1 ordered by (value, index), and a scratch
// slice of n. When the values span less than 2^40 (18 minutes in ns) it
// radix-sorts packed keys (value-min)<<23 | index (below 2^63), several
// times faster than a comparison function, in Params.Scratch when it has
// room, and then reuses the keys' memory for both slices: fresh memory
// costs a page fault per 4 KiB when first touched, which on a virtual
// machine rivals the sort (docs/harness-cost.md).
func (d *detector) sortedIndices() (idx, scratch []int32) {
	n := len(d.x)
	lo, hi := slices.Min(d.x), slices.Max(d.x)
	if span := uint64(hi) - uint64(lo); n > 0 && hi >= lo && span < 1<<40 {
		mem2 := d.scratch
		if len(mem2) < 2*n {
			mem2 = make([]int64, 2*n)
			mem.Populate(mem2)
		}
		keys, buf := mem2[:n:n], mem2[n:2*n]
		for i, v := range d.x {
			keys[i] = (v-lo)<<23 | int64(i)
		}
		radix.Sort(keys, buf)
		// 2n int32 over the n keys: index k is written over half of key
		// k/2, which was read already (k/2 <= k, and key k is read before
		// index k is written).
		both := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(keys))), 2*n)
		for k := range n {
			both[k] = int32(keys[k] & (1<<23 - 1))
		}
		return both[:n:n], both[n:]
	}
	idx = make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, d.cmp)
	return idx, make([]int32, n)
}

// cmp orders sample indices by (value, index).
func (d *detector) cmp(p, q int32) int {
	if c := cmp.Compare(d.x[p], d.x[q]); c != 0 {
		return c
	}
	return cmp.Compare(p, q)
}

func newDetector(x []int64, p Params) *detector {
	d := &detector{x: x, w: p.Window, tol: p.Tolerance, alpha: p.Alpha, tail: p.MinTail, stride: max(p.Stride, 1), scratch: p.Scratch}
	if d.w == 0 {
		d.w = DefaultWindow
	}
	if d.tol == 0 {
		d.tol = DefaultTolerance
	}
	if d.alpha == 0 {
		d.alpha = DefaultAlpha
	}
	d.nw = len(x) / d.w
	if d.tail == 0 {
		d.tail = max(minTailFloor, (d.nw+4)/5)
	}
	return d
}

// bound returns the sample index where window k starts; bound(nw) is
// len(x), so the last window absorbs the remainder.
func (d *detector) bound(k int) int {
	if k >= d.nw {
		return len(d.x)
	}
	return k * d.w
}

// prepare computes the window medians, σ, the sorted samples and f.
func (d *detector) prepare() {
	n := len(d.x)
	d.srt, d.tmp = d.sortedIndices()
	d.windowMedians()
	d.sigma = diffSigma(d.wmed)
	d.ranks = make([]float32, n)
	mem.Populate(d.ranks)
	d.infl = d.inflation()
}

// windowMedians computes every window's median from d.srt, the samples in
// order of value, in one pass: a window's median is its middle sample (the
// mean of its middle two for an even count) when its count of samples
// seen reaches it. This replaces a sort per window.
func (d *detector) windowMedians() {
	d.wmed = make([]float64, d.nw)
	seen := make([]int32, d.nw)
	last := d.bound(d.nw - 1) // the last window absorbs the remainder
	for _, e := range d.srt {
		k, m := int(e)/d.w, d.w
		if k >= d.nw-1 {
			k, m = d.nw-1, len(d.x)-last
		}
		seen[k]++
		c, v := int(seen[k]), float64(d.x[e])
		switch {
		case m%2 == 1 && c == m/2+1:
			d.wmed[k] = v
		case m%2 == 0 && c == m/2:
			d.wmed[k] = v
		case m%2 == 0 && c == m/2+1:
			d.wmed[k] = (d.wmed[k] + v) / 2
		}
	}
}

func (d *detector) run() Result {
	n := len(d.x)
	if d.nw < 2 {
		return d.tooShort()
	}
	if n > MaxSamples {
		return d.tooLong()
	}
	d.prepare()
	cps := d.split()
	bounds := append(append([]int{0}, cps...), d.nw)
	segs := make([]seg, len(bounds)-1)
	for i := range segs {
		segs[i] = seg{a: bounds[i], b: bounds[i+1]}
		segs[i].med = d.medianOf(d.srt[d.bound(segs[i].a):d.bound(segs[i].b)])
	}
	segs = d.merge(segs)
	segs = d.joinSteps(segs)
	segs = d.trimSteady(segs)

	res := Result{Start: -1}
	for i, s := range segs {
		if i > 0 {
			res.Changepoints = append(res.Changepoints, d.bound(s.a))
		}
		res.Levels = append(res.Levels, Segment{Start: d.bound(s.a), End: d.bound(s.b), Median: s.med})
	}
	d.classify(segs, &res)
	return res
}

// seg is a segment in windows [a, b) with its median in ns.
type seg struct {
	a, b int
	med  float64
}

// splitCand is a segment [a, b) (windows) with its best split t and that
// split's |z| and Bonferroni p-value.
type splitCand struct {
	a, b, t int
	z, p    float64
}

type splitHeap []splitCand

func (h splitHeap) Len() int { return len(h) }
func (h splitHeap) Less(i, j int) bool {
	if h[i].p != h[j].p {
		return h[i].p < h[j].p
	}
	if h[i].z != h[j].z {
		return h[i].z > h[j].z
	}
	return h[i].a < h[j].a
}
func (h splitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *splitHeap) Push(x any)   { *h = append(*h, x.(splitCand)) }
func (h *splitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// split runs binary segmentation, most significant split first, and returns
// the changepoints in windows, sorted. It leaves d.srt sorted within each
// resulting segment.
func (d *detector) split() []int {
	h := &splitHeap{}
	push := func(a, b int) {
		if b-a >= 2 {
			t, z, p := d.bestSplit(a, b)
			heap.Push(h, splitCand{a, b, t, z, p})
		}
	}
	push(0, d.nw)
	var cps []int
	for h.Len() > 0 && len(cps) < maxChangepoints {
		c := heap.Pop(h).(splitCand)
		if c.p >= d.alpha {
			break
		}
		cps = append(cps, c.t)
		d.partition(d.bound(c.a), d.bound(c.t), d.bound(c.b))
		push(c.a, c.t)
		push(c.t, c.b)
	}
	slices.Sort(cps)
	return cps
}

// partition stably splits srt[lo:hi] into the samples with index < mid
// followed by the rest, each still sorted.
func (d *detector) partition(lo, mid, hi int) {
	l, r := lo, mid
	for _, e := range d.srt[lo:hi] {
		if int(e) < mid {
			d.tmp[l] = e
			l++
		} else {
			d.tmp[r] = e
			r++
		}
	}
	copy(d.srt[lo:hi], d.tmp[lo:hi])
}

// bestSplit returns the window boundary t in (a, b) whose Mann–Whitney
// statistic is largest, its |z| (with f), and its Bonferroni-corrected
// two-sided p-value.
func (d *detector) bestSplit(a, b int) (t int, z, p float64) {
	lo, hi := d.bound(a), d.bound(b)
	m := hi - lo
	tieSum := d.midranks(d.srt[lo:hi], lo)
	mf := float64(m)
	vfac := (mf + 1) - tieSum/(mf*(mf-1))
	if vfac <= 0 {
		return a, 0, 1 // all samples equal
	}
	bestT, bestZ := a, 0.0
	var w float64 // rank sum before the boundary
	pos := 0
	for k := a + 1; k < b; k++ {
		end := d.bound(k) - lo
		for ; pos < end; pos++ {
			w += float64(d.ranks[pos])
		}
		tf := float64(end)
		u := 2*w - tf*(mf+1)
		v := tf * (mf - tf) / 3 * vfac * d.infl
		if z := math.Abs(u) / math.Sqrt(v); z > bestZ {
			bestT, bestZ = k, z
		}
	}
	return bestT, bestZ, math.Erfc(bestZ/math.Sqrt2) * float64(b-a-1)
}

// midranks fills d.ranks[e-lo] with the midrank (1-based) of each e in
// the sorted run srt and returns Σ(τ³−τ) over groups of tied values.
func (d *detector) midranks(srt []int32, lo int) float64 {
	var ties float64
	d.forTies(srt, func(i, j int, r float64) {
		for _, e := range srt[i:j] {
			d.ranks[int(e)-lo] = float32(r)
		}
		if tau := float64(j - i); tau > 1 {
			ties += tau*tau*tau - tau
		}
	})
	return ties
}

// forTies calls f for each group srt[i:j] of equal values in the sorted run
// srt, with the group's midrank r.
func (d *detector) forTies(srt []int32, f func(i, j int, r float64)) {
	for i := 0; i < len(srt); {
		j := i + 1
		for j < len(srt) && d.x[srt[j]] == d.x[srt[i]] {
			j++
		}
		f(i, j, float64(i+j+1)/2)
		i = j
	}
}

// medianOf returns the median (ns) of a sorted run, the mean of the middle
// two for an even count; 0 when empty.
func (d *detector) medianOf(srt []int32) float64 {
	return medianSorted(len(srt), func(i int) int64 { return d.x[srt[i]] })
}

func medianSorted(m int, at func(int) int64) float64 {
	if m == 0 {
		return 0
	}
	if m%2 == 1 {
		return float64(at(m / 2))
	}
	return (float64(at(m/2-1)) + float64(at(m/2))) / 2
}

// margin is the largest difference between levels a and b (ns) that still
// counts as one level.
func (d *detector) margin(a, b float64) float64 {
	return max(d.tol*min(math.Abs(a), math.Abs(b)), d.sigma)
}

// drift reports whether segment s, whose samples are the sorted run srt,
// drifts: whether the level change across it, estimated from the window
// medians' slope, exceeds the margin, and the Spearman rank correlation of
// its samples with their index is significant at Alpha (with f) with the
// same sign. from and to are the fitted levels (ns) at its start and end.
// Segments shorter than 3 windows never drift.
func (d *detector) drift(s seg, srt []int32) (dr bool, from, to float64) {
	k := s.b - s.a
	if k < 3 {
		return false, s.med, s.med
	}
	// Robust slope: the median of the slopes between window medians half
	// the segment apart.
	h := (k + 1) / 2
	d.slope = d.slope[:0]
	for i := s.a; i+h < s.b; i++ {
		d.slope = append(d.slope, (d.wmed[i+h]-d.wmed[i])/float64(h))
	}
	total := medianF(d.slope) * float64(k)
	from, to = s.med-total/2, s.med+total/2
	if math.Abs(total) <= d.margin(from, to) {
		return false, from, to
	}
	rho := d.spearman(srt, d.bound(s.a))
	m := float64(len(srt))
	z := rho * math.Sqrt((m-1)/d.infl)
	p := math.Erfc(math.Abs(z) / math.Sqrt2)
	return p < d.alpha && (rho > 0) == (total > 0), from, to
}

// spearman returns the rank correlation of a segment's samples with their
// index (the Pearson correlation of midranks with positions, so ties are
// handled), given the segment's samples as the sorted run srt and its first
// index lo; 0 when all are equal.
func (d *detector) spearman(srt []int32, lo int) float64 {
	m := float64(len(srt))
	mean := (m + 1) / 2
	var srp, srr float64 // Σ rank×position, Σ rank²
	d.forTies(srt, func(i, j int, r float64) {
		for _, e := range srt[i:j] {
			srp += r * float64(int(e)-lo+1)
			srr += r * r
		}
	})
	sxy := srp - m*mean*mean
	syy := srr - m*mean*mean
	sxx := m * (m*m - 1) / 12
	if syy <= 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
