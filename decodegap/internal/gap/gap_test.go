package gap

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// draw returns the first n gaps of s.
func draw(s Spec, n int) []time.Duration {
	q := NewSequence(s)
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = q.Next()
	}
	return out
}

// meanCV returns the sample mean (ns) and coefficient of variation of ds.
func meanCV(ds []time.Duration) (mean, cv float64) {
	for _, d := range ds {
		mean += float64(d)
	}
	mean /= float64(len(ds))
	var ss float64
	for _, d := range ds {
		ss += (float64(d) - mean) * (float64(d) - mean)
	}
	return mean, math.Sqrt(ss/float64(len(ds)-1)) / mean
}

func TestSequenceSeed(t *testing.T) {
	for _, shape := range []Shape{Uniform, Exponential} {
		s := Spec{Shape: shape, Mean: 100 * time.Microsecond, Jitter: 0.5, Seed: 0}
		a, b := draw(s, 1000), draw(s, 1000)
		if !slices.Equal(a, b) {
			t.Errorf("shape %d, seed 0: two sequences differ", shape)
		}
		s.Seed = 1
		if c := draw(s, 1000); slices.Equal(a, c) {
			t.Errorf("shape %d: seeds 0 and 1 give the same sequence", shape)
		}
	}
}

// TestSequenceGolden pins the generator and the transforms, so a change of
// algorithm (which would silently change every user's gap sequence) fails
// here. The splitmix64 vector is the reference one for seed 1234567.
func TestSequenceGolden(t *testing.T) {
	q := &Sequence{rng: 1234567}
	for i, want := range []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821} {
		if got := q.next64(); got != want {
			t.Fatalf("splitmix64 output %d from seed 1234567 = %d, want %d", i, got, want)
		}
	}
	for _, tc := range []struct {
		spec Spec
		want []time.Duration
	}{
		{Spec{Shape: Uniform, Mean: time.Millisecond, Jitter: 0.5, Seed: 42}, goldenUniform42},
		{Spec{Shape: Exponential, Mean: time.Millisecond, Seed: 42}, goldenExp42},
	} {
		if got := draw(tc.spec, 4); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: first gaps %v, want %v", tc.spec, got, tc.want)
		}
	}
}

var (
	goldenUniform42 = []time.Duration{1241565, 659910, 778601, 844191}
	goldenExp42     = []time.Duration{1353111, 174247, 326563, 421885}
)

func TestSequenceUniform(t *testing.T) {
	const mean, jitter = 100 * time.Microsecond, 0.5
	lo, hi := time.Duration(float64(mean)*(1-jitter)), time.Duration(float64(mean)*(1+jitter))
	ds := draw(Spec{Shape: Uniform, Mean: mean, Jitter: jitter, Seed: 7}, 100000)
	for i, d := range ds {
		if d < lo || d > hi {
			t.Fatalf("gap %d = %v, outside [%v, %v]", i, d, lo, hi)
		}
	}
	m, cv := meanCV(ds)
	// Uniform on [0.5, 1.5]×mean: sd = mean/sqrt(12), so the sample mean
	// of 1e5 draws is within 0.3% of mean with overwhelming probability
	// (and deterministically so for this seed).
	if math.Abs(m/float64(mean)-1) > 0.003 {
		t.Errorf("sample mean %v, want %v within 0.3%%", time.Duration(m), mean)
	}
	if want := jitter / math.Sqrt(3); math.Abs(cv-want) > 0.01 {
		t.Errorf("coefficient of variation %.4f, want %.4f", cv, want)
	}
	if slices.Min(ds) > lo+mean/100 || slices.Max(ds) < hi-mean/100 {
		t.Errorf("draws span [%v, %v], want nearly all of [%v, %v]", slices.Min(ds), slices.Max(ds), lo, hi)
	}
	// Jitter 0 is Constant.
	for _, d := range draw(Spec{Shape: Uniform, Mean: mean, Seed: 7}, 100) {
		if d != mean {
			t.Fatalf("Uniform with Jitter 0 gave %v, want %v", d, mean)
		}
	}
}

