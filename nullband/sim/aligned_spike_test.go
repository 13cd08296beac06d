package sim

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/nullband"
)

// The aligned-rank spike's tables: off unless asked for, as they take tens
// of minutes:
//
//	GOMAXPROCS=1 go test ./nullband/sim -run TestAligned3Spike -v -timeout 3h -args -aligned3.spike -aligned3.trials 2000
var (
	spike       = flag.Bool("aligned3.spike", false, "print the aligned-rank spike's tables")
	spikeTrials = flag.Int("aligned3.trials", 2000, "trials per cell of the spike")
	spikeParts  = flag.String("aligned3.parts", "skew,aa,margin,power,normal", "which tables")
)

func verdictNoQuarantine() Method {
	return Method{Name: "verdict-noq", Fixed: func(t Trial) Call {
		return fromOutcome(judge(t, nullband.Options{Extreme: math.Inf(1)}).Outcome)
	}}
}

// verdictShiftScreen emulates nullband.Judge with its equivalence tests
// screened on B shifted by the hypothesis: Judge on B·e^(∓L) screens
// (A, B·e^(∓L), A') and tests ln(B/A) ∓ L; equivalent when the call at 0 is
// neither faster nor slower (nor withheld) and both shifted judgements put
// their (1−2α) interval on the right side of 1.
func verdictShiftScreen() Method {
	L := math.Log1p(0.02)
	scaled := func(t Trial, f float64) Trial {
		u := t
		u.B = make([]float64, len(t.B))
		for i, x := range t.B {
			u.B[i] = x * f
		}
		return u
	}
	return Method{Name: "verdict-shiftscreen", Fixed: func(t Trial) Call {
		v := judge(t, nullband.Options{})
		switch v.Outcome {
		case nullband.Faster, nullband.Slower:
			return fromOutcome(v.Outcome)
		}
		if v.Has(nullband.TooManyQuarantined) || v.Has(nullband.NullShifted) {
			return Undecided
		}
		hi := judge(scaled(t, math.Exp(-L)), nullband.Options{})
		lo := judge(scaled(t, math.Exp(L)), nullband.Options{})
		if hi.EqHi < 1 && lo.EqLo > 1 {
			return Equivalent
		}
		return Undecided
	}}
}

