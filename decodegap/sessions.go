package decodegap

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/decodegap/internal/steady"
)

// worker runs one session's steps on its own locked OS thread.
type worker struct {
	step Step
	rec  *record
	// start releases one step; the worker records it and calls done.Done.
	start chan struct{}
	// roundStart is the end of the previous round, written by the
	// coordinator before it releases the round (the channel send orders it).
	roundStart *int64
	// record says whether the current round is recorded (false in warm-up);
	// dry, that the round only exercises the release (see start).
	record, dry *bool
	// k counts the recorded steps; err and errIter the first failure.
	k       int
	err     error
	errIter int
}

func (w *worker) run(done, ready *sync.WaitGroup) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ready.Done()
	i := 0
	for range w.start {
		if *w.dry {
			done.Done()
			continue
		}
		t0 := gap.Now()
		err := w.step()
		t1 := gap.Now()
		if err != nil && w.err == nil {
			w.err, w.errIter = err, i
		}
		if *w.record {
			w.rec.add(w.k, t1-t0, t0-*w.roundStart)
			w.k++
		} else {
			w.rec.warm(i, t1-t0)
		}
		i++
		done.Done()
	}
}

// sessionsMode runs n independent instances at once (RunConfig.Sessions).
type sessionsMode struct {
	n     int
	steps []Step
	recs  []*record
	// solo is the census of session 1 alone, soloN its steps.
	solo  census
	soloN int
	// soloRun is the runner of the solo block, ws the workers, and done,
	// roundStart, recording and dry what they share with run; all made by
	// start, before the timed loop, so that the loop allocates nothing.
	soloRun    *runner
	ws         []*worker
	done       sync.WaitGroup
	roundStart int64
	recording  bool
	dry        bool
	// releaseNs is the process's CPU time a round's release costs (the
	// channel sends, the workers' wake-ups, the wait), measured over the
	// last half of the dry rounds: cpu-ns/op leaves it out with the
	// harness. 0 when the clock could not be read.
	releaseNs float64
}

// dryRounds is the number of rounds start releases without running the
// steps: blocking on channels and wait groups allocates the runtime's wait
// records until their per-thread caches are filled.
const dryRounds = 64

func (m *sessionsMode) open(b *testing.B, r *runner, cl *closers, open Opener) {
	for i := range m.n {
		m.steps = append(m.steps, cl.open(b, fmt.Sprintf("session %d of %d (RunConfig.Sessions)", i+1, m.n), open))
	}
	r.noRequested = true
	r.traceConfig = map[string]string{"sessions": strconv.Itoa(m.n)}
	m.start(r)
	cl.fns = append(cl.fns, func() error { m.stop(); return nil })
	cl.names = append(cl.names, "the sessions' workers")
}

// start makes the solo block's runner and starts one worker per session,
// each locked to its OS thread, with spare threads and dry rounds so that
// the runtime has what the rounds need before the timed loop.
func (m *sessionsMode) start(r *runner) {
	m.soloN = max(r.s.warmup, 2*r.window)
	solo := newRunner(&settings{fn: r.s.fn, typ: r.s.typ, gap: r.s.gap, window: r.s.window, seed: r.s.seed}, m.soloN)
	solo.waiter, solo.host, solo.cr = r.waiter, r.host, r.cr
	m.soloRun = solo
	m.ws = make([]*worker, len(m.steps))
	m.recs = make([]*record, len(m.steps))
	var ready sync.WaitGroup
	ready.Add(len(m.steps))
	for i, st := range m.steps {
		m.recs[i] = newRecord(r.n)
		m.ws[i] = &worker{step: st, rec: m.recs[i], start: make(chan struct{}, 1), roundStart: &m.roundStart, record: &m.recording, dry: &m.dry}
		go m.ws[i].run(&m.done, &ready)
	}
	ready.Wait()
	spareThreads(len(m.steps) + 2)
	m.dry = true
	for range dryRounds / 2 {
		m.release()
	}
	p0, err0 := readProcessCPU()
	for range dryRounds / 2 {
		m.release()
	}
	if p1, err1 := readProcessCPU(); err0 == nil && err1 == nil {
		m.releaseNs = float64(p1-p0) / (dryRounds / 2)
	}
	m.dry = false
	solo.snaps = r.cr.prepare(snapSlots(m.soloN, r.window))
}

// release runs one round: every worker once, waiting for all.
func (m *sessionsMode) release() {
	m.done.Add(len(m.ws))
	for _, w := range m.ws {
		w.start <- struct{}{}
	}
	m.done.Wait()
}

// stop ends the workers' goroutines.
func (m *sessionsMode) stop() {
	for _, w := range m.ws {
		close(w.start)
	}
	m.ws = nil
}

func (m *sessionsMode) loop(r *runner) (string, error) {
	if s, i, err := m.run(r); err != nil {
		return fmt.Sprintf("session %d of %d: step failed at %s", s+1, m.n, r.iterName(i)), err
	}
	return "", nil
}