func TestSequenceExponential(t *testing.T) {
	const mean = 100 * time.Microsecond
	ds := draw(Spec{Shape: Exponential, Mean: mean, Seed: 3}, 100000)
	m, cv := meanCV(ds)
	// sd = mean, so the sample mean of 1e5 draws is within 1.5% (4.7 sd).
	if math.Abs(m/float64(mean)-1) > 0.015 {
		t.Errorf("sample mean %v, want %v within 1.5%%", time.Duration(m), mean)
	}
	if math.Abs(cv-1) > 0.03 {
		t.Errorf("coefficient of variation %.4f, want 1 within 0.03", cv)
	}
	// P(X > mean) = 1/e.
	var above int
	for _, d := range ds {
		if d < 0 {
			t.Fatalf("negative gap %v", d)
		}
		if d > mean {
			above++
		}
	}
	if f := float64(above) / float64(len(ds)); math.Abs(f-1/math.E) > 0.01 {
		t.Errorf("fraction above the mean %.4f, want 1/e = %.4f", f, 1/math.E)
	}
}

func TestSequenceTrace(t *testing.T) {
	tr := []time.Duration{3, 1, 4, 1, 5}
	s := Spec{Shape: Trace, Trace: tr, Mean: time.Hour, Seed: 9}
	q := NewSequence(s)
	tr[0] = 99 // NewSequence copied the trace
	for i := range 12 {
		if got, want := q.Next(), []time.Duration{3, 1, 4, 1, 5}[i%5]; got != want {
			t.Fatalf("gap %d = %v, want %v", i, got, want)
		}
	}
}

func TestSequenceConstantAndZero(t *testing.T) {
	for _, d := range draw(Spec{Mean: 250 * time.Microsecond, Jitter: 0.9, Seed: 5}, 100) {
		if d != 250*time.Microsecond {
			t.Fatalf("Constant gave %v, want 250µs", d)
		}
	}
	for _, shape := range []Shape{Constant, Uniform, Exponential} {
		for _, d := range draw(Spec{Shape: shape, Jitter: 1, Seed: 5}, 100) {
			if d != 0 {
				t.Fatalf("shape %d with Mean 0 gave %v, want 0", shape, d)
			}
		}
	}
	if d := NewSequence(Spec{Shape: Trace}).Next(); d != 0 {
		t.Errorf("empty Trace gave %v, want 0", d)
	}
}

func TestNow(t *testing.T) {
	a := Now()
	time.Sleep(time.Millisecond)
	b := Now()
	if b-a < int64(time.Millisecond) {
		t.Errorf("Now advanced %dns across a 1ms sleep", b-a)
	}
	for range 1000 {
		if c := Now(); c < b {
			t.Fatalf("Now went back from %d to %d", b, c)
		} else {
			b = c
		}
	}
}

// kindName names the kinds in subtest names.
var kindName = map[Kind]string{Hybrid: "hybrid", Sleep: "sleep", Busy: "busy"}

// eachKind runs f as one subtest per kind, each on a goroutine locked to an
// OS thread that is never unlocked: the thread exits with the subtest, so
// nothing f does to it (timer slack) leaks into other tests.
func eachKind(t *testing.T, f func(t *testing.T, kind Kind)) {
	for _, kind := range []Kind{Hybrid, Sleep, Busy} {
		t.Run(kindName[kind], func(t *testing.T) {
			runtime.LockOSThread()
			f(t, kind)
		})
	}
}

func slack(t *testing.T) int {
	t.Helper()
	s, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Fatalf("prctl(PR_GET_TIMERSLACK): %v", err)
	}
	return s
}

func TestTimerSlackRestored(t *testing.T) {
	eachKind(t, func(t *testing.T, kind Kind) {
		const before = 12345
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, before, 0, 0, 0); err != nil {
			t.Skipf("cannot set the timer slack: %v", err)
		}
		w := NewWaiter(Spec{Kind: kind, Mean: 50 * time.Microsecond})
		if err := w.Begin(); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		if s := slack(t); s != 1 {
			t.Errorf("timer slack after Begin = %d, want 1", s)
		}
		if err := w.Begin(); err == nil {
			t.Error("second Begin without End succeeded")
		}
		w.WaitUntil(Now() + int64(20*time.Microsecond))
		w.End()
		if s := slack(t); s != before {
			t.Errorf("timer slack after End = %d, want %d", s, before)
		}
		w.End() // a second End does nothing
		if s := slack(t); s != before {
			t.Errorf("timer slack after a second End = %d, want %d", s, before)
		}
	})
}

