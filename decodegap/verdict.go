package decodegap

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

// judgedUnit is a figure Compare judges each arm on, with its weight in
// the arm's family (nullband.JudgeWeighted).
type judgedUnit struct {
	unit   string
	of     func(*result) float64
	weight float64
}

// judgedUnits are the figures Compare judges each arm on, against the first
// arm: the mean (it carries the tail), the median step (the typical one,
// and the figure users quote: it weighs twice the others), and what the
// steps cost the machine.
var judgedUnits = []judgedUnit{
	{"ns/op", func(r *result) float64 { return r.lat.mean }, 1},
	{"p50-ns/op", func(r *result) float64 { return r.lat.p50 }, 2},
	{"cpu/wall", func(r *result) float64 { return r.proc.cpuPerWall() }, 1},
}

// openUnits are judged besides in an open loop (Gap.Open): the response
// times, queueing included. A block whose p99 no bound supports gives no
// value (its round is set aside as missing), never a guess.
var openUnits = []judgedUnit{
	{"resp-p50-ns/op", func(r *result) float64 { return r.open.resp.p50 }, 1},
	{"resp-p99-ns/op", func(r *result) float64 {
		if t := r.open.respTail[1]; t.Known {
			return t.Value
		}
		return math.NaN()
	}, 1},
}

// units returns the figures judged in this comparison.
func (c *comparison) units() []judgedUnit {
	if c.cfg.Gap.Open {
		return append(slices.Clip(judgedUnits), openUnits...)
	}
	return judgedUnits
}

// armVerdict is one arm's verdicts against the first arm, by judged unit.
type armVerdict struct {
	arm      int
	verdicts []nullband.Verdict
	errs     []error
}

// judge judges every arm against the first over the first rounds rounds at
// setting pi, in sequential mode (Options.MaxRounds = -count), with each
// round's contention screen, each arm's metrics as one family
// (nullband.JudgeFamily), and reports whether every verdict is decided.
func (c *comparison) judge(pi, rounds int) bool {
	if c.cfg.NoNullArm || len(c.arms) < 3 {
		return false
	}
	res := c.res[pi]
	base, null := res[0], res[len(c.arms)-1]
	opt := c.cfg.Verdict
	if opt.MaxRounds == 0 {
		opt.MaxRounds = c.plan.count
	}
	decided := true
	var vs []armVerdict
	for a := 1; a < len(c.arms)-1; a++ {
		av := armVerdict{arm: a}
		var members []nullband.Samples
		var weights []float64
		for _, m := range c.units() {
			weights = append(weights, m.weight)
			s := nullband.Samples{Contended: make([]bool, rounds)}
			for r := range rounds {
				s.Base = append(s.Base, m.of(base[r]))
				s.Candidate = append(s.Candidate, m.of(res[a][r]))
				s.Null = append(s.Null, m.of(null[r]))
				s.Contended[r] = unshared(base[r], res[a][r], null[r])
			}
			members = append(members, s)
		}
		// One family per arm: weighted Holm over its metrics, so that an
		// arm equal to the base is called faster or slower on any of them
		// at most 1 − Confidence of the time.
		f, err := nullband.JudgeWeighted(members, weights, opt)
		for i := range members {
			v := nullband.Verdict{}
			if err == nil {
				v = f.Verdicts[i]
			}
			av.verdicts, av.errs = append(av.verdicts, v), append(av.errs, err)
			decided = decided && err == nil && v.Outcome != nullband.Undecided
		}
		vs = append(vs, av)
	}
	c.verdicts[pi] = vs
	return decided
}

// contended reports whether the contention screen marked a block.
func contended(r *result) bool { return r.host.ok && r.host.verdict.Contended }

// unshared reports whether a round's arms met different weather: the
// screen marked some of its blocks contended and not others. On a shared
// host most blocks are contended; a round contended throughout stays, since
// pairing within the round cancels weather its arms shared.
func unshared(blocks ...*result) bool {
	n := 0
	for _, b := range blocks {
		if contended(b) {
			n++
		}
	}
	return n > 0 && n < len(blocks)
}

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
		if c.cfg.NoNullArm {
			lines = append(lines, "verdicts: none without a null arm (CompareConfig.NoNullArm is set); compare the columns with benchstat")
			continue
		}
		var rows []verdicttext.Row
		for _, av := range c.verdicts[pi] {
			for i, m := range c.units() {
				rows = append(rows, verdicttext.Row{Arm: c.arms[av.arm].Name, Metric: m.unit, Verdict: av.verdicts[i], Err: av.errs[i]})
			}
		}
		var t strings.Builder
		names := verdicttext.Names{Base: c.arms[0].Name, Null: NullArm, Rounds: "-count",
			Delta: "CompareConfig.Verdict.Delta", MaxQuarantined: "CompareConfig.Verdict.MaxQuarantined",
			Family: "each arm's metrics (the median step weighing twice the others)"}
		if err := verdicttext.Write(&t, rows, names); err != nil {
			lines = append(lines, fmt.Sprintf("verdicts: %v", err))
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n")...)
	}
	return &compareSummary{lines: lines}
}
