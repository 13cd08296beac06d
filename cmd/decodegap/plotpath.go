package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/traceplot"
	"github.com/gapbench/gapbench/nullband"
)

// when there is one verdict, else with "-BENCHMARK-CANDIDATE-UNIT" before
// the extension (the benchmark only when the rows hold more than one),
// reduced to characters safe in a file name, and numbered when two rows
// would still share a name, so that no picture overwrites another.
func plotPaths(plot string, rows []report.Row) []string {
	if len(rows) == 1 {
		return []string{plot}
	}
	benches := map[string]bool{}
	for _, r := range rows {
		benches[r.Bench] = true
	}
	ext := filepath.Ext(plot)
	safe := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '-' || r == '.' || r == '_' || r == '=' || unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return '_'
		}, s)
	}
	seen := map[string]int{}
	paths := make([]string, len(rows))
	for i, r := range rows {
		tag := r.Arm + "-" + r.Unit
		if len(benches) > 1 {
			tag = r.Bench + "-" + tag
		}
		tag = safe(tag)
		if n := seen[tag]; n > 0 {
			seen[tag]++
			tag = fmt.Sprintf("%s-%d", tag, n+1)
		} else {
			seen[tag] = 1
		}
		paths[i] = strings.TrimSuffix(plot, ext) + "-" + tag + ext
	}
	return paths
}

// verdictLabel is the verdict's outcome with its reasons, if any, for the
// picture's title: "slower", "undecided (straddles)".
func verdictLabel(v nullband.Verdict) string {
	if len(v.Reasons) == 0 {
		return v.Outcome.String()
	}
	rs := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		rs[i] = r.String()
	}
	return v.Outcome.String() + " (" + strings.Join(rs, ", ") + ")"
}

// verdictData turns a verdict into the picture's data: the rounds that have
// a ratio, the null band, and the ratio's CI (collapsed onto the estimate,
// and said so, when the run has too few rounds for one).
func verdictData(row report.Row, base string) traceplot.VerdictData {
	v := row.Verdict
	d := traceplot.VerdictData{
		Title: row.Bench, ArmA: base, ArmB: row.Arm, Metric: row.Unit,
		Ratio: v.Ratio, CILow: v.Lo, CIHigh: v.Hi, CILevel: v.Confidence,
		Verdict: verdictLabel(v),
	}
	for _, r := range v.Rounds {
		if r.Ratio > 0 && !math.IsInf(r.Ratio, 0) {
			d.Ratios = append(d.Ratios, r.Ratio)
			d.Rejected = append(d.Rejected, r.Quarantined)
		}
	}
	if v.NullLo > 0 && v.NullHi >= v.NullLo && !math.IsInf(v.NullHi, 0) {
		d.NullLow, d.NullHigh = v.NullLo, v.NullHi
	}
	if !(d.CILow > 0) || math.IsInf(d.CIHigh, 0) || d.CILow > d.Ratio || d.CIHigh < d.Ratio {
		d.CILow, d.CIHigh, d.CILevel = d.Ratio, d.Ratio, 0
		d.Verdict += " (no confidence interval: too few rounds)"
	}
	return d
}

// pkgsDiffer reports whether the results name more than one pkg: (arms