func TestSpin(t *testing.T) {
	runtime.LockOSThread() // never unlocked: the thread exits with the test
	for _, tc := range []struct {
		spec Spec
		spin time.Duration // fixed stretch, or -1 for a learned one
	}{
		{Spec{Kind: Sleep, Mean: 100 * time.Microsecond}, 0},
		{Spec{Kind: Busy, Mean: 100 * time.Microsecond}, 0},
		{Spec{Kind: Hybrid}, 0},
		{Spec{Kind: Hybrid, Mean: 3 * time.Nanosecond}, 0},
		{Spec{Kind: Hybrid, Mean: 100 * time.Microsecond, Spin: 7 * time.Microsecond}, 7 * time.Microsecond},
		{Spec{Kind: Hybrid, Mean: 100 * time.Microsecond}, -1},
		{Spec{Kind: Hybrid, Shape: Trace, Trace: []time.Duration{8 * time.Microsecond, 0}}, -1},
	} {
		w := NewWaiter(tc.spec)
		if err := w.Begin(); err != nil {
			t.Fatalf("%+v: Begin: %v", tc.spec, err)
		}
		got := w.Spin()
		w.End()
		switch {
		case tc.spin >= 0 && (got != tc.spin || w.adapt):
			t.Errorf("%+v: Spin() = %v (adaptive %v), want a fixed %v", tc.spec, got, w.adapt, tc.spin)
		case tc.spin < 0 && !w.adapt:
			t.Errorf("%+v: not calibrated", tc.spec)
		case tc.spin < 0 && (w.hist.n != calibProbes || got < 0):
			t.Errorf("%+v: Spin() = %v from %d probes, want >= 0 from %d", tc.spec, got, w.hist.n, calibProbes)
		}
	}
}

func TestWaitUntilNeverEarly(t *testing.T) {
	eachKind(t, func(t *testing.T, kind Kind) {
		s := Spec{Kind: kind, Shape: Exponential, Mean: 40 * time.Microsecond, Seed: 1}
		w := NewWaiter(s)
		if err := w.Begin(); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		defer w.End()
		q := NewSequence(s)
		for i := range 300 {
			req := int64(q.Next())
			start := Now()
			w.WaitUntil(start + req)
			if got := Now() - start; got < req {
				t.Fatalf("gap %d: waited %dns, requested %dns", i, got, req)
			}
		}
	})
}

func TestWaitUntilPast(t *testing.T) {
	eachKind(t, func(t *testing.T, kind Kind) {
		w := NewWaiter(Spec{Kind: kind, Mean: time.Second, Spin: 100 * time.Millisecond})
		if err := w.Begin(); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		defer w.End()
		start := Now()
		for _, d := range []int64{start, start - 1, start - int64(time.Hour), 0, math.MinInt64} {
			w.WaitUntil(d)
		}
		// Five returns at once take microseconds; a sleep of the 1 s
		// mean, or five spins of 100 ms, would take 500 ms or more.
		if el := Now() - start; el > int64(50*time.Millisecond) {
			t.Errorf("five past deadlines took %v", time.Duration(el))
		}
	})
}

func TestNoAllocs(t *testing.T) {
	for _, shape := range []Shape{Constant, Uniform, Exponential, Trace} {
		q := NewSequence(Spec{Shape: shape, Mean: time.Microsecond, Jitter: 0.5, Trace: []time.Duration{1, 2}})
		if n := testing.AllocsPerRun(1000, func() { q.Next() }); n != 0 {
			t.Errorf("shape %d: Next allocates %v times per call", shape, n)
		}
	}
	if n := testing.AllocsPerRun(1000, func() { Now() }); n != 0 {
		t.Errorf("Now allocates %v times per call", n)
	}
	eachKind(t, func(t *testing.T, kind Kind) {
		w := NewWaiter(Spec{Kind: kind, Mean: 10 * time.Microsecond})
		if err := w.Begin(); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		defer w.End()
		if n := testing.AllocsPerRun(200, func() { w.WaitUntil(Now() + int64(10*time.Microsecond)) }); n != 0 {
			t.Errorf("WaitUntil allocates %v times per call", n)
		}
		if n := testing.AllocsPerRun(200, func() { w.WaitUntil(Now() - 1) }); n != 0 {
			t.Errorf("WaitUntil on a past deadline allocates %v times per call", n)
		}
	})
}

