// Command verdictsim runs nullband's simulation suite (package
// internal/sim) and writes the accuracy tables as Markdown:
//
//	go run ./cmd/verdictsim -out docs/verdict-accuracy.md
//
// It takes about 20 minutes on two shared CPUs at the default trial counts.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/gapbench/gapbench/internal/levels"
	"github.com/gapbench/gapbench/internal/sim"
	"github.com/gapbench/gapbench/nullband"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verdictsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the Markdown to `file` (default: standard output)")
	trials := fs.Int("trials", 2000, "trials per fixed-rounds cell")
	seqTrials := fs.Int("seq-trials", 400, "trials per sequential cell and per point of its fixed-rounds grid")
	seed := fs.Uint64("seed", 1, "base `seed` of every trial")
	models := fs.String("models", "", "comma-separated model `names` (default: all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *trials < 1 || *seqTrials < 1 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "verdictsim: -trials and -seq-trials must be ≥ 1, and no arguments")
		return 2
	}
	cfg := sim.DefaultConfig(sim.Methods(), *trials, *seqTrials)
	cfg.Seed = *seed
	if *models != "" {
		cfg.Models = nil
		for _, name := range strings.Split(*models, ",") {
			m, ok := sim.ModelByName(strings.TrimSpace(name))
			if !ok {
				fmt.Fprintf(stderr, "verdictsim: -models: no model %q\n", name)
				return 2
			}
			cfg.Models = append(cfg.Models, m)
		}
	}
	start := time.Now()
	cells := 0
	rep := sim.Run(cfg, func(label string) {
		cells++
		fmt.Fprintf(stderr, "verdictsim: %s: %d of %d model×effect cells (%v)\n", label, cells, len(cfg.Models)*len(cfg.Effects), time.Since(start).Round(time.Second))
	})
	var buf bytes.Buffer
	cmdline := "go run ./cmd/verdictsim " + strings.Join(args, " ")
	writeDoc(&buf, rep, strings.TrimSpace(cmdline), start.UTC(), time.Since(start))
	if *out == "" {
		_, err := stdout.Write(buf.Bytes())
		if err != nil {
			return 1
		}
		return 0
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "verdictsim: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "verdictsim: wrote %s\n", *out)
	return 0
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func effectPct(e float64) string { return fmt.Sprintf("%g%%", 100*e) }

// methodNames returns the report's method names in order.
func methodNames(rep sim.Report) []string {
	var names []string
	for _, m := range rep.Config.Methods {
		names = append(names, m.Name)
	}
	return names
}

func writeDoc(w io.Writer, rep sim.Report, cmdline string, date time.Time, took time.Duration) {
	cfg := rep.Config
	p := printer(func(format string, a ...any) { fmt.Fprintf(w, format, a...) })

	p("# Verdict accuracy: simulation\n\n")
	p("Generated %s by\n\n", date.Format("2006-01-02 15:04 UTC"))
	p("```sh\n%s\n```\n\n", cmdline)
	p("(%s, GOMAXPROCS %d, %v). Every trial is seeded (base seed %d) and the file is reproducible.\n\n",
		runtime.Version(), runtime.GOMAXPROCS(0), took.Round(time.Second), cfg.Seed)
	p("**Trials:** %d per fixed-rounds cell; %d per sequential cell and per point of its fixed-rounds grid. ", cfg.Trials, cfg.SeqTrials)
	p("Binomial 95%% margins (1.96·√(p(1−p)/n)) at %d trials: ±%.1f points at a rate of 5%%, ±%.1f at 20%% or 80%%, ±%.1f at 50%%; at %d trials: ±%.1f, ±%.1f, ±%.1f.\n\n",
		cfg.Trials, 100*sim.Margin(0.05, cfg.Trials), 100*sim.Margin(0.2, cfg.Trials), 100*sim.Margin(0.5, cfg.Trials),
		cfg.SeqTrials, 100*sim.Margin(0.05, cfg.SeqTrials), 100*sim.Margin(0.2, cfg.SeqTrials), 100*sim.Margin(0.5, cfg.SeqTrials))

	p("Each trial is one interleaved run of one metric: per round one block of A, B and A' (a second, independent process of A) in a random order; B's true level is A's × (1 + effect), so B \"slower\" is the right call for every effect > 0, and \"equivalent\" (or no call) for 0.\n\n")

	p("## Models\n\n| model | noise per block (multiplicative; A's level is 1) | host-like |\n|---|---|---|\n")
	for _, m := range cfg.Models {
		hl := "no"
		if m.HostLike {
			hl = "yes"
		}
		p("| %s | %s | %s |\n", m.Name, m.Params, hl)
	}
	p("\nCalibration: on this host class (shared 2 vCPUs, load 3–15 from other jobs) the median step (p50) of a ~35 µs pure-Go step, 2000 steps per block, moves 1–3%% from block to block; lognormal-p50 (1.5%%) is its middle and lognormal-wide (3%%) its top. The mean step (ns/op) has heavier tails: outliers. \"Host-like\" marks the models whose per-block noise lies in that range; bimodal (two levels 5–15%% apart) does not.\n\n")

	p("## Methods\n\n")
	for _, m := range cfg.Methods {
		p("- **%s**: %s\n", m.Name, methodDoc(m.Name))
	}
	p("\n")

	docAA(p, rep)
	docPower(p, rep)
	docFamilies(p, rep)
	docMixture(p, rep)
	docMargins(p, rep)
	docSequential(p, rep)
	writeTargets(w, rep)
	writeLevels(p)
}

// writeLevels writes the section on the real workload's three levels of
// noise and the plan's savings, simulated by internal/levels (seeded: the
// same every run).
func writeLevels(p printer) {
	p("\n## Noise by level, and the plan (issue 25)\n\n")
	p("The models above draw one value per block. On the real workload (Silero VAD under ONNX Runtime at a 2 ms gap; figures and commands in docs/noise-levels.md) the noise of a block's median step has three levels: within a block (its steps), between blocks of one configuration in a round (a fresh session each), and between rounds (the weather, shared by a round's blocks and cancelled by pairing). `decodegap calibrate` estimates the three from its A/A blocks (internal/levels, after Kalibera & Jones, ISMM 2013) and chooses steps per block × blocks per round × rounds to reach an MDE in the least time. ")
	p("Simulated here: a plan calibrated from a simulated 20-round A/A run (3 blocks a round, 600 steps), against make bench's former fixed 600 steps × 1 block; the rounds each needs for the MDE at 97.5%% in 400 simulated comparisons.\n\n")
	p("| model (σ of ln: step, between blocks, between rounds) | MDE | calibrated plan | time | fixed plan | time | saving |\n|---|---|---|---|---|---|---|\n")
	for _, c := range []struct {
		name   string
		truth  levels.Truth
		cost   levels.Cost
		target float64
	}{
		{"issue 25's figures", levels.IssueTruth, levels.IssueCost, 0.10},
		{"measured under load 12–22", levels.MeasuredTruth, levels.MeasuredCost, 0.15},
	} {
		sv, ok := levels.SimulateSavings(c.truth, c.cost, c.target, 0.975, 600, 400, 7)
		if !ok {
			p("| %s | %s | out of reach within 400 rounds | | | | |\n", c.name, effectPct(c.target))
			continue
		}
		p("| %s (%.2f, %.3f, %.3f) | %s | %v | %.0f s | %v | %.0f s | %.2f× |\n", c.name, c.truth.StepSigma, c.truth.BetweenSigma, c.truth.RoundSigma,
			effectPct(c.target), sv.Calibrated, sv.CalibratedSeconds, sv.Fixed, sv.FixedSeconds, sv.FixedSeconds/sv.CalibratedSeconds)
	}
	p("\nThe rounds needed are the same: the between-block level sets them. The saving is the steps that bought no precision.\n")
}

// docAA writes the A/A table: false calls and equivalence.
func docAA(p printer, rep sim.Report) {
	cfg := rep.Config
	names := methodNames(rep)
	// A/A.
	p("## A/A (effect 0): false positives and equivalence\n\n")
	p("FPR: share of trials called faster or slower. ≡: share called equivalent (verdict: within ±2%%; band: \"inside\", which had no ±δ bound; utest: no such answer).\n\n")
	p("| model | rounds |")
	for _, n := range names {
		p(" %s FPR | %s ≡ |", n, n)
	}
	p("\n|---|---|")
	for range names {
		p("---|---|")
	}
	p("\n")
	for _, m := range cfg.Models {
		for _, r := range cfg.Rounds {
			p("| %s | %d |", m.Name, r)
			for _, n := range names {
				c, _ := rep.Find(m.Name, 0, r, n)
				eq := pct(c.Rate(sim.Equivalent))
				if n == "utest" {
					eq = "—"
				}
				p(" %s | %s |", pct(c.Decisive()), eq)
			}
			p("\n")
		}
	}
}

// docPower writes the power table, and the wrong-direction calls.
func docPower(p printer, rep sim.Report) {
	cfg := rep.Config
	names := methodNames(rep)
	// Power.
	p("\n## Power: B slower by the effect\n\n")
	p("Share of trials called slower (the right call). Wrong-direction calls (faster), when any, are listed under the table.\n\n")
	p("| model | effect | rounds |")
	for _, n := range names {
		p(" %s |", n)
	}
	p("\n|---|---|---|")
	for range names {
		p("---|")
	}
	p("\n")
	var wrong []string
	for _, m := range cfg.Models {
		for _, e := range cfg.Effects {
			if e == 0 {
				continue
			}
			for _, r := range cfg.Rounds {
				p("| %s | %s | %d |", m.Name, effectPct(e), r)
				for _, n := range names {
					c, _ := rep.Find(m.Name, e, r, n)
					p(" %s |", pct(c.Rate(sim.Slower)))
					if c.Calls[sim.Faster] > 0 {
						wrong = append(wrong, fmt.Sprintf("%s, %s, %d rounds, %s: faster in %d of %d", m.Name, effectPct(e), r, n, c.Calls[sim.Faster], c.Trials))
					}
				}
				p("\n")
			}
		}
	}
	if len(wrong) > 0 {
		p("\nWrong direction: %s.\n", strings.Join(wrong, "; "))
	}
}

// docFamilies writes the table of an arm's metrics judged as one family.
func docFamilies(p printer, rep sim.Report) {
	// Families.
	if len(rep.Families) > 0 {
		p("\n## An arm's metrics as one family (Holm)\n\n")
		p("Compare judges each arm on %s, and decodegap interleave each benchmark and arm on its -unit list: one family per arm, under weighted Holm at 5%% (`nullband.JudgeWeighted`, the median step weighing twice the others), with equivalence at the nominal level; plain Holm (`nullband.JudgeFamily`) and each metric alone are shown beside it. Model: %s. \"Any false call\": some metric whose B equals A (all three at 0%%, cpu/wall otherwise) called faster or slower. \"Alone\" judges each metric with `nullband.Judge` at 95%%.\n\n",
			strings.Join(sim.FamilyMetrics, ", "), sim.FamilyParams)
		p("| effect | rounds | method | any false call | p50 slower | ns/op slower | p50 equivalent |\n|---|---|---|---|---|---|---|\n")
		for _, f := range rep.Families {
			c := f.Counts
			r := func(k int) string { return pct(float64(k) / float64(c.Trials)) }
			for _, m := range []struct {
				name       string
				any        int
				slower, eq [3]int
			}{{"alone (95% each)", c.AnyAlone, c.SlowerAlone, c.EqAlone}, {"Holm", c.AnyHolm, c.SlowerHolm, c.EqHolm},
				{"weighted Holm, p50 × 2 (decodegap)", c.AnyWeighted, c.SlowerWeighted, c.EqWeighted}} {
				p("| %s | %d | %s | %s | %s | %s | %s |\n", effectPct(f.Effect), f.Rounds, m.name, r(m.any), r(m.slower[1]), r(m.slower[0]), r(m.eq[1]))
			}
		}
	}
}

// docMargins writes the table of calls at the margin of equivalence.
func docMargins(p printer, rep sim.Report) {
	cfg := rep.Config
	// At the margin.
	if len(rep.Margins) > 0 {
		p("\n## At the margin: B/A exactly 1.02 or 1/1.02\n\n")
		p("\"Equivalent within ±2%%\" is the wrong call here; TOST (two one-sided tests, each at α = 5%%) allows it in at most 5%% of trials. With a null arm no round is set aside for its values, so both tests judge the same rounds (without one, each screens the rounds with B moved to its margin: nullband's eqSide); sequential: Options.MaxRounds = %d.\n\n", cfg.MaxRounds)
		p("| model | B/A | rounds | method | equivalent | slower | faster |\n|---|---|---|---|---|---|---|\n")
		for _, m := range rep.Margins {
			r := fmt.Sprint(m.Rounds)
			if m.Rounds == 0 {
				r = fmt.Sprintf("sequential (max %d)", cfg.MaxRounds)
			}
			p("| %s | %.4f | %s | %s | %s | %s | %s |\n", m.Model, 1+m.Effect, r, m.Method, pct(m.Counts.Rate(sim.Equivalent)), pct(m.Counts.Rate(sim.Slower)), pct(m.Counts.Rate(sim.Faster)))
		}
	}
}

// docSequential writes the table of the sequential mode.
func docSequential(p printer, rep sim.Report) {
	cfg := rep.Config
	// Sequential.
	if len(rep.Seq) > 0 {
		p("\n## Sequential mode (Options.MaxRounds = %d)\n\n", cfg.MaxRounds)
		p("The verdict looks after every round from its first possible look and stops at the first decided outcome. Right call: slower for an effect > 0, equivalent for 0; wrong: faster for an effect > 0, faster or slower for 0. \"Fixed N\" is the number of rounds a fixed-rounds verdict needs for the same rate of the right call (interpolated on the grid %v, and only where its wrong-call rate is no higher than the sequential one's, or the nominal 5%%, plus the margin); \"fewer\" is 1 − mean rounds / fixed N.\n\n", cfg.Grid)
		p("\"Fewer than for 2%%\" compares instead with the fixed N a user would choose for the smallest effect of interest, 2%%: the fixed N that matches the sequential run's power at 2%% under the same model (the standard average-sample-number comparison of group-sequential designs).\n\n")
		p("| model | effect | method | right call | wrong | mean rounds | fixed N for the same | fewer rounds | fewer than for 2%% |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range rep.Seq {
			sv := s.Savings
			fixedN, fewer := fmt.Sprintf("%.1f", sv.FixedN), pct(sv.Fewer)
			if math.IsInf(sv.FixedN, 1) {
				fixedN, fewer = fmt.Sprintf("> %d", cfg.Grid[len(cfg.Grid)-1]), "—"
			}
			design := "—"
			if n2 := designN(rep, s.Model, s.Method); !math.IsInf(n2, 1) && !math.IsNaN(n2) {
				design = pct(1 - sv.Seq.MeanRounds()/n2)
			}
			p("| %s | %s | %s | %s | %s | %.1f | %s | %s | %s |\n", s.Model, effectPct(s.Effect), s.Method,
				pct(sv.Seq.Rate(sim.Target(s.Effect))), pct(sim.Wrong(sv.Seq, s.Effect)), sv.Seq.MeanRounds(), fixedN, fewer, design)
		}
	}
}

// designN is the fixed N that matches model's sequential power at a 2%
// effect; NaN when the suite has no such row.
func designN(rep sim.Report, model, method string) float64 {
	for _, s := range rep.Seq {
		if s.Model == model && s.Method == method && s.Effect == 0.02 {
			return s.Savings.FixedN
		}
	}
	return math.NaN()
}

// methodDoc describes each method in one line.
func methodDoc(name string) string {
	switch name {
	case "verdict":
		return "`nullband.Judge` with its zero Options (95% confidence, δ = 2%), given the rounds' Contended flags; fixed mode judges all rounds, sequential mode sets Options.MaxRounds."
	case "band":
		return "the band rule `nullband.Judge` used at commit 92a12bd (a private copy in nullband/sim/band.go): \"outside\" when the 95% CI of the median per-round B/A lies wholly outside the 5–95% band of per-round A'/A; \"inside\" when the median lies inside a band no wider than ±10%; rounds with A'/A outside 0.8–1.25 rejected, more than 25% rejected or a bimodal arm: unmeasurable."
	case "paired-t":
		return "a parametric reference, not a shipped method: the paired t-test of ln(B/A) over all rounds (no quarantine, no null arm), α = 0.05, and the t-TOST against ±2% for equivalence. Under normal noise no test does better; it shows what the verdict's robustness costs there and gains under heavy tails."
	case "utest":
		return "benchstat's comparison: `benchmath.AssumeNothing.Compare` (Mann–Whitney U) of A against B over all rounds, unpaired, α = 0.05; significant → faster or slower by the sign of the medians' difference."
	}
	return ""
}

// writeTargets checks issue 9's simulation targets against the verdict's
// cells, each with its binomial margin.
func writeTargets(w io.Writer, rep sim.Report) {
	const v = "verdict"
	if _, ok := rep.Find(rep.Config.Models[0].Name, 0, rep.Config.Rounds[0], v); !ok {
		return
	}
	p := printer(func(format string, a ...any) { fmt.Fprintf(w, format, a...) })
	p("\n## Targets (issue 9)\n\n")
	p("A rate meets a target of at most (at least) p when it lies below p + margin (above p − margin), the margin being the binomial 95%% half-width at p for the cell's trials; where one row checks many cells at once, the margin's z is Bonferroni's for that many cells (\"family\").\n\n")
	p("| target | measured | met |\n|---|---|---|\n")

	targetsFPR(p, rep)
	targetsCalls(p, rep)
	targetsPower(p, rep)
	targetsSequential(p, rep)
	targetsMixture(p, rep)
}

// printer writes one formatted piece of the document.
type printer func(format string, a ...any)

// yes is a target row's "met" cell.
func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// targetsFPR writes the false-call rows: fixed, sequential, families, at the margin.
func targetsFPR(p printer, rep sim.Report) {
	const v = "verdict"
	cfg := rep.Config
	// FPR under every model: one family of checks per table.
	worst, where := -1.0, ""
	cells := 0
	for _, f := range rep.Fixed {
		if f.Method == v && f.Effect == 0 {
			cells++
			if f.Counts.Decisive() > worst {
				worst, where = f.Counts.Decisive(), fmt.Sprintf("%s, %d rounds", f.Model, f.Rounds)
			}
		}
	}
	bound := 0.05 + sim.MarginZ(0.05, cfg.Trials, sim.FamilyZ(cells))
	p("| FPR ≤ 5%% under every model, fixed rounds (%d cells; bound %.1f%% with the family margin) | highest %s (%s) | %s |\n", cells, 100*bound, pct(worst), where, yes(worst <= bound))
	worst, where, cells = -1, "", 0
	for _, s := range rep.Seq {
		if s.Method == v && s.Effect == 0 {
			cells++
			if s.Savings.Seq.Decisive() > worst {
				worst, where = s.Savings.Seq.Decisive(), s.Model
			}
		}
	}
	if cells > 0 {
		bound = 0.05 + sim.MarginZ(0.05, cfg.SeqTrials, sim.FamilyZ(cells))
		p("| FPR ≤ 5%% under every model, sequential (max %d rounds; %d cells; bound %.1f%%) | highest %s (%s) | %s |\n", cfg.MaxRounds, cells, 100*bound, pct(worst), where, yes(worst <= bound))
	}

	if len(rep.Families) > 0 {
		worst, where, cells = -1, "", 0
		for _, f := range rep.Families {
			cells++
			if r := float64(f.Counts.AnyWeighted) / float64(f.Counts.Trials); r > worst {
				worst, where = r, fmt.Sprintf("%s, %d rounds", effectPct(f.Effect), f.Rounds)
			}
		}
		bound = 0.05 + sim.MarginZ(0.05, cfg.Trials, sim.FamilyZ(cells))
		p("| any of an arm's three metrics called faster or slower while unchanged ≤ 5%% (weighted Holm, as decodegap judges; %d cells; bound %.1f%%) | highest %s (%s) | %s |\n", cells, 100*bound, pct(worst), where, yes(worst <= bound))
	}

	if len(rep.Margins) > 0 {
		for _, seq := range []bool{false, true} {
			worst, where, cells = -1, "", 0
			for _, m := range rep.Margins {
				if m.Method != v || (m.Rounds == 0) != seq {
					continue
				}
				cells++
				if r := m.Counts.Rate(sim.Equivalent); r > worst {
					worst, where = r, fmt.Sprintf("%s, B/A %.4f, %d rounds", m.Model, 1+m.Effect, m.Rounds)
				}
			}
			trials, mode := cfg.Trials, "fixed rounds"
			if seq {
				trials, mode = cfg.SeqTrials, fmt.Sprintf("sequential, max %d", cfg.MaxRounds)
				where = strings.TrimSuffix(where, ", 0 rounds")
			}
			bound = 0.05 + sim.MarginZ(0.05, trials, sim.FamilyZ(cells))
			p("| \"equivalent\" at B/A = 1.02 or 1/1.02 ≤ 5%% under every model, %s (%d cells; bound %.1f%%) | highest %s (%s) | %s |\n", mode, cells, 100*bound, pct(worst), where, yes(worst <= bound))
		}
	}

}

// targetsCalls writes the rows of single cells: power at 5% and 2%, A/A equivalence.
func targetsCalls(p printer, rep sim.Report) {
	const v = "verdict"
	cfg := rep.Config
	at := func(model string, e float64, r int, call sim.Call, goal float64, label string) {
		c, ok := rep.Find(model, e, r, v)
		if !ok {
			return
		}
		got := c.Rate(call)
		p("| %s | %s | %s |\n", label, pct(got), yes(got >= goal-sim.Margin(goal, c.Trials)))
	}
	at("lognormal-p50", 0.05, 10, sim.Slower, 0.95, "5% → slower on the p50-like model in ≥ 95% within 10 rounds")
	at("lognormal-p50", 0.02, 20, sim.Slower, 0.80, "2% → slower on the p50-like model in ≥ 80% within 20 rounds")
	at("outliers", 0.05, 20, sim.Slower, 0.80, "5% → slower on the mean-like model (outliers) in ≥ 80% within 20 rounds")
	for _, m := range cfg.Models {
		if !m.HostLike {
			continue
		}
		label := fmt.Sprintf("A/A → equivalent (±2%%) in ≥ 80%% within 20 rounds: %s", m.Name)
		if b := sim.EquivalenceBound(math.Sqrt(1.5)*m.Sigma, 20, 0.02, 0.05); b < 0.80 {
			label += fmt.Sprintf(" (out of reach: at per-block σ %g%% a perfect test says equivalent in at most %s)", 100*m.Sigma, pct(b))
		}
		at(m.Name, 0, 20, sim.Equivalent, 0.80, label)
	}

}

// targetsPower writes the row of power against the U-test.
func targetsPower(p printer, rep sim.Report) {
	const v = "verdict"
	// Power ≥ the U-test's for every effect ≥ 2%: a McNemar test on the
	// trials where only one of the two made the right call.
	var below []string
	cells := 0
	for _, f := range rep.Fixed {
		if f.Method == v && f.Effect >= 0.02 {
			cells++
		}
	}
	z := sim.FamilyZ(cells)
	for _, f := range rep.Fixed {
		if f.Method != v || f.Effect < 0.02 {
			continue
		}
		u, ok := rep.Find(f.Model, f.Effect, f.Rounds, "utest")
		if !ok {
			continue
		}
		onlyV, onlyU := sim.Discordant(f.Counts, u, sim.Slower)
		if sim.Shortfall(onlyV, onlyU, z) {
			below = append(below, fmt.Sprintf("%s %s %d rounds: %s vs %s (only the U-test right in %d trials, only the verdict in %d)",
				f.Model, effectPct(f.Effect), f.Rounds, pct(f.Counts.Rate(sim.Slower)), pct(u.Rate(sim.Slower)), onlyU, onlyV))
		}
	}
	msg := fmt.Sprintf("short in %d of %d cells", len(below), cells)
	if len(below) > 0 {
		msg += ": " + strings.Join(below, "; ")
	}
	p("| power ≥ the U-test's for every effect ≥ 2%% (all models, 10 and 20 rounds; short = the U-test right and the verdict not in more trials than the reverse, beyond chance: McNemar, family z %.2f) | %s | %s |\n", z, msg, yes(len(below) == 0))

}

// targetsSequential writes the rows of the sequential savings.
func targetsSequential(p printer, rep sim.Report) {
	const v = "verdict"
	cfg := rep.Config
	// Sequential savings.
	// No test decides in fewer than floor rounds, so 40% fewer than a fixed
	// N below floor/0.6 is out of every method's reach: such cells are
	// counted apart.
	const target = 0.40
	floor := float64(nullband.FewestRounds(0.95, true))
	reachable := func(fixedN float64) bool { return (1-target)*fixedN >= floor }
	var fewer, design []string
	met, metDesign, n, nDesign := 0, 0, 0, 0
	metReach, nReach, metDesignReach, nDesignReach := 0, 0, 0, 0
	for _, s := range rep.Seq {
		if s.Method != v {
			continue
		}
		if n2 := designN(rep, s.Model, s.Method); !math.IsInf(n2, 1) && !math.IsNaN(n2) {
			nDesign++
			d := 1 - s.Savings.Seq.MeanRounds()/n2
			if d >= target {
				metDesign++
			}
			if reachable(n2) {
				nDesignReach++
				if d >= target {
					metDesignReach++
				}
			}
			design = append(design, fmt.Sprintf("%s %s: %s", s.Model, effectPct(s.Effect), pct(d)))
		}
		if s.Savings.Seq.Rate(sim.Target(s.Effect)) < 0.5 {
			continue
		}
		n++
		if s.Savings.Fewer >= target {
			met++
		}
		f := pct(s.Savings.Fewer)
		switch {
		case math.IsInf(s.Savings.FixedN, 1):
			f = fmt.Sprintf("fixed N > %d", cfg.Grid[len(cfg.Grid)-1])
		case !reachable(s.Savings.FixedN):
			f += fmt.Sprintf(" (fixed N %.1f: out of reach)", s.Savings.FixedN)
		}
		if reachable(s.Savings.FixedN) {
			nReach++
			if s.Savings.Fewer >= target {
				metReach++
			}
		}
		fewer = append(fewer, fmt.Sprintf("%s %s: %s", s.Model, effectPct(s.Effect), f))
	}
	if n > 0 {
		p("| sequential: ≥ 40%% fewer rounds than the fixed N with the same rate of the right call and no more wrong calls (cells where the right call is made in ≥ 50%%; out of reach: 0.6 × fixed N < %g, the fewest rounds any 95%% test of three arms needs) | %d of %d cells, %d of the %d within reach: %s | %s |\n", floor, met, n, metReach, nReach, strings.Join(fewer, "; "), yes(met == n))
	}
	if nDesign > 0 {
		p("| sequential: ≥ 40%% fewer rounds than the fixed N chosen for a 2%% effect | %d of %d cells, %d of the %d within reach: %s | %s |\n", metDesign, nDesign, metDesignReach, nDesignReach, strings.Join(design, "; "), yes(metDesign == nDesign))
	}
}
