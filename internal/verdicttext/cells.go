package verdicttext

import (
	"fmt"
	"math"
	"strings"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
	"golang.org/x/perf/benchunit"
)

// The cells of the verdict table: figures in few characters.

// marginOrMDE is the δ of an equivalent verdict, the MDE of an undecided
// one, and "-" otherwise.
func marginOrMDE(v nullband.Verdict) string {
	switch v.Outcome {
	case nullband.Equivalent:
		return "±" + pct(v.Delta)
	case nullband.Undecided:
		if math.IsInf(v.MDE, 0) || math.IsNaN(v.MDE) {
			return "MDE ∞"
		}
		return "MDE " + pct(v.MDE)
	}
	return "-"
}

func rounds(v nullband.Verdict) string {
	s := fmt.Sprint(v.Used)
	if v.Quarantined > 0 {
		s += fmt.Sprintf("+%dq", v.Quarantined)
	}
	return s
}

// benchstatCell writes benchstat's delta as benchstat prints it for every
// round of the row (Row.Benchstat), or Verdict.Comparison's when the row
// has no such figures.
func benchstatCell(r Row) string {
	if !r.Stat {
		return benchstat(r.Verdict)
	}
	b := r.Benchstat
	if !(b.Base > 0) || math.IsNaN(b.Arm) || math.IsNaN(b.P) {
		return "-"
	}
	if !b.Significant() {
		return fmt.Sprintf("~ p=%.3f", b.P)
	}
	return fmt.Sprintf("%s p=%.3f", signed(b.Arm/b.Base), b.P)
}

// benchstat writes benchstat's delta: the change of the medians with the
// U-test's p, or "~" when p is above benchstat's α.
func benchstat(v nullband.Verdict) string {
	c := v.Comparison
	if math.IsNaN(v.Base.Center) || math.IsNaN(v.Candidate.Center) || v.Base.Center == 0 {
		return "-"
	}
	if c.P > c.Alpha {
		return fmt.Sprintf("~ p=%.3f", c.P)
	}
	return fmt.Sprintf("%s p=%.3f", signed(v.Candidate.Center/v.Base.Center), c.P)
}

func ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return report.Fixed(x, 3)
}

// hasInterval reports whether interval(lo, hi) bounds the ratio on some
// side: not "-" (unknown) or "∞" (no interval yet). A one-sided interval
// ("0.957–∞") has a level like a two-sided one.
func hasInterval(lo, hi float64) bool {
	return !math.IsNaN(lo) && !math.IsNaN(hi) && (lo > 0 || !math.IsInf(hi, 1))
}

func interval(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return "-"
	case lo <= 0 && math.IsInf(hi, 1):
		return "∞"
	case math.IsInf(hi, 1):
		return report.Fixed(lo, 3) + "–∞" // bounded below only
	case lo <= 0:
		return "0–" + report.Fixed(hi, 3) // bounded above only
	}
	return report.Fixed(lo, 3) + "–" + report.Fixed(hi, 3)
}

// pct writes a fraction as a percentage with one decimal ("2.0%"), in
// exponent form when huge (report.Fixed).
func pct(f float64) string { return report.Fixed(100*f, 1) + "%" }

// pct0 writes a level as a whole percentage ("95%"), or a decimal when it
// is not whole ("97.5%").
func pct0(f float64) string {
	p := 100 * f
	if math.Abs(p-math.Round(p)) < 1e-9 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// signed writes a ratio as a signed change ("+4.9%"), in exponent form
// when huge (report.Signed).
func signed(r float64) string { return report.Signed(100*(r-1), 1) + "%" }

// spread writes a spread of logarithms as the ratio max/min − 1.
func spread(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return pct(math.Expm1(s))
}

// value scales x in unit as benchstat would.
func value(x float64, unit string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	f, u := benchunit.Tidy(1, unit)
	return report.Scaled(x*f, benchunit.CommonScale([]float64{x * f}, benchunit.ClassOf(u))) + unitSuffix(u)
}

// unitSuffix is the unit's measure after scaling: "s" for sec/op-like
// units, "" for the others.
func unitSuffix(unit string) string {
	if strings.Contains(unit, "sec/") {
		return "s"
	}
	return ""
}
