package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gapbench/gapbench/internal/atomicfile"
	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/levels"
	"github.com/gapbench/gapbench/internal/report"
)

// levelFlags are calibrate's flags for the noise by level and the plan.
type levelFlags struct {
	mde     *float64
	budget  *time.Duration
	arms    *int
	planOut *string
}

// addLevelFlags registers the level flags on fs.
func addLevelFlags(fs *flag.FlagSet) *levelFlags {
	return &levelFlags{
		mde:     fs.Float64("mde", 0.10, "the `effect` (a fraction, 0.10 for 10%) the plan must detect on the median step in 80% of runs"),
		budget:  fs.Duration("budget", 0, "also print the plan with the smallest MDE that fits this `duration` (e.g. 6m)"),
		arms:    fs.Int("arms", 3, "`arms` per round of the comparison the plan is for, the null arm included"),
		planOut: fs.String("plan-out", "", "write the first benchmark's plan to `file` (read by examples/vad/bench.sh as BENCH_PLAN)"),
	}
}

// levelRow is one benchmark's noise by level and its plans: numbers only,
// written by writeLevels.
type levelRow struct {
	benchmark string
	comp      levels.Components
	cost      levels.Cost
	// steps is the block size the runs used (their median N).
	steps int
	// plan reaches the -mde target (reached false: the best at the most
	// rounds); today is the runs' block size with the rounds it needs.
	plan, today       levels.Plan
	reached, todayOK  bool
	budget            levels.Plan // zero without -budget
	budgetOK          bool
	budgetMDE, target float64
	err               error // why there is no estimate
	// noPlan, when set, is why the estimate gives no plan: a part the MDE
	// is built on was not estimable (levels.ZeroFromFew).
	noPlan error
}

// notEstimable is a plan refused because Between read 0 from too few
// rounds (levels.ZeroFromFew): an MDE from it would count on a part the
// data could not see. The numbers are the estimate's.
type notEstimable struct {
	rounds, df, need int
}

func (e notEstimable) Error() string {
	return fmt.Sprintf("the between-block part read 0 from %d rounds (%d degrees of freedom, %d needed), too few to tell it from a part as large as the within-block one: not estimable, so no MDE is promised from it; run calibrate with -rounds %d or more",
		e.rounds, e.df, levels.MinZeroDF, e.need)
}

// check refuses level flags no plan can meet: -mde must be a finite
// fraction above 0, -budget 0 (none) or above, -arms 2 or more.
func (lf *levelFlags) check() error {
	switch m := *lf.mde; {
	case !(m > 0) || math.IsInf(m, 0):
		return fmt.Errorf("-mde %g: want an effect above 0, a fraction (0.10 for 10%%)", m)
	case *lf.budget < 0:
		return fmt.Errorf("-budget %v: want a duration above 0 (e.g. 6m), or 0 for no budget plan", *lf.budget)
	case *lf.arms < 2:
		return fmt.Errorf("-arms %d: want 2 or more arms a round, the null arm included", *lf.arms)
	}
	return nil
}

// errNoNoise is a benchmark whose blocks showed no noise at all (every
// p50 equal and every p90 equal to its p50): a dead instrument, not a
// perfect one, so its MDE is unknown, not 0.
var errNoNoise = errors.New("no noise measured: every block's p50 is the same and equals its p90 (a dead timer?)")

