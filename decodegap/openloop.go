package decodegap

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
)

// stream is one open-loop arrival stream served by one instance: its
// schedule, its waiter and what it records. Session k of RunConfig.Sessions
// has its own (seeded with RunConfig.Seed+k).
type stream struct {
	step   Step
	seq    *gap.Sequence
	waiter *gap.Waiter
	// rec records the service times (lat) and the achieved gaps; resp the
	// response time (end − scheduled arrival) as lat and the lateness
	// (start − scheduled arrival) as gap, with the same stride.
	rec, resp *record
	// ahead replays the arrival schedule ahead of the loop to count the
	// arrivals already due when a step starts (the queue); aheadAt is its
	// next arrival (ns), aheadN the arrivals due so far.
	ahead   *gap.Sequence
	aheadAt int64
	aheadN  int
	// requested sums the recorded steps' inter-arrival gaps (ns);
	// depthSum and depthMax the queue depth seen at each recorded step's
	// start (the step itself included). saturated is set once the queue
	// reached MaxQueue: the loop stops counting arrivals then (counting
	// them would cost more than the step when they come faster than the
	// loop can count) and serves the queue back to back.
	requested int64
	depthSum  int64
	depthMax  int
	saturated bool
	// err and errIter are the first failure (iteration counted from the
	// first warm-up step).
	err     error
	errIter int
}

func newStream(step Step, spec gap.Spec, n int) *stream {
	return &stream{step: step, seq: gap.NewSequence(spec), waiter: gap.NewWaiter(spec), ahead: gap.NewSequence(spec),
		rec: newRecord(n), resp: newRecord(n)}
}

// MaxQueue is the deepest queue an open loop (Gap.Open) counts: arrivals
// due and not yet served at a step's start. An arrival interval below what
// the loop itself costs (Gap.Mean = 1ns, or SearchRate's Rates.Start above
// what the step sustains) reaches it within a few milliseconds; the loop then
// stops counting arrivals, serves the rest back to back (so the run lasts
// no longer than a closed loop of the same steps), and the run is reported
// as OverloadQueueLimit (overloaded 1, queue-max MaxQueue).
const MaxQueue = 1 << 16

// run runs warm unrecorded and n recorded steps on the arrival schedule,
// from now. boundary, when not nil, is called before recorded step j at
// every window of window steps, and after the last. It does not allocate.
// It returns false on a step's failure (s.err).
func (s *stream) run(warm, n, window int, boundary func(j int, force bool)) bool {
	t0 := gap.Now()
	arrival, prevEnd := t0, t0
	s.aheadAt, s.aheadN = t0+int64(s.ahead.Next()), 0
	untilBoundary := 0
	for i := 0; i < warm+n; i++ {
		j := i - warm
		if j >= 0 && boundary != nil {
			if untilBoundary == 0 {
				boundary(j, j == 0)
				untilBoundary = window
			}
			untilBoundary--
		}
		req := int64(s.seq.Next())
		arrival += req
		if gap.Now() < arrival {
			s.waiter.WaitUntil(arrival)
		}
		start := gap.Now()
		for !s.saturated && s.aheadAt <= start {
			s.aheadN++
			s.aheadAt += int64(s.ahead.Next())
			s.saturated = s.aheadN-i >= MaxQueue
		}
		runtime.UnlockOSThread() // as timeStep: the step runs unlocked
		err := s.step()
		end := gap.Now()
		runtime.LockOSThread()
		if err != nil {
			s.err, s.errIter = err, i
			return false
		}
		if j < 0 {
			s.rec.warm(i, end-start)
		} else {
			s.rec.add(j, end-start, start-prevEnd)
			s.resp.add(j, end-arrival, start-arrival)
			s.requested += req
			depth := s.aheadN - i
			if s.saturated { // no longer counted: at least MaxQueue
				depth = MaxQueue
			}
			s.depthSum += int64(depth)
			s.depthMax = max(s.depthMax, depth)
		}
		prevEnd = end
	}
	if boundary != nil {
		boundary(n, true)
	}
	return true
}

// openMode runs one instance in an open loop (Gap.Open): step i is
// scheduled at the loop's start plus the sum of the first i+1 requested
// gaps, whenever the steps before it finished. A step that overruns makes
// the next ones start late, and that wait counts in their response time, as
// it does for a request queued at a busy server: the closed loop's blind
// spot (coordinated omission) is measured instead of hidden.
type openMode struct {
	s        *stream
	boundary func(j int, force bool)
}

