package decodegap

import (
	"slices"
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
)

// openMode runs one instance in an open loop (Gap.Open): step i is
// scheduled at the loop's start plus the sum of the first i+1 requested
// gaps, whenever the steps before it finished. A step that overruns makes
// the next ones start late, and that wait counts in their response time, as
// it does for a request queued at a busy server: the closed loop's blind
// spot (coordinated omission) is measured instead of hidden.
type openMode struct {
	step Step
	// resp records, per recorded step, the response time (end − scheduled
	// arrival) as lat and the lateness (start − scheduled arrival) as gap,
	// kept with the same stride as the runner's record.
	resp *record
	// ahead replays the arrival schedule ahead of the loop to count the
	// arrivals already due when a step starts (the queue); aheadAt is its
	// next arrival (ns), aheadN the arrivals due so far.
	ahead   *gap.Sequence
	aheadAt int64
	aheadN  int
	// depthSum and depthMax sum and bound the queue depth seen at each
	// recorded step's start (the step itself included).
	depthSum int64
	depthMax int
}

func (m *openMode) open(b *testing.B, r *runner, cl *closers, open Opener) {
	m.step = cl.open(b, "the step", open)
	m.resp = newRecord(r.n)
	m.ahead = gap.NewSequence(r.spec)
	r.traceConfig = map[string]string{"loop": "open"}
}

func (m *openMode) loop(r *runner) (string, error) {
	if i, err := m.run(r); err != nil {
		return "step failed at " + r.iterName(i), err
	}
	return "", nil
}

// run runs the warm-up and the recorded steps on the arrival schedule. It
// does not allocate. It returns the failed iteration (counted from the
// first warm-up iteration) and its error.
func (m *openMode) run(r *runner) (int, error) {
	warm := r.s.warmup
	t0 := gap.Now()
	arrival, prevEnd := t0, t0
	m.aheadAt, m.aheadN = t0+int64(m.ahead.Next()), 0
	untilBoundary := 0
	for i := 0; i < warm+r.n; i++ {
		j := i - warm
		if j == 0 {
			r.afterWarmup()
		}
		if j >= 0 {
			if untilBoundary == 0 {
				r.boundary(j, j == 0)
				untilBoundary = r.window
			}
			untilBoundary--
		}
		req := int64(r.seq.Next())
		arrival += req
		if gap.Now() < arrival {
			r.waiter.WaitUntil(arrival)
		}
		start := gap.Now()
		for m.aheadAt <= start {
			m.aheadN++
			m.aheadAt += int64(m.ahead.Next())
		}
		err := m.step()
		end := gap.Now()
		if err != nil {
			return i, err
		}
		if j >= 0 {
			r.rec.add(j, end-start, start-prevEnd)
			m.resp.add(j, end-arrival, start-arrival)
			r.requested += req
			depth := m.aheadN - i
			m.depthSum += int64(depth)
			m.depthMax = max(m.depthMax, depth)
		}
		prevEnd = end
	}
	r.boundary(r.n, true)
	return 0, nil
}

// analyze reports the service times like a closed loop (the steady window
// of the step latencies) and adds the response times over every recorded
// step: a stall and the queue behind it are what the open loop is for, not a
// transient to leave out.
func (m *openMode) analyze(r *runner) *result {
	res := r.analyzeSingle()
	res.open = openStats(m.resp.lat, m.resp.gap)
	res.slo = judgeSLO(r.s.slo, m.resp.lat, "response time")
	if m.resp.count > 0 {
		res.open.queueMean = float64(m.depthSum) / float64(m.resp.count)
	}
	res.open.queueMax = m.depthMax
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
	// lateMean is the mean lateness; lateFirst and lateLast the mean
	// lateness of the run's first half and last tenth: a queue that
	// grows over the run (lateLast ≫ lateFirst) is an arrival rate above
	// what the step sustains.
	lateMean, lateFirst, lateLast float64
	// queueMean and queueMax are the queue depth seen at recorded steps'
	// starts (the step itself counts: 1 is no queue), over every recorded
	// step.
	queueMean float64
	queueMax  int
}

// overloaded reports whether the queue grew through the window: the last
// tenth's lateness exceeds the first half's by more than four times the
// median response, so the arrival rate is above what the step sustains
// and the response times describe a queue still growing, not a steady one.
func (o openResult) overloaded() bool {
	return o.on && o.lateLast-o.lateFirst > 4*o.resp.p50
}

func openStats(resp, late []int64) openResult {
	o := openResult{on: true, resp: summarize(resp), respTail: tailsOf(resp)}
	if len(late) == 0 {
		return o
	}
	mean := func(xs []int64) float64 {
		if len(xs) == 0 {
			return 0
		}
		var s float64
		for _, x := range xs {
			s += float64(x)
		}
		return s / float64(len(xs))
	}
	o.lateMean = mean(late)
	o.lateFirst = mean(late[:len(late)/2])
	o.lateLast = mean(late[len(late)-max(1, len(late)/10):])
	return o
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
	s := make([]float64, len(xs))
	for i, x := range xs {
		s[i] = float64(x)
	}
	slices.Sort(s)
	var t tails
	for i, q := range tailQuantiles {
		t[i] = tail.QuantileSorted(s, q, tailConfidence)
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
