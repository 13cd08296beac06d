// Package verdicttext writes nullband verdicts for a person: one compact
// table (benchmark × arm × metric → outcome, B/A with its interval, δ or
// MDE, rounds, and benchstat's delta beside it), each distinct reason once
// under it in words, and the quarantined rounds with their values. It is
// the one place where a verdict's words are written; decodegap's log and
// the decodegap command both call Write.
package verdicttext

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

// Row is one verdict: candidate Arm against the base on Metric in Bench.
type Row struct {
	// label names the row under the table (set by Write).
	label string
	// Bench names the benchmark (or gap setting) in the first column.
	Bench string
	// Arm is the candidate arm's name.
	Arm string
	// Metric is the judged unit as the results name it ("p50-sec/op");
	// it also scales A, A' and B in the quarantine list (benchunit).
	Metric string
	// Verdict is nullband.Judge's result; ignored when Err is set.
	Verdict nullband.Verdict
	// Err, when set, is why there is no verdict; it is written under the
	// table.
	Err error
	// Check marks the null arm's row against the base: the A/A check.
	Check bool
	// Benchstat, when Stat is set, is benchstat's view of every round
	// (report.Row.Benchstat), printed in the benchstat column; otherwise
	// the column shows Verdict.Comparison.
	Benchstat report.Benchstat
	Stat      bool
	// Stalled lists the rounds in which some arm's block held a stall;
	// Relieved says the extreme-spread quarantine was lifted.
	Stalled  []int
	Relieved bool
}

// WriteRows is Write for the report rows every route produces
// (internal/report): each row's benchmark, arm, unit, verdict, benchstat
// figures and stalled rounds. The null arm's rows are marked as the A/A
// check.
func WriteRows(w io.Writer, rows []report.Row, n Names) error {
	vr := make([]Row, len(rows))
	for i, r := range rows {
		bench := r.Bench
		if r.Pkg != "" {
			bench = shortPkg(r.Pkg) + "." + bench
		}
		vr[i] = Row{Bench: bench, Arm: r.Arm, Metric: r.Unit, Verdict: r.Verdict, Check: r.Kind == report.NullCheck,
			Benchstat: r.Benchstat, Stat: true, Stalled: r.Stalled, Relieved: r.Relieved}
		if r.Err != "" {
			vr[i].Err = errors.New(r.Err)
		}
	}
	return Write(w, vr, n)
}