// fill returns a history holding over (ns) with a sleep charge of cpu each.
func fill(over []int64, cpu int64) *history {
	h := &history{}
	for _, o := range over {
		h.add(o, cpu)
	}
	return h
}

// uniformOver returns n overshoots evenly spread over [lo, hi) ns, shuffled
// by a fixed permutation (the order must not matter).
func uniformOver(n int, lo, hi int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[(i*37)%n] = lo + (hi-lo)*int64(i)/int64(n)
	}
	return out
}

// expectedCPU is the expected CPU of a gap with spin s over the overshoots:
// the charge plus the mean spin from the wake-up to the deadline.
func expectedCPU(over []int64, charge, s int64) float64 {
	var sum int64
	for _, o := range over {
		sum += max(s-o, 0)
	}
	return float64(charge) + float64(sum)/float64(len(over))
}

func TestHistoryChooseAccuracyFirst(t *testing.T) {
	// Overshoots 20..40 µs, 15 µs charged per sleep, 100 µs gaps: at the
	// 99th percentile the gap costs about 15 + 11 µs, under the 40% ceiling,
	// so the stretch is p99 + 1 µs.
	over := uniformOver(128, 20000, 40000)
	h := fill(over, 15000)
	got := h.choose(100000, 0.4)
	sorted := slices.Sorted(slices.Values(over))
	if want := sorted[126] + int64(calibMargin); got != want {
		t.Errorf("spin = %d ns, want the p99 overshoot %d + 1 µs", got, sorted[126])
	}
	if h.since != 0 {
		t.Errorf("since = %d after choose, want 0", h.since)
	}
}

func TestHistoryChooseCeiling(t *testing.T) {
	// The same host under a 20% ceiling: 15 µs of charge leaves 5 µs of
	// spin, which uniform overshoots on [20, 40) µs allow up to
	// S = 20 + sqrt(2·20·5) ≈ 34.1 µs. The choice is the largest candidate
	// within the budget, and the next candidate up would break it.
	over := uniformOver(128, 20000, 40000)
	h := fill(over, 15000)
	got := h.choose(100000, 0.2)
	if c := expectedCPU(over, 15000, got); c > 20000 {
		t.Errorf("spin %d ns costs %.0f ns a gap, over the 20 µs ceiling", got, c)
	}
	if got < 33000 || got > 34200 {
		t.Errorf("spin = %d ns, want about 34 µs", got)
	}
	sorted := slices.Sorted(slices.Values(over))
	k, _ := slices.BinarySearch(sorted, got-int64(calibMargin))
	if next := sorted[k+1] + int64(calibMargin); expectedCPU(over, 15000, next) <= 20000 {
		t.Errorf("the next candidate %d ns also fits the ceiling", next)
	}
}

func TestHistoryChooseNoRoom(t *testing.T) {
	// Sleeps that charge more than the ceiling by themselves: the stretch
	// is the smallest overshoot, which costs no spin and still starts the
	// step 20 µs earlier than a plain sleep.
	over := uniformOver(128, 20000, 40000)
	if got := fill(over, 50000).choose(100000, 0.4); got != 20000 {
		t.Errorf("spin = %d ns, want the smallest overshoot, 20000", got)
	}
	var empty history
	if got := empty.choose(100000, 0.4); got != 0 {
		t.Errorf("spin from no history = %d, want 0", got)
	}
}

func TestHistoryChooseShortGap(t *testing.T) {
	// A 20 µs gap on a host whose sleeps wake 20-40 µs late: any stretch
	// covering the overshoot spins the whole gap, 100% CPU. Under the
	// default ceiling that is refused for a plain sleep; accuracy first
	// takes it.
	over := uniformOver(128, 20000, 40000)
	if got := fill(over, 5000).choose(20000, 0.4); got != 0 {
		t.Errorf("spin under a 40%% ceiling = %d ns, want 0 (a plain sleep)", got)
	}
	if got := fill(over, 5000).choose(20000, 1); got < 20000 {
		t.Errorf("spin with accuracy first = %d ns, want the gap spun whole (>= 20 µs)", got)
	}
}

