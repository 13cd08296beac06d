package decodegap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/levels"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/trace"
	"github.com/gapbench/gapbench/nullband"
)

// Arm is one configuration that Compare measures.
type Arm struct {
	// Name labels the arm's sub-benchmark, BenchmarkX/arm=Name, so that
	// `benchstat -col /arm` puts each arm in a column. It must read back
	// unchanged through benchfmt: non-empty printable text without white
	// space (NBSP included), '/' or '=', not ending in -N (which benchstat
	// reads as GOMAXPROCS), unique, and not "null" (the null arm's).
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
//		decodegap.Compare(b, decodegap.CompareConfig{}, decodegap.Arm{Name: "off", Open: openOff}, decodegap.Arm{Name: "on", Open: openOn})
//	}
//
//	go test -bench BenchmarkSpin -benchtime=2000x -count 10 | tee out.txt
//	go tool benchstat -col /arm out.txt
//
// testing would run plain sub-benchmarks -count times back to back (A A A
// ... B B B), across whatever the host did in between. Compare instead runs
// the rounds itself: every arm once per round as a block of N steps (N of
// -benchtime=Nx; gaps, warm-up and steady-state detection as Run's), in an
// order drawn afresh each round from CompareConfig.Seed, with no arm twice
// in a row across a round boundary; at closed-loop gaps of 1 ms or more
// the arms of a round take turns of 60 ms of gaps instead
// (CompareConfig.Slice). A null arm, a second instance of the
// first arm, runs in every round unless CompareConfig.NoNullArm is set; it
// calibrates the verdicts: each arm against the first on its mean step
// (ns/op), median step (p50-ns/op) and CPU time per step (cpu-ns/op),
// judged by internal/judge, the one judge of every gapbench route
// (sequential, with -count the most rounds; with the null arm every
// complete round is judged, and only with NoNullArm are rounds whose arms met
// different weather or held a stall offered to the quarantine); the null
// arm's own rows against the first arm are printed as the A/A check. The
// order and the verdict table are printed after the arms' lines (without
// -v the stalled and quarantined rounds counted, one line each; -v lists
// them). With one -cpu value Compare stops once every verdict is decided
// and the A/A rows have an interval (judge.Decided), or
// CompareConfig.TimeBudget is spent, and each arm then prints one line per
// round run; with several, every value gets the rounds the first ran.
//
// Between blocks Compare writes one progress line to stderr. A failure in
// round k (an open, a nil step, a step error or panic) stops the
// benchmark with an error labelled "decodegap.Compare:" that names a file
// holding rounds 1..k-1 as benchfmt lines. Compare must be the whole body of its
// benchmark function.
func Compare(b *testing.B, cfg CompareConfig, arms ...Arm) {
	b.Helper()
	s := cfg.settings()
	if err := checkArms(arms, cfg.NoNullArm); err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	p, err := readPlan()
	if err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := openHost(s)
	if err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	defer func() {
		if err := h.close(); err != nil {
			b.Errorf("decodegap.Compare: closing the host sampler or releasing CompareConfig.Budget's confinement: %v", err)
		}
	}()
	n, err := blockSize(s, p, arms[0])
	if err != nil {
		b.Fatalf("decodegap.Compare: sizing the block from arm %q: %v", arms[0].Name, err)
	}
	if err := s.validate(n); err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	if err := checkSlice(&cfg, n); err != nil {
		b.Fatalf("decodegap.Compare: %v", err)
	}
	all := arms
	if !cfg.NoNullArm {
		all = append(append([]Arm(nil), arms...), Arm{Name: NullArm, Open: arms[0].Open})
	}
	if s.parity != nil {
		if err := s.parity(); err != nil {
			b.Fatalf("decodegap.Compare: parity check failed (CompareConfig.Parity), nothing was timed: %v", err)
		}
	}
	writeGapConfig(cfg.Gap) // provenance.go
	c := &comparison{s: s, cfg: &cfg, arms: all, n: n, host: h, plan: p, bench: b.Name(), start: time.Now()}
	c.slicing = chooseSlice(&cfg, len(all), n) // slice.go
	configLine("slice", c.slicing.Config())
	if err := c.measure(); err != nil {
		if path, werr := c.savePartial(); path != "" {
			b.Fatalf("decodegap.Compare: %v; the rounds completed before it are kept in %s (benchfmt)", err, path)
		} else if werr != nil {
			b.Fatalf("decodegap.Compare: %v; the completed rounds could not be kept: %v", err, werr)
		}
		b.Fatalf("decodegap.Compare: %v", err)
	}
	c.replay(b)
	writeSummary(summaryOut, c.bench, c.summary())
	if err := c.writeJSON(); err != nil {
		b.Errorf("decodegap.Compare: %v", err)
	}
}

// comparison is one call of Compare: its arms, block size and plan, and the
// results by GOMAXPROCS setting, arm and round.
type comparison struct {
	s     *settings
	cfg   *CompareConfig
	arms  []Arm // with the null arm last unless NoNullArm
	n     int   // recorded steps per block
	host  *hostRun
	plan  plan
	bench string
	start time.Time
	// slicing is how the rounds run: sliced in turns, or whole blocks.
	slicing levels.Slicing
	// rounds is the number of rounds run for every GOMAXPROCS setting;
	// done counts the blocks run.
	rounds, done int
	// order[pi][r] is round r's arm order at setting pi.
	order [][][]int
	// res[pi][a][r] is arm a's result in round r at setting pi.
	res [][][]*result
	// rows[pi] are the verdict rows at setting pi, once judged, and
	// judgeErr[pi] why there are none.
	rows     [][]report.Row
	judgeErr []error
}

// measure runs the rounds for every -cpu setting in internal/judge's
// sequential loop. With one setting it stops once every verdict is decided
// or CompareConfig.TimeBudget is spent; with several, the first setting
// runs until -count rounds or its share of the budget, and every later
// setting runs as many rounds (replay prints the same rounds for each).
func (c *comparison) measure() error {
	p := c.plan
	c.res = make([][][]*result, len(p.procs))
	c.order = make([][][]int, len(p.procs))
	c.rows, c.judgeErr = make([][]report.Row, len(p.procs)), make([]error, len(p.procs))
	c.rounds = p.count
	for pi, procs := range p.procs {
		prev := runtime.GOMAXPROCS(procs)
		c.order[pi] = nullband.Orders(len(c.arms), p.count, c.s.seed)
		c.res[pi] = make([][]*result, len(c.arms))
		for a := range c.arms {
			c.res[pi][a] = make([]*result, 0, p.count)
		}
		loop := judge.Loop{MaxRounds: c.rounds, NoEarlyStop: len(p.procs) > 1}
		if pi == 0 && c.cfg.TimeBudget > 0 {
			loop.Budget = c.cfg.TimeBudget / time.Duration(len(p.procs))
		}
		n, stop, err := loop.Run(func(r int) error { return c.round(pi, r-1) },
			func(r int) bool { return judgeRounds(c, pi, r) })
		runtime.GOMAXPROCS(prev)
		if err != nil {
			return err
		}
		if pi == 0 && n < p.count {
			c.rounds = n
			switch stop {
			case judge.AllDecided:
				fmt.Fprintf(progressOut, "decodegap.Compare: %s: every verdict decided after %d of %d rounds (-count is the most): stopping\n", c.bench, n, p.count)
			case judge.OutOfBudget:
				fmt.Fprintf(progressOut, "decodegap.Compare: %s: CompareConfig.TimeBudget %v cannot pay for another round after %d of %d rounds: stopping\n", c.bench, c.cfg.TimeBudget, n, p.count)
			}
		}
		for a := range c.arms {
			for _, res := range c.res[pi][a] {
				res.rounds = c.rounds
			}
		}
	}
	return nil
}

// round runs round r (from 0) of setting pi: every arm once, in the
// round's order.
func (c *comparison) round(pi, r int) error {
	p := c.plan
	procs := p.procs[pi]
	blocks := len(p.procs) * p.count * len(c.arms)
	var sliced []*result
	var runs []*runner
	if turn := c.slicing.Turn; turn > 0 {
		var err error
		sliced, runs, err = measureSliced(c.s, c.n, turn, c.arms, c.order[pi][r], c.host)
		if err != nil {
			return fmt.Errorf("round %d of %d at GOMAXPROCS %d, sliced in turns of %d steps (CompareConfig.Slice = %d): %w", r+1, p.count, procs, turn, c.cfg.Slice, err)
		}
	}
	for _, a := range c.order[pi][r] {
		var res *result
		var run *runner
		if sliced != nil {
			res, run = sliced[a], runs[a]
		} else {
			var err error
			if res, run, err = c.block(c.arms[a]); err != nil {
				return fmt.Errorf("round %d of %d at GOMAXPROCS %d, arm %q: %w", r+1, p.count, procs, c.arms[a].Name, err)
			}
		}
		res.round, res.rounds, res.procs = r+1, p.count, procs
		if dir := traceDir(c.s); dir != "" {
			paths, err := run.writeTrace(dir, c.bench+"/arm="+c.arms[a].Name, res)
			if err != nil {
				return fmt.Errorf("writing the trace (CompareConfig.Trace or $%s): %w", trace.EnvDir, err)
			}
			res.tracePaths = paths
		}
		c.res[pi][a] = append(c.res[pi][a], res)
		c.done++
		if verboseProgress() {
			c.progress(pi, r, a, c.done, blocks)
		}
	}
	if !verboseProgress() {
		c.roundProgress(pi, r, c.done, blocks)
	}
	c.nullRatios(pi, r)
	return nil
}

// judgeRounds is comparison.judge; tests replace it to decide at a known
// round.
var judgeRounds = (*comparison).judge

// progressOut is where progress lines go: stderr, between blocks.
var progressOut = os.Stderr

// progress writes one line after a block: where the run is, the block's
// step and gap, and the time elapsed and left.
func (c *comparison) progress(pi, r, a, done, blocks int) {
	el := time.Since(c.start)
	eta := time.Duration(float64(el) / float64(done) * float64(blocks-done))
	res := c.res[pi][a][r]
	fmt.Fprintf(progressOut, "decodegap.Compare: %s: round %d/%d, GOMAXPROCS %d, arm %q: step p50 %s, gap %s; elapsed %s, ETA %s\n",
		c.bench, r+1, c.plan.count, c.plan.procs[pi], c.arms[a].Name, fmtNs(res.lat.p50), fmtNs(res.gap.mean),
		durfmt.Elapsed(el), durfmt.Elapsed(eta))
}

// verboseProgress reports whether progress goes one line a block (-v), or
// one line a round.
var verboseProgress = testing.Verbose

// roundProgress writes one line after round r: every arm's median step and
// the time elapsed and left.
func (c *comparison) roundProgress(pi, r, done, blocks int) {
	el := time.Since(c.start)
	eta := time.Duration(float64(el) / float64(done) * float64(blocks-done))
	var arms []string
	for a := range c.arms {
		if r < len(c.res[pi][a]) {
			arms = append(arms, fmt.Sprintf("%s %s", c.arms[a].Name, fmtNs(c.res[pi][a][r].lat.p50)))
		}
	}
	fmt.Fprintf(progressOut, "decodegap.Compare: %s: round %d/%d, GOMAXPROCS %d: step p50 %s; elapsed %s, ETA %s (-v: a line per block)\n",
		c.bench, r+1, c.plan.count, c.plan.procs[pi], strings.Join(arms, ", "), durfmt.Elapsed(el), durfmt.Elapsed(eta))
}

// nullRatios sets the null arm's ratio to the first arm in round r.
func (c *comparison) nullRatios(pi, r int) {
	if c.cfg.NoNullArm {
		return
	}
	base, null := c.res[pi][0][r], c.res[pi][len(c.arms)-1][r]
	null.null = nullResult{on: true, ratio: null.lat.mean / base.lat.mean, steady: null.reached && base.reached, of: c.arms[0].Name}
}

// block opens arm, runs one block of c.n recorded steps, closes it, and
// returns the block's result. The caller has locked the OS thread.
func (c *comparison) block(arm Arm) (*result, *runner, error) {
	return measureBlock(c.s, c.n, arm, c.host)
}

// measureBlock opens arm, runs n recorded steps after the warm-up, closes
// it, and returns the result; h may be nil (no host figures).
//
// A step (or Open, or close) that panics is a failure like an error: the
// panic and its stack are the error, so that Compare keeps the rounds
// completed before it.
func measureBlock(s *settings, n int, arm Arm, h *hostRun) (res *result, r *runner, err error) {
	began := false
	defer func() {
		if p := recover(); p != nil {
			if began {
				r.waiter.End()
			}
			res, r, err = nil, nil, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	r = newRunner(s, n)
	if h != nil {
		r.host, r.cr.sampler = h, h.sampler
		r.phases[phaseBefore] = h.tids()
	}
	step, closeArm, err := arm.Open()
	if closeArm != nil {
		defer func() {
			if cerr := closeArm(); cerr != nil && err == nil {
				err = fmt.Errorf("closing: %w", cerr)
			}
		}()
	}
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("opening: %w", err)
	case step == nil:
		return nil, nil, errors.New("opening returned a nil step (Arm.Open must return a step or an error)")
	}
	if h != nil {
		r.phases[phaseSetup] = h.tids()
		r.openTIDs = openedTIDs(r.phases[phaseBefore], r.phases[phaseSetup])
	}
	r.overheadNs = loopOverhead(s)
	if err := r.waiter.Begin(); err != nil {
		return nil, nil, fmt.Errorf("preparing gaps (CompareConfig.Gap.Kind = %v): %w", s.gap.Kind, err)
	}
	began = true
	r.wallStart, r.loopStartNs = wallNow(), gap.Now()
	if s.gap.Open {
		m := &openMode{s: newStream(step, r.spec, n)}
		m.s.seq, m.s.waiter, m.s.rec = r.seq, r.waiter, r.rec
		m.boundary = func(j int, force bool) {
			if j == 0 {
				r.afterWarmup()
			}
			r.boundary(j, force)
		}
		ok := m.s.run(s.warmup, n, r.window, m.boundary)
		began = false
		r.waiter.End()
		if !ok {
			return nil, nil, fmt.Errorf("step failed at %s: %w", r.iterName(m.s.errIter), m.s.err)
		}
		r.requested = m.s.requested
		return m.analyze(r), r, nil
	}
	i, lerr := r.loop(step)
	began = false
	r.waiter.End()
	if lerr != nil {
		return nil, nil, fmt.Errorf("step failed at %s: %w", r.iterName(i), lerr)
	}
	return r.analyzeSingle(), r, nil
}

// blockSize returns the recorded steps per block: N of -benchtime=Nx, or,
// for a duration D, D divided by the time per iteration (step and gap) of a
// calibration block of two windows of the first arm.
func blockSize(s *settings, p plan, first Arm) (int, error) {
	if p.iters > 0 {
		return p.iters, nil
	}
	calib := 2 * s.windowSize()
	c := *s
	c.warmup = 0
	start := gap.Now()
	if _, _, err := measureBlock(&c, calib, first, nil); err != nil {
		return 0, err
	}
	per := float64(gap.Now()-start) / float64(calib)
	return max(calib, int(float64(p.duration.Nanoseconds())/per)), nil
}

// gomaxprocsSuffix matches a name ending that benchfmt reads as -cpu's.
var gomaxprocsSuffix = regexp.MustCompile(`-\d+$`)

// checkArms checks Compare's arms: each name must read back unchanged
// through benchfmt as the value of the arm key.
func checkArms(arms []Arm, noNull bool) error {
	if len(arms) == 0 {
		return errors.New("no arms: pass at least one Arm (two to compare)")
	}
	seen := map[string]bool{}
	for i, a := range arms {
		bad := a.Name == "" || strings.ContainsAny(a.Name, "/=") || gomaxprocsSuffix.MatchString(a.Name)
		for _, r := range a.Name {
			bad = bad || unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '\u00a0'
		}
		switch {
		case bad || !readsBack(a.Name):
			return fmt.Errorf("arms[%d].Name = %q: want printable text without white space, '/' or '=', not ending in -N (benchstat reads that as GOMAXPROCS)", i, a.Name)
		case a.Name == NullArm && !noNull:
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

// readsBack reports whether benchfmt reads a result line of arm name back
// with the name unchanged, at GOMAXPROCS 1 and 2.
func readsBack(name string) bool {
	in := "BenchmarkX/arm=" + name + " 1 1 ns/op\nBenchmarkX/arm=" + name + "-2 1 1 ns/op\n"
	rd := benchfmt.NewReader(strings.NewReader(in), "check")
	want := [][]string{{"/arm=" + name}, {"/arm=" + name, "-2"}}
	k := 0
	for rd.Scan() {
		r, ok := rd.Result().(*benchfmt.Result)
		if !ok || k >= len(want) {
			return false
		}
		_, parts := r.Name.Parts()
		if len(parts) != len(want[k]) {
			return false
		}
		for i, p := range parts {
			if string(p) != want[k][i] {
				return false
			}
		}
		k++
	}
	return rd.Err() == nil && k == 2
}

// savePartial writes the rounds completed at every setting to a benchfmt
// file (in the trace folder, else the temporary one) and returns its path;
// "" when no round was completed.
func (c *comparison) savePartial() (string, error) {
	var b strings.Builder
	for pi, procs := range c.plan.procs {
		if c.res == nil || c.res[pi] == nil {
			break
		}
		complete := len(c.res[pi][0])
		for a := range c.arms {
			complete = min(complete, len(c.res[pi][a]))
		}
		for r := range complete {
			for a, arm := range c.arms {
				b.WriteString(benchLine(c.bench+"/arm="+arm.Name, procs, c.n, c.res[pi][a][r]))
			}
		}
	}
	if b.Len() == 0 {
		return "", nil
	}
	dir := traceDir(c.s)
	if dir == "" {
		dir = os.TempDir()
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(c.bench)
	f, err := os.CreateTemp(dir, "decodegap-partial-"+name+"-*.txt")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return "", err
	}
	return filepath.Clean(f.Name()), f.Close()
}

// benchLine formats one result as testing would print it.
func benchLine(name string, procs, n int, res *result) string {
	if procs != 1 {
		name = fmt.Sprintf("%s-%d", name, procs)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\t%d", name, n)
	for _, m := range res.metrics() {
		m.value = reportValue(m.value)
		fmt.Fprintf(&b, "\t%g %s", m.value, reportUnit(m))
	}
	return b.String() + "\n"
}
