package decodegap

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
)

// counterBudget is the largest fraction of the run's wall time that counter
// snapshots may take: a window boundary takes a snapshot only when at least
// 1/counterBudget times the last snapshot's cost has passed since the
// previous one.
const counterBudget = 0.01

// Run opens a step with open, runs it b.N times after cfg.Warmup discarded
// iterations, with the gaps of cfg.Gap before each step, and reports the
// steady window through b.ReportMetric and b.Log. Call it once per
// Benchmark function (or leaf sub-benchmark), as its whole body:
//
//	func BenchmarkDecode(b *testing.B) {
//		decodegap.Run(b, decodegap.RunConfig{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}}, decodegap.Func(step))
//	}
//
// Run opens the step after it first reads the process's threads (so that
// an engine's thread pool is counted as the open's) and closes it before it
// returns. It locks the calling goroutine to its OS thread for the run;
// setup and analysis are outside the benchmark timer, so allocs/op and B/op
// describe the loop. A bad cfg, an open or a step error stops the benchmark
// with b.Fatalf, labelled "decodegap.Run:". Run logs only on the last call
// testing makes of the benchmark function (never on its N=1 probe), in at
// most nine lines: testing keeps ten.
//
// Run returns what this call measured as numbers and enums (a caller may
// ignore it); a trace that cannot be written is a warning in the log, never
// a failure.
func Run(b *testing.B, cfg RunConfig, open Opener) *Result {
	b.Helper()
	if open == nil {
		b.Fatalf("decodegap.Run: open is nil: pass an Opener (decodegap.Func(step) for a plain step)")
	}
	from, err := resolveSLO(&cfg)
	if err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	s := cfg.settings()
	s.sloFrom = from
	if err := cfg.validate(); err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	if err := s.validate(b.N); err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	if err := cfg.limitSessions(b.N); err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	writeGapConfig(cfg.Gap) // provenance.go
	m := modeFor(&cfg)
	return runMode(b, s, open, m).export()
}

// modeFor returns the mode cfg asks for: sessions (open or closed loop),
// null, open loop, or single.
func modeFor(cfg *RunConfig) mode {
	var m mode
	switch {
	case cfg.Sessions > 1 && cfg.Gap.Open:
		m = &openSessionsMode{n: cfg.Sessions}
	case cfg.Sessions > 1:
		m = &sessionsMode{n: cfg.Sessions}
	case cfg.Null:
		m = &nullMode{}
	case cfg.Gap.Open:
		m = &openMode{}
	default:
		m = &singleMode{}
	}
	return m
}

// mode is one of Run's ways to run its instances: single (run.go), null
// (null.go) or sessions (sessions.go).
type mode interface {
	// open opens the mode's instances with open, keeping their closes in cl.
	open(b *testing.B, r *runner, cl *closers, open Opener)
	// loop runs the warm-up and the recorded iterations; on a failure it
	// names the failing iteration.
	loop(r *runner) (where string, err error)
	// analyze fills the result of the run.
	analyze(r *runner) *result
}

// runMode is Run's frame around a mode: measure (engine.go) with the
// benchmark's timer, then the report, then the closes. The counter
// snapshots of the result it returns are back in the pool by then: a caller
// reads only its figures.
func runMode(b *testing.B, s *settings, open Opener, m mode) *result {
	b.Helper()
	last := isLastCall(b)
	name := ""
	if last {
		name = b.Name()
	}
	res, done, err := measure(context.Background(), s, b.N, open, m, b, name)
	if err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	defer func() {
		if err := done(); err != nil {
			b.Errorf("decodegap.Run: %v", err)
		}
	}()
	publish(b, s, res, last)
	return res
}

// closers closes, in reverse order, what Run opened.
type closers struct {
	fns   []func() error
	names []string
	// err is the first failed open when there is no benchmark to stop
	// (Measure); open opens nothing more after it.
	err error
}

// open opens an instance with o, and keeps its close for closeAll. On an
// error or a nil step it stops the benchmark b, or, when b is nil, keeps
// the error in c.err and returns nil.
func (c *closers) open(b *testing.B, what string, o Opener) Step {
	if c.err != nil {
		return nil
	}
	st, closeFn, err := o()
	if closeFn != nil {
		c.fns = append(c.fns, closeFn)
		c.names = append(c.names, what)
	}
	switch {
	case err != nil:
		c.err = fmt.Errorf("opening %s: %w", what, err)
	case st == nil:
		c.err = fmt.Errorf("opening %s returned a nil step", what)
	}
	if c.err != nil && b != nil {
		b.Helper()
		b.Fatalf("decodegap.Run: %v", c.err)
	}
	return st
}

