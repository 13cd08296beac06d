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

// writeTable writes the verdict table: one row per judged (benchmark, unit,
// arm, the base (A) and candidate (B) medians in benchstat's notation, B/A with
// its confidence interval, the minimal detectable effect, benchstat's p-value
// and the outcome), then each row's reasons and quarantined rounds. base
// names the base arm in the header.
func writeTable(w io.Writer, rows []judged, base string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "benchmark\tunit\tarm\tA=%s\tB=arm\tB/A\tCI\tMDE\tp\tverdict\n", base)
	for _, r := range rows {
		v := r.Verdict
		cls := benchunit.ClassOf(r.Set.Unit)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Set.Benchmark, r.Set.Unit, r.Set.Candidate,
			scale(v.Base.Center, cls), scale(v.Candidate.Center, cls),
			ratio(v.Ratio), interval(v.Lo, v.Hi), mde(v.MDE), pval(v.Comparison.P), v.Outcome)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range rows {
		if len(r.Verdict.Reasons) > 0 {
			fmt.Fprintf(&b, "%s %s %s: %s: %v\n", r.Set.Benchmark, r.Set.Unit, r.Set.Candidate, r.Verdict.Outcome, r.Verdict.Reasons)
		}
	}
	for _, r := range rows {
		for _, rs := range r.Verdict.Rounds {
			if rs.Quarantined {
				fmt.Fprintf(&b, "quarantined: %s %s %s: round %d (A %.4g, A' %.4g, B %.4g): %s\n",
					r.Set.Benchmark, r.Set.Unit, r.Set.Candidate, rs.Label, rs.A, rs.Null, rs.B, rs.Cause)
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
	if lo == 0 || math.IsInf(hi, 0) {
		return "∞"
	}
	return fmt.Sprintf("%.3f–%.3f", lo, hi)
}

func mde(p float64) string {
	if math.IsInf(p, 0) || math.IsNaN(p) {
		return "∞"
	}
	return fmt.Sprintf("±%.1f%%", 100*p)
}

func pval(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.3f", p)
}
