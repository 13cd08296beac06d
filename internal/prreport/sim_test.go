package prreport

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/sim"
	"github.com/gapbench/gapbench/nullband"
)

// simRunner is a RoundRunner that returns round r of each job's
// pre-drawn trial (nullband/sim's models) and advances a fake clock by cost
// per round. A round marked contended carries screen: contended.
type simRunner struct {
	trials map[string]sim.Trial // by job name
	clock  *time.Time
	cost   time.Duration
}

func (s *simRunner) RunRound(_ context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	*s.clock = s.clock.Add(s.cost)
	tr := s.trials[j.Name]
	i := round - 1
	screen := "clean"
	if tr.Contended != nil && tr.Contended[i] {
		screen = "contended"
	}
	var out []*benchfmt.Result
	for _, a := range []struct {
		arm string
		v   float64
	}{{ArmBase, tr.A[i]}, {ArmHead, tr.B[i]}, {ArmNull, tr.Null[i]}} {
		out = append(out, &benchfmt.Result{
			Config: []benchfmt.Config{{Key: interleave.KeyArm, Value: []byte(a.arm), File: true},
				{Key: interleave.KeyRound, Value: []byte(strconv.Itoa(round)), File: true},
				{Key: interleave.KeyScreen, Value: []byte(screen), File: true}},
			Name:   benchfmt.Name(strings.TrimPrefix(j.Name, "Benchmark")),
			Iters:  1,
			Values: []benchfmt.Value{{Value: 1e-6 * a.v, Unit: "sec/op"}},
		})
	}
	return out, nil
}

// simOutcome is one simulated pull request's result.
type simOutcome struct {
	falseFlags int // unchanged rows called faster or slower
	flagged    int // rows called faster or slower
	wrongSign  int // changed rows called the wrong direction
	// found[e] counts, per true effect e, the rows called in its direction;
	// real[e] the rows with that effect.
	found, real map[float64]int
	equivalent  int // unchanged rows called equivalent
	unchanged   int
	rounds      int // total rounds run
	elapsed     time.Duration
}

// simTrial runs one simulated pull request: n benchmarks, the given
// effects on the first len(effects) of them, through the real Scheduler
// and JudgeJobs at the default options, with budget and cost per round.
func simTrial(t testing.TB, seed uint64, n int, effects []float64, budget, cost time.Duration, opt nullband.Options) simOutcome {
	clock := time.Unix(0, 0)
	sr := &simRunner{trials: map[string]sim.Trial{}, clock: &clock, cost: cost}
	jobs := make([]*Job, n)
	truth := map[string]float64{}
	modelOf := map[string]string{}
	models := sim.Models()
	for i := range jobs {
		name := fmt.Sprintf("BenchmarkSim%02d", i)
		jobs[i] = &Job{Pkg: "sim", Name: name}
		e := 0.0
		if i < len(effects) {
			e = effects[i]
		}
		// Benchmark i follows model i mod 7, so every effect meets
		// several models across trials (effects go to the first
		// benchmarks, and seeds differ).
		m := models[(i+int(seed))%len(models)]
		modelOf[name[len("Benchmark"):]] = m.Name
		sr.trials[name] = m.Generate(seed, i, opt.MaxRounds, e)
		truth[name[len("Benchmark"):]] = e
	}
	s := &Scheduler{Jobs: jobs, Runner: sr, Options: opt, Budget: budget, Now: func() time.Time { return clock }}
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, un, err := JudgeJobs(jobs, s.Policy())
	if err != nil {
		t.Fatal(err)
	}
	if len(un) > 0 {
		t.Fatalf("unjudged: %+v", un)
	}
	o := simOutcome{found: map[float64]int{}, real: map[float64]int{}, elapsed: s.Elapsed()}
	for _, j := range jobs {
		o.rounds += j.Rounds
	}
	for _, r := range Candidates(rows) {
		e := truth[r.Bench]
		out := r.Verdict.Outcome
		diff := out == nullband.Faster || out == nullband.Slower
		if diff {
			o.flagged++
		}
		if e == 0 {
			o.unchanged++
			if diff {
				o.falseFlags++
				v := r.Verdict
				t.Logf("false flag: seed %d, %s (%s): %v, ratio %.4f [%.4f, %.4f] at %.5f, %d used, %d quarantined, reasons %v",
					seed, r.Bench, modelOf[r.Bench], v.Outcome, v.Ratio, v.Lo, v.Hi, r.Level, v.Used, v.Quarantined, v.Reasons)
			}
			if out == nullband.Equivalent {
				o.equivalent++
			}
			continue
		}
		o.real[e]++
		switch {
		case e > 0 && out == nullband.Slower, e < 0 && out == nullband.Faster:
			o.found[e]++
		case diff:
			o.wrongSign++
		}
	}
	return o
}