func TestHistoryChooseLongGap(t *testing.T) {
	// A 2 ms gap under the default ceiling affords the 99th percentile even
	// with a rare 1 ms preemption among the overshoots: the preemption
	// is the top 1% and costs nothing to leave out.
	over := uniformOver(128, 20000, 40000)
	over[5] = 1000000
	got := fill(over, 15000).choose(2000000, DefaultMaxCPU)
	if got < 39000 || got > 41000 {
		t.Errorf("spin = %d ns, want the p99 of the usual overshoots, about 40 µs", got)
	}
}

func TestHistoryFollows(t *testing.T) {
	// A regime shift from 20 µs to 30 µs overshoots: within one history
	// length the stretch covers the new regime, and the old one is gone.
	h := fill(uniformOver(128, 19000, 21000), 5000)
	before := h.choose(100000, 0.4)
	if before < 21000 || before > 22000 {
		t.Fatalf("spin in the 20 µs regime = %d ns", before)
	}
	for _, o := range uniformOver(histLen, 29000, 31000) {
		h.add(o, 5000)
	}
	if after := h.choose(100000, 0.4); after < 31000 || after > 32000 {
		t.Errorf("spin after %d sleeps of the 30 µs regime = %d ns, want about 31 µs", histLen, after)
	}
	if h.n != histLen {
		t.Errorf("history holds %d, want %d", h.n, histLen)
	}
}

func TestHistoryOneSpike(t *testing.T) {
	// One long preemption among 128 sleeps does not move a p99 stretch: it
	// is the top sample, above the 127th.
	over := uniformOver(128, 20000, 40000)
	h := fill(over, 1000)
	before := h.choose(100000, 1)
	h.add(int64(5*time.Millisecond), 1000)
	if after := h.choose(100000, 1); after > before+200 {
		t.Errorf("one 5 ms overshoot moved the stretch from %d to %d ns", before, after)
	}
}

func TestUsage(t *testing.T) {
	runtime.LockOSThread() // never unlocked: the thread exits with the test
	for _, kind := range []Kind{Busy, Sleep, Hybrid} {
		w := NewWaiter(Spec{Kind: kind, Mean: 200 * time.Microsecond})
		if err := w.Begin(); err != nil {
			t.Fatal(err)
		}
		var wall int64
		for range 20 {
			start := Now()
			w.WaitUntil(start + int64(200*time.Microsecond))
			wall += Now() - start
		}
		w.End()
		cpu, got := w.Usage()
		if got <= 0 || int64(got) > wall {
			t.Errorf("%v: wall %v, want in (0, %v]", kindName[kind], got, time.Duration(wall))
		}
		if cpu < 0 || cpu > got+time.Millisecond {
			t.Errorf("%v: cpu %v of wall %v", kindName[kind], cpu, got)
		}
	}
}

// Usage's CPU time is the thread's own, read on its CPU clock around the
// waits: the spins on their readings of Now, the sleeps at their charge.
// It leaves out the time the thread was off its CPU, so a spin that the
// host preempts is not counted whole.
func TestUsageAgreesWithTheThreadClock(t *testing.T) {
	runtime.LockOSThread() // never unlocked: the thread exits with the test
	for _, kind := range []Kind{Busy, Sleep, Hybrid} {
		w := NewWaiter(Spec{Kind: kind, Mean: 300 * time.Microsecond})
		if err := w.Begin(); err != nil {
			t.Fatal(err)
		}
		cpu0, _ := w.Usage()
		c0, err := ThreadCPU()
		if err != nil {
			t.Fatal(err)
		}
		const gaps = 64
		for range gaps {
			w.WaitUntil(Now() + int64(300*time.Microsecond))
		}
		c1, _ := ThreadCPU()
		w.End()
		cpu1, _ := w.Usage()
		got, want := int64(cpu1-cpu0), c1-c0
		t.Logf("%v: Usage's CPU %v, the thread's clock %v over %d gaps", kindName[kind], time.Duration(got), time.Duration(want), gaps)
		// 10% of the thread's time, and 3 µs a gap for what the clock
		// itself charges (two Now readings, the sampled sleeps' spread).
		if tol := want/10 + 3000*gaps; got < want-tol || got > want+tol {
			t.Errorf("%v: Usage's CPU %v over %d gaps, the thread's clock %v", kindName[kind], time.Duration(got), gaps, time.Duration(want))
		}
		total, user := w.CPU()
		if user < 0 || user > total {
			t.Errorf("%v: CPU() = %d, %d: the user part is a part", kindName[kind], total, user)
		}
		if kind == Busy && user != total {
			t.Errorf("busy: nothing sleeps, so all of its CPU is spin: %d of %d", user, total)
		}
	}
}

