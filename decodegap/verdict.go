package decodegap

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/decodegap/internal/modes"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/verdicttext"
)

// Compare judges through internal/judge, the one judge of every route:
// each block becomes a row of the rounds table holding the values Compare
// prints for it (blockOf), and the table is judged under the one policy
// (judge.Policy: judge.DefaultUnits, the median step weighing twice the
// others, every arm's rows one family), so that `decodegap interleave`'s
// judge of the same numbers gives the same rows.

// policy is Compare's judging policy: the first arm is the base, the null
// arm the null, nullband's options from CompareConfig.Verdict in
// sequential mode with -count the most rounds.
func (c *comparison) policy() judge.Policy {
	opt := c.cfg.Verdict
	if opt.MaxRounds == 0 {
		opt.MaxRounds = c.plan.count
	}
	return judge.Policy{Base: c.arms[0].Name, Null: NullArm, Options: opt}
}

// judge judges every arm against the first over the first rounds rounds at
// setting pi and reports whether every verdict is decided.
func (c *comparison) judge(pi, rounds int) bool {
	if c.cfg.NoNullArm || len(c.arms) < 2 {
		return false
	}
	names := make([]string, len(c.arms))
	blocks := make([][]judge.Block, len(c.arms))
	for a := range c.arms {
		names[a] = c.arms[a].Name
		for r := range rounds {
			blocks[a] = append(blocks[a], blockOf(c.res[pi][a][r]))
		}
	}
	rows, err := judgeBlocks("", names, blocks, c.policy())
	c.rows[pi], c.judgeErr[pi] = rows, err
	return err == nil && judge.Decided(rows)
}

// judgeBlocks is Compare's judge: blocks[a][r] is arm names[a]'s block in
// round r+1 of benchmark bench.
func judgeBlocks(bench string, names []string, blocks [][]judge.Block, p judge.Policy) ([]report.Row, error) {
	t := &judge.Table{}
	for a, bs := range blocks {
		for r, b := range bs {
			if err := t.Add(bench, names[a], r+1, b); err != nil {
				return nil, err
			}
		}
	}
	return judge.Judge(t, p)
}

// blockOf is a block's row of the rounds table: the values exactly as its
// result line prints them, its screen mark and its stall mark.
func blockOf(r *result) judge.Block {
	b := judge.Block{Contended: contended(r)}
	for _, m := range r.metrics() {
		v := reportValue(m.value)
		b.Values = append(b.Values, benchfmt.Value{Value: printed(v), Unit: reportUnit(metric{v, m.unit})})
	}
	b.Stall = judge.Stalled(b.Values) // the rule a reader of the printed line applies
	return b
}

// printed is x as testing prints a reported metric (testing's
// prettyPrint: a fixed number of decimals by magnitude), read back: the
// value benchstat and a benchfmt reader see.
func printed(x float64) float64 {
	prec := 7
	switch y := math.Abs(x); {
	case y == 0 || y >= 999.95:
		prec = 0
	case y >= 99.995:
		prec = 1
	case y >= 9.9995:
		prec = 2
	case y >= 0.99995:
		prec = 3
	case y >= 0.099995:
		prec = 4
	case y >= 0.0099995:
		prec = 5
	case y >= 0.00099995:
		prec = 6
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', prec, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// contended reports whether the contention screen marked a block.
func contended(r *result) bool { return r.host.ok && r.host.verdict.Contended }

// compareSummary is Compare's own lines: the order used and the verdicts.
type compareSummary struct{ lines []string }

// summaryOut is where the order and the verdicts go: stdout, after the
// arms' result lines.
var summaryOut io.Writer = os.Stdout

// writeSummary prints the summary of benchmark bench, every line indented
// by four spaces: benchfmt and benchstat skip indented lines (an unindented
// "word: ..." line would be read as a configuration key), and testing would
// keep only ten lines of a log.
func writeSummary(w io.Writer, bench string, sum *compareSummary) {
	fmt.Fprintf(w, "    --- decodegap.Compare: %s: order and verdicts\n", bench)
	for _, l := range sum.lines {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// summary writes the order and the verdicts of every setting.
func (c *comparison) summary() *compareSummary {
	var lines []string
	if l := verdicttext.SliceLine(c.slicing, "CompareConfig.Slice"); l != "" {
		lines = append(lines, strings.Split(strings.TrimSuffix(l, "\n"), "\n")...)
	}
	for pi, procs := range c.plan.procs {
		var o strings.Builder
		fmt.Fprintf(&o, "order at GOMAXPROCS %d (CompareConfig.Seed = %d):", procs, c.s.seed)
		for r := range c.rounds {
			if r > 0 {
				o.WriteString(" |")
			}
			for _, a := range c.order[pi][r] {
				o.WriteString(" " + c.arms[a].Name)
			}
		}
		lines = append(lines, o.String())
		switch {
		case c.cfg.NoNullArm:
			lines = append(lines, "verdicts: none without a null arm (CompareConfig.NoNullArm is set); compare the columns with benchstat")
			continue
		case c.judgeErr[pi] != nil:
			lines = append(lines, fmt.Sprintf("verdicts: none: %v", c.judgeErr[pi]))
			continue
		}
		var t strings.Builder
		names := verdicttext.Names{Base: c.arms[0].Name, Null: NullArm, Rounds: "-count",
			Delta: "CompareConfig.Verdict.Delta", MaxQuarantined: "CompareConfig.Verdict.MaxQuarantined",
			Family: "every arm's metrics (the median step weighing twice the others)"}
		if !testing.Verbose() {
			names.Brief = "-v" // the lists and the legend in full with -v
		}
		if err := verdicttext.WriteRows(&t, c.rows[pi], names); err != nil {
			lines = append(lines, fmt.Sprintf("verdicts: %v", err))
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n")...)
		for a, arm := range c.arms {
			if l := c.modesLine(pi, a, arm.Name); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return &compareSummary{lines: lines}
}

// modesLine says when most of arm a's blocks at setting pi had two or more
// modes (verdicttext.ModesLine), "" otherwise.
func (c *comparison) modesLine(pi, a int, name string) string {
	var vs []float64
	multi := 0
	for _, r := range c.res[pi][a] {
		if r == nil || math.IsNaN(r.mvalue) {
			continue
		}
		vs = append(vs, r.mvalue)
		if r.mvalue >= modes.Multimodal {
			multi++
		}
	}
	if len(vs) == 0 {
		return ""
	}
	slices.Sort(vs)
	return verdicttext.ModesLine(name, multi, len(vs), vs[len(vs)/2], modes.Multimodal)
}
