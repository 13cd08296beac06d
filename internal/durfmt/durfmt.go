// Package durfmt is gapbench's one duration formatter: every duration a
// person reads (a latency, a gap, an elapsed time) is written by it, so that
// the same value reads the same in a log line, a table and a picture.
//
// The style is Go's time.Duration style, a number and a unit with no space
// between ("250µs", "1.5ms", "12.3s"): Ns and NsDigits for figures measured in
// nanoseconds (float64, as statistics return them), Elapsed for the wall
// time of a run or its ETA.
package durfmt

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Ns formats ns nanoseconds with three significant digits in the largest of
// s, ms, µs and ns that keeps the number at least 1 after rounding
// (999960 ns is "1ms", never "1e+03µs" or "1000µs"). Trailing zeros are
// dropped ("1ms", "1.5ms"). Zero is "0s", NaN is "n/a" (no value), and the
// infinities are "+Inf" and "-Inf".
func Ns(ns float64) string { return NsDigits(ns, 3) }

// NsDigits is Ns with sig significant digits (at least 1). Use it where
// two values must read differently when they differ (print both with more
// digits until they do).
func NsDigits(ns float64, sig int) string {
	switch {
	case math.IsNaN(ns):
		return "n/a"
	case math.IsInf(ns, 1):
		return "+Inf"
	case math.IsInf(ns, -1):
		return "-Inf"
	case ns == 0:
		return "0s"
	}
	sig = max(sig, 1)
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
	v := a / div
	dec := max(sig-1-int(math.Floor(math.Log10(v))), 0)
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if ns < 0 {
		s = "-" + s
	}
	return s + unit
}

// Elapsed formats a wall-clock span for a person, rounded to what a person
// reads: to the millisecond under a second ("850ms"), to 100 ms under a
// minute ("12.3s"), to the second beyond ("4m5s").
func Elapsed(d time.Duration) string {
	switch a := d.Abs(); {
	case a < time.Second:
		return d.Round(time.Millisecond).String()
	case a < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