func (m *openMode) open(b *testing.B, r *runner, cl *closers, open Opener) {
	m.s = newStream(cl.open(b, "the step", open), r.spec, r.n)
	m.s.seq, m.s.waiter, m.s.rec = r.seq, r.waiter, r.rec // the runner's: Begin and the trace use them
	m.boundary = func(j int, force bool) {
		if j == 0 {
			r.afterWarmup()
		}
		r.boundary(j, force)
	}
	r.traceConfig = map[string]string{"loop": "open"}
}

func (m *openMode) loop(r *runner) (string, error) {
	if !m.s.run(r.s.warmup, r.n, r.window, m.boundary) {
		return "step failed at " + r.iterName(m.s.errIter), m.s.err
	}
	r.requested = m.s.requested
	return "", nil
}

// analyze reports the service times like a closed loop (the steady window
// of the step latencies) and adds the response times over every recorded
// step: a stall and the queue behind it are what the open loop is for, not a
// transient to leave out.
func (m *openMode) analyze(r *runner) *result {
	res := r.analyzeSingle()
	res.open = openStats([]*stream{m.s})
	res.slo = r.s.judgeSLO(m.s.resp.lat, "response time").unless(res.open)
	res.sloService = r.s.judgeSLO(m.s.rec.lat, "service time")
	return res
}

// openResult is the open loop's part of a result: response times
// (scheduled arrival to end, queueing included) and lateness (scheduled
// arrival to start), in ns, over every recorded step.
type openResult struct {
	on bool
	// resp summarises the response times; respTail their bounded tails.
	resp     latency
	respTail tails
	// lateMean is the mean lateness; lateFirst and lateLast the median
	// lateness of the run's first half and last tenth: a queue that
	// grows over the run (lateLast ≫ lateFirst) is an arrival rate above
	// what the step sustains. Medians, so that one stall late in a run
	// (a preempted step, and the few arrivals queued behind it) does not
	// read as growth.
	lateMean, lateFirst, lateLast float64
	// queueMean and queueMax are the queue depth seen at recorded steps'
	// starts (the step itself counts: 1 is no queue), over every recorded
	// step.
	queueMean float64
	queueMax  int
	// overload is why the loop counts as overloaded, if it does;
	// serviceP50 the median service time over every recorded step (0 when
	// unknown), the scale the lateness trend is judged against.
	overload   OverloadReason
	serviceP50 float64
	// intervalMean is the mean inter-arrival gap requested (ns).
	intervalMean float64
}

// OverloadReason says why an open loop (Gap.Open) counts as overloaded: its
// arrivals come faster than the step serves them, so its response times
// describe a queue still growing, not a steady one.
type OverloadReason int

const (
	// NotOverloaded: the queue did not grow through the run (the zero value).
	NotOverloaded OverloadReason = iota
	// OverloadQueueGrew: the median lateness of the run's last tenth
	// exceeds its first half's by more than four times the larger of the
	// median service time and the mean inter-arrival gap (the median
	// response when neither is known).
	OverloadQueueGrew
	// OverloadQueueLimit: the queue reached MaxQueue arrivals, and the loop
	// stopped counting them.
	OverloadQueueLimit
)

// String returns "no", "queue-grew" or "queue-limit".
func (r OverloadReason) String() string {
	switch r {
	case NotOverloaded:
		return "no"
	case OverloadQueueGrew:
		return "queue-grew"
	case OverloadQueueLimit:
		return "queue-limit"
	}
	return fmt.Sprintf("OverloadReason(%d)", int(r))
}

// overloaded reports whether the arrivals outpaced the step (overload).
func (o openResult) overloaded() bool { return o.on && o.overload != NotOverloaded }

// openStats pools the streams' response times, lateness and queue depths.
func openStats(ss []*stream) openResult {
	var resp, late []int64
	o := openResult{on: true}
	var depth int64
	var count int
	saturated := false
	var svc []int64
	var requested int64
	for _, s := range ss {
		saturated = saturated || s.saturated
		requested += s.requested
		if s.rec != nil {
			svc = append(svc, s.rec.lat...)
		}
		resp = append(resp, s.resp.lat...)
		late = append(late, s.resp.gap...)
		depth += s.depthSum
		count += s.resp.count
		o.queueMax = max(o.queueMax, s.depthMax)
	}
	sr := sortedCopy(resp)
	o.resp, o.respTail = summarizeSorted(sr), tailsOfSorted(sr)
	if len(svc) > 0 {
		o.serviceP50 = summarize(svc).p50
	}
	if count > 0 {
		o.queueMean = float64(depth) / float64(count)
		o.intervalMean = float64(requested) / float64(count)
	}
	if len(ss) == 0 || len(late) == 0 {
		o.judgeOverload(saturated)
		return o
	}
	o.lateMean = summarize(late).mean
	// Trend over the first stream's own order: pooling would mix times.
	l := ss[0].resp.gap
	o.lateFirst = summarize(l[:len(l)/2]).p50
	o.lateLast = summarize(l[len(l)-max(1, len(l)/10):]).p50
	o.judgeOverload(saturated)
	return o
}

