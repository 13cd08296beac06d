package decodegap

import (
	"flag"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/internal/trace"
	"github.com/gapbench/gapbench/nullband"
)

// Arm is one configuration that Compare measures.
type Arm struct {
	// Name labels the arm's sub-benchmark, BenchmarkX/arm=Name, so that
	// `benchstat -col /arm` puts each arm in a column. It must be non-empty,
	// unique, without white space or '/', and not "null" (the null arm's).
	Name string
	// Open opens a fresh instance of the arm's step. Compare opens one for
	// each block and closes it before the next block starts, so that no
	// instance (a thread pool that still spins after its last call, say)
	// runs beside another arm's block.
	Open Opener
}

// NullArm is the name of the null arm that Compare adds: a second,
// separately opened instance of the first arm.
const NullArm = "null"

// Compare measures arms in interleaved rounds inside one benchmark function
// and reports each arm as a sub-benchmark, BenchmarkX/arm=NAME, with one
// result line per round:
//
//	func BenchmarkSpin(b *testing.B) {
//		decodegap.Compare(b, cfg, decodegap.Arm{Name: "off", Open: openOff}, decodegap.Arm{Name: "on", Open: openOn})
//	}
//
//	go test -bench BenchmarkSpin -benchtime=2000x -count 10 | tee out.txt
//	go tool benchstat -col /arm out.txt
//
// Why: testing runs each sub-benchmark -count times back to back (A A A ...
// B B B), so arms written as plain sub-benchmarks are compared across
// whatever the host did in between. Compare instead runs -count rounds
// itself, every arm once per round as a block of b.N steps (with cfg's gaps,
// warm-up and steady-state detection, as Run), in an order drawn afresh
// each round from Config.Seed, with no arm running twice in a row across a
// round boundary. It then hands testing one sub-benchmark per arm whose
// k-th run reports round k's figures: testing's A A A ... B B B printing
// order no longer matters, since every line was measured inside
// interleaved rounds.
//
// A null arm, a second instance of the first arm opened separately, runs in
// every round unless Config.NoNullArm is set; its line carries null-ratio,
// its mean over the first arm's in the same round. The log of the last line
// printed (the last arm's last round; testing shows a parent benchmark's own
// log only with -v) starts with the order used and each arm's verdict
// against the first arm, judged by nullband.Judge against the null band.
//
// The number of steps per block is N of -benchtime=Nx (use that form); with
// a duration, Compare sizes the block from a short calibration so that a
// block lasts about that long, and testing's iteration column then does not
// show the block size. Compare must be the whole body of its benchmark
// function.
//
// Of Config, Compare honours Gap, Warmup, Window, RequireSteady (per
// block), Counters, Budget (one confinement for all rounds), Screen (each
// line carries its block's contention figures and census), Parity (once,
// before the first round), Trace (one file per block, named
// BenchmarkX/arm=NAME), NoNullArm, Seed and Verdict. Null, Open and
// Sessions are Run's and are refused: each arm opens its own step.
func Compare(b *testing.B, cfg Config, arms ...Arm) {
	b.Helper()
	if err := checkArms(arms, &cfg); err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	rounds := intFlag("test.count", 1)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := openHost(&cfg)
	if err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	defer func() {
		if err := h.close(); err != nil {
			b.Errorf("decodegap.Compare: closing the host sampler or releasing Config.Budget's confinement: %v", err)
		}
	}()
	n, err := blockSize(&cfg, arms[0])
	if err != nil {
		b.Fatalf("decodegap.Compare: sizing the block from arm %q: %v", arms[0].Name, err)
	}
	if err := cfg.validate(n); err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	all := arms
	if !cfg.NoNullArm {
		all = append(append([]Arm(nil), arms...), Arm{Name: NullArm, Open: arms[0].Open})
	}
	order := nullband.Orders(len(all), rounds, cfg.Seed)
	res := make([][]*report, len(all))
	for a := range res {
		res[a] = make([]*report, rounds)
	}
	if cfg.Parity != nil {
		if err := cfg.Parity(); err != nil {
			b.Fatalf("decodegap.Compare: parity check failed (Config.Parity), nothing was timed: %v", err)
		}
	}
	dir := traceDir(&cfg)
	for r := range rounds {
		for _, a := range order[r] {
			rep, run, err := measureArm(&cfg, n, all[a], h)
			if err != nil {
				b.Fatalf("decodegap.Compare: round %d of %d, arm %q: %v", r+1, rounds, all[a].Name, err)
			}
			rep.round, rep.rounds = r+1, rounds
			if dir != "" {
				paths, err := run.writeTrace(dir, b.Name()+"/arm="+all[a].Name, rep)
				if err != nil {
					b.Errorf("decodegap.Compare: writing the trace (Config.Trace or $%s): %v", trace.EnvDir, err)
				}
				rep.tracePaths = paths
			}
			res[a][r] = rep
		}
	}
	if !cfg.NoNullArm {
		base, null := res[0], res[len(all)-1]
		for r := range rounds {
			null[r].null = true
			null[r].nullHow = fmt.Sprintf("null: this arm is a second instance of %q measured in the same round; its mean / %q's = %%.4f", arms[0].Name, arms[0].Name)
			null[r].nullRatio = null[r].mean / base[r].mean
			null[r].nullSteady = null[r].reached && base[r].reached
			null[r].nullReason = "this arm or " + strconv.Quote(arms[0].Name) + " did not settle"
		}
	}
	// testing prints a parent benchmark's log only with -v, so the order and
	// the verdicts go at the head of the log of the last line printed: the
	// last arm's last round.
	res[len(all)-1][rounds-1].head = compareSummary(&cfg, all, order, res)

	for a := range all {
		k := 0
		b.Run("arm="+all[a].Name, func(sb *testing.B) {
			rep := res[a][min(k, rounds-1)]
			last := isLastCall(sb)
			rep.publish(sb, last)
			if last {
				k++
			}
		})
	}
}

