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
		spec  Spec
		spin  time.Duration // fixed stretch, or -1 for a calibrated one
		floor time.Duration // the calibrated ceiling is at least this
	}{
		{Spec{Kind: Sleep, Mean: 100 * time.Microsecond}, 0, 0},
		{Spec{Kind: Busy, Mean: 100 * time.Microsecond}, 0, 0},
		{Spec{Kind: Hybrid}, 0, 0},
		{Spec{Kind: Hybrid, Mean: 3 * time.Nanosecond}, 0, 0},
		{Spec{Kind: Hybrid, Mean: 100 * time.Microsecond, Spin: 7 * time.Microsecond}, 7 * time.Microsecond, 0},
		{Spec{Kind: Hybrid, Mean: 100 * time.Microsecond}, -1, 25 * time.Microsecond},
		{Spec{Kind: Hybrid, Shape: Trace, Trace: []time.Duration{8 * time.Microsecond, 0}}, -1, time.Microsecond},
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
		case tc.spin < 0 && (time.Duration(w.tr.ceil) < tc.floor || got < 0 || got > time.Duration(w.tr.ceil)):
			t.Errorf("%+v: Spin() = %v with ceiling %v, want 0 <= spin <= ceiling, ceiling >= %v", tc.spec, got, time.Duration(w.tr.ceil), tc.floor)
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

func TestTrackerSeed(t *testing.T) {
	over := make([]int64, 32)
	for i := range over {
		over[31-i] = int64(i+1) * 1000 // 32 µs down to 1 µs, unsorted
	}
	var tr tracker
	tr.seed(over, 4000, 100000)
	if tr.p90 != 29000 {
		t.Errorf("p90 of 1..32 µs = %d ns, want 29000 (the 29th of 32)", tr.p90)
	}
	if tr.ceil != 29000 {
		t.Errorf("ceiling = %d ns, want 25000 + 4000", tr.ceil)
	}
	if s := tr.spin(); s != 29000 {
		t.Errorf("spin = %d ns, want min(29000 + 1000, 29000)", s)
	}
	tr.seed(over, -3000, 100000) // charged more CPU than the overshoot
	if tr.ceil != 25000 {
		t.Errorf("ceiling with a negative idle part = %d ns, want 25000", tr.ceil)
	}
	tr.seed([]int64{5000, 6000, 7000}, 9000, 100000)
	if s := tr.spin(); s != 8000 {
		t.Errorf("spin = %d ns, want p90 7000 + 1000 under the ceiling", s)
	}
}

func TestTrackerFollows(t *testing.T) {
	var tr tracker
	tr.seed([]int64{40000}, 20000, 400000) // seeded at 40 µs, ceiling 120 µs
	for range 1000 {
		tr.observe(20000)
	}
	if tr.p90 < 20000-2*trackStep || tr.p90 > 20000+9*trackStep {
		t.Errorf("after 1000 overshoots of 20 µs, p90 = %d ns", tr.p90)
	}
	// A regime shift up is followed within a few dozen gaps.
	for i := range 40 {
		tr.observe(30000)
		if tr.p90 >= 30000 {
			t.Logf("reached the 30 µs regime after %d gaps", i+1)
			break
		}
	}
	if tr.p90 < 30000 {
		t.Errorf("40 gaps into a 30 µs regime, p90 = %d ns", tr.p90)
	}
	// One long preemption moves it by 9 steps only.
	before := tr.p90
	tr.observe(int64(time.Millisecond))
	if d := tr.p90 - before; d != 9*trackStep {
		t.Errorf("a 1 ms overshoot moved p90 by %d ns, want %d", d, 9*trackStep)
	}
	// The spin never passes the ceiling.
	for range 1000 {
		tr.observe(int64(time.Millisecond))
	}
	if s := tr.spin(); s != 120000 {
		t.Errorf("spin after 1000 overshoots of 1 ms = %d ns, want the 120 µs ceiling", s)
	}
}

func TestTrackerQuantile(t *testing.T) {
	// Overshoots uniform in [20 µs, 40 µs): the estimate settles near the
	// 90th percentile, 38 µs.
	q := NewSequence(Spec{Shape: Uniform, Mean: 30 * time.Microsecond, Jitter: 1.0 / 3, Seed: 11})
	var tr tracker
	tr.seed([]int64{0}, 0, 0)
	var sum, n int64
	for i := range 40000 {
		tr.observe(int64(q.Next()))
		if i >= 20000 {
			sum += tr.p90
			n++
		}
	}
	if m := sum / n; m < 37000 || m > 39000 {
		t.Errorf("mean p90 estimate over the last 20000 overshoots = %d ns, want 38000 ± 1000", m)
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

func TestEndOnAnotherThread(t *testing.T) {
	runtime.LockOSThread() // never unlocked: the thread exits with the test
	w := NewWaiter(Spec{Kind: Sleep})
	if err := w.Begin(); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer w.End()
	recovered := make(chan any)
	go func() {
		runtime.LockOSThread() // a thread of its own, not the test's
		defer func() { recovered <- recover() }()
		w.End()
	}()
	if r := <-recovered; r == nil {
		t.Error("End on another thread than Begin's did not panic")
	} else {
		t.Logf("panic: %v", r)
	}
}