// judgeOverload sets o.overload from the lateness trend, and from whether a
// stream's queue reached MaxQueue (saturated). The trend is judged against
// the service time, which a growing queue leaves alone: the median response
// grows with the queue itself (a queue growing steadily from the start has
// its median response near half its last lateness), so a scale of it
// would never see steady growth. The inter-arrival gap is in the scale too:
// a late wake-up of the gap's waiter on a busy host is not a queue, and a
// queue that does grow gains (service − gap) a step, far more than four
// gaps over the run.
func (o *openResult) judgeOverload(saturated bool) {
	scale := o.resp.p50
	if k := max(o.serviceP50, o.intervalMean); k > 0 {
		scale = k
	}
	switch {
	case saturated:
		o.overload = OverloadQueueLimit
	case o.lateLast-o.lateFirst > 4*scale:
		o.overload = OverloadQueueGrew
	default:
		o.overload = NotOverloaded
	}
}

// tailConfidence is the level of the tail bounds.
const tailConfidence = 0.95

// tailQuantiles are the tails bounded: p90, p99 and p99.9.
var tailQuantiles = [...]float64{0.90, 0.99, 0.999}

// tails are the bounded tail percentiles of a latency sample (package
// tail: distribution-free, from order statistics).
type tails [len(tailQuantiles)]tail.Estimate

// tailsOf bounds the tails of xs (ns).
func tailsOf(xs []int64) tails {
	return tailsOfSorted(sortedCopy(xs))
}

// tailsOfSorted is tailsOf on an ascending xs.
func tailsOfSorted(xs []int64) tails {
	var t tails
	for i, q := range tailQuantiles {
		t[i] = tail.QuantileSorted(xs, q, tailConfidence)
	}
	return t
}

// sloResult is RunConfig.SLO judged on a run's samples.
type sloResult struct {
	on  bool
	obj tail.Objective
	j   tail.Judgement
	// of names what was judged: "response time" or "step latency".
	of string
	// from names where the objective came from ("" is RunConfig.SLO).
	from string
	// overloaded is set when the open loop's queue grew through the run:
	// the verdict is then fail whatever the bound said, since a growing
	// queue has no steady tail for a longer run to approach.
	overloaded bool
}

// unless fails the objective when o's queue grew through the run.
func (s sloResult) unless(o openResult) sloResult {
	if s.on && o.overloaded() {
		s.overloaded, s.j.Verdict = true, tail.Fail
	}
	return s
}

// judgeSLO judges the run's objective on xs (ns) when it is set.
func (s *settings) judgeSLO(xs []int64, of string) sloResult {
	r := judgeSLO(s.slo, xs, of)
	r.from = s.sloFrom
	return r
}

// judgeSLO judges o on xs (ns) when o is set.
func judgeSLO(o SLO, xs []int64, of string) sloResult {
	if !o.on() {
		return sloResult{}
	}
	s := make([]float64, len(xs))
	for i, x := range xs {
		s[i] = float64(x)
	}
	slices.Sort(s)
	obj := o.objective()
	return sloResult{on: true, obj: obj, j: obj.Judge(s), of: of}
}

// openSessionsMode runs RunConfig.Sessions instances in an open loop, each
// serving its own arrival stream (session k's gaps drawn with
// RunConfig.Seed+k): independent users, each with its own queue, not one
// stream dispatched to whichever session is free. Each session runs the
// warm-up and b.N recorded steps on its own locked OS thread; counters are
// snapshotted at the start and the end of the concurrent region only.
type openSessionsMode struct {
	n  int
	ss []*stream
	// go releases the sessions' goroutines, which start, lock their
	// threads and prepare their waiters in open, before the timed loop.
	goCh  chan struct{}
	ready sync.WaitGroup
	done  sync.WaitGroup
	// beginErr is the first waiter that could not be prepared.
	beginErr error
	mu       sync.Mutex
	// closed records that goCh was closed (by the loop, or by the closer
	// when the loop never ran).
	closed *bool
	// skip tells released goroutines to end without running: set when
	// the benchmark stopped before the loop.
	skip bool
}