// checkArms checks Compare's arguments.
func checkArms(arms []Arm, cfg *Config) error {
	if len(arms) == 0 {
		return fmt.Errorf("no arms: pass at least one Arm (two to compare)")
	}
	switch {
	case cfg.Null != nil:
		return fmt.Errorf("Config.Null is set: Compare opens its own null arm from the first Arm (set Config.NoNullArm to leave it out)")
	case cfg.Open != nil:
		return fmt.Errorf("Config.Open is set: Compare opens each arm with its Arm.Open; leave Config.Open unset")
	case cfg.Sessions > 1:
		return fmt.Errorf("Config.Sessions = %d: Compare runs one session per arm; compare session counts as arms whose steps run the sessions, or use Run", cfg.Sessions)
	}
	seen := map[string]bool{}
	for i, a := range arms {
		switch {
		case a.Name == "" || strings.ContainsAny(a.Name, " \t\n/"):
			return fmt.Errorf("arms[%d].Name = %q: want a non-empty name without white space or '/'", i, a.Name)
		case a.Name == NullArm && !cfg.NoNullArm:
			return fmt.Errorf("arms[%d].Name = %q is the null arm's name: rename the arm", i, a.Name)
		case seen[a.Name]:
			return fmt.Errorf("arms[%d].Name = %q is used twice: give each arm its own name", i, a.Name)
		case a.Open == nil:
			return fmt.Errorf("arms[%d].Open (arm %q) is nil: give a function that opens the arm's step", i, a.Name)
		}
		seen[a.Name] = true
	}
	return nil
}

// measureArm opens arm, runs one block of n recorded steps, closes it, and
// returns the block's report. The caller has locked the OS thread.
func measureArm(cfg *Config, n int, arm Arm, h *hostRun) (rep *report, r *runner, err error) {
	r = newRunner(cfg, n)
	if h != nil {
		r.host, r.cr.sampler = h, h.sampler
		r.phases[phaseBefore] = selfTasks()
	}
	step, closeArm, err := arm.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("opening: %v", err)
	}
	if closeArm != nil {
		defer func() {
			if cerr := closeArm(); cerr != nil && err == nil {
				err = fmt.Errorf("closing: %v", cerr)
			}
		}()
	}
	if h != nil {
		r.phases[phaseSetup] = selfTasks()
	}
	if err := r.waiter.Begin(); err != nil {
		return nil, nil, fmt.Errorf("preparing gaps (Config.Gap.Kind = %v): %v", cfg.Gap.Kind, err)
	}
	r.wallStart, r.loopStartNs = wallNow(), gap.Now()
	i, lerr := r.loop(step, nil)
	r.waiter.End()
	if lerr != nil {
		return nil, nil, fmt.Errorf("step failed at %s: %v", r.iterName(i), lerr)
	}
	return r.analyze(), r, nil
}