// shortPkg is the last element of an import path.
func shortPkg(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// Names are the caller's names for what a person can change or look at:
// flags of a command ("-rounds") or fields of a config
// ("CompareConfig.Verdict.Delta"). An empty name leaves its advice out.
type Names struct {
	// Base and Null name the base arm (A) and the null arm (A').
	Base, Null string
	// Rounds names the setting for the number of rounds ("-count").
	Rounds string
	// MaxRounds names the cap of sequential mode ("-max-rounds").
	MaxRounds string
	// Delta names the equivalence margin's setting.
	Delta string
	// MaxQuarantined names the quarantine cap's setting.
	MaxQuarantined string
	// Family says what one family of rows is, for rows judged by
	// nullband.JudgeFamily or JudgeWeighted, as the subject of "form one
	// family" ("each arm's metrics"); the line that states the
	// family-wise rate uses it.
	Family string
	// Brief, when set, names the flag that writes everything in full
	// ("-v"): what equivalent and the family-wise rate mean is then said
	// in one short line each, and the stalled and the quarantined rounds
	// in one line each with counts, naming Brief. Empty writes it all.
	Brief string
}

// MaxListed is the most quarantined rounds listed per row.
const MaxListed = 8

// Width is the width at which the lines under the table wrap.
const Width = 100

// Write writes the table of rows, then each distinct reason once with the
// rows it concerns, then the quarantined rounds of every row.
func Write(w io.Writer, rows []Row, n Names) error {
	if len(rows) == 0 {
		return nil
	}
	rows = withLabels(rows)
	if n.Base == "" {
		n.Base = "A"
	}
	if n.Null == "" {
		n.Null = "A'"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// One level heads the CI column when every row shares it; otherwise
	// (Holm gives each row its own) each interval carries its level.
	conf, same := level(rows)
	head, mark := "CI", func(nullband.Verdict) string { return "" }
	if same && conf > 0 {
		head = pct0(conf) + " CI"
	} else {
		mark = func(v nullband.Verdict) string {
			if !hasInterval(v.Lo, v.Hi) {
				return "" // no interval yet
			}
			return " (" + pct0(v.Confidence) + ")"
		}
	}
	// The benchmark column only when some row names one.
	bench := func(r Row) string { return r.Bench + "\t" }
	if noBench(rows) {
		bench = func(Row) string { return "" }
	}
	fmt.Fprintf(tw, "%sarm\tmetric\tverdict\tB/A\t%s\tδ / MDE\trounds\tbenchstat\n", bench(Row{Bench: "benchmark"}), head)
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s%s\t%s\terror\t-\t-\t-\t-\t-\n", bench(r), armCell(r), r.Metric)
			continue
		}
		v := r.Verdict
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", bench(r), armCell(r), r.Metric, Outcome(v.Outcome, r.Metric),
			ratio(v.Ratio), judgedInterval(v, mark), marginOrMDE(v), rounds(v), benchstatCell(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, line := range notes(rows, n) {
		b.WriteString(wrap(line, Width))
	}
	if n.Brief != "" {
		b.WriteString(briefStalls(rows, n.Brief))
		b.WriteString(briefQuarantine(rows, n.Brief))
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString(stallLines(rows))
	for _, r := range rows {
		if r.Err != nil {
			continue
		}
		listed := 0
		for _, q := range r.Verdict.Rounds {
			if !q.Quarantined {
				continue
			}
			if listed == MaxListed {
				fmt.Fprintf(&b, "  … and %d more quarantined rounds of %s\n", r.Verdict.Quarantined-listed, label(r))
				break
			}
			if listed == 0 {
				fmt.Fprintf(&b, "quarantined rounds of %s (left out of the test):\n", label(r))
			}
			listed++
			vals := fmt.Sprintf("%s %s, %s %s, %s %s", n.Base, value(q.A, r.Metric), n.Null, value(q.Null, r.Metric), r.Arm, value(q.B, r.Metric))
			if r.Check {
				vals = fmt.Sprintf("%s %s, %s %s", n.Base, value(q.A, r.Metric), r.Arm, value(q.B, r.Metric))
			}
			b.WriteString("  " + wrap(fmt.Sprintf("round %d: %s: %s", q.Label, vals, cause(q, r.Verdict)), Width-2))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// equivalentRows are the rows whose verdict is equivalent.
func equivalentRows(rows []Row) []Row {
	var eq []Row
	for _, r := range rows {
		if r.Err == nil && r.Verdict.Outcome == nullband.Equivalent {
			eq = append(eq, r)
		}
	}
	return eq
}

// labels joins the rows' labels.
func labels(rows []Row) string {
	l := make([]string, len(rows))
	for i, r := range rows {
		l[i] = label(r)
	}
	return strings.Join(l, ", ")
}

// judgedInterval is the interval the outcome was judged on: the (1−2α_eq)
// interval of an equivalent verdict, marked with its level, else the
// confidence interval, with mark(v) after it.
func judgedInterval(v nullband.Verdict, mark func(nullband.Verdict) string) string {
	if v.Outcome == nullband.Equivalent {
		return interval(v.EqLo, v.EqHi) + " (" + pct0(1-2*(1-v.EqConfidence)) + ")"
	}
	return interval(v.Lo, v.Hi) + mark(v)
}

// level returns the confidence of the rows' difference intervals and
// whether every row without an error shares it.
func level(rows []Row) (float64, bool) {
	conf, set := 0.0, false
	for _, r := range rows {
		if r.Err != nil {
			continue
		}
		if !set {
			conf, set = r.Verdict.Confidence, true
		} else if math.Abs(r.Verdict.Confidence-conf) > 1e-12 {
			return conf, false
		}
	}
	return conf, true
}

// familyLine states the family-wise rate of rows judged by
// nullband.JudgeFamily with more than one member; "" otherwise.
func familyLine(rows []Row, n Names) string {
	var fam []Row
	for _, r := range rows {
		if r.Err == nil && !r.Check && r.Verdict.FamilySize > 1 {
			fam = append(fam, r)
		}
	}
	if len(fam) == 0 {
		return ""
	}
	v := fam[0].Verdict
	if n.Brief != "" {
		return fmt.Sprintf("false alarms: at most %s over each family of %d rows (Holm's procedure).", pct0(v.FamilyAlpha), v.FamilySize)
	}
	what := n.Family
	if what == "" {
		what = "the rows judged together"
	}
	return fmt.Sprintf("false alarms: %s form one family of %d rows under Holm's procedure: the chance that any of them is called faster or slower while unchanged is at most %s; each CI is at the level Holm gave it.",
		what, v.FamilySize, pct0(v.FamilyAlpha))
}

// cause writes why round q was quarantined, with its numbers.
func cause(q nullband.Round, v nullband.Verdict) string {
	switch q.Cause {
	case nullband.Missing:
		return "missing (a value is absent)"
	case nullband.NonPositive:
		return "non-positive (a value is ≤ 0)"
	case nullband.Contended:
		return "contended (the contention screen marked it)"
	case nullband.Extreme:
		return fmt.Sprintf("extreme (the arms spread %s, limit %s)", spread(q.Spread), spread(v.SpreadLimit))
	}
	return q.Cause.String()
}

func label(r Row) string { return r.label }

// armCell is the arm column: the null arm's row is marked as the A/A check.
func armCell(r Row) string {
	if r.Check {
		return r.Arm + " (A/A check)"
	}
	return r.Arm
}

// Outcome is the verdict column's word for outcome o on unit: faster and
// slower for time, "less CPU" and "more CPU" for a CPU-time unit (cpu-).
func Outcome(o nullband.Outcome, unit string) string {
	if report.IsCPU(unit) {
		switch o {
		case nullband.Faster:
			return "less CPU"
		case nullband.Slower:
			return "more CPU"
		}
	}
	return o.String()
}

// checkLine states the A/A check: which of the null arm's rows differ
// from the base, with their numbers, or that none does.
func checkLine(rows []Row, n Names) string {
	var checks, off []Row
	for _, r := range rows {
		if r.Check && r.Err == nil {
			checks = append(checks, r)
			if o := r.Verdict.Outcome; o == nullband.Faster || o == nullband.Slower {
				off = append(off, r)
			}
		}
	}
	if len(checks) == 0 {
		return ""
	}
	if nr := notRunLine(checks, n); nr != "" && len(off) == 0 {
		return nr
	}
	if len(off) == 0 {
		rowsWord := "rows"
		if len(checks) == 1 {
			rowsWord = "row"
		}
		return fmt.Sprintf("A/A check: %s, a second instance of %s, is not found to differ from %s on any metric (%d %s: equivalent or undecided).",
			n.Null, n.Base, n.Base, len(checks), rowsWord)
	}
	var list, third []string
	for _, r := range off {
		list = append(list, fmt.Sprintf("%s %s %s, %s", label(r), ratio(r.Verdict.Ratio), interval(r.Verdict.Lo, r.Verdict.Hi), sideRounds(r.Verdict, n.Base)))
		// A candidate arm on the same benchmark and metric that is not
		// found to differ from the base: if it is the same
		// configuration, it is the third instance that tells the causes
		// apart, and it sides with the base.
		for _, c := range rows {
			if c.Check || c.Err != nil || c.Bench != r.Bench || c.Metric != r.Metric {
				continue
			}
			if v := c.Verdict; v.Outcome != nullband.Faster && v.Outcome != nullband.Slower && v.Lo > 0 && v.Lo <= 1 && v.Hi >= 1 && !math.IsInf(v.Hi, 1) {
				third = append(third, fmt.Sprintf("%s %s %s", label(c), ratio(v.Ratio), interval(v.Lo, v.Hi)))
			}
		}
	}
	s := fmt.Sprintf("A/A check failed: %s, a second instance of %s, differs from %s (%s). Two instances of one configuration differ when the host moved between them, or when they settled in different regimes (a fresh session's pages, placement or threads); the rounds of the two alone do not tell which. A third instance of the configuration tells them apart (in a regime split it sides with one of the two, after a move of the host with neither)",
		n.Null, n.Base, n.Base, strings.Join(list, "; "))
	if n.Rounds != "" {
		s += fmt.Sprintf(", and more rounds (%s) show whether the shift stays", n.Rounds)
	}
	s += "."
	if len(third) > 0 {
		s += fmt.Sprintf(" Not found to differ from %s: %s; an arm of the same configuration as %s is that third instance, and it sides with %s.",
			n.Base, strings.Join(third, "; "), n.Base, n.Base)
	}
	return s + " Read the verdicts above with that in mind."
}

// sideRounds says in how many of a check row's used rounds the null arm
// read on the side of its shift against base ("above old in 7 of 8
// rounds").
func sideRounds(v nullband.Verdict, base string) string {
	k, used := 0, 0
	up := v.Ratio > 1
	for _, q := range v.Rounds {
		if q.Quarantined || !(q.Ratio > 0) || math.IsInf(q.Ratio, 0) {
			continue
		}
		used++
		if (q.Ratio > 1) == up {
			k++
		}
	}
	side := "below"
	if up {
		side = "above"
	}
	if used > 0 && k == used {
		return fmt.Sprintf("%s %s in every one of %d rounds", side, base, used)
	}
	return fmt.Sprintf("%s %s in %d of %d rounds", side, base, k, used)
}

// stallLines lists the stalled rounds once for the rows that share them.
func stallLines(rows []Row) string {
	var keys []string
	by := map[string][]Row{}
	for _, r := range rows {
		if r.Err != nil || len(r.Stalled) == 0 {
			continue
		}
		k := joinInts(r.Stalled)
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	var b strings.Builder
	for _, k := range keys {
		rs := by[k]
		which := k
		if n := rs[0].Verdict.Given; n > 0 && len(rs[0].Stalled) >= n {
			which = fmt.Sprintf("every round (%d)", len(rs[0].Stalled))
		}
		// A row judged with the null arm keeps every round; one judged
		// without (no null arm, or the A/A rows) may set it aside.
		with, without := 0, 0
		for _, r := range rs {
			if r.Verdict.Has(nullband.NoNullArm) {
				without++
			} else {
				with++
			}
		}
		rule := "when not every arm's, the round is quarantined if its spread shows it"
		switch {
		case without == 0:
			rule = "with the null arm it stays in the test"
		case with > 0:
			rule = "it stays in the rows judged with the null arm; in the others, when not every arm's, it is quarantined if its spread shows it"
		}
		b.WriteString(wrap(fmt.Sprintf("stalled rounds of %s (a step of 10× the median or more in some arm's block; %s): %s",
			labels(rs), rule, which), Width))
	}
	return b.String()
}

// joinInts joins round labels with commas.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// noBench reports whether no row names a benchmark.
func noBench(rows []Row) bool {
	for _, r := range rows {
		if r.Bench != "" {
			return false
		}
	}
	return true
}

// withLabels returns a copy of rows labelled "bench arm metric", leaving
// the benchmark out when every row has the same one.
func withLabels(rows []Row) []Row {
	out := append([]Row(nil), rows...)
	same := true
	for _, r := range rows {
		same = same && r.Bench == rows[0].Bench
	}
	for i := range out {
		r := &out[i]
		var parts []string
		for j, p := range []string{r.Bench, r.Arm, r.Metric} {
			if p != "" && !(j == 0 && same) {
				parts = append(parts, p)
			}
		}
		r.label = strings.Join(parts, " ")
	}
	return out
}

// wrap breaks s into lines of at most width characters at spaces, the
// continuation lines indented by two spaces, each ending in a newline.
func wrap(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		n := len([]rune(word))
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n  ")
			line = 2
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String() + "\n"
}
