package decodegap

import (
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
)

// nullMode runs the step and a second, independent instance of it (the null
// arm, RunConfig.Null) in alternate windows.
type nullMode struct {
	step, null Step
	nullRec    *record
}

func (m *nullMode) open(b *testing.B, r *runner, cl *closers, open Opener) {
	m.step = cl.open(b, "the step", open)
	m.null = cl.open(b, "the null instance (RunConfig.Null)", open)
	m.nullRec = newRecord(r.n/2 + r.window)
	r.rec = newRecord(r.n/2 + r.window)
	r.recs = []*record{r.rec, m.nullRec}
	r.noRequested = true
	r.traceConfig = map[string]string{"null": "alternate windows"}
}

func (m *nullMode) loop(r *runner) (string, error) {
	if i, err := m.run(r); err != nil {
		return "step failed at " + r.iterName(i), err
	}
	return "", nil
}

// nullBlock reports whether window block k belongs to the null instance:
// blocks go A A' A' A, A A' A' A, ... so that a linear drift weighs on both
// equally.
func nullBlock(k int) bool { return k%4 == 1 || k%4 == 2 }

// run runs the warm-up and the recorded iterations, alternating the step
// and the null instance a window at a time; each instance's latencies go to
// its own record. It returns the failed iteration (counted from the first
// warm-up iteration) and its error.
func (m *nullMode) run(r *runner) (int, error) {
	warm, noGap := r.s.warmup, r.s.noGap()
	prevEnd := gap.Now()
	for i := 0; i < warm; i++ {
		cur := m.step
		if nullBlock(i / r.window) {
			cur = m.null
		}
		if !noGap {
			r.waiter.WaitUntil(prevEnd + int64(r.seq.Next()))
		}
		start, end, err := timeStep(cur)
		prevEnd = end
		if err != nil {
			return i, err
		}
		r.rec.warm(i, prevEnd-start)
	}
	r.afterWarmup()
	untilBoundary, block := 0, -1
	cur, rec := m.step, r.rec
	var k, kA, kB int // the record's own index; saved indices of step and null
	for j := 0; j < r.n; j++ {
		if untilBoundary == 0 {
			r.boundary(j, j == 0)
			untilBoundary = r.window
			if rec == r.rec {
				kA = k
			} else {
				kB = k
			}
			block++
			if nullBlock(block) {
				cur, rec, k = m.null, m.nullRec, kB
			} else {
				cur, rec, k = m.step, r.rec, kA
			}
		}
		untilBoundary--
		var req int64
		if !noGap {
			req = int64(r.seq.Next())
			r.waiter.WaitUntil(prevEnd + req)
		}
		start, end, err := timeStep(cur)
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

// analyze reports the step's own iterations, and the null instance's
// steady mean over the step's.
func (m *nullMode) analyze(r *runner) *result {
	res := r.newResult()
	var lat, gaps []int64
	res.st, res.reached, res.from, lat, gaps = steadyWindow(r.rec, r.window)
	// The step's k-th iteration ran near iteration 2k of the whole run.
	r.fill(res, lat, gaps, 2*res.from)
	nst, ok, _, nullLat, _ := steadyWindow(m.nullRec, r.window)
	res.null = nullResult{on: true, ratio: summarize(nullLat).mean / res.lat.mean, steady: ok, st: nst}
	return res
}
