package steady

import (
	"fmt"
	"math"
	"strconv"
)

// Class is the shape of a latency series, after Barrett et al. (2017).
type Class int

const (
	// NoSteadyState: the series never settled (it changed near its end, or
	// drifts), or it is shorter than two windows. It is the zero Class, so a
	// zero Result claims nothing.
	NoSteadyState Class = iota
	// Flat: one level from the first window to the last, or levels all
	// within the margin of the last one (see the package doc).
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
	// DefaultWindow is the window, in samples.
	DefaultWindow = 32
	// DefaultTolerance is the relative tolerance between levels (2%).
	DefaultTolerance = 0.02
	// DefaultAlpha is the false-alarm probability of each test.
	DefaultAlpha = 0.001
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
	// Window is the number of samples per window. 0 means DefaultWindow (32); otherwise it must be at least 4.
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
	// Stride is the number of iterations each sample stands for, when the
	// record keeps only every Stride-th iteration. 0 means 1. Result's
	// indices stay sample indices; Suggest counts iterations.
	Stride int
	// Scratch, when it holds at least twice as many values as the series,
	// is memory Detect uses for its sort instead of allocating it, and
	// leaves overwritten; the caller can use it again after Detect returns.
	Scratch []int64
}

// Validate reports the first field of p outside its allowed range.
func (p Params) Validate() error {
	if p.Window != 0 && p.Window < 4 {
		return fmt.Errorf("steady: Params.Window is %d; it must be 0 (meaning %d) or at least 4", p.Window, DefaultWindow)
	}
	if p.Tolerance < 0 || p.Tolerance >= 1 || math.IsNaN(p.Tolerance) {
		return fmt.Errorf("steady: Params.Tolerance is %v; it must be in [0, 1) (0 means %v)", p.Tolerance, DefaultTolerance)
	}
	if p.Alpha < 0 || p.Alpha >= 1 || math.IsNaN(p.Alpha) {
		return fmt.Errorf("steady: Params.Alpha is %v; it must be in (0, 1) (0 means %v)", p.Alpha, DefaultAlpha)
	}
	if p.Stride < 0 {
		return fmt.Errorf("steady: Params.Stride is %d; it must be 0 (meaning 1) or at least 1", p.Stride)
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

// Reason is why Detect classified a series as it did. The numbers behind it
// are in Result's fields, named on each value; a caller writes the words.
type Reason int

const (
	// InvalidParams: Params failed Validate; Result.Err says how.
	InvalidParams Reason = iota
	// TooShort: fewer than two whole windows (Result.Windows).
	TooShort
	// TooLong: more than MaxSamples samples; thin the series and set
	// Params.Stride.
	TooLong
	// StillChanging: the level changed (len(Changepoints) times) and the
	// last segment holds TailWindows of Windows, fewer than MinTail. Ref is
	// the segment before the last; SameMedian says that the change is in
	// the distribution, not the median.
	StillChanging
	// Drifting: the last segment (TailWindows) drifts from DriftFrom to
	// DriftTo (ns).
	Drifting
	// OneLevel: Flat, one level over all Windows.
	OneLevel
	// WithinMargin: Flat, len(Levels) levels all within Margin (ns) of the
	// last; steady from Start.
	WithinMargin
	// Faster: Warmup; Ref is the slowest earlier level.
	Faster
	// Slower: Slowdown; Ref is the fastest earlier level.
	Slower
)

var reasonNames = [...]string{"invalid-params", "too-short", "too-long", "still-changing", "drifting", "one-level", "within-margin", "faster", "slower"}

// String returns a stable identifier such as "too-short".
func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Result is Detect's verdict on one series: a class, an enumerated reason
// and the numbers behind it. Indices are sample indices; Suggest counts
// iterations (samples × Params.Stride).
type Result struct {
	// Class is the shape of the series.
	Class Class
	// Reason is why; Err is set only with InvalidParams.
	Reason Reason
	Err    error
	// Start is the index of the first sample of the steady window (a
	// multiple of the window); the steady window runs to the end of the
	// series. -1 when Class is NoSteadyState.
	Start int
	// Changepoints are the sample indices (window boundaries) where the
	// level changes, after merging equal levels, in increasing order; empty
	// when one level remains.
	Changepoints []int
	// Levels are the segments between changepoints, in order; they cover the
	// whole series, and the last is the steady window unless Class is
	// NoSteadyState. Empty when the series is shorter than two windows or
	// longer than MaxSamples, or Params is invalid.
	Levels []Segment
	// Windows is the number of whole windows; TailWindows those of the
	// last segment; MinTail the fewest a steady window needs after a change.
	Windows, TailWindows, MinTail int
	// Ref is the earlier level the last is compared with (see Reason).
	Ref Segment
	// SameMedian: with StillChanging, the two medians print alike even at
	// six significant digits.
	SameMedian bool
	// Margin is the largest difference (ns) between levels counted as one
	// (WithinMargin).
	Margin float64
	// DriftFrom and DriftTo are the drift's fitted start and end (ns).
	DriftFrom, DriftTo float64
	// ShortTail: a steady window holds fewer than ShortTailWindows windows,
	// and Suggest is set.
	ShortTail bool
	// Suggest is the number of recorded iterations to ask for next time when
	// there is no steady state or the steady window is short; 0 when not
	// needed, with InvalidParams and with TooLong (more iterations would not
	// help). See the package doc for the rule.
	Suggest int
}

// ShortTailWindows: a steady window with fewer windows sets ShortTail.
const ShortTailWindows = shortTailWindows

// Detect classifies samples, the per-step latencies in nanoseconds in run
// order, and finds their steady window. It is deterministic, does not
// modify samples, and retains none of it. Invalid Params give NoSteadyState
// with InvalidParams.
//
// The rule. Detect works on the per-step latencies (nanoseconds, in run order), cut
// into windows of Params.Window samples (default 32); the last window absorbs the remainder when the length is not a
// multiple of the window. Changepoints fall only on window boundaries, so the
// steady window always starts at a multiple of the window.
//
//  1. Too short. Fewer than 2 whole windows: no steady state.
//
//  2. Changepoints, by binary segmentation with a rank test. In a segment,
//     every interior window boundary t is a candidate; its statistic is the
//     Mann–Whitney rank sum of the samples before t against those after it,
//     standardised by its null variance (ties corrected) times the
//     autocorrelation factor f below. The boundary with the largest |z| is a
//     changepoint when its two-sided p-value times the number of candidates
//     (Bonferroni) is below Params.Alpha (default 0.001); both sides are then
//     searched the same way, down to segments of two windows, most
//     significant split first and at most 256 changepoints (a series that
//     changes more often than that has no steady state anyway).
//
//     Why ranks: latency noise is neither normal nor unimodal, and the
//     penalty of a parametric cost (PELT with a Gaussian cost, as Barrett et
//     al. used after removing outliers) is right only for the noise it
//     assumes. A rank test's false-alarm rate on samples of one distribution
//     is at most Alpha whatever that distribution is: occasional 10x
//     outliers, a Pareto tail, or a bimodal series whose every sample comes
//     at random from one of two levels are all one distribution, not a level
//     change. A bimodal series is therefore reported as flat; its median may
//     sit on either mode, and saying that it is bimodal is nullband's job.
//
//     Why f: samples close in time are correlated on a real host, which
//     makes any test that assumes independence see changes in noise. f is
//     estimated once by batch means: the variance of the windows' rank sums
//     (robustly, from the smallest 90% of the squared differences between
//     windows two apart, so that a few level changes do not count) over its
//     value for independent samples; f is at least 1, and 1 when there are fewer than 6
//     windows. It corrects for correlation shorter than a window; slower
//     weather is left to the margin of step 3.
//
//  3. Levels and merging. The level of a segment is the median of its
//     samples. A rank test on thousands of samples finds changes too small to
//     matter, so adjacent segments are merged, closest pair first, while their
//     levels differ by at most the margin max(Params.Tolerance × the smaller
//     level, σ). Params.Tolerance is relative (default 0.02); σ is the
//     window-to-window noise, 1.4826 × the median absolute difference of
//     consecutive window medians / √2: a change smaller than the scatter of
//     one window's median is not one a person can act on. (Barrett et al.
//     likewise treat segments within a variance-based margin as equivalent.)
//     A merge is refused when the merged segment would drift. Last, a
//     segment of one window whose level lies strictly between its
//     neighbours' is the window in which a step happened (its samples mix
//     both levels); it joins the segment before it. Likewise the first
//     window of the last segment moves to the segment before it, at most
//     MinTail times, while it holds more samples on the earlier level's side
//     of the midpoint between the two levels than the rest of the last
//     segment makes likely (binomial tail, rate (count+1)/(n+2) from the
//     rest, p < 0.01; looser than Alpha because a false move costs one
//     window while a missed one leaves samples of the earlier level in the
//     steady window's tail percentiles).
//
//  4. Drift. A segment of at least 3 windows drifts when both: the change of
//     level across it, estimated as its length times the median slope
//     between window medians half the segment apart, exceeds the margin; and
//     the Spearman rank correlation of its samples with their index has the
//     same sign and is significant at Alpha (with f as in step 2). A slower
//     drift moves the level by less than the margin across the steady window
//     and is not told apart from a steady level.
//
//  5. Classes, on the merged segments, in this order:
//     - no steady state when there is a changepoint and the last segment
//     holds fewer than Params.MinTail windows (default max(4, ⌈windows/5⌉);
//     Barrett et al. likewise reject a last changepoint near the end of the
//     run): the series was still changing near its end, so its tail is too
//     short to trust;
//     - no steady state when the last segment drifts;
//     - flat when one segment remains: the steady window is the whole series;
//     - slowdown when an earlier segment is faster than the last by more
//     than the margin;
//     - warm-up when an earlier segment is slower than the last by more than
//     the margin (and none is faster);
//     - otherwise flat: every level is within the margin of the last, but
//     merging them would drift, so the steady window is the last segment.
//     Except when there is no steady state, the steady window is the last
//     segment: Result.Start to the end of the series.
func Detect(samples []int64, p Params) Result {
	if err := p.Validate(); err != nil {
		return Result{Class: NoSteadyState, Reason: InvalidParams, Err: err, Start: -1}
	}
	d := newDetector(samples, p)
	return d.run()
}

// tooShort is the result for a series of fewer than two windows.
func (d *detector) tooShort() Result {
	return Result{Class: NoSteadyState, Reason: TooShort, Start: -1, Windows: d.nw, Suggest: d.suggest()}
}

// tooLong is the result for a series longer than MaxSamples.
func (d *detector) tooLong() Result {
	return Result{Class: NoSteadyState, Reason: TooLong, Start: -1, Windows: d.nw}
}

func (d *detector) classify(segs []seg, res *Result) {
	last := segs[len(segs)-1]
	tailW := last.b - last.a
	res.Windows, res.TailWindows, res.MinTail = d.nw, tailW, d.tail
	if len(segs) > 1 && tailW < d.tail {
		prev := segs[len(segs)-2]
		res.Class, res.Reason = NoSteadyState, StillChanging
		res.Ref = Segment{Start: d.bound(prev.a), End: d.bound(prev.b), Median: prev.med}
		res.SameMedian = same6(prev.med, last.med)
		res.Suggest = d.suggest()
		return
	}
	if dr, from, to := d.drift(last, d.srt[d.bound(last.a):d.bound(last.b)]); dr {
		res.Class, res.Reason = NoSteadyState, Drifting
		res.DriftFrom, res.DriftTo = from, to
		res.Suggest = d.suggest()
		return
	}
	if len(segs) == 1 {
		res.Class, res.Reason, res.Start = Flat, OneLevel, 0
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
	ref := func(s seg) Segment { return Segment{Start: d.bound(s.a), End: d.bound(s.b), Median: s.med} }
	switch {
	case !same6(fastest.med, last.med) && last.med-fastest.med > d.margin(fastest.med, last.med):
		res.Class, res.Reason, res.Ref = Slowdown, Slower, ref(fastest)
	case !same6(slowest.med, last.med) && slowest.med-last.med > d.margin(slowest.med, last.med):
		res.Class, res.Reason, res.Ref = Warmup, Faster, ref(slowest)
	default:
		// Every level is within the margin of the last, but merging them
		// would drift: flat in Barrett et al.'s sense, steady from the last
		// changepoint.
		res.Class, res.Reason = Flat, WithinMargin
		res.Margin = d.margin(slowest.med, last.med)
	}
	d.shortTail(res, tailW)
}

// shortTail sets ShortTail and Suggest when the steady window holds fewer
// than shortTailWindows windows.
func (d *detector) shortTail(res *Result, tailW int) {
	if tailW >= shortTailWindows {
		return
	}
	res.ShortTail = true
	res.Suggest = d.suggest()
}

// suggest returns the iteration count to ask for: twice the samples, at least
// minSuggestWindows windows, rounded up to two significant digits.
func (d *detector) suggest() int {
	return roundUp2(max(2*len(d.x), minSuggestWindows*d.w) * d.stride)
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

// same6 reports whether a and b agree to six significant digits, so that no
// caller claims a change between two numbers that print alike.
func same6(a, b float64) bool {
	return strconv.FormatFloat(a, 'g', 6, 64) == strconv.FormatFloat(b, 'g', 6, 64)
}