func TestAligned3Spike(t *testing.T) {
	if !*spike {
		t.Skip("the spike's tables: -args -aligned3.spike")
	}
	n := *spikeTrials
	parts := *spikeParts
	out := func(format string, a ...any) { fmt.Printf(format, a...) }
	pc := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n)) }
	start := time.Now()
	out("trials per cell %d, base seed 1, margin at 5%%: ±%.1f points\n\n", n, 100*Margin(0.05, n))

	if strings.Contains(parts, "skew") {
		out("## A/A, skewed blocks exp(N(0,0.5%%))·(1+Exp(2%%)): false faster / false slower (FPR)\n\n")
		out("| rounds | aligned3, no quarantine | aligned3 | verdict, no quarantine | verdict |\n|---|---|---|---|---|\n")
		for _, r := range []int{20, 40, 80} {
			out("| %d |", r)
			for _, m := range []Method{aligned3NoQuarantine(), Aligned3(), verdictNoQuarantine(), Verdict()} {
				c := Fixed(Case{Model: skewedModel(), Rounds: r, Trials: n, Seed: 1}, m)
				out(" %s / %s (%s) |", pc(c.Calls[Faster]), pc(c.Calls[Slower]), pc(c.Calls[Faster]+c.Calls[Slower]))
			}
			out("\n")
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}

	if strings.Contains(parts, "aa") {
		out("## A/A under the seven models: false faster / false slower (FPR); equivalent\n\n")
		out("| model | rounds | aligned3 F/S (FPR) | verdict F/S (FPR) | aligned3 ≡ | verdict ≡ |\n|---|---|---|---|---|---|\n")
		for _, m := range Models() {
			for _, r := range []int{10, 20, 40, 80} {
				c := Case{Model: m, Rounds: r, Trials: n, Seed: 1}
				a, v := Fixed(c, Aligned3()), Fixed(c, Verdict())
				out("| %s | %d | %s / %s (%s) | %s / %s (%s) | %s | %s |\n", m.Name, r,
					pc(a.Calls[Faster]), pc(a.Calls[Slower]), pc(a.Calls[Faster]+a.Calls[Slower]),
					pc(v.Calls[Faster]), pc(v.Calls[Slower]), pc(v.Calls[Faster]+v.Calls[Slower]),
					pc(a.Calls[Equivalent]), pc(v.Calls[Equivalent]))
			}
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}

	if strings.Contains(parts, "power") {
		out("## Power: called slower (wrong direction: faster, when any); discordant trials aligned3 vs utest\n\n")
		out("| model | effect | rounds | aligned3 | verdict | utest | only aligned3 / only utest right |\n|---|---|---|---|---|---|---|\n")
		for _, m := range Models() {
			for _, e := range []float64{0.01, 0.02, 0.05} {
				for _, r := range []int{10, 20} {
					c := Case{Model: m, Effect: e, Rounds: r, Trials: n, Seed: 1}
					a, v, u := Fixed(c, Aligned3()), Fixed(c, Verdict()), Fixed(c, UTest())
					cell := func(x Counts) string {
						s := pc(x.Calls[Slower])
						if x.Calls[Faster] > 0 {
							s += fmt.Sprintf(" (F %d)", x.Calls[Faster])
						}
						return s
					}
					oa, ou := Discordant(a, u, Slower)
					out("| %s | %g%% | %d | %s | %s | %s | %d / %d |\n", m.Name, 100*e, r, cell(a), cell(v), cell(u), oa, ou)
				}
			}
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}

	if strings.Contains(parts, "margin") {
		out("## At the margin: B/A = 1.02 or 1/1.02 exactly, share called equivalent (TOST's error rate, at most 5%%)\n\n")
		out("| model | rounds | aligned3 at ×1.02 | aligned3, one screen | verdict | aligned3 at ÷1.02 | aligned3, one screen | verdict |\n|---|---|---|---|---|---|---|---|\n")
		for _, m := range Models() {
			for _, r := range []int{10, 20, 40} {
				out("| %s | %d |", m.Name, r)
				for _, e := range []float64{0.02, 1/1.02 - 1} {
					c := Case{Model: m, Effect: e, Rounds: r, Trials: n, Seed: 1}
					a, o, v := Fixed(c, Aligned3()), Fixed(c, aligned3OneScreen()), Fixed(c, Verdict())
					out(" %s | %s | %s |", pc(a.Calls[Equivalent]), pc(o.Calls[Equivalent]), pc(v.Calls[Equivalent]))
				}
				out("\n")
			}
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}

	if strings.Contains(parts, "recheck") {
		out("## A/A again on other seeds: the cells over 5.5%% at base seed 1\n\n| model | rounds | seed | aligned3 F/S (FPR) | verdict F/S (FPR) |\n|---|---|---|---|---|\n")
		for _, x := range []struct {
			model  string
			rounds int
		}{{"drift", 80}, {"bimodal", 20}, {"bimodal", 40}} {
			m, _ := ModelByName(x.model)
			for _, sd := range []uint64{2, 3} {
				c := Case{Model: m, Rounds: x.rounds, Trials: n, Seed: sd}
				a, v := Fixed(c, Aligned3()), Fixed(c, Verdict())
				out("| %s | %d | %d | %s / %s (%s) | %s / %s (%s) |\n", m.Name, x.rounds, sd,
					pc(a.Calls[Faster]), pc(a.Calls[Slower]), pc(a.Calls[Faster]+a.Calls[Slower]),
					pc(v.Calls[Faster]), pc(v.Calls[Slower]), pc(v.Calls[Faster]+v.Calls[Slower]))
			}
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}

	if strings.Contains(parts, "judgefix") {
		out("## nullband.Judge's equivalence screened per hypothesis (emulated): equivalent at the margin and at A/A\n\n| model | rounds | verdict ×1.02 | shift-screened ×1.02 | verdict ÷1.02 | shift-screened ÷1.02 | verdict A/A | shift-screened A/A |\n|---|---|---|---|---|---|---|---|\n")
		for _, m := range Models() {
			for _, r := range []int{10, 20, 40} {
				out("| %s | %d |", m.Name, r)
				for _, e := range []float64{0.02, 1/1.02 - 1, 0} {
					c := Case{Model: m, Effect: e, Rounds: r, Trials: n, Seed: 1}
					v, f := Fixed(c, Verdict()), Fixed(c, verdictShiftScreen())
					out(" %s | %s |", pc(v.Calls[Equivalent]), pc(f.Calls[Equivalent]))
				}
				out("\n")
			}
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}

	if strings.Contains(parts, "normal") {
		out("## Normal approximation against the exact null (A/A, θ = 0): two-sided rejections at 5%% and 1%%\n\n")
		out("| model | rounds | exact 5%% | normal 5%% | differ at 5%% | exact 1%% | normal 1%% | differ at 1%% | max |p_exact − p_normal| |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, name := range []string{"lognormal-p50", "outliers", "skewed"} {
			m, ok := ModelByName(name)
			if !ok {
				m = skewedModel()
			}
			for _, r := range []int{6, 10, 20, 40, 80} {
				c := Case{Model: m, Rounds: r, Trials: n, Seed: 1}
				var e5, n5, d5, e1, n1, d1 int
				worst := 0.0
				for i := range n {
					tr := m.Generate(c.seed(), i, r, 0)
					used, _, _ := alignedScreen(tr, 0, math.Inf(1))
					s := newAlignedState(tr, used, true)
					eu, el := s.tails(0)
					s.exact = false
					nu, nl := s.tails(0)
					pe, pn := math.Min(1, 2*math.Min(eu, el)), math.Min(1, 2*math.Min(nu, nl))
					worst = math.Max(worst, math.Abs(pe-pn))
					for _, x := range []struct {
						a          float64
						ce, cn, cd *int
					}{{0.05, &e5, &n5, &d5}, {0.01, &e1, &n1, &d1}} {
						re, rn := pe <= x.a, pn <= x.a
						if re {
							*x.ce++
						}
						if rn {
							*x.cn++
						}
						if re != rn {
							*x.cd++
						}
					}
				}
				out("| %s | %d | %s | %s | %d | %s | %s | %d | %.4f |\n", m.Name, r, pc(e5), pc(n5), d5, pc(e1), pc(n1), d1, worst)
			}
		}
		out("\n(%v)\n\n", time.Since(start).Round(time.Second))
	}
}
