package steady

import (
	"fmt"
	"math"
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
	// Stride is the number of iterations each sample stands for, when the
	// record keeps only every Stride-th iteration. 0 means 1. Result's
	// indices stay sample indices; Suggest and the iteration numbers in
	// Reason are multiplied by Stride.
	Stride int
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

// Result is Detect's verdict on one series.
type Result struct {
	// Class is the shape of the series.
	Class Class
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
	// Suggest is the number of recorded iterations to ask for next time
	// (-benchtime=<Suggest>x) when there is no steady state or the steady
	// window is short; 0 when not needed, and when Params is invalid or the
	// series longer than MaxSamples (more iterations would not help). See
	// the package doc for the rule.
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

func (d *detector) classify(segs []seg, res *Result) {
	last := segs[len(segs)-1]
	tailW := last.b - last.a
	if len(segs) > 1 && tailW < d.tail {
		prev := segs[len(segs)-2]
		res.Class = NoSteadyState
		res.Suggest = d.suggest()
		var what string
		if a, b, same := pair(prev.med, last.med); same {
			what = fmt.Sprintf("its median stayed at %s but its distribution changed", fmtNs(last.med, 3))
		} else {
			what = fmt.Sprintf("median %s → %s", a, b)
		}
		changed := "level still changing"
		if k := len(segs) - 1; k > 1 {
			changed = fmt.Sprintf("level changed %d times, still", k)
		}
		res.Reason = fmt.Sprintf("%s in the last %d of %d windows (%s; a steady window needs at least %d windows); run with -benchtime=%dx",
			changed, tailW, d.nw, what, d.tail, res.Suggest)
		return
	}
	if dr, from, to := d.drift(last, d.srt[d.bound(last.a):d.bound(last.b)]); dr {
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
		res.Reason = fmt.Sprintf("median %s in iterations %d–%d, slower at %s in the steady window from iteration %d",
			a, d.iter(d.bound(fastest.a)), d.iter(d.bound(fastest.b))-1, b, d.iter(res.Start))
	default:
		a, b, same = pair(slowest.med, last.med)
		if !same && slowest.med-last.med > d.margin(slowest.med, last.med) {
			res.Class = Warmup
			res.Reason = fmt.Sprintf("median %s in iterations %d–%d, faster at %s in the steady window from iteration %d",
				a, d.iter(d.bound(slowest.a)), d.iter(d.bound(slowest.b))-1, b, d.iter(res.Start))
			break
		}
		// Every level is within the margin of the last, but merging them
		// would drift: flat in Barrett et al.'s sense, steady from the last
		// changepoint.
		res.Class = Flat
		res.Reason = fmt.Sprintf("all %d levels within %s of the steady one (median %s), which starts at iteration %d",
			len(segs), fmtNs(d.margin(slowest.med, last.med), 3), fmtNs(last.med, 3), d.iter(res.Start))
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

// iter converts a sample index to an iteration number.
func (d *detector) iter(sample int) int { return sample * d.stride }

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