// simDefaults are the options decodegap pr uses by default.
var simDefaults = nullband.Options{Confidence: 0.95, Delta: 0.02, MaxRounds: 30}

// The default budget and the cost of one round (three runs of
// -benchtime=100ms with the testing package's ramp-up and process start,
// measured at about 0.5 s on the fixture; 1 s is taken to be safe).
const (
	simBudget = 20 * time.Minute
	simCost   = time.Second
)

// TestFamilySimulation runs simulated pull requests of 60 benchmarks (each
// following one of nullband/sim's noise models) with 0, 2 or 5 real
// effects through the Scheduler and JudgeJobs and checks
// the family-wise false-alarm rate and the power. DECODEGAP_PR_SIM=N runs
// N trials per scenario and prints the table (docs/ci-workflow-accuracy.md).
func TestFamilySimulation(t *testing.T) {
	trials := 2
	if v := os.Getenv("DECODEGAP_PR_SIM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		trials = n
	} else if testing.Short() {
		t.Skip("simulation")
	}
	scenarios := []struct {
		name    string
		effects []float64
	}{
		{"0 effects", nil},
		{"2 effects", []float64{0.05, -0.05}},
		{"5 effects", []float64{0.03, -0.03, 0.05, -0.05, 0.10}},
	}
	totalFamilies := 0
	totalFalse := 0
	power := map[float64][2]int{}
	for si, sc := range scenarios {
		var anyFalse, flagged, falseFlags, eq, unchanged, rounds, wrong int
		var elapsed time.Duration
		for i := range trials {
			o := simTrial(t, uint64(1000*si+i+1), 60, sc.effects, simBudget, simCost, simDefaults)
			if o.falseFlags > 0 {
				anyFalse++
			}
			falseFlags += o.falseFlags
			flagged += o.flagged
			eq += o.equivalent
			unchanged += o.unchanged
			rounds += o.rounds
			wrong += o.wrongSign
			elapsed += o.elapsed
			for e, n := range o.real {
				p := power[e]
				p[0] += o.found[e]
				p[1] += n
				power[e] = p
			}
		}
		totalFamilies += trials
		totalFalse += anyFalse
		fdr := 0.0
		if flagged > 0 {
			fdr = float64(falseFlags) / float64(flagged)
		}
		t.Logf("%s: %d trials; any false flag in %d (%.1f%%); false flags %d of %d flagged (FDP %.1f%%); wrong sign %d; unchanged rows equivalent %.1f%%; mean rounds per benchmark %.1f; mean time %v",
			sc.name, trials, anyFalse, 100*float64(anyFalse)/float64(trials), falseFlags, flagged, 100*fdr, wrong,
			100*float64(eq)/float64(unchanged), float64(rounds)/float64(trials*60), (elapsed / time.Duration(trials)).Round(time.Second))
		if wrong > 0 {
			t.Errorf("%s: %d rows called in the wrong direction", sc.name, wrong)
		}
	}
	for _, e := range []float64{-0.05, -0.03, 0.03, 0.05, 0.10} {
		p := power[e]
		if p[1] > 0 {
			t.Logf("power at %+.0f%%: %d of %d (%.1f%%)", 100*e, p[0], p[1], 100*float64(p[0])/float64(p[1]))
		}
	}
	// Family-wise false-alarm rate at most 5%, with the binomial margin:
	// fail only when the count is improbable (p < 0.01) at 5%.
	if lim := binomialLimit(totalFamilies, 0.05, 0.01); totalFalse > lim {
		t.Errorf("families with a false flag: %d of %d, above %d (5%% with its margin)", totalFalse, totalFamilies, lim)
	}
	for _, e := range []float64{-0.05, 0.05} {
		p := power[e]
		if p[1] > 0 && float64(p[0]) < 0.9*float64(p[1])-2*math.Sqrt(0.09*float64(p[1])) {
			t.Errorf("power at %+.0f%%: %d of %d, below 90%% with its margin", 100*e, p[0], p[1])
		}
	}
}

// binomialLimit is the smallest k with P(X > k) < tail for X ~ B(n, p).
func binomialLimit(n int, p, tail float64) int {
	cdf := 0.0
	for k := 0; k <= n; k++ {
		lc, _ := math.Lgamma(float64(n + 1))
		a, _ := math.Lgamma(float64(k + 1))
		b, _ := math.Lgamma(float64(n - k + 1))
		cdf += math.Exp(lc - a - b + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		if 1-cdf < tail {
			return k
		}
	}
	return n
}
