package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"

	"github.com/gapbench/gapbench/interleave"
	"github.com/gapbench/gapbench/nullband"
)

// judged is one Set with its Verdict, a row of writeTable.
type judged struct {
	Set     interleave.Set
	Verdict nullband.Verdict
}

// writeTable writes the verdict table: one row per Judged (benchmark, unit,
// arm, the base (A) and candidate (B) medians in benchstat's notation, B/A with its
// confidence interval, the null band, the minimal detectable effect,
// benchstat's p-value and the verdict), then each row's reason, then every
// rejected round with its reason. base names the base arm in the header.
func writeTable(w io.Writer, rows []judged, base string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "benchmark\tunit\tarm\tA=%s\tB=arm\tB/A\tCI\tnull band\tMDE\tp\tverdict\n", base)
	for _, r := range rows {
		v := r.Verdict
		cls := benchunit.ClassOf(r.Set.Unit)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Set.Benchmark, r.Set.Unit, r.Set.Candidate,
			scale(v.Base.Center, cls), scale(v.Candidate.Center, cls),
			ratio(v.Ratio.Center), interval(v.Ratio.Lo, v.Ratio.Hi), interval(v.Band.Lo, v.Band.Hi),
			mde(v.MDE), pval(v.Comparison.P), v.Kind)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	if len(rows) > 0 {
		v := rows[0].Verdict
		fmt.Fprintf(&b, "\nB/A is the median of per-round ratios over accepted rounds with its %.0f%% CI; the null band spans %.0f%% of accepted rounds' A'/A (A' = another instance of %s in the same round); p is benchstat's U-test over all rounds.\n",
			100*v.Confidence, 100*v.Band.Coverage, base)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s %s: %s: %s\n", r.Set.Benchmark, r.Set.Unit, r.Set.Candidate, r.Verdict.Kind, r.Verdict.Reason)
	}
	for _, r := range rows {
		for _, rs := range r.Verdict.Rounds {
			if rs.Rejected {
				fmt.Fprintf(&b, "rejected: %s %s %s: %s\n", r.Set.Benchmark, r.Set.Unit, r.Set.Candidate, rs.Reason)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func scale(x float64, cls benchunit.Class) string {
	if math.IsNaN(x) {
		return "-"
	}
	return benchunit.Scale(x, cls)
}

func ratio(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "-"
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "∞"
	}
	return fmt.Sprintf("%.3f–%.3f", lo, hi)
}

func mde(d nullband.Detectable) string {
	p := d.Percent()
	if math.IsInf(p, 0) || math.IsNaN(p) {
		return "∞"
	}
	return fmt.Sprintf("±%.1f%%", p)
}

func pval(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.3f", p)
}
