package prreport

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gapbench/gapbench/internal/sim"
	"github.com/gapbench/gapbench/nullband"
)

// fleetHost is one simulated runner: its speed (every value × Speed) and
// noise level (every value v of the model becomes v^Noise, which scales
// a lognormal model's σ by Noise).
type fleetHost struct{ Speed, Noise float64 }

// fleetHosts returns n hosts; unequal spreads their speeds evenly over
// 1 … 1.3 and their noise levels log-evenly over 1/1.5 … 1.5 (geometric
// mean 1), in an order shuffled by seed so that speed and noise are not
// tied.
func fleetHosts(n int, unequal bool, seed uint64) []fleetHost {
	hs := make([]fleetHost, n)
	for h := range hs {
		hs[h] = fleetHost{1, 1}
		if unequal && n > 1 {
			f := float64(h) / float64(n-1)
			hs[h].Speed = 1 + 0.3*f
			hs[h].Noise = math.Exp(math.Log(1.5) * (2*f - 1))
		}
	}
	if unequal {
		r := rand.New(rand.NewPCG(seed, 77))
		perm := r.Perm(n)
		for h := range hs {
			hs[h].Noise = math.Exp(math.Log(1.5) * (2*float64(perm[h])/float64(max(n-1, 1)) - 1))
		}
	}
	return hs
}

// fleetRow draws one row of a merged report: total rounds over the hosts,
// round r (from 1) on host (r−1) mod n, each host's rounds a trial of
// model m of their own (seeded by row and host), with B slower by effect.
func fleetRow(m sim.Model, seed uint64, row int, hosts []fleetHost, total int, effect float64) nullband.Samples {
	n := len(hosts)
	s := nullband.Samples{Round: make([]int, total), Base: make([]float64, total),
		Candidate: make([]float64, total), Null: make([]float64, total), Contended: make([]bool, total)}
	for h, host := range hosts {
		share := Shard{I: h + 1, N: n}.Rounds(total)
		// The noise does not depend on the effect (common random
		// numbers): draw at 0 and apply the effect to B.
		t := m.Generate(seed, row*64+h, share, 0)
		for k := range share {
			r := Shard{I: h + 1, N: n}.Round(k + 1)
			i := r - 1
			tf := func(v float64) float64 { return host.Speed * math.Pow(v, host.Noise) }
			s.Round[i] = r
			s.Base[i], s.Null[i] = tf(t.A[k]), tf(t.Null[k])
			s.Candidate[i] = tf(t.B[k]) * (1 + effect)
			if t.Contended != nil {
				s.Contended[i] = t.Contended[k]
			}
		}
	}
	return s
}

// fleetCounts are a configuration's tallies over trials.
type fleetCounts struct {
	trials, anyFalse   int             // reports, reports with a false flag
	falseRows, nullRow int             // false flags, unchanged rows
	found, real        map[float64]int // by effect: rows called right, rows
}

// fleetEffects are the changed rows of a simulated report; the other rows
// of fleetRows are unchanged.
var fleetEffects = []float64{0.03, -0.03, 0.05, -0.05, 0.10, -0.10}

const fleetRows = 20

// fleetRun judges trials reports of fleetRows rows over hosts with total
// rounds, each row following one of sim's models (row i model (i+trial)
// mod 7), judged by nullband.JudgeFamily (Holm, fixed sample) as
// decodegap merge judges them.
func fleetRun(t testing.TB, trials int, hosts func(trial int) []fleetHost, total int, effects []float64) fleetCounts {
	models := sim.Models()
	c := fleetCounts{found: map[float64]int{}, real: map[float64]int{}}
	opt := nullband.Options{Confidence: 0.95, Delta: 0.02}
	for tr := range trials {
		hs := hosts(tr)
		members := make([]nullband.Samples, fleetRows)
		eff := make([]float64, fleetRows)
		for i := range members {
			if i < len(effects) {
				eff[i] = effects[i]
			}
			members[i] = fleetRow(models[(i+tr)%len(models)], uint64(9000+tr), i, hs, total, eff[i])
		}
		fam, err := nullband.JudgeFamily(members, opt)
		if err != nil {
			t.Fatal(err)
		}
		c.trials++
		bad := false
		for i, v := range fam.Verdicts {
			diff := v.Outcome == nullband.Faster || v.Outcome == nullband.Slower
			if eff[i] == 0 {
				c.nullRow++
				if diff {
					c.falseRows++
					bad = true
				}
				continue
			}
			c.real[eff[i]]++
			if (eff[i] > 0 && v.Outcome == nullband.Slower) || (eff[i] < 0 && v.Outcome == nullband.Faster) {
				c.found[eff[i]]++
			}
		}
		if bad {
			c.anyFalse++
		}
	}
	return c
}

// power is the share of rows of effect ±e (both signs) called right.
func (c fleetCounts) power(e float64) float64 {
	n := c.real[e] + c.real[-e]
	if n == 0 {
		return math.NaN()
	}
	return float64(c.found[e]+c.found[-e]) / float64(n)
}