// blockSize returns the recorded steps per block: N of -benchtime=Nx, or,
// for a duration D, D divided by the time per iteration (step and gap) of a
// calibration block of two windows of the first arm.
func blockSize(cfg *Config, first Arm) (int, error) {
	bt := "1s"
	if f := flag.Lookup("test.benchtime"); f != nil {
		bt = f.Value.String()
	}
	if s, ok := strings.CutSuffix(bt, "x"); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n, nil
		}
	}
	d, err := time.ParseDuration(bt)
	if err != nil || d <= 0 {
		d = time.Second
	}
	calib := 2 * cfg.window()
	c := *cfg
	c.Warmup = 0
	start := gap.Now()
	if _, _, err := measureArm(&c, calib, first, nil); err != nil {
		return 0, err
	}
	per := float64(gap.Now()-start) / float64(calib)
	return max(calib, int(float64(d.Nanoseconds())/per)), nil
}

// cpuPerWall is the counter span's process CPU per wall second, NaN when
// the counters are unavailable (Judge then treats the round as missing).
func (rep *report) cpuPerWall() float64 {
	if c := &rep.counters; c.ok && c.wallNs > 0 {
		return float64(c.cpuNs) / float64(c.wallNs)
	}
	return math.NaN()
}

// intFlag returns the integer value of a testing flag, or def.
func intFlag(name string, def int) int {
	if f := flag.Lookup(name); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
			return v
		}
	}
	return def
}

// compareSummary returns the parent benchmark's log: the order used and
// each arm's verdict against the first arm.
func compareSummary(cfg *Config, all []Arm, order [][]int, res [][]*report) []string {
	var o strings.Builder
	fmt.Fprintf(&o, "order (Config.Seed = %d):", cfg.Seed)
	for r, perm := range order {
		if r > 0 {
			o.WriteString(" |")
		}
		for _, a := range perm {
			o.WriteString(" " + all[a].Name)
		}
	}
	lines := []string{o.String()}
	if cfg.NoNullArm {
		return append(lines, "verdicts: none without a null arm (Config.NoNullArm is set); compare the columns with benchstat")
	}
	base, null := res[0], res[len(all)-1]
	opt := cfg.Verdict
	opt.Knobs = nullband.Knobs{Rounds: "-count", RejectRatio: "Config.Verdict.RejectRatio", MaxBand: "Config.Verdict.MaxBand"}
	for a := 1; a < len(all)-1; a++ {
		// Judge the mean (ns/op) and the median step (p50-ns/op), the mean
		// carrying the tail and the median the typical step, and what the
		// steps cost the machine (cpu/wall).
		var parts []string
		for _, m := range []struct {
			unit string
			of   func(*report) float64
		}{
			{"ns/op", func(r *report) float64 { return r.mean }},
			{"p50-ns/op", func(r *report) float64 { return r.p50 }},
			{"cpu/wall", (*report).cpuPerWall},
		} {
			var s nullband.Samples
			for r := range base {
				s.Base = append(s.Base, m.of(base[r]))
				s.Candidate = append(s.Candidate, m.of(res[a][r]))
				s.Null = append(s.Null, m.of(null[r]))
			}
			v, err := nullband.Judge(s, opt)
			if err != nil {
				parts = append(parts, fmt.Sprintf("%s: no verdict: %v", m.unit, err))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %v: %s", m.unit, v.Kind, v.Reason))
		}
		lines = append(lines, fmt.Sprintf("%s vs %s: %s", all[a].Name, all[0].Name, strings.Join(parts, "; ")))
	}
	return lines
}
