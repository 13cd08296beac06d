package decodegap

import (
	"fmt"
	"time"

	"github.com/gapbench/gapbench/internal/trace"
	"runtime"
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
)

// counterBudget is the largest fraction of the run's wall time that counter
// snapshots may take: a window boundary takes a snapshot only when at least
// 1/counterBudget times the last snapshot's cost has passed since the
// previous one.
const counterBudget = 0.01

// Run runs step b.N times, after cfg.Warmup discarded iterations, with the
// gaps of cfg.Gap before each step, and reports the steady window through
// b.ReportMetric and b.Log. Call it once per Benchmark function (or leaf
// sub-benchmark), as the whole body of the measured part:
//
//	func BenchmarkDecode(b *testing.B) {
//		decodegap.Run(b, decodegap.Config{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}}, step)
//	}
//
// Run locks the calling goroutine to its OS thread for the run. Setup before
// the loop (buffers, timer slack, gap calibration) and the analysis after it
// are outside the benchmark timer, so allocs/op and B/op describe the loop.
// A bad cfg or a step error stops the benchmark with b.Fatalf. Run logs only
// on the last call that testing makes of the benchmark function (never on
// its N=1 probe), in at most about eight lines, because testing keeps only
// ten lines of a benchmark's log.
func Run(b *testing.B, cfg Config, step Step) {
	b.Helper()
	switch {
	case step == nil && cfg.Open == nil:
		b.Fatalf("decodegap.Run: step is nil: pass the function that runs one step, or set Config.Open")
	case step != nil && cfg.Open != nil:
		b.Fatalf("decodegap.Run: both step and Config.Open are set: pass nil as the step when Config.Open opens it")
	}
	n := b.N
	if err := cfg.validate(n); err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	r := newRunner(&cfg, n)
	r.phases[phaseBefore] = selfTasks()
	h, err := openHost(&cfg)
	if err != nil {
		b.Fatalf("decodegap.Run: %v", err)
	}
	defer func() {
		if err := h.close(); err != nil {
			b.Errorf("decodegap.Run: closing the host sampler or releasing Config.Budget's confinement: %v", err)
		}
	}()
	r.host, r.cr.sampler = h, h.sampler

	var cl closers
	defer cl.closeAll(b)
	if cfg.Open != nil {
		step = cl.open(b, "the step (Config.Open)", cfg.Open)
	}
	steps := []Step{step}
	for i := 1; i < cfg.Sessions; i++ {
		steps = append(steps, cl.open(b, fmt.Sprintf("session %d of %d (Config.Open, Config.Sessions)", i+1, cfg.Sessions), cfg.Open))
	}
	var null Step
	if cfg.Null != nil {
		null = cl.open(b, "the null instance (Config.Null)", cfg.Null)
		r.nullRec = newRecord(n/2 + r.window)
		r.rec = newRecord(n/2 + r.window)
	}
	if cfg.Parity != nil {
		if err := cfg.Parity(); err != nil {
			b.Fatalf("decodegap.Run: parity check failed (Config.Parity), nothing was timed: %v", err)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.waiter.Begin(); err != nil {
		b.Fatalf("decodegap.Run: preparing gaps (Config.Gap.Kind = %v): %v", cfg.Gap.Kind, err)
	}
	defer r.waiter.End()
	r.phases[phaseSetup] = selfTasks()

	b.ResetTimer()
	r.wallStart, r.loopStartNs = wallNow(), gap.Now()
	if len(steps) > 1 {
		if s, i, err := r.sessions(steps); err != nil {
			b.Fatalf("decodegap.Run: session %d of %d: step failed at %s: %v", s+1, len(steps), r.iterName(i), err)
		}
	} else if i, err := r.loop(step, null); err != nil {
		b.Fatalf("decodegap.Run: step failed at %s: %v", r.iterName(i), err)
	}
	b.StopTimer()

	rep := r.analyze()
	last := isLastCall(b)
	if dir := traceDir(&cfg); dir != "" && last {
		paths, err := r.writeTrace(dir, b.Name(), rep)
		if err != nil {
			b.Errorf("decodegap.Run: writing the trace (Config.Trace or $%s): %v", trace.EnvDir, err)
		}
		rep.tracePaths = paths
	}
	rep.publish(b, last)
}

// closers closes, in reverse order, what Run opened.
type closers struct {
	fns   []func() error
	names []string
}

// open opens a step with o, stopping the benchmark on error, and keeps its
// close for closeAll.
func (c *closers) open(b *testing.B, what string, o Opener) Step {
	b.Helper()
	st, closeFn, err := o()
	if err != nil {
		b.Fatalf("decodegap.Run: opening %s: %v", what, err)
	}
	if st == nil {
		b.Fatalf("decodegap.Run: opening %s returned a nil step", what)
	}
	if closeFn != nil {
		c.fns = append(c.fns, closeFn)
		c.names = append(c.names, what)
	}
	return st
}

// closeAll closes everything opened, last first, reporting close errors.
func (c *closers) closeAll(b *testing.B) {
	for i := len(c.fns) - 1; i >= 0; i-- {
		if err := c.fns[i](); err != nil {
			b.Errorf("decodegap.Run: closing %s: %v", c.names[i], err)
		}
	}
}

// runner holds one call of Run: its config, its buffers and its counters.
type runner struct {
	cfg    *Config
	n      int // recorded iterations (b.N)
	window int
	seq    *gap.Sequence
	waiter *gap.Waiter
	// rec records the step's iterations; nullRec, when Config.Null is set,
	// those of the null instance, which take alternate windows (see loop).
	rec, nullRec *record
	cr           *counterReader
	// snaps are the counter snapshots taken at window boundaries, in order;
	// the first is at iteration 0 of the recorded ones, the last at n.
	snaps []snapshot
	// nextSnapNs is the earliest gap.Now() at which the next snapshot may be
	// taken (the counterBudget rate limit).
	nextSnapNs int64
	// requested sums the requested gaps of the recorded iterations (ns).
	requested int64
	// phases are the thread lists read at the ends of Run's phases, for the
	// thread census; host is the confinement and sampler of the run (nil
	// in Compare's blocks, which screen nothing).
	phases phaseReadings
	host   *hostRun
	// sessRecs are the sessions' records (Config.Sessions > 1), and
	// soloCensus the census of session 1 alone before them.
	sessRecs   []*record
	soloCensus census
	// spec is the gap spec the sequence was drawn from; wallStart and
	// loopStartNs are when the timed loop started (wall clock and gap.Now),
	// for the trace.
	spec        gap.Spec
	wallStart   time.Time
	loopStartNs int64
}

func newRunner(cfg *Config, n int) *runner {
	spec := gap.Spec{
		Kind: gap.Kind(cfg.Gap.Kind), Shape: gap.Shape(cfg.Gap.Shape),
		Mean: cfg.Gap.Mean, Jitter: cfg.Gap.Jitter, Trace: cfg.Gap.Trace,
		Spin: cfg.Gap.Spin, Seed: cfg.Gap.Seed,
	}
	w := cfg.window()
	return &runner{
		cfg: cfg, n: n, window: w, spec: spec,
		seq:    gap.NewSequence(spec),
		waiter: gap.NewWaiter(spec),
		rec:    newRecord(n),
		cr:     &counterReader{samples: newMetricSamples(), user: cfg.Counters},
		snaps:  make([]snapshot, 0, 64),
	}
}

// iterName names iteration i (counted over warm-up and recorded) for a
// person: which phase, and where in it.
func (r *runner) iterName(i int) string {
	if i < r.cfg.Warmup {
		return fmt.Sprintf("warm-up iteration %d of %d (Config.Warmup)", i+1, r.cfg.Warmup)
	}
	return fmt.Sprintf("iteration %d of %d (b.N; after %d warm-up)", i-r.cfg.Warmup+1, r.n, r.cfg.Warmup)
}

// loop runs the warm-up and the recorded iterations. It returns the index of
// a failed iteration (counted from the first warm-up iteration) and its error.
//
// With a null instance, the recorded iterations alternate between step and
// null a window at a time in the order A A' A' A, A A' A' A, ... (so that a
// linear drift weighs on both equally), and each instance's latencies go to
// its own record; the warm-up runs both the same way.
func (r *runner) loop(step, null Step) (int, error) {
	warm := r.cfg.Warmup
	noGap := r.cfg.Gap.Shape == GapConstant && r.cfg.Gap.Mean == 0
	prevEnd := gap.Now()
	cur := step
	for i := 0; i < warm; i++ {
		if null != nil && nullBlock(i/r.window) {
			cur = null
		} else {
			cur = step
		}
		if !noGap {
			r.waiter.WaitUntil(prevEnd + int64(r.seq.Next()))
		}
		err := cur()
		prevEnd = gap.Now()
		if err != nil {
			return i, err
		}
	}
	if warm > 0 && r.host != nil {
		r.phases[phaseWarmup] = selfTasks()
	} else {
		r.phases[phaseWarmup] = r.phases[phaseSetup]
	}
	// untilBoundary counts down the steps left in the current window.
	untilBoundary, block := 0, -1
	rec, k := r.rec, 0 // the record in use and its own iteration index
	var kA, kB int     // iterations recorded so far by step and by null
	cur = step
	for j := 0; j < r.n; j++ {
		if untilBoundary == 0 {
			r.boundary(j, j == 0)
			untilBoundary = r.window
			if null != nil {
				if rec == r.rec {
					kA = k
				} else {
					kB = k
				}
				block++
				if nullBlock(block) {
					cur, rec, k = null, r.nullRec, kB
				} else {
					cur, rec, k = step, r.rec, kA
				}
			}
		}
		untilBoundary--
		var req int64
		if !noGap {
			req = int64(r.seq.Next())
			r.waiter.WaitUntil(prevEnd + req)
		}
		start := gap.Now()
		err := cur()
		end := gap.Now()
		if err != nil {
			return warm + j, err
		}
		rec.add(k, end-start, start-prevEnd)
		k++
		r.requested += req
		prevEnd = end
	}
	r.boundary(r.n, true)
	return 0, nil
}

// nullBlock reports whether window block k belongs to the null instance:
// blocks go A A' A' A, A A' A' A, ...
func nullBlock(k int) bool { return k%4 == 1 || k%4 == 2 }

// boundary takes a counter snapshot at a window boundary after j recorded
// iterations, unless the rate limit says it is too soon; force overrides it.
func (r *runner) boundary(j int, force bool) {
	now := gap.Now()
	if !force && now < r.nextSnapNs {
		return
	}
	r.snaps = append(r.snaps, snapshot{})
	s := &r.snaps[len(r.snaps)-1]
	r.cr.take(s, j)
	r.nextSnapNs = s.wallNs + int64(float64(s.costNs)/counterBudget)
}