func (m *openSessionsMode) open(b *testing.B, r *runner, cl *closers, open Opener) {
	m.goCh = make(chan struct{})
	for k := range m.n {
		st := cl.open(b, fmt.Sprintf("session %d of %d (RunConfig.Sessions)", k+1, m.n), open)
		spec := r.spec
		spec.Seed += uint64(k)
		m.ss = append(m.ss, newStream(st, spec, r.n))
	}
	r.noRequested = true
	r.traceConfig = map[string]string{"loop": "open", "sessions": strconv.Itoa(m.n)}
	// The counter span runs from before the streams start to after they
	// end: every session's warm-up and recorded steps, on their threads,
	// with their gaps the harness's.
	for _, s := range m.ss {
		r.cr.waiters = append(r.cr.waiters, s.waiter)
	}
	warmN := r.s.warmup
	r.stepsOf = func(iters int) int { return (warmN + iters) * m.n }
	r.loopOffStep = true
	m.ready.Add(m.n)
	m.done.Add(m.n)
	warm, n := r.s.warmup, r.n
	for _, s := range m.ss {
		go func() {
			defer m.done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := s.waiter.Begin(); err != nil {
				m.mu.Lock()
				m.beginErr = cmp.Or(m.beginErr, err)
				m.mu.Unlock()
				m.ready.Done()
				<-m.goCh
				return
			}
			defer s.waiter.End()
			m.ready.Done()
			<-m.goCh
			if m.skip {
				return
			}
			s.run(warm, n, 0, nil)
		}()
	}
	m.ready.Wait()
	spareThreads(m.n + 2)
	closed := false
	cl.fns = append(cl.fns, func() error {
		if !closed { // the loop never ran: release the goroutines to end
			m.skip = true
			close(m.goCh)
			closed = true
		}
		m.done.Wait()
		return nil
	})
	cl.names = append(cl.names, "the sessions' streams")
	m.closed = &closed
}

func (m *openSessionsMode) loop(r *runner) (string, error) {
	if m.beginErr != nil {
		return "preparing a session's gaps", m.beginErr
	}
	r.boundary(0, true)
	r.afterWarmup()
	*m.closed = true
	close(m.goCh)
	m.done.Wait()
	r.boundary(r.n, true)
	for k, s := range m.ss {
		if s.err != nil {
			return fmt.Sprintf("session %d of %d: step failed at %s", k+1, m.n, r.iterName(s.errIter)), s.err
		}
		r.requested += s.requested
	}
	r.rec = m.ss[0].rec
	for _, s := range m.ss {
		r.recs = append(r.recs, s.rec)
	}
	return "", nil
}

// analyze pools the sessions: service times from the latest steady start of
// any session, response times over every recorded step of every session.
func (m *openSessionsMode) analyze(r *runner) *result {
	res := r.newResult()
	res.reached = true
	for i, s := range m.ss {
		st, ok, from, _, _ := steadyWindow(s.rec, r.window)
		if !ok {
			res.reached = false
		}
		if i == 0 || from > res.from {
			res.from, res.st = from, st
		}
	}
	if !res.reached {
		res.from = 0
	}
	var lat, gaps, resp []int64
	res.sessions = make([]sessionStats, len(m.ss))
	for i, s := range m.ss {
		k := min(res.from/s.rec.stride, len(s.rec.lat))
		l := summarize(s.rec.lat[k:])
		res.sessions[i] = sessionStats{p50: l.p50, p90: l.p90}
		lat = append(lat, s.rec.lat[k:]...)
		gaps = append(gaps, s.rec.gap[k:]...)
		resp = append(resp, s.resp.lat...)
	}
	r.fill(res, lat, gaps, res.from)
	res.open = openStats(m.ss)
	res.slo = r.s.judgeSLO(resp, "response time").unless(res.open)
	var svc []int64
	for _, s := range m.ss {
		svc = append(svc, s.rec.lat...)
	}
	res.sloService = r.s.judgeSLO(svc, "service time")
	if c := &res.proc; c.ok && c.wallNs > 0 {
		res.throughput = float64(len(m.ss)*c.iters()) / (float64(c.wallNs) / 1e9)
	}
	return res
}
