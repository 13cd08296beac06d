package prreport

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"

	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

// The words of the report live in this file: WriteMarkdown and WriteText
// share every phrase and differ only in layout. Below the report's own
// table (base, head, change and verdict, the columns a pull request
// needs), both append internal/verdicttext's table of the same rows, the
// one place where a verdict's reasons and quarantined rounds are worded;
// Markdown folds it into a <details> block.

// WriteMarkdown writes the report as GitHub-flavoured Markdown for a pull
// request comment: a title with the summary, the table, the guarantee and
// detection lines, the host, the unjudged benchmarks and, when fail is
// non-nil, the gate's result.
func WriteMarkdown(w io.Writer, r Report, fail *FailOn) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### Benchmarks: %s\n\n", summary(r))
	fmt.Fprintf(&b, "%s → %s\n\n", sideName(r.Base), sideName(r.Head))
	if len(r.Rows) > 0 {
		b.WriteString("| | benchmark | metric | base | head | change (CI) | verdict | MDE | rounds |\n")
		b.WriteString("|---|---|---|--:|--:|--:|---|--:|--:|\n")
		for _, row := range r.Rows {
			c := cells(row, r.Delta)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				mark(row.Verdict.Outcome), mdEscape(c.name), c.unit, c.base, c.head, c.change, c.verdict, c.mde, c.rounds)
		}
		b.WriteString("\n")
	}
	for _, l := range notes(r, fail) {
		b.WriteString(l + "\n\n")
	}
	if d, err := details(r); err != nil {
		return err
	} else if d != "" {
		b.WriteString("<details><summary>Verdict details: each row's test, the reasons, the quarantined rounds</summary>\n\n```text\n" + d + "```\n\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// details is internal/verdicttext's table of the rows, with each distinct
// reason in words and the quarantined rounds; "" without rows.
func details(r Report) (string, error) {
	if len(r.Rows) == 0 {
		return "", nil
	}
	n := r.Names
	n.Base, n.Null = ArmBase, ArmNull
	var b strings.Builder
	err := verdicttext.WriteRows(&b, r.Rows, n)
	return b.String(), err
}

// WriteText writes the report as plain text: the same lines as
// WriteMarkdown, with the table aligned in columns.
func WriteText(w io.Writer, r Report, fail *FailOn) error {
	fmt.Fprintf(w, "benchmarks: %s\n", summary(r))
	fmt.Fprintf(w, "%s -> %s\n\n", sideName(r.Base), sideName(r.Head))
	if len(r.Rows) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "benchmark\tmetric\tbase\thead\tchange (CI)\tverdict\tMDE\trounds")
		for _, row := range r.Rows {
			c := cells(row, r.Delta)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.name, c.unit, c.base, c.head, c.change, c.verdict, c.mde, c.rounds)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, l := range notes(r, fail) {
		if _, err := fmt.Fprintln(w, strings.NewReplacer("**", "", "`", "").Replace(l)); err != nil {
			return err
		}
	}
	d, err := details(r)
	if err == nil && d != "" {
		_, err = io.WriteString(w, "\nverdict details:\n"+d)
	}
	return err
}

// summary is the one line: "2 slower, 1 faster, 55 equivalent within ±2%,
// 2 undecided", leaving out zero counts (all four zero: "no benchmarks
// judged").
func summary(r Report) string {
	c := Count(r.Rows)
	var parts []string
	if c.Slower > 0 {
		parts = append(parts, fmt.Sprintf("%d slower", c.Slower))
	}
	if c.Faster > 0 {
		parts = append(parts, fmt.Sprintf("%d faster", c.Faster))
	}
	if c.Equivalent > 0 {
		parts = append(parts, fmt.Sprintf("%d equivalent within ±%s", c.Equivalent, pct(r.Delta)))
	}
	if c.Undecided > 0 {
		parts = append(parts, fmt.Sprintf("%d undecided", c.Undecided))
	}
	if len(parts) == 0 {
		return "no benchmarks judged"
	}
	return strings.Join(parts, ", ")
}

// notes are the lines under the table: the guarantee, what the run could
// detect, the reasons, the host, unjudged benchmarks and the gate.
func notes(r Report, fail *FailOn) []string {
	var out []string
	if n := len(Candidates(r.Rows)); n > 0 {
		out = append(out, fmt.Sprintf("False alarms: the chance that any of these %d rows is called faster or slower while unchanged is at most %s (weighted Holm across rows, a p50 row weighing twice the others; each row's CI is at its Holm level; the A/A rows are a check of their own).", n, pct(r.Alpha)))
	}
	if d := Detection(r.Rows); d.Rows > 0 {
		out = append(out, fmt.Sprintf("What this run could detect: changes beyond ±%s (median over %d rows), ±%s at worst (%s %s).",
			pct(d.Median), d.Rows, pct(d.Max), d.MaxRow.Bench, d.MaxRow.Unit))
	}
	if c := Count(r.Rows); c.Undecided > 0 {
		out = append(out, undecidedLine(r))
	}
	if report.CheckOf(r.Rows) == report.CheckNotRun {
		var open []string
		for _, row := range r.Rows {
			if row.Kind == report.NullCheck && !row.Checked() {
				open = append(open, row.Bench+" "+row.Unit)
			}
		}
		rows := "rows"
		if len(open) == 1 {
			rows = "row"
		}
		out = append(out, fmt.Sprintf("A/A check did not run on %d %s (%s): no interval yet, so a shift between base and its second instance could not be found there; raise -max-rounds or -budget.",
			len(open), rows, strings.Join(open, ", ")))
	}
	if r.Fleet != nil { // [shard hook] a merged report names its runners (shardrender.go)
		out = append(out, fleetLines(r)...)
	} else {
		out = append(out, hostLine(r))
	}
	for _, u := range r.Unjudged {
		out = append(out, unjudgedLine(u))
	}
	if fail != nil {
		if u := Unjudgeable(r.Unjudged); len(u) > 0 {
			names := make([]string, len(u))
			for i, x := range u {
				names[i] = shortPkg(x.Pkg) + "." + strings.TrimPrefix(x.Name, "Benchmark")
			}
			out = append(out, fmt.Sprintf("**Check failed**: %d %s could not be judged (-fail-on slower>%s passes only when every benchmark is): %s.",
				len(u), plural(len(u), "benchmark", "benchmarks"), pct(fail.Limit), strings.Join(names, ", ")))
		}
		if f := fail.Failing(r.Rows); len(f) > 0 {
			names := make([]string, len(f))
			for i, row := range f {
				names[i] = fmt.Sprintf("%s %s %s%%", row.Bench, row.Unit, report.Signed(100*Effect(row), 1))
			}
			out = append(out, fmt.Sprintf("**Check failed** (-fail-on slower>%s): %s.", pct(fail.Limit), strings.Join(names, ", ")))
		} else if len(Unjudgeable(r.Unjudged)) == 0 {
			out = append(out, fmt.Sprintf("Check passed (-fail-on slower>%s): no row decided slower by more than %s.", pct(fail.Limit), pct(fail.Limit)))
		}
	}
	return out
}

// undecidedLine says that undecided rows never fail the check, the rounds
// the slowest would need, and which limit stopped them: the advice names
// -budget only when the budget was spent before the rounds reached
// -max-rounds, and -max-rounds only when some reached it.
func undecidedLine(r Report) string {
	s := "Undecided rows never fail the check"
	if n := roundsToDecide(r.Rows); n > 0 {
		s += fmt.Sprintf("; the slowest of them would need about %d rounds", n)
	}
	st := r.Stops
	left := ""
	if r.Budget > 0 && r.Elapsed < r.Budget {
		left = fmt.Sprintf(", with %s of -budget %s left", durfmt.Elapsed(r.Budget-r.Elapsed), durfmt.Elapsed(r.Budget))
	}
	switch {
	case st.Capped > 0 && st.Budget > 0:
		s += fmt.Sprintf(" (%d %s stopped at the %d rounds of -max-rounds, %d when -budget %s ran out: raise both)",
			st.Capped, plural(st.Capped, "benchmark", "benchmarks"), r.MaxRounds, st.Budget, durfmt.Elapsed(r.Budget))
	case st.Capped > 0:
		s += fmt.Sprintf(" (this run stopped them at the %d rounds of -max-rounds%s: raise -max-rounds)", r.MaxRounds, left)
	case st.Budget > 0:
		s += fmt.Sprintf(" (-budget %s ran out before %s reached the %d rounds of -max-rounds: raise -budget)",
			durfmt.Elapsed(r.Budget), plural(st.Budget, "it", "they"), r.MaxRounds)
	}
	return s + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cellSet is one row's cells, shared by both layouts.
type cellSet struct{ name, unit, base, head, change, verdict, mde, rounds string }

func cells(row Row, delta float64) cellSet {
	v := row.Verdict
	base, head := columns(v)
	sc := benchunit.CommonScale([]float64{base, head}, benchunit.ClassOf(row.Unit))
	c := cellSet{
		name: row.Bench,
		unit: row.Unit,
		base: num(base, sc),
		head: num(head, sc),
	}
	if row.Pkg != "" {
		c.name = shortPkg(row.Pkg) + "." + row.Bench
	}
	if row.Kind == report.NullCheck {
		c.name += " (A/A check: null against base)"
	}
	switch {
	case math.IsNaN(v.Ratio) || v.Ratio <= 0:
		c.change = "—"
	case v.Outcome == nullband.Equivalent && v.EqLo > 0 && !math.IsInf(v.EqHi, 0):
		// Equivalence is judged on its own (1−2α) interval, at the
		// nominal level; the row's Holm-level interval may be wider, or
		// not yet finite.
		c.change = fmt.Sprintf("%s [%s, %s] (%s)", signed(v.Ratio-1), signed(v.EqLo-1), signed(v.EqHi-1), pct(1-2*(1-v.EqConfidence)))
	case v.Lo > 0 && !math.IsInf(v.Hi, 0):
		c.change = fmt.Sprintf("%s [%s, %s]", signed(v.Ratio-1), signed(v.Lo-1), signed(v.Hi-1))
	default:
		c.change = signed(v.Ratio-1) + " [no CI]"
	}
	more, less := "slower", "faster"
	if row.CPU() {
		more, less = "more CPU", "less CPU"
	}
	switch v.Outcome {
	case nullband.Slower:
		c.verdict = more + " by " + pct(v.Ratio-1)
	case nullband.Faster:
		c.verdict = less + " by " + pct(1-v.Ratio)
	case nullband.Equivalent:
		c.verdict = "equivalent within ±" + pct(delta)
	default:
		c.verdict = "undecided"
	}
	c.mde = "—"
	if v.MDE > 0 && !math.IsInf(v.MDE, 0) {
		c.mde = "±" + pct(v.MDE)
	}
	c.rounds = fmt.Sprint(v.Used)
	if v.Quarantined > 0 {
		c.rounds += fmt.Sprintf(" (+%d quarantined)", v.Quarantined)
	}
	return c
}

// columns returns the base and head columns of a row: the base's median
// over the rounds judged (benchmath's, as benchstat prints it) and that
// median times the verdict's estimate of B/A, so that head/base − 1 is
// the change column. The head's own median is not shown: it comes from
// another estimator (the median of the head's values, not the paired
// estimate of the ratio) and can lie on the other side of the base from
// the change (base 100, head 97, change +2%); the JSON has it as
// benchstat.arm. NaN when the ratio or the base is unknown.
func columns(v nullband.Verdict) (base, head float64) {
	base = v.Base.Center
	if !(v.Ratio > 0) || math.IsInf(v.Ratio, 0) {
		return base, math.NaN()
	}
	return base, base * v.Ratio
}

// mark is the status column of the Markdown table.
func mark(o nullband.Outcome) string {
	switch o {
	case nullband.Slower:
		return "🔴"
	case nullband.Faster:
		return "🟢"
	case nullband.Equivalent:
		return "⚪"
	}
	return "❔"
}

func num(v float64, sc benchunit.Scaler) string {
	if math.IsNaN(v) || v <= 0 {
		return "—"
	}
	return report.Scaled(v, sc)
}

// pct formats a fraction as a percentage with two significant figures
// ("2%", "0.75%", "12%").
func pct(f float64) string {
	p := 100 * f
	switch {
	case math.IsNaN(p):
		return "?"
	case math.Abs(p) >= 10 || p == math.Trunc(p):
		return report.Fixed(p, 0) + "%"
	case math.Abs(p) >= 1:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", p), ".0") + "%"
	}
	return fmt.Sprintf("%.2g%%", p)
}

// signed is pct with a sign.
func signed(f float64) string {
	if f >= 0 {
		return "+" + pct(f)
	}
	return "−" + pct(-f)
}

func sideName(s Side) string {
	switch {
	case s.Ref == "" && s.Dirty:
		return "work tree (uncommitted changes)"
	case s.Ref == "":
		return "work tree"
	case s.Commit != "" && !strings.HasPrefix(s.Commit, s.Ref):
		return fmt.Sprintf("%s (%.12s)", s.Ref, s.Commit)
	}
	return fmt.Sprintf("%.12s", s.Ref)
}

// roundsToDecide is the largest RoundsToDecide of the undecided rows, 0
// when none knows.
func roundsToDecide(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Verdict.Outcome == nullband.Undecided && r.Verdict.RoundsToDecide > n {
			n = r.Verdict.RoundsToDecide
		}
	}
	return n
}

func hostLine(r Report) string {
	h := r.Host
	var b strings.Builder
	b.WriteString("Host: ")
	if h.CPU != "" {
		b.WriteString(h.CPU + ", ")
	}
	if h.Online > 0 {
		fmt.Fprintf(&b, "%d CPUs online (%d cores)", h.Online, h.Cores)
	} else {
		b.WriteString("CPUs unknown")
	}
	fmt.Fprintf(&b, "; load %s at the start, %s at the end", fig(h.Load1Start, ""), fig(h.Load1End, ""))
	fmt.Fprintf(&b, "; over the run: foreign busy %s, steal %s, CPU pressure (PSI some) %s",
		fig(h.ForeignBusyPct, "%"), fig(h.StealPct, "%"), fig(h.PSISomePct, "%"))
	switch {
	case h.Contended < 0:
		fmt.Fprintf(&b, "; %d runs, not screened for contention", h.Runs)
	default:
		fmt.Fprintf(&b, "; %d of %d runs screened contended", h.Contended, h.Runs)
	}
	fmt.Fprintf(&b, "; %s of rounds", durfmt.Elapsed(r.Elapsed))
	if r.Budget > 0 {
		fmt.Fprintf(&b, " (budget %s)", durfmt.Elapsed(r.Budget))
	}
	b.WriteString(".")
	return b.String()
}

func fig(v float64, unit string) string {
	if math.IsNaN(v) {
		return "unavailable"
	}
	return report.Fixed(v, 1) + unit
}

func unjudgedLine(u Unjudged) string {
	name := shortPkg(u.Pkg) + "." + strings.TrimPrefix(u.Name, "Benchmark")
	switch u.Why {
	case UnjudgedOnlyBase:
		return fmt.Sprintf("Not judged: %s exists at base only (removed).", name)
	case UnjudgedOnlyHead:
		return fmt.Sprintf("Not judged: %s exists at head only (new).", name)
	case UnjudgedNotRun:
		return fmt.Sprintf("Not judged: %s did not run: the budget ran out first (raise -budget).", name)
	}
	msg := "unknown error"
	if u.Err != nil {
		msg = strings.SplitN(u.Err.Error(), "\n", 2)[0]
	}
	return fmt.Sprintf("Not judged: %s failed: %s", name, msg)
}

// mdEscape escapes the characters that would break a Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(s)
}
