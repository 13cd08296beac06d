// Command levelsfrom splits the median step's noise by level from the
// output of a decodegap.Compare run whose arms include identical ones
// (scripts/truth-trials.sh: intra1-spin, same and null are three instances
// of one configuration in every round), and prints the plan that reaches
// an MDE in the least time (internal/levels). docs/noise-levels.md.
//
//	go run ./scripts/levelsfrom -arms intra1-spin,same,null -mde 0.10 FILE...
//
// A file's i-th result line of an arm is that arm's block of round i; each
// file is its own run (its rounds are not another file's).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/levels"
)

func main() {
	armList := flag.String("arms", "intra1-spin,same,null", "comma-separated identical `arms`")
	mde := flag.Float64("mde", 0.10, "the `effect` the plan must detect")
	nArms := flag.Int("plan-arms", 5, "`arms` per round of the comparison planned, the null arm included")
	overhead := flag.Float64("block", 0.06, "a block's fixed cost in `seconds` (opening the session, the warm-up)")
	flag.Parse()
	arms := strings.Split(*armList, ",")
	blocks := map[string][]levels.Block{}
	steps := map[string][]float64{}
	var order []string
	for fi, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		seen := map[string]int{}
		rd := benchfmt.NewReader(f, path)
		for rd.Scan() {
			r, ok := rd.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			name := string(r.Name.Full())
			bench, arm, ok := strings.Cut(name, "/arm=")
			if !ok {
				continue
			}
			arm = strings.TrimSuffix(arm, "-2")
			if !slices.Contains(arms, arm) {
				continue
			}
			p50, ok1 := r.Value("p50-sec/op")
			p90, ok2 := r.Value("p90-sec/op")
			mean, _ := r.Value("sec/op")
			g, _ := r.Value("gap-sec/op")
			if !ok1 || !ok2 {
				continue
			}
			round := seen[arm]
			seen[arm]++
			if _, ok := blocks[bench]; !ok {
				order = append(order, bench)
			}
			blocks[bench] = append(blocks[bench], levels.Block{Round: fi*10000 + round, P50: p50, P90: max(p90, p50), Steps: r.Iters})
			steps[bench] = append(steps[bench], mean+g)
		}
		f.Close()
		if err := rd.Err(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for _, b := range order {
		c, err := levels.Estimate(blocks[b])
		if err != nil {
			fmt.Printf("%s: %v\n", b, err)
			continue
		}
		w, bt, rd := c.Shares()
		st := steps[b]
		slices.Sort(st)
		cost := levels.Cost{Step: st[len(st)/2], Block: *overhead, Arms: *nArms}
		fmt.Printf("%s: %d blocks in %d rounds at %.0f steps: within ±%.1f%% (%.0f%%), between blocks ±%.1f%% (%.0f%%), between rounds ±%.1f%% (%.0f%%); step+gap %.0f µs\n",
			b, c.Blocks, c.NRounds, c.Steps, 100*math.Sqrt(c.Within), 100*w, 100*math.Sqrt(c.Between), 100*bt, 100*math.Sqrt(c.Rounds), 100*rd, 1e6*cost.Step)
		p, ok := c.Optimize(cost, *mde, levels.Limits{})
		fixedL := levels.Limits{MinSteps: int(c.Steps), MaxSteps: int(c.Steps), MaxBlocks: 1}
		f, fok := c.Optimize(cost, *mde, fixedL)
		fmt.Printf("  plan for %.0f%% (%d arms, %.2fs a block beyond its steps): %v in %.0fs (reached %v); at %d steps × 1 block: %v in %.0fs (reached %v)\n",
			100**mde, *nArms, *overhead, p, cost.Seconds(p), ok, int(c.Steps), f, cost.Seconds(f), fok)
		for _, budget := range []float64{360, 600} {
			q, _ := c.ForBudget(cost, budget, levels.Limits{})
			fmt.Printf("  within %.0fs: %v, MDE %.1f%%\n", budget, q, 100*c.MDE(q, 0.975))
		}
	}
}