// TestFleetSimulation compares merged shards with one host of the same
// total rounds: 2–16 hosts, speeds differing by up to 30%, noise levels
// by a factor 2.25 (σ × 1/1.5 … 1.5), every row one of internal/sim's
// models. It checks the targets of issue 28: the merged false-alarm rate
// (reports with any false flag, and rows) at most 5% with unequal hosts,
// and the power of the merged shards at least 90% of one host's.
// DECODEGAP_FLEET_SIM=N runs N reports per configuration and prints the
// table of docs/ci-workflow-shards-accuracy.md.
func TestFleetSimulation(t *testing.T) {
	trials := 8
	if v := os.Getenv("DECODEGAP_FLEET_SIM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		trials = n
	} else if testing.Short() {
		t.Skip("simulation")
	}
	const total = 32
	one := func(int) []fleetHost { return fleetHosts(1, false, 0) }
	base := fleetRun(t, trials, one, total, fleetEffects)
	baseNull := fleetRun(t, trials, one, total, nil)
	var tab strings.Builder
	row := func(name string, c, null fleetCounts) {
		fmt.Fprintf(&tab, "| %s | %d/%d (%.1f%%) | %d/%d (%.2f%%) | %.1f%% | %.1f%% | %.1f%% |\n", name,
			null.anyFalse, null.trials, 100*float64(null.anyFalse)/float64(null.trials),
			c.falseRows+null.falseRows, c.nullRow+null.nullRow, 100*float64(c.falseRows+null.falseRows)/float64(c.nullRow+null.nullRow),
			100*c.power(0.03), 100*c.power(0.05), 100*c.power(0.10))
	}
	tab.WriteString("| hosts | reports with a false flag (no effects) | false flags / unchanged rows | power 3% | power 5% | power 10% |\n|---|--:|--:|--:|--:|--:|\n")
	row(fmt.Sprintf("1 host, %d rounds", total), base, baseNull)
	for _, n := range []int{2, 4, 8, 16} {
		for _, unequal := range []bool{false, true} {
			hosts := func(tr int) []fleetHost { return fleetHosts(n, unequal, uint64(tr)) }
			c := fleetRun(t, trials, hosts, total, fleetEffects)
			null := fleetRun(t, trials, hosts, total, nil)
			kind := "equal"
			if unequal {
				kind = "unequal"
			}
			row(fmt.Sprintf("%d %s hosts × %d rounds", n, kind, total/n), c, null)
			if !unequal {
				continue
			}
			if lim := binomialLimit(null.trials, 0.05, 0.01); null.anyFalse > lim {
				t.Errorf("%d unequal hosts: %d of %d reports with a false flag, above %d (5%% with its margin)", n, null.anyFalse, null.trials, lim)
			}
			if rows := c.nullRow + null.nullRow; c.falseRows+null.falseRows > binomialLimit(rows, 0.05, 0.01) {
				t.Errorf("%d unequal hosts: %d false flags of %d unchanged rows", n, c.falseRows+null.falseRows, rows)
			}
			for _, e := range []float64{0.05, 0.10} {
				got, want := c.power(e), base.power(e)
				rows := float64(c.real[e] + c.real[-e])
				if got < 0.9*want-2*math.Sqrt(want*(1-want)/rows)-0.01 {
					t.Errorf("%d unequal hosts: power at ±%.0f%% %.3f, below 90%% of one host's %.3f", n, 100*e, got, want)
				}
			}
		}
	}
	t.Logf("%d reports of %d rows per configuration (%d changed: ±3%%, ±5%%, ±10%%), and as many with no change:\n%s",
		trials, fleetRows, len(fleetEffects), tab.String())
}

// TestRunnerSpeedCancels checks what makes runners blocks: multiplying
// every value of a runner's rounds by its speed shifts each round's logs
// by one constant, which the aligned-rank test's centring removes, so the
// verdict (outcome, estimate, interval, p-value, quarantine) is the same
// as on runners of one speed: speeds add no false alarm and cost no power.
func TestRunnerSpeedCancels(t *testing.T) {
	fast := []fleetHost{{1, 1}, {1, 1.4}, {1, 0.8}, {1, 1.1}}
	slow := []fleetHost{{1, 1}, {1.3, 1.4}, {1.1, 0.8}, {1.25, 1.1}}
	if x, y := fleetRow(sim.Models()[0], 11, 0, fast, 24, 0), fleetRow(sim.Models()[0], 11, 0, slow, 24, 0); x.Base[1]*1.3 != y.Base[1] || x.Base[0] != y.Base[0] {
		t.Fatalf("round 2 runs on the runner 30%% slower: %v, %v", x.Base[:2], y.Base[:2])
	}
	for i, m := range sim.Models() {
		for _, e := range []float64{0, 0.03} {
			a, err := nullband.Judge(fleetRow(m, 11, i, fast, 24, e), nullband.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := nullband.Judge(fleetRow(m, 11, i, slow, 24, e), nullband.Options{})
			if err != nil {
				t.Fatal(err)
			}
			near := func(x, y float64) bool { return x == y || math.Abs(x-y) <= 1e-9*math.Abs(x) }
			if a.Outcome != b.Outcome || !near(a.Ratio, b.Ratio) || !near(a.Lo, b.Lo) || !near(a.Hi, b.Hi) || !near(a.P, b.P) || a.Quarantined != b.Quarantined {
				t.Errorf("%s, effect %v: one speed %v %.6f [%.6f, %.6f] p %.4g q %d; speeds up to 30%% apart %v %.6f [%.6f, %.6f] p %.4g q %d",
					m.Name, e, a.Outcome, a.Ratio, a.Lo, a.Hi, a.P, a.Quarantined, b.Outcome, b.Ratio, b.Lo, b.Hi, b.P, b.Quarantined)
			}
		}
	}
}
