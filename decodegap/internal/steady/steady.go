package steady

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Class is the shape of a latency series, after Barrett et al. (2017).
type Class int

const (
	// NoSteadyState: the series never settled (it changed near its end, or
	// drifts), or it is shorter than two windows. It is the zero Class, so a
	// zero Result claims nothing.
	NoSteadyState Class = iota
	// Flat: one level from the first window to the last.
	Flat
	// Warmup: the level fell (the series got faster) and the last level is
	// the fastest.
	Warmup
	// Slowdown: the last level is slower than an earlier one.
	Slowdown
)

// String returns "flat", "warm-up", "slowdown" or "no steady state".
func (c Class) String() string {
	switch c {
	case Flat:
		return "flat"
	case Warmup:
		return "warm-up"
	case Slowdown:
		return "slowdown"
	case NoSteadyState:
		return "no steady state"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Defaults used when the corresponding Params field is zero.
const (
	DefaultWindow    = 32
	DefaultTolerance = 0.02
	DefaultAlpha     = 0.001
	// minTailFloor is the smallest default MinTail, in windows.
	minTailFloor = 4
	// shortTailWindows: a steady window with fewer windows sets Suggest.
	shortTailWindows = 8
	// minInflWindows is the fewest windows from which inflation is
	// estimated.
	minInflWindows = 6
	// minSuggestWindows is the fewest windows Suggest asks for.
	minSuggestWindows = 20
)

// Params tunes Detect. The zero Params is valid: every zero field takes the
// default named in its comment.
type Params struct {
	// Window is the number of samples per window (decodegap's Config.Window).
	// 0 means DefaultWindow (32); otherwise it must be at least 4.
	Window int
	// Tolerance is the relative difference (0.02 = 2%) under which two
	// adjacent segments count as one level, unless the window-to-window noise
	// is wider. 0 means DefaultTolerance; it must be in [0, 1).
	Tolerance float64
	// Alpha is the false-alarm probability of each changepoint test and of
	// the drift test. 0 means DefaultAlpha (0.001); it must be in (0, 1).
	Alpha float64
	// MinTail is the fewest windows the last segment must hold after a
	// changepoint for the series to count as settled. 0 means
	// max(4, ⌈windows/5⌉); otherwise it must be at least 1.
	MinTail int
}

// Validate reports the first field of p outside its allowed range, naming the
// decodegap field where there is one.
func (p Params) Validate() error {
	if p.Window != 0 && p.Window < 4 {
		return fmt.Errorf("steady: Config.Window is %d; it must be 0 (meaning %d) or at least 4", p.Window, DefaultWindow)
	}
	if p.Tolerance < 0 || p.Tolerance >= 1 || math.IsNaN(p.Tolerance) {
		return fmt.Errorf("steady: Params.Tolerance is %v; it must be in [0, 1) (0 means %v)", p.Tolerance, DefaultTolerance)
	}
	if p.Alpha < 0 || p.Alpha >= 1 || math.IsNaN(p.Alpha) {
		return fmt.Errorf("steady: Params.Alpha is %v; it must be in (0, 1) (0 means %v)", p.Alpha, DefaultAlpha)
	}
	if p.MinTail < 0 {
		return fmt.Errorf("steady: Params.MinTail is %d; it must be 0 (meaning max(4, windows/5)) or at least 1", p.MinTail)
	}
	return nil
}

// Segment is a run of samples at one level.
type Segment struct {
	Start, End int     // sample indices [Start, End); Start is a multiple of the window
	Median     float64 // median of the segment's samples, in ns
}

// Result is Detect's verdict on one series.
type Result struct {
	// Class is the shape of the series.
	Class Class
	// Start is the index of the first sample of the steady window (a
	// multiple of the window); the steady window runs to the end of the
	// series. -1 when Class is NoSteadyState.
	Start int
	// Changepoints are the sample indices (window boundaries) where the
	// level changes, after merging equal levels; empty when flat.
	Changepoints []int
	// Levels are the segments between changepoints, in order; they cover the
	// whole series. Empty when the series is shorter than two windows or
	// Params is invalid.
	Levels []Segment
	// Suggest is the number of recorded iterations to ask for next time
	// (-benchtime=<Suggest>x) when there is no steady state or the steady
	// window is short; 0 when not needed. See the package doc for the rule.
	Suggest int
	// Reason is one line for a person: what was found, with the numbers
	// behind it, and the knob to turn when something should change
	// (-benchtime=<Suggest>x whenever Suggest is set). It does not repeat
	// Class, so a caller can print "steady state: <Class>: <Reason>".
	Reason string
}

// Detect classifies samples, the per-step latencies in nanoseconds in run
// order, and finds their steady window by the rule in the package doc. It is
// deterministic, does not modify samples, and retains none of it. Invalid
// Params give NoSteadyState with the Validate error as Reason.
func Detect(samples []int64, p Params) Result {
	if err := p.Validate(); err != nil {
		return Result{Class: NoSteadyState, Start: -1, Reason: err.Error()}
	}
	d := newDetector(samples, p)
	return d.run()
}

// detector holds one Detect call's state and scratch space.
type detector struct {
	x     []int64
	w     int // window, samples
	nw    int // whole windows; the last absorbs the remainder
	tol   float64
	alpha float64
	tail  int                // MinTail, windows
	sigma float64            // window-to-window noise of window medians, ns
	infl  float64            // variance inflation of rank statistics by autocorrelation, >= 1
	wmed  []float64          // window medians, ns
	pairs []valIdx           // scratch for ranking
	ranks []float64          // scratch: midranks by position
	scr   []int64            // scratch for medians
	rhos  map[[2]int]float64 // Spearman's rho of segments [a, b), by windows
}

type valIdx struct {
	v int64
	i int32
}

func newDetector(x []int64, p Params) *detector {
	d := &detector{x: x, w: p.Window, tol: p.Tolerance, alpha: p.Alpha, tail: p.MinTail}
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
	d.rhos = map[[2]int]float64{}
	return d
}

// end returns the sample index where window k ends (the last window absorbs
// the remainder).
func (d *detector) bound(k int) int {
	if k >= d.nw {
		return len(d.x)
	}
	return k * d.w
}

func (d *detector) run() Result {
	n := len(d.x)
	if d.nw < 2 {
		s := d.suggest()
		return Result{
			Class:   NoSteadyState,
			Start:   -1,
			Suggest: s,
			Reason: fmt.Sprintf("%d samples make %s of %d (Config.Window); at least 2 are needed: run with -benchtime=%dx",
				n, plural(d.nw, "whole window"), d.w, s),
		}
	}
	d.wmed = make([]float64, d.nw)
	for k := range d.nw {
		d.wmed[k] = d.median(d.bound(k), d.bound(k+1))
	}
	d.sigma = diffSigma(d.wmed)
	d.infl = d.inflation()

	// Changepoints, in windows.
	var cps []int
	d.split(0, d.nw, &cps)
	slices.Sort(cps)
	bounds := append(append([]int{0}, cps...), d.nw)
	segs := make([]seg, len(bounds)-1)
	for i := range segs {
		segs[i] = seg{a: bounds[i], b: bounds[i+1]}
		segs[i].med = d.median(d.bound(segs[i].a), d.bound(segs[i].b))
	}
	segs = d.merge(segs)

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

// split appends to cps the changepoints (in windows) of windows [a, b).
func (d *detector) split(a, b int, cps *[]int) {
	if b-a < 2 {
		return
	}
	t, p := d.bestSplit(a, b)
	if p >= d.alpha {
		return
	}
	*cps = append(*cps, t)
	d.split(a, t, cps)
	d.split(t, b, cps)
}

// bestSplit returns the window boundary t in (a, b) whose Mann–Whitney
// statistic is largest, and its Bonferroni-corrected two-sided p-value.
func (d *detector) bestSplit(a, b int) (int, float64) {
	lo, hi := d.bound(a), d.bound(b)
	m := hi - lo
	tieSum := d.rank(lo, hi)
	mf := float64(m)
	vfac := (mf + 1) - tieSum/(mf*(mf-1))
	if vfac <= 0 {
		return a, 1 // all samples equal
	}
	bestT, bestZ := a, 0.0
	var w float64 // rank sum before the boundary
	pos := 0
	for k := a + 1; k < b; k++ {
		end := d.bound(k) - lo
		for ; pos < end; pos++ {
			w += d.ranks[pos]
		}
		t := float64(end)
		u := 2*w - t*(mf+1)
		v := t * (mf - t) / 3 * vfac
		z := math.Abs(u) / math.Sqrt(v*d.infl)
		if z > bestZ {
			bestT, bestZ = k, z
		}
	}
	p := math.Erfc(bestZ/math.Sqrt2) * float64(b-a-1)
	return bestT, p
}

// rank fills d.ranks[0:hi-lo] with the midranks (1-based) of x[lo:hi] by
// position and returns Σ(τ³−τ) over tie groups.
func (d *detector) rank(lo, hi int) float64 {
	m := hi - lo
	d.pairs = slices.Grow(d.pairs[:0], m)[:m]
	for i := range m {
		d.pairs[i] = valIdx{d.x[lo+i], int32(i)}
	}
	slices.SortFunc(d.pairs, func(p, q valIdx) int { return cmp.Compare(p.v, q.v) })
	d.ranks = slices.Grow(d.ranks[:0], m)[:m]
	var ties float64
	for i := 0; i < m; {
		j := i + 1
		for j < m && d.pairs[j].v == d.pairs[i].v {
			j++
		}
		r := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			d.ranks[d.pairs[k].i] = r
		}
		if tau := float64(j - i); tau > 1 {
			ties += tau*tau*tau - tau
		}
		i = j
	}
	return ties
}

// margin is the largest difference between levels a and b (ns) that still
// counts as one level.
func (d *detector) margin(a, b float64) float64 {
	return max(d.tol*min(math.Abs(a), math.Abs(b)), d.sigma)
}

// drift reports whether segment s drifts: whether the level change across
// it, estimated from the window medians' slope, exceeds the margin, and the
// Spearman rank correlation of its samples with their index is significant
// at Alpha with the same sign. from and to are the fitted levels (ns) at its
// start and end. Segments shorter than 3 windows never drift.
func (d *detector) drift(s seg) (dr bool, from, to float64) {
	k := s.b - s.a
	if k < 3 {
		return false, s.med, s.med
	}
	// Robust slope: the median of the slopes between window medians half
	// the segment apart.
	h := (k + 1) / 2
	sl := make([]float64, 0, k-h)
	for i := s.a; i+h < s.b; i++ {
		sl = append(sl, (d.wmed[i+h]-d.wmed[i])/float64(h))
	}
	total := medianF(sl) * float64(k)
	from, to = s.med-total/2, s.med+total/2
	if math.Abs(total) <= d.margin(from, to) {
		return false, from, to
	}
	key := [2]int{s.a, s.b}
	rho, ok := d.rhos[key]
	if !ok {
		rho = d.spearman(d.bound(s.a), d.bound(s.b))
		d.rhos[key] = rho
	}
	m := float64(d.bound(s.b) - d.bound(s.a))
	z := rho * math.Sqrt((m-1)/d.infl)
	p := math.Erfc(math.Abs(z) / math.Sqrt2)
	return p < d.alpha && (rho > 0) == (total > 0), from, to
}

// spearman returns the rank correlation of x[lo:hi] with its index (the
// Pearson correlation of midranks, so ties are handled); 0 when all equal.
func (d *detector) spearman(lo, hi int) float64 {
	d.rank(lo, hi)
	m := float64(hi - lo)
	mean := (m + 1) / 2
	var sxy, sxx, syy float64
	for i, r := range d.ranks[:hi-lo] {
		dx, dy := float64(i+1)-mean, r-mean
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// merge merges adjacent segments of equal level, closest pair first, unless
// the merged segment would drift.
func (d *detector) merge(segs []seg) []seg {
	type cand struct {
		i   int
		rel float64
	}
	for len(segs) > 1 {
		var cs []cand
		for i := 0; i+1 < len(segs); i++ {
			a, b := segs[i].med, segs[i+1].med
			diff := math.Abs(a - b)
			if diff <= d.margin(a, b) {
				cs = append(cs, cand{i, diff / max(math.Abs(min(a, b)), 1)})
			}
		}
		slices.SortStableFunc(cs, func(p, q cand) int { return cmp.Compare(p.rel, q.rel) })
		merged := false
		for _, c := range cs {
			s, t := segs[c.i], segs[c.i+1]
			u := seg{a: s.a, b: t.b, med: d.median(d.bound(s.a), d.bound(t.b))}
			if dr, _, _ := d.drift(u); dr {
				continue
			}
			segs = slices.Replace(segs, c.i, c.i+2, u)
			merged = true
			break
		}
		if !merged {
			break
		}
	}
	return segs
}

func (d *detector) classify(segs []seg, res *Result) {
	last := segs[len(segs)-1]
	tailW := last.b - last.a
	n := len(d.x)
	if len(segs) > 1 && tailW < d.tail {
		prev := segs[len(segs)-2]
		res.Class = NoSteadyState
		res.Suggest = d.suggest()
		var what string
		if a, b, same := pair(prev.med, last.med); same {
			what = fmt.Sprintf("its median stayed at %s but its distribution changed", a)
		} else {
			what = fmt.Sprintf("median %s → %s", a, b)
		}
		res.Reason = fmt.Sprintf("level still changing in the last %d of %d windows (%s; a steady window needs %d, Params.MinTail); run with -benchtime=%dx",
			tailW, d.nw, what, d.tail, res.Suggest)
		return
	}
	if dr, from, to := d.drift(last); dr {
		res.Class = NoSteadyState
		res.Suggest = d.suggest()
		what := "by less than 1 ppm, yet significantly"
		if a, b, same := pair(from, to); !same {
			what = fmt.Sprintf("from about %s to %s", a, b)
		}
		res.Reason = fmt.Sprintf("level still drifting in the last %d of %d windows (%s); run with -benchtime=%dx",
			tailW, d.nw, what, res.Suggest)
		return
	}
	if len(segs) == 1 {
		res.Class, res.Start = Flat, 0
		res.Reason = fmt.Sprintf("one level over all %d windows (median %s)", d.nw, fmtNs(last.med, 3))
		d.shortTail(res, tailW)
		return
	}
	res.Start = d.bound(last.a)
	fastest, slowest := last, last
	for _, s := range segs[:len(segs)-1] {
		if s.med < fastest.med {
			fastest = s
		}
		if s.med > slowest.med {
			slowest = s
		}
	}
	a, b, same := pair(fastest.med, last.med)
	switch {
	case !same && last.med-fastest.med > d.margin(fastest.med, last.med):
		res.Class = Slowdown
		res.Reason = fmt.Sprintf("median %s in samples %d–%d, slower at %s in the steady window from sample %d of %d",
			a, d.bound(fastest.a), d.bound(fastest.b), b, res.Start, n)
	default:
		a, b, same = pair(slowest.med, last.med)
		if !same && slowest.med-last.med > d.margin(slowest.med, last.med) {
			res.Class = Warmup
			res.Reason = fmt.Sprintf("median %s in samples %d–%d, faster at %s in the steady window from sample %d of %d",
				a, d.bound(slowest.a), d.bound(slowest.b), b, res.Start, n)
			break
		}
		// Every level is within the margin of the last, but merging them
		// would drift: flat in Barrett et al.'s sense, steady from the last
		// changepoint.
		res.Class = Flat
		res.Reason = fmt.Sprintf("all %d levels within %s of the steady one (median %s), which starts at sample %d of %d",
			len(segs), fmtNs(d.margin(slowest.med, last.med), 3), fmtNs(last.med, 3), res.Start, n)
	}
	d.shortTail(res, tailW)
}

// shortTail sets Suggest and extends Reason when the steady window holds
// fewer than shortTailWindows windows.
func (d *detector) shortTail(res *Result, tailW int) {
	if tailW >= shortTailWindows {
		return
	}
	res.Suggest = d.suggest()
	res.Reason += fmt.Sprintf("; the steady window holds only %s (fewer than %d): for a firmer verdict run with -benchtime=%dx",
		plural(tailW, "window"), shortTailWindows, res.Suggest)
}

// suggest returns the iteration count to ask for: twice the samples, at least
// minSuggestWindows windows, rounded up to two significant digits.
func (d *detector) suggest() int {
	return roundUp2(max(2*len(d.x), minSuggestWindows*d.w))
}

// roundUp2 rounds n > 0 up to two significant digits.
func roundUp2(n int) int {
	if n < 100 {
		return n
	}
	p := 1
	for n/p >= 100 {
		p *= 10
	}
	return (n + p - 1) / p * p
}

// median returns the median of x[lo:hi] (the mean of the middle two for an
// even count), in ns.
func (d *detector) median(lo, hi int) float64 {
	m := hi - lo
	if m == 0 {
		return 0
	}
	d.scr = append(d.scr[:0], d.x[lo:hi]...)
	s := d.scr
	slices.Sort(s)
	if m%2 == 1 {
		return float64(s[m/2])
	}
	return (float64(s[m/2-1]) + float64(s[m/2])) / 2
}

// inflation estimates by how much autocorrelation between nearby samples
// inflates the variance of a rank statistic, by batch means over windows: the
// variance of the windows' rank sums, estimated robustly from their
// differences two windows apart (median of squares / 0.4549, the median of
// χ²₁, /2)
// so that a few level changes do not count, over its value for independent
// samples. The result is at least 1, and 1 with fewer than minInflWindows
// windows.
func (d *detector) inflation() float64 {
	if d.nw < minInflWindows {
		return 1
	}
	n := len(d.x)
	ties := d.rank(0, n)
	nf := float64(n)
	varR := (nf*nf-1)/12 - ties/(12*nf) // variance of the midranks
	if varR <= 0 {
		return 1
	}
	sums := make([]float64, d.nw)
	for k := range d.nw {
		for _, r := range d.ranks[k*d.w : (k+1)*d.w] {
			sums[k] += r
		}
	}
	// Differences two windows apart: neighbouring windows are correlated
	// when samples are, which would shrink differences one window apart.
	sq := make([]float64, d.nw-2)
	for k := range sq {
		dd := sums[k+2] - sums[k]
		sq[k] = dd * dd
	}
	v := medianF(sq) / 0.4549 / 2
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

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// fmtNs formats ns as a duration rounded to sig significant digits, in the
// largest unit (s, ms, µs, ns) that keeps the value at least 1 after rounding
// (999.96 µs prints as 1.00 ms, not 1000 µs).
func fmtNs(ns float64, sig int) string {
	if ns == 0 || math.IsNaN(ns) || math.IsInf(ns, 0) {
		return fmt.Sprintf("%v ns", ns)
	}
	a := math.Abs(ns)
	p := math.Pow(10, math.Floor(math.Log10(a))-float64(sig-1))
	a = math.Round(a/p) * p
	unit, div := "ns", 1.0
	switch {
	case a >= 1e9:
		unit, div = "s", 1e9
	case a >= 1e6:
		unit, div = "ms", 1e6
	case a >= 1e3:
		unit, div = "µs", 1e3
	}
	v := math.Copysign(a/div, ns)
	dec := max(sig-1-int(math.Floor(math.Log10(a/div))), 0)
	return fmt.Sprintf("%.*f %s", dec, v, unit)
}

// pair formats two levels with enough digits (3 to 6 significant) that they
// read differently when they differ; same reports that even 6 digits print
// them alike, so that a message can avoid claiming a change beside them.
func pair(a, b float64) (sa, sb string, same bool) {
	for sig := 3; sig <= 6; sig++ {
		sa, sb = fmtNs(a, sig), fmtNs(b, sig)
		if sa != sb {
			return sa, sb, false
		}
	}
	return sa, sb, true
}