// levelRowsOf estimates each benchmark's levels from the A/A runs: every
// run of a, a2 and null is one block of its round. A block's cost beyond
// its timed steps is the run's wall time less its steps × (mean step +
// mean gap), the median over the runs.
func levelRowsOf(runs []interleave.Run, lf *levelFlags) []levelRow {
	type acc struct {
		blocks []levels.Block
		step   []float64
		n      []float64
	}
	by := map[string]*acc{}
	var order []string
	var overhead []float64
	for _, run := range runs {
		if run.Err != nil || len(run.Results) == 0 {
			continue
		}
		timed := 0.0
		for _, r := range run.Results {
			name := string(r.Name)
			p50, ok1 := r.Value("p50-sec/op")
			p90, ok2 := r.Value("p90-sec/op")
			mean, ok3 := r.Value("sec/op")
			if !ok1 || !ok2 || !ok3 {
				continue
			}
			g, _ := r.Value("gap-sec/op")
			if by[name] == nil {
				by[name] = &acc{}
				order = append(order, name)
			}
			a := by[name]
			a.blocks = append(a.blocks, levels.Block{Round: run.Round, P50: p50, P90: max(p90, p50), Steps: r.Iters})
			a.step = append(a.step, mean+g)
			a.n = append(a.n, float64(r.Iters))
			timed += float64(r.Iters) * (mean + g)
		}
		overhead = append(overhead, max(0, run.Wall.Seconds()-timed))
	}
	var rows []levelRow
	for _, name := range order {
		a := by[name]
		row := levelRow{benchmark: name, target: *lf.mde, steps: int(median(a.n))}
		row.cost = levels.Cost{Step: median(a.step), Block: median(overhead), Arms: max(*lf.arms, 2)}
		row.comp, row.err = levels.Estimate(a.blocks)
		// A total below 1e-18 (σ below 1e-9 of ln p50) is rounding of
		// equal logarithms, not a measured noise.
		if row.err == nil && !(row.comp.Within+row.comp.Between+row.comp.Rounds > 1e-18) {
			row.err = errNoNoise
		}
		if row.err == nil && !row.comp.Estimable() {
			row.noPlan = notEstimable{rounds: row.comp.NRounds, df: row.comp.BetweenDF, need: row.comp.RoundsForBetween()}
		}
		if row.err == nil && row.noPlan == nil {
			var lim levels.Limits
			row.plan, row.reached = row.comp.Optimize(row.cost, row.target, lim)
			fixed := lim
			fixed.MinSteps, fixed.MaxSteps, fixed.MaxBlocks = row.steps, row.steps, 1
			row.today, row.todayOK = row.comp.Optimize(row.cost, row.target, fixed)
			if *lf.budget > 0 {
				row.budget, row.budgetOK = row.comp.ForBudget(row.cost, lf.budget.Seconds(), lim)
				row.budgetMDE = row.comp.MDE(row.budget, 0.975)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// median of x; NaN when empty.
func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pctSD formats a variance of a logarithm as its standard deviation in
// percent.
func pctSD(v float64) string { return "±" + report.Fixed(100*math.Sqrt(v), 1) + "%" }

// partCell is a level's cell: its σ with its share of the total, or, for
// a part read 0 from too few degrees of freedom, that it was not
// estimable from the rounds used.
func partCell(v, share float64, z levels.Zero, rounds int) string {
	if z == levels.ZeroFromFew {
		return fmt.Sprintf("not estimable (0 from %d rounds)", rounds)
	}
	return fmt.Sprintf("%s (%.0f%%)", pctSD(v), 100*share)
}

// secs formats seconds as a duration: a step with three digits, a span
// of a second or more as durfmt.Elapsed does.
func secs(s float64) string {
	if s < 1 {
		return durfmt.Ns(s * 1e9)
	}
	return durfmt.Elapsed(time.Duration(s * float64(time.Second)))
}

// writeLevels prints the noise by level and the plans.
func writeLevels(w io.Writer, rows []levelRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "noise by level of the median step (ln p50-sec/op; each run of a, a2 and null is one block of its round):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\twithin a block\tbetween blocks\tbetween rounds\tstep+gap\tblock overhead")
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(tw, "%s\tunknown: %v\t\t\t\t\n", r.benchmark, r.err)
			continue
		}
		sw, sb, sr := r.comp.Shares()
		c := r.comp
		fmt.Fprintf(tw, "%s\t%s (%.0f%%) at %d steps\t%s\t%s\t%s\t%s\n", r.benchmark,
			pctSD(c.Within), 100*sw, r.steps, partCell(c.Between, sb, c.BetweenZero, c.NRounds), partCell(c.Rounds, sr, c.RoundsZero, c.NRounds),
			secs(r.cost.Step), secs(r.cost.Block))
	}
	tw.Flush()
	for _, r := range rows {
		if r.err != nil {
			continue
		}
		if r.noPlan != nil {
			fmt.Fprintf(w, "%s: no plan for a %s MDE on p50 (-mde %g): %v\n", r.benchmark, mdePct(r.target), r.target, r.noPlan)
			continue
		}
		fmt.Fprintf(w, "%s: plan for a %s MDE on p50 (-mde %g, %d arms a round): ", r.benchmark, mdePct(r.target), r.target, r.cost.Arms)
		if !r.reached {
			fmt.Fprintf(w, "none within %d rounds; the closest, %v, gives %s\n", r.plan.Rounds, r.plan, mdePct(r.comp.MDE(r.plan, 0.975)))
		} else {
			fmt.Fprintf(w, "%v (-benchtime %dx -count %d), %s", r.plan, r.plan.Steps, r.plan.Rounds*r.plan.Blocks, secs(r.cost.Seconds(r.plan)))
			if r.todayOK {
				fmt.Fprintf(w, "; at this run's %d steps a block: %d rounds, %s (%.1f× the time)", r.steps, r.today.Rounds, secs(r.cost.Seconds(r.today)), r.cost.Seconds(r.today)/r.cost.Seconds(r.plan))
			} else {
				fmt.Fprintf(w, "; at this run's %d steps a block no round count up to %d reaches it", r.steps, r.today.Rounds)
			}
			fmt.Fprintln(w)
		}
		if r.budget.Steps > 0 {
			if r.budgetOK {
				fmt.Fprintf(w, "%s: within -budget %s: %v, MDE %s\n", r.benchmark, secs(r.cost.Seconds(r.budget)), r.budget, mdePct(r.budgetMDE))
			} else {
				fmt.Fprintf(w, "%s: -budget is shorter than the cheapest plan, %v\n", r.benchmark, r.budget)
			}
		}
	}
}

// writePlanFile writes the first estimated row's plan (the -budget plan
// when -budget is set and fits, else the -mde plan) to path, as
// atomicfile.Write does: a symlink, device or fifo at path is refused.
func writePlanFile(path string, rows []levelRow) error {
	for _, r := range rows {
		if r.err != nil || r.noPlan != nil {
			continue
		}
		p := r.plan
		if r.budgetOK {
			p = r.budget
		}
		if err := atomicfile.Write(path, p.WriteFile); err != nil {
			return fmt.Errorf("-plan-out %s: %w", path, err)
		}
		return nil
	}
	why := make([]string, len(rows))
	for i, r := range rows {
		err := r.err
		if err == nil {
			err = r.noPlan
		}
		why[i] = r.benchmark + ": " + err.Error()
	}
	if len(rows) == 0 {
		return fmt.Errorf("-plan-out %s: no benchmark printed p50-sec/op and p90-sec/op, so there is no plan", path)
	}
	return fmt.Errorf("-plan-out %s: no benchmark has a plan (%s)", path, strings.Join(why, "; "))
}

// tableUnknown returns, for each benchmark of the MDE table whose MDE it
// calls unknown at every round count (in p50-sec/op, the unit the plan
// is for, or in every unit when the table has no p50 row), why: the plan
// must not claim an MDE the table above it calls unknown.
func tableUnknown(table []calibration) map[string]error {
	type acc struct {
		known, p50, p50Known bool
		used                 int
	}
	by := map[string]*acc{}
	var order []string
	for _, c := range table {
		a := by[c.benchmark]
		if a == nil {
			a = &acc{}
			by[c.benchmark] = a
			order = append(order, c.benchmark)
		}
		known := slices.ContainsFunc(c.mde, func(m float64) bool { return !math.IsInf(m, 0) && !math.IsNaN(m) })
		a.known = a.known || known
		if c.unit == "p50-sec/op" {
			a.p50, a.p50Known, a.used = true, known, c.used
		}
	}
	out := map[string]error{}
	for _, b := range order {
		switch a := by[b]; {
		case a.p50 && !a.p50Known:
			out[b] = fmt.Errorf("the MDE table calls p50-sec/op's MDE unknown (%d rounds used): no plan", a.used)
		case !a.p50 && !a.known:
			out[b] = errors.New("the MDE table calls every MDE unknown: no plan")
		}
	}
	return out
}

// reportLevels prints the levels and plans of runs and writes -plan-out;
// it returns 1 when the plan file could not be written. A benchmark whose
// MDE table (table, nil for none) calls its MDE unknown gets no plan.
func reportLevels(runs []interleave.Run, table []calibration, lf *levelFlags, stdout, stderr io.Writer) int {
	rows := levelRowsOf(runs, lf)
	unknown := tableUnknown(table)
	for i := range rows {
		if err := unknown[rows[i].benchmark]; err != nil && rows[i].err == nil {
			rows[i].err = err
		}
	}
	writeLevels(stdout, rows)
	if *lf.planOut != "" {
		if err := writePlanFile(*lf.planOut, rows); err != nil {
			fmt.Fprintf(stderr, "decodegap calibrate: %v\n", err)
			return 1
		}
	}
	return 0
}
