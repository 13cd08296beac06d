package report

import (
	"math"
	"strconv"

	"golang.org/x/perf/benchunit"
)

// FixedLimit is the magnitude from which Fixed and Signed switch to the
// exponent form.
const FixedLimit = 1e6

// Fixed writes x with prec decimals, as "%.*f" does, while |x| is below
// FixedLimit, and beyond it with three significant digits in exponent
// form ("1.00e+305"): a figure of a hostile input (1e308 ns/op against
// 100) prints in a few characters, not three hundred digits. NaN and ±Inf
// print as "NaN", "+Inf" and "-Inf"; callers that mean "unknown" check
// for them first. A negative prec writes the fewest decimals that
// round-trip, as strconv.FormatFloat does.
func Fixed(x float64, prec int) string {
	if math.Abs(x) >= FixedLimit && !math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'e', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// Scaled is sc.Format(v) (benchunit: "123.4M") with the scaled figure
// written by Fixed, so that a value beyond the largest prefix stays short
// ("1.00e+290T", not three hundred digits).
func Scaled(v float64, sc benchunit.Scaler) string {
	return Fixed(v/sc.Factor, sc.Prec) + sc.Prefix
}

// Signed is Fixed with the sign always written ("+4.9", "-0.3",
// "+1.00e+305").
func Signed(x float64, prec int) string {
	s := Fixed(x, prec)
	if s != "" && s[0] != '-' && !math.IsNaN(x) {
		s = "+" + s
	}
	return s
}