// closeAll closes everything opened, last first, and returns the close
// errors joined.
func (c *closers) closeAll() error {
	var errs []error
	for i := len(c.fns) - 1; i >= 0; i-- {
		if err := c.fns[i](); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", c.names[i], err))
		}
	}
	c.fns, c.names = nil, nil
	return errors.Join(errs...)
}

// runner holds one measurement: its settings, its buffers and its counters.
type runner struct {
	s      *settings
	n      int // recorded iterations (b.N, or the block size)
	window int
	seq    *gap.Sequence
	waiter *gap.Waiter
	// rec records the step's iterations (session 1's with sessions);
	// recs, when set, are every record of the run (the null instance's,
	// each session's), rec first: the stall is looked for in all of them.
	rec  *record
	recs []*record
	cr   *counterReader
	// snaps are the counter snapshots taken at window boundaries, in order;
	// the first is at iteration 0 of the recorded ones, the last at n.
	snaps []snapshot
	// nextSnapNs is the earliest gap.Now() at which the next snapshot may be
	// taken (the counterBudget rate limit).
	nextSnapNs int64
	// requested sums the requested gaps of the recorded iterations (ns).
	requested int64
	// phases are the thread lists read at the ends of the phases, for the
	// thread census; host is the confinement and sampler (nil in Compare's
	// calibration block).
	phases phaseReadings
	host   *hostRun
	// openTIDs are the threads the step's open created (read before and
	// after it, sorted): in a sliced round cpu-ns/op counts them between
	// the arm's turns and leaves them out of the other arms'. Nil when the
	// thread lists could not be read.
	openTIDs []int
	// spec is the gap spec the sequence was drawn from; wallStart and
	// loopStartNs are when the timed loop started, for the trace.
	spec        gap.Spec
	wallStart   time.Time
	loopStartNs int64
	// trace is the mode's part of the trace: which columns are one to one
	// with the requested gaps, and mode-specific config entries.
	traceConfig map[string]string
	noRequested bool
	// foreignNext marks the next snapshot foreign (a sliced round's turn
	// starts: see turn).
	foreignNext bool
	// sliced marks a runner of a sliced round: cpu-ns/op leaves out the
	// threads the other arms' opens created (otherTIDs, sorted) in its
	// turns, and counts its own open's threads between them.
	sliced    bool
	otherTIDs []int
	// overheadNs is the loop's bookkeeping per step that cpu-ns/op leaves
	// out (loopOverheadNs, and a sessions round's release); stepsOf, when
	// set, counts the steps of an interval of iterations (sessions);
	// loopOffStep says the loop thread does not run the steps (sessions),
	// so thread-cpu-% does not apply.
	overheadNs  float64
	stepsOf     func(iters int) int
	loopOffStep bool
}

func newRunner(s *settings, n int) *runner {
	spec := gap.Spec{
		Kind: gap.Kind(s.gap.Kind), Shape: gap.Shape(s.gap.Shape),
		Mean: s.gap.Mean, Jitter: s.gap.Jitter, Trace: s.gap.Trace,
		Spin: s.gap.Spin, MaxCPU: s.gap.MaxCPU, Seed: s.seed, Burstiness: s.gap.Burstiness,
	}
	w := gap.NewWaiter(spec)
	return &runner{
		s: s, n: n, window: s.windowSize(), spec: spec,
		seq:    gap.NewSequence(spec),
		waiter: w,
		rec:    newRecord(n),
		cr:     &counterReader{samples: newMetricSamples(), user: s.counters, waiters: []*gap.Waiter{w}},
	}
}

// iterName names iteration i (counted over warm-up and recorded) for a
// person: which phase, and where in it.
func (r *runner) iterName(i int) string {
	if i < r.s.warmup {
		return fmt.Sprintf("warm-up iteration %d of %d (%s.Warmup)", i+1, r.s.warmup, r.s.typ)
	}
	return fmt.Sprintf("iteration %d of %d (b.N; after %d warm-up)", i-r.s.warmup+1, r.n, r.s.warmup)
}

// singleMode runs one instance.
type singleMode struct{ step Step }

func (m *singleMode) open(b *testing.B, r *runner, cl *closers, open Opener) {
	m.step = cl.open(b, "the step", open)
}

func (m *singleMode) loop(r *runner) (string, error) {
	if i, err := r.loop(m.step); err != nil {
		return "step failed at " + r.iterName(i), err
	}
	return "", nil
}

func (m *singleMode) analyze(r *runner) *result { return r.analyzeSingle() }