func TestSpinUntilLeavesOutTimeOffTheCPU(t *testing.T) {
	from := Now()
	end, on := spinUntil(from, from+int64(200*time.Microsecond))
	if end < from+int64(200*time.Microsecond) {
		t.Fatalf("spinUntil returned at %d, before its deadline %d", end, from+int64(200*time.Microsecond))
	}
	if on < 0 || on > end-from {
		t.Fatalf("on CPU %d of %d", on, end-from)
	}
	if _, on := spinUntil(from, from); on != 0 {
		t.Fatalf("a deadline already reached spins for %d ns", on)
	}
}

// TestWaitUntilSignals interrupts sleeps with signals: the sleep is reissued
// and still never returns early.
func TestWaitUntilSignals(t *testing.T) {
	eachKind(t, func(t *testing.T, kind Kind) {
		if kind == Busy {
			t.Skip("Busy does not sleep")
		}
		w := NewWaiter(Spec{Kind: kind, Mean: time.Millisecond})
		if err := w.Begin(); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		defer w.End()
		pid, tid := unix.Getpid(), unix.Gettid()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				// SIGURG: the Go runtime's preemption signal, which it
				// ignores for a thread in a system call.
				_ = unix.Tgkill(pid, tid, unix.SIGURG)
				time.Sleep(50 * time.Microsecond)
			}
		}()
		for i := range 20 {
			start := Now()
			w.WaitUntil(start + int64(time.Millisecond))
			if got := Now() - start; got < int64(time.Millisecond) {
				t.Errorf("gap %d under signals: waited %v, requested 1ms", i, time.Duration(got))
			}
		}
		close(stop)
		<-done
	})
}

// A goroutine that comes back on another thread between two waits (its
// steps ran unlocked) has that thread's timer slack lowered too, and End
// there neither panics nor touches Begin's thread.
func TestWaitsFollowTheGoroutineToAnotherThread(t *testing.T) {
	runtime.LockOSThread() // never unlocked: the thread exits with the test
	w := NewWaiter(Spec{Kind: Sleep, Mean: 50 * time.Microsecond})
	if err := w.Begin(); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer w.End()
	w.WaitUntil(Now() + int64(50*time.Microsecond))
	if w.Moved() != 0 {
		t.Fatalf("moved %d times without moving", w.Moved())
	}
	done := make(chan [2]int)
	go func() {
		runtime.LockOSThread() // a thread of its own, not the test's
		defer runtime.UnlockOSThread()
		old, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		w.WaitUntil(Now() + int64(50*time.Microsecond))
		slack, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		w.End()
		if old == 1 { // a thread some earlier test lowered: nothing to see
			slack = -1
		}
		done <- [2]int{slack, w.Moved()}
	}()
	got := <-done
	if got[0] != 1 && got[0] != -1 {
		t.Errorf("the adopted thread's timer slack is %d ns, want 1", got[0])
	}
	if got[1] != 1 {
		t.Errorf("Moved() = %d, want 1", got[1])
	}
}

// A sleep that keeps its P (GOMAXPROCS ≥ 2) still lets a stop-the-world
// through: the runtime's signal ends the raw call and the rest of the
// sleep goes through the runtime's own. Without that a GC would wait for
// the gap's end.
func TestRawSleepLetsTheGCStopTheWorld(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the raw sleep needs GOMAXPROCS >= 2")
	}
	const sleep = 400 * time.Millisecond
	started, done := make(chan struct{}), make(chan struct{})
	var raw bool
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		w := NewWaiter(Spec{Kind: Sleep, Mean: sleep})
		if err := w.Begin(); err != nil {
			t.Error(err)
			close(started)
			return
		}
		defer w.End()
		raw = w.raw
		close(started)
		w.WaitUntil(Now() + int64(sleep))
	}()
	<-started
	time.Sleep(20 * time.Millisecond) // into the sleep
	t0 := time.Now()
	runtime.GC()
	took := time.Since(t0)
	<-done
	if !raw {
		t.Fatal("GOMAXPROCS >= 2 and the sleep went through the runtime's call")
	}
	if took > sleep/2 {
		t.Errorf("runtime.GC took %v beside a sleep of %v: it waited for the sleep", took, sleep)
	}
}
