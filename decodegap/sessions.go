package decodegap

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
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
	// record says whether the current round is recorded (false in warm-up).
	record *bool
	// k counts the recorded steps; err and errIter the first failure.
	k       int
	err     error
	errIter int
}

func (w *worker) run(done *sync.WaitGroup) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	i := 0
	for range w.start {
		t0 := gap.Now()
		err := w.step()
		t1 := gap.Now()
		if err != nil && w.err == nil {
			w.err, w.errIter = err, i
		}
		if *w.record {
			w.rec.add(w.k, t1-t0, t0-*w.roundStart)
			w.k++
		}
		i++
		done.Done()
	}
}

// sessions runs steps as concurrent sessions: first session 1 alone for the
// thread census, then Config.Warmup unrecorded rounds and b.N recorded ones,
// each round releasing every session at once after the gap. Counters are
// snapshotted at the start and the end of the concurrent region only. It
// returns the failing session, iteration (counted from the first warm-up
// round) and error.
func (r *runner) sessions(steps []Step) (int, int, error) {
	// The census block: session 1 alone, with snapshots at its windows.
	soloN := max(r.cfg.Warmup, 2*r.window)
	solo := newRunner(r.cfg, soloN)
	solo.cfg = &Config{Gap: r.cfg.Gap, Window: r.cfg.Window}
	solo.waiter, solo.host, solo.cr = r.waiter, r.host, r.cr
	solo.phases = r.phases
	if i, err := solo.loop(steps[0], nil); err != nil {
		return 0, i, err
	}
	if len(solo.snaps) >= 2 {
		first, last := solo.snaps[0].host, solo.snaps[len(solo.snaps)-1].host
		if first != nil && last != nil {
			r.soloCensus = takeCensus(&solo.phases, first.Tasks(), last.Tasks())
			r.soloCensus.solo = soloN
		}
	}

	var (
		done       sync.WaitGroup
		roundStart int64
		recording  bool
	)
	ws := make([]*worker, len(steps))
	r.sessRecs = make([]*record, len(steps))
	for i, st := range steps {
		r.sessRecs[i] = newRecord(r.n)
		ws[i] = &worker{step: st, rec: r.sessRecs[i], start: make(chan struct{}, 1), roundStart: &roundStart, record: &recording}
		go ws[i].run(&done)
	}
	defer func() {
		for _, w := range ws {
			close(w.start)
		}
	}()
	noGap := r.cfg.Gap.Shape == GapConstant && r.cfg.Gap.Mean == 0
	warm := r.cfg.Warmup
	roundStart = gap.Now()
	for i := 0; i < warm+r.n; i++ {
		if i == warm {
			r.boundary(0, true)
			recording = true
		}
		var req int64
		if !noGap {
			req = int64(r.seq.Next())
			r.waiter.WaitUntil(roundStart + req)
		}
		done.Add(len(ws))
		for _, w := range ws {
			w.start <- struct{}{}
		}
		done.Wait()
		roundStart = gap.Now()
		if recording {
			r.requested += req
		}
		for s, w := range ws {
			if w.err != nil {
				return s, w.errIter, w.err
			}
		}
	}
	r.boundary(r.n, true)
	r.rec = r.sessRecs[0]
	return 0, 0, nil
}

// sessionStats is one session's figures over the common steady window.
type sessionStats struct {
	p50, p90 float64
}

// sessionsLine reports the sessions: pooled and per-session percentiles and
// the throughput of the whole.
func (rep *report) sessionsLine() string {
	if len(rep.sessions) == 0 {
		return ""
	}
	per := make([]string, len(rep.sessions))
	for i, s := range rep.sessions {
		per[i] = fmt.Sprintf("%d: %s/%s", i+1, fmtNs(s.p50), fmtNs(s.p90))
	}
	s := fmt.Sprintf("sessions: %d concurrent (Config.Sessions), released together each round; pooled p50 %s, p90 %s; per session p50/p90 %s; throughput %.4g steps/s",
		len(rep.sessions), fmtNs(rep.p50), fmtNs(rep.p90), strings.Join(per, ", "), rep.throughput)
	if rep.soloN > 0 {
		s += fmt.Sprintf("; the thread census below is of session 1 alone (%d steps before the concurrent region)", rep.soloN)
	}
	return s
}