// analyzeSingle finds the steady window of r.rec and fills the result.
func (r *runner) analyzeSingle() *result {
	res := r.newResult()
	var lat, gaps []int64
	res.st, res.reached, res.from, lat, gaps = steadyWindow(r.rec, r.window)
	r.fill(res, lat, gaps, res.from)
	return res
}

// loop runs the warm-up and the recorded iterations of one instance. It
// returns the index of a failed iteration (counted from the first warm-up
// iteration) and its error.
func (r *runner) loop(step Step) (int, error) {
	warm, noGap := r.s.warmup, r.s.noGap()
	i, prevEnd, err := r.warm(step)
	if err != nil {
		return i, err
	}
	r.afterWarmup()
	untilBoundary := 0
	for j := 0; j < r.n; j++ {
		if untilBoundary == 0 {
			r.boundary(j, j == 0)
			untilBoundary = r.window
		}
		untilBoundary--
		if prevEnd, err = r.recorded(step, j, prevEnd, noGap); err != nil {
			return warm + j, err
		}
	}
	r.boundary(r.n, true)
	return 0, nil
}

// warm runs the warm-up iterations of one instance, each after its gap,
// and returns when the last ended (gap.Now), or the index of a failed one
// and its error.
func (r *runner) warm(step Step) (int, int64, error) {
	prevEnd := gap.Now()
	for i := 0; i < r.s.warmup; i++ {
		if !r.s.noGap() {
			r.waiter.WaitUntil(prevEnd + int64(r.seq.Next()))
		}
		start, end, err := timeStep(step)
		prevEnd = end
		if err != nil {
			return i, prevEnd, err
		}
		r.rec.warm(i, prevEnd-start)
	}
	return 0, prevEnd, nil
}

// recorded runs recorded step j after its gap from prevEnd (none when
// noGap), adds it to the record and returns when it ended (gap.Now).
func (r *runner) recorded(step Step, j int, prevEnd int64, noGap bool) (int64, error) {
	var req int64
	if !noGap {
		req = int64(r.seq.Next())
		r.waiter.WaitUntil(prevEnd + req)
	}
	start, end, err := timeStep(step)
	if err != nil {
		return end, err
	}
	r.rec.add(j, end-start, start-prevEnd)
	r.requested += req
	return end, nil
}

// timeStep runs one step with the loop's goroutine unlocked from its OS
// thread and returns its start and end (gap.Now) and its error. The loop
// holds its thread for the gaps (the timer slack, the CPU clock around a
// sleep), not for the step: a step that blocks (on its goroutines, a
// channel, a lock) is then scheduled as it is outside the harness, where a
// locked caller would make the runtime hand its P to another thread and
// back at every wait (measured 2026-12-07: a step fanning 150 µs of work
// out over two goroutines cost the process 10% more CPU from a locked
// caller, one on a thread that exits 21% more). A caller the user locked
// stays locked (LockOSThread counts). It does not allocate.
func timeStep(step Step) (start, end int64, err error) {
	runtime.UnlockOSThread()
	start = gap.Now()
	err = step()
	end = gap.Now()
	runtime.LockOSThread()
	return start, end, err
}

// afterWarmup marks the end of the warm-up for the census: the threads
// then are those of the first snapshot, which boundary takes next (reading
// them here would allocate in the timed loop; censusPhases reads them from
// it).
func (r *runner) afterWarmup() {
	r.phases[phaseWarmup] = r.phases[phaseSetup]
}

// boundary takes a counter snapshot at a window boundary after j recorded
// iterations, unless the rate limit says it is too soon; force overrides it.
func (r *runner) boundary(j int, force bool) {
	now := gap.Now()
	if !force && now < r.nextSnapNs {
		return
	}
	r.snaps = r.cr.next(r.snaps)
	s := &r.snaps[len(r.snaps)-1]
	r.cr.take(s, j)
	s.foreign, r.foreignNext = r.foreignNext, false
	r.nextSnapNs = s.wallNs + r.cr.interval(s)
}

// censusPhases returns r's phase readings with the warm-up's end filled
// in: the threads of the first snapshot, taken right after the warm-up,
// when there was a warm-up and that snapshot read them; the setup's
// otherwise.
func (r *runner) censusPhases() *phaseReadings {
	ph := r.phases
	if r.s.warmup > 0 && len(r.snaps) > 0 && r.snaps[0].host != nil {
		if ts := r.snaps[0].host.Tasks(); ts != nil {
			ph[phaseWarmup] = taskTIDs(ts)
		}
	}
	return &ph
}