// run runs the steps as concurrent sessions: first session 1 alone for the
// thread census, then the warm-up rounds and b.N recorded ones, each round
// releasing every session at once after the gap. Counters are snapshotted at
// the start and the end of the concurrent region only. It returns the
// failing session, iteration (counted from the first warm-up round) and
// error.
func (m *sessionsMode) run(r *runner) (int, int, error) {
	// The census block: session 1 alone, with snapshots at its windows.
	solo := m.soloRun
	solo.phases = r.phases
	if i, err := solo.loop(m.steps[0]); err != nil {
		return 0, i, err
	}
	ws := m.ws
	noGap, warm := r.s.noGap(), r.s.warmup
	m.roundStart = gap.Now()
	for i := 0; i < warm+r.n; i++ {
		if i == warm {
			r.boundary(0, true)
			m.recording = true
		}
		var req int64
		if !noGap {
			req = int64(r.seq.Next())
			r.waiter.WaitUntil(m.roundStart + req)
		}
		m.release()
		m.roundStart = gap.Now()
		if m.recording {
			r.requested += req
		}
		for s, w := range ws {
			if w.err != nil {
				return s, w.errIter, w.err
			}
		}
	}
	r.boundary(r.n, true)
	r.rec, r.recs = m.recs[0], m.recs
	return 0, 0, nil
}

// soloCensus is the thread census of the solo block, taken after the timed
// loop (it allocates).
func (m *sessionsMode) soloCensus() census {
	solo := m.soloRun
	if solo == nil || len(solo.snaps) < 2 {
		return census{}
	}
	first, last := solo.snaps[0].host, solo.snaps[len(solo.snaps)-1].host
	if first == nil || last == nil {
		return census{}
	}
	return takeCensus(&solo.phases, first.Tasks(), last.Tasks())
}

// analyze finds the steady window of every session, starts them all at the
// latest start, and reports the pooled latencies from there, each session's
// p50 and p90, and the throughput. The series counts as steady only if
// every session's is; the census is session 1's solo block's.
func (m *sessionsMode) analyze(r *runner) *result {
	res := r.newResult()
	res.reached = true
	sts := make([]steady.Result, len(m.recs))
	for i, rec := range m.recs {
		st, ok, from, _, _ := steadyWindow(rec, r.window)
		sts[i] = st
		if !ok {
			res.reached = false
		}
		if from > res.from || i == 0 {
			res.from, res.st = max(from, res.from), st
		}
	}
	if !res.reached {
		res.from = 0
		for _, st := range sts {
			if st.Class == steady.NoSteadyState {
				res.st = st
				break
			}
		}
	}
	k0 := res.from / m.recs[0].stride
	var lat, gaps []int64
	// The counter span holds every session's steps, on the workers'
	// threads; each round's release is the harness's.
	r.stepsOf = func(rounds int) int { return rounds * m.n }
	r.loopOffStep = true
	r.overheadNs += m.releaseNs / float64(m.n)
	res.sessions = make([]sessionStats, len(m.recs))
	for i, rec := range m.recs {
		k := min(k0, len(rec.lat))
		l := summarize(rec.lat[k:])
		res.sessions[i] = sessionStats{p50: l.p50, p90: l.p90}
		lat = append(lat, rec.lat[k:]...)
		gaps = append(gaps, rec.gap[k:]...)
	}
	r.fill(res, lat, gaps, res.from)
	if res.host.ok {
		m.solo = m.soloCensus()
		res.census, res.soloN = m.solo, m.soloN
	}
	if c := &res.proc; c.ok && c.wallNs > 0 {
		res.throughput = float64(len(m.recs)*c.iters()) / (float64(c.wallNs) / 1e9)
	}
	return res
}

// sessionStats is one session's figures over the common steady window.
type sessionStats struct {
	p50, p90 float64
}

// sessionsLine reports the sessions: pooled and per-session percentiles and
// the throughput of the whole.
func (res *result) sessionsLine() string {
	if len(res.sessions) == 0 {
		return ""
	}
	per := make([]string, len(res.sessions))
	for i, s := range res.sessions {
		per[i] = fmt.Sprintf("%d: %s/%s", i+1, fmtNs(s.p50), fmtNs(s.p90))
	}
	how := "released together each round"
	if res.open.on {
		how = "each serving its own arrival stream (Gap.Open)"
	}
	s := fmt.Sprintf("sessions: %d concurrent (RunConfig.Sessions), %s; pooled p50 %s, p90 %s; per session p50/p90 %s; throughput %.4g steps/s",
		len(res.sessions), how, fmtNs(res.lat.p50), fmtNs(res.lat.p90), strings.Join(per, ", "), res.throughput)
	if res.soloN > 0 {
		s += fmt.Sprintf("; the thread census below is of session 1 alone (%d steps before the concurrent region)", res.soloN)
	}
	return s
}
