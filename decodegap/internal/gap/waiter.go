package gap

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Spin parameters; see the package doc.
const (
	calibProbes  = 32                     // measured sleeps
	calibMin     = 10 * time.Microsecond  // shortest probe sleep
	calibMax     = 500 * time.Microsecond // longest probe sleep
	calibMargin  = time.Microsecond       // added to the chosen quantile
	histLen      = 128                    // sleeps in the history
	chargeWeight = 8                      // weight of the running mean of the readings (the fallback)
	chooseEvery  = 16                     // sleeps between two choices of the stretch
	topQuantile  = 0.99                   // the highest quantile the stretch covers
)

// Waiter spends gaps on one locked OS thread, between Begin and End. It is
// not safe for concurrent use.
type Waiter struct {
	kind   Kind
	given  time.Duration // Spec.Spin, >= 0
	mean   time.Duration // mean requested gap, >= 0
	maxCPU float64       // Spec.MaxCPU, or DefaultMaxCPU
	spin   int64         // spin stretch in ns, set by Begin; 0 unless Hybrid
	adapt  bool          // spin is learned from hist (Hybrid, Spec.Spin == 0, mean/4 > 0)
	hist   history       // the last sleeps, behind spin when adapt
	off    int64         // CLOCK_MONOTONIC − Now in ns, rounded up
	ts     unix.Timespec // clock_nanosleep request; a field so it never escapes
	slack  int           // timer slack of Begin's thread before Begin, in ns
	tid    int           // thread whose timer slack is lowered last (Begin's, or one adopted); 0 when not begun
	begun  int           // thread of Begin
	moved  int           // threads adopted since Begin (see WaitUntil)
	// cpuNs and wallNs sum the CPU time and the wall time of the waits
	// since Begin (see Usage); spinNs is the part of cpuNs the thread
	// spent in user code (spins and the work before a sleep), the rest
	// being the sleeps' charge. lastCharge is the CPU time counted for the
	// last sleep, charge the running mean of the sleeps' own CPU time and
	// sleeps their count (see sleepCharged); readNs is what one reading
	// of the thread's CPU clock costs it (measured in Begin).
	cpuNs, wallNs, spinNs, lastCharge int64
	charge                            float64
	sleeps                            int
	readNs                            int64
	// charged is set once charge holds a measured sleep (calibration's,
	// or the first sleep's, which is always read).
	charged bool
	// raw is set by Begin when GOMAXPROCS is 2 or more: the sleeps keep
	// the thread's P (see sleepUntil), and another P runs the process's
	// other goroutines meanwhile. With one P they would wait for the
	// gap's end, so it sleeps through the runtime's call.
	raw bool
}

// NewWaiter returns a Waiter for s. Call Begin before waiting: without it
// the timer slack is the thread's own and Hybrid has no spin stretch.
func NewWaiter(s Spec) *Waiter {
	mean := meanGap(s)
	maxCPU := s.MaxCPU
	if !(maxCPU > 0) {
		maxCPU = DefaultMaxCPU
		if mean > 0 {
			maxCPU = min(maxCPU, float64(DefaultMaxCPUTime)/float64(mean))
		}
	}
	return &Waiter{kind: s.Kind, given: max(s.Spin, 0), mean: mean, maxCPU: maxCPU, off: monoOffset()}
}

// meanGap is the mean requested gap of s: Mean, or the mean of Trace.
func meanGap(s Spec) time.Duration {
	if s.Shape != Trace {
		return max(s.Mean, 0)
	}
	if len(s.Trace) == 0 {
		return 0
	}
	var sum float64
	for _, d := range s.Trace {
		sum += float64(max(d, 0))
	}
	return time.Duration(sum / float64(len(s.Trace)))
}

// monoOffset returns CLOCK_MONOTONIC − Now, rounded up, measured once per
// process.
var monoOffset = sync.OnceValue(func() int64 {
	best, width := int64(0), int64(math.MaxInt64)
	for range 16 {
		var ts unix.Timespec
		t0 := Now()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			continue
		}
		t1 := Now()
		// The reading was taken between t0 and t1, so the offset lies in
		// [ts−t1, ts−t0]; keep the upper end of the narrowest bracket.
		if t1-t0 < width {
			best, width = ts.Nano()-t0, t1-t0
		}
	}
	return best
})

// Begin prepares the calling thread for waiting. It must be called on the
// goroutine that will wait, after runtime.LockOSThread, and be followed by
// End. The goroutine must be locked while it waits; between two waits it
// may run unlocked (WaitUntil adopts the thread it comes back on). It lowers the thread's timer slack to 1 ns and,
// for Hybrid with Spec.Spin == 0, calibrates the spin stretch (see the
// package doc; this takes up to about 17 ms). It returns an error, leaving
// the thread as it was, if the timer slack cannot be read or set or
// clock_nanosleep fails.
func (w *Waiter) Begin() error {
	if w.tid != 0 {
		return errors.New("gap: Waiter.Begin called again before End")
	}
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("gap: reading the timer slack, prctl(PR_GET_TIMERSLACK): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("gap: lowering the timer slack, prctl(PR_SET_TIMERSLACK, 1): %w", err)
	}
	w.slack, w.tid = old, unix.Gettid()
	w.begun, w.moved = w.tid, 0
	w.raw = runtime.GOMAXPROCS(0) >= 2
	w.spin, w.adapt = 0, false
	w.cpuNs, w.wallNs, w.spinNs, w.charge, w.sleeps, w.charged = 0, 0, 0, 0, 0, false
	w.readNs = readCost()
	if w.kind == Busy || w.mean == 0 {
		// Nothing will sleep: every gap is spun, or 0.
		return nil
	}
	// Probe clock_nanosleep with a deadline already past: it must return at
	// once, and an error here (seccomp, an old kernel) is better than a
	// silent spin in every gap.
	if err := w.sleepUntil(Now()); err != nil {
		w.End()
		return fmt.Errorf("gap: clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME): %w", err)
	}
	if w.kind != Hybrid {
		return nil
	}
	if w.given > 0 {
		w.spin = int64(w.given)
		return nil
	}
	if err := w.calibrate(); err != nil {
		w.End()
		return err
	}
	return nil
}

// calibrate measures the sleep overshoot and the CPU time of a sleep, seeds
// the tracker with them and sets the spin stretch.
func (w *Waiter) calibrate() error {
	mean := int64(w.mean)
	if mean/4 == 0 {
		return nil
	}
	probe := min(max(mean-mean/4, int64(calibMin)), int64(calibMax))
	var over, cpu [calibProbes]int64
	// The first sleep is discarded: it pays for whatever the thread did
	// before.
	if err := w.sleepUntil(Now() + probe); err != nil {
		return fmt.Errorf("gap: calibrating the spin stretch, clock_nanosleep: %w", err)
	}
	cpuOK := true
	for i := range over {
		c0, err0 := ThreadCPU()
		target := Now() + probe
		if err := w.sleepUntil(target); err != nil {
			return fmt.Errorf("gap: calibrating the spin stretch, clock_nanosleep: %w", err)
		}
		c1, err1 := ThreadCPU()
		over[i] = Now() - target // the reading is part of the wake-up, as in WaitUntil
		cpu[i] = max(c1-c0-w.readNs, 0)
		cpuOK = cpuOK && err0 == nil && err1 == nil
	}
	w.hist = history{}
	var sum int64
	for i := range over {
		if !cpuOK {
			cpu[i] = 0
		}
		w.hist.add(over[i], cpu[i])
		sum += max(cpu[i], 0)
	}
	w.charge = float64(sum) / calibProbes
	w.charged = cpuOK
	w.spin, w.adapt = w.hist.choose(mean, w.maxCPU), true
	return nil
}

// readCost returns what one reading of the calling thread's CPU clock
// charges the thread (ns): the least of 8 differences between two
// readings back to back, each of which holds one reading's cost (the part
// of the first after its sample and of the second before its own). 0 when
// the clock cannot be read.
func readCost() int64 {
	best := int64(math.MaxInt64)
	prev, err := ThreadCPU()
	if err != nil {
		return 0
	}
	for range 8 {
		c, err := ThreadCPU()
		if err != nil {
			return 0
		}
		best, prev = min(best, c-prev), c
	}
	return max(best, 0)
}

// ThreadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
// in ns; the caller's goroutine must be locked to its thread for two
// readings to come from one clock.
func ThreadCPU() (int64, error) {
	var ts unix.Timespec
	err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano(), err
}

// history is the last histLen sleeps of a Hybrid Waiter: their overshoot
// and the CPU time they charged the thread, in ns, and the choice of the
// spin stretch from them (see the package doc). It does not allocate.
type history struct {
	over, cpu [histLen]int64 // ring buffers
	n, next   int            // samples held (<= histLen) and the next slot
	since     int            // samples added since the last choice
	sorted    [histLen]int64 // scratch for choose
}

// add records one sleep.
func (h *history) add(over, cpu int64) {
	h.over[h.next], h.cpu[h.next] = over, max(cpu, 0)
	h.next = (h.next + 1) % histLen
	h.n = min(h.n+1, histLen)
	h.since++
}

// choose returns the spin stretch (ns) for gaps of mean length mean (ns)
// under the CPU ceiling maxCPU: the largest S = (q-quantile of the
// overshoots) + calibMargin, q <= topQuantile, whose expected CPU per gap,
// mean sleep charge + mean(max(S − overshoot, 0)), is within maxCPU × mean,
// a stretch as long as the gap costing all of it; failing that, the
// smallest overshoot (which costs no spin), or 0 (a plain sleep) when even
// that is as long as the gap. 0 when the history is empty.
func (h *history) choose(mean int64, maxCPU float64) int64 {
	h.since = 0
	n := h.n
	if n == 0 {
		return 0
	}
	s := h.sorted[:n]
	copy(s, h.over[:n])
	slices.Sort(s)
	var charge, sum int64
	for i := range n {
		charge += h.cpu[i]
		sum += s[i]
	}
	budget := maxCPU*float64(mean) - float64(charge)/float64(n)
	// below is the number of overshoots < S, and sum their total, as S
	// steps down through the candidates.
	below := n
	top := min(int(math.Ceil(topQuantile*float64(n)))-1, n-1)
	for k := top; k >= 0; k-- {
		spin := s[k] + int64(calibMargin)
		for below > 0 && s[below-1] >= spin {
			below--
			sum -= s[below]
		}
		if spin >= mean {
			// The gap would be spun whole: all of it is CPU.
			if maxCPU >= 1 {
				return spin
			}
			continue
		}
		if float64(int64(below)*spin-sum)/float64(n) <= budget {
			return max(spin, 0)
		}
	}
	if s[0] >= mean {
		return 0 // a plain sleep: spinning would take the whole gap
	}
	return max(s[0], 0)
}

// End restores the timer slack that Begin's thread had before Begin, when
// it is called on that thread; the threads WaitUntil adopted keep a slack
// of 1 ns (a thread's slack can only be set by the thread itself). End
// without Begin does nothing.
func (w *Waiter) End() {
	if w.tid == 0 {
		return
	}
	if unix.Gettid() == w.begun {
		// It cannot fail where PR_SET_TIMERSLACK, 1 succeeded.
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(w.slack), 0, 0, 0)
	}
	w.tid = 0
}

// Moved returns the number of threads the waits moved to since Begin:
// the caller's goroutine ran its steps unlocked and came back on another
// thread, whose timer slack WaitUntil then lowered too.
func (w *Waiter) Moved() int { return w.moved }

// Spin returns the spin stretch in use. For Hybrid it is Spec.Spin if that
// is > 0, otherwise the stretch learned since Begin as it stands after the
// last gap (see the package doc); it is 0 for Sleep and Busy, and before
// Begin.
func (w *Waiter) Spin() time.Duration { return time.Duration(w.spin) }

// MaxCPU returns the CPU ceiling in effect, a fraction of the mean gap.
func (w *Waiter) MaxCPU() float64 { return w.maxCPU }

// Usage returns the CPU time and the wall time that the waits took since
// Begin. CPU time is the thread's time on a CPU from each WaitUntil call to
// its return: the work before a sleep and the spins, as the time between
// two readings of Now that follow each other within spinJump (an interval
// longer than that is the thread off its CPU, preempted, and is not
// counted), plus what each sleep charged the thread
// (CLOCK_THREAD_CPUTIME_ID read around every sleep, the readings' own
// cost included).
// Wall time runs from each WaitUntil call to its return.
func (w *Waiter) Usage() (cpu, wall time.Duration) {
	return time.Duration(w.cpuNs), time.Duration(w.wallNs)
}

// CPU returns Usage's CPU time in ns, and the part of it spent in user
// code (the spins and the work before each sleep); the rest is the
// sleeps' charge, mostly the kernel's. It does not allocate: Run reads it
// at every counter snapshot, to leave the gaps out of cpu-ns/op.
func (w *Waiter) CPU() (total, user int64) { return w.cpuNs, w.spinNs }

// spinJump is the longest interval between two readings of Now in a spin
// that counts as time on the CPU. A reading costs tens of ns; on the
// 2-vCPU guests gapbench is built on, a spin sees intervals of 2–50 µs
// that the kernel still charges the thread (interrupts, the hypervisor
// taking the vCPU), while the scheduler giving the CPU to another task
// takes it away for 100 µs or more (measured 2026-12-07: 200 ms of spin,
// thread clock 197–199 ms quiet, with 7 ms in intervals under 100 µs;
// 65 ms beside two spinners, with 136 ms in intervals over 100 µs).
const spinJump = 50000

// spinUntil spins from the reading from until Now() >= deadline and
// returns the last reading and the time the thread spent on its CPU
// (intervals between readings longer than spinJump left out).
func spinUntil(from, deadline int64) (end, onCPU int64) {
	prev := from
	var off int64
	for prev < deadline {
		t := Now()
		if d := t - prev; d > spinJump {
			off += d
		}
		prev = t
	}
	return prev, prev - from - off
}

// WaitUntil returns when Now() >= deadline, at once for a deadline already
// past. It does not allocate. Should clock_nanosleep fail (Begin checked it
// does not), it spins instead, so it never returns early.
func (w *Waiter) WaitUntil(deadline int64) {
	now := Now()
	if now >= deadline {
		return
	}
	spinFrom := now
	var user int64 // the work before a sleep
	if w.kind != Busy && w.tid != 0 {
		// The caller may run its steps unlocked (decodegap does, so that
		// a step that blocks is scheduled as it is outside the harness)
		// and come back on another thread: give that one the slack too.
		if tid := unix.Gettid(); tid != w.tid {
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
			w.tid = tid
			w.moved++
		}
	}
	switch w.kind {
	case Sleep:
		user = Now() - now
		spinFrom, _ = w.sleepCharged(deadline)
	case Hybrid:
		if w.adapt && w.hist.since >= chooseEvery {
			w.spin = w.hist.choose(int64(w.mean), w.maxCPU)
		}
		if t := Now(); deadline-w.spin > t {
			wake := deadline - w.spin
			user = t - now
			var ok bool
			spinFrom, ok = w.sleepCharged(wake)
			if ok && w.adapt {
				w.hist.add(spinFrom-wake, w.lastCharge)
			}
		}
	}
	end, spun := spinUntil(spinFrom, deadline)
	user += spun
	w.spinNs += user
	w.cpuNs += user
	w.wallNs += end - now
}

// sleepCharged sleeps until t and adds the CPU time the sleep charged the
// thread to w.cpuNs, and the sleep's own charge to w.lastCharge. It reads
// the thread's CPU clock around every sleep: a reading is a system call
// (0.3–4 µs on these guests), paid in the gap (the first before the sleep,
// whose deadline is absolute; the second in the wake-up, which the spin
// stretch covers), and counted in the gap's CPU with the sleep, so that
// the gaps' CPU time is measured, never estimated: cpu-ns/op leaves it
// out. Should a reading fail, the sleep counts at the running mean of the
// measured ones. It returns Now() after the wake-up (after the reading,
// which is part of the wake-up) and whether the sleep succeeded.
func (w *Waiter) sleepCharged(t int64) (int64, bool) {
	w.sleeps++
	c0, err0 := ThreadCPU()
	err := w.sleepUntil(t)
	c1, err1 := ThreadCPU()
	woke := Now()
	own := int64(w.charge) + 2*w.readNs
	if err0 == nil && err1 == nil && err == nil {
		// c1−c0 holds the sleep and one reading's cost: the sleep's own
		// charge is the rest, and this gap's is both readings' more.
		sample := float64(max(c1-c0-w.readNs, 0))
		if !w.charged {
			w.charge, w.charged = sample, true
		} else {
			w.charge += (sample - w.charge) / chargeWeight
		}
		own = max(c1-c0, 0) + w.readNs
		w.lastCharge = int64(sample)
	} else {
		w.lastCharge = int64(w.charge)
	}
	w.cpuNs += own
	return woke, err == nil
}

// sleepUntil sleeps until Now() >= t, reissuing the same absolute request
// when a signal interrupts it.
func (w *Waiter) sleepUntil(t int64) error {
	abs := t + w.off
	w.ts.Sec, w.ts.Nsec = abs/1e9, abs%1e9
	if w.raw {
		// A system call the Go runtime does not see: the thread keeps its
		// P, so the runtime's monitor does not poll it every 20 µs and
		// hand its P around (measured 2026-12-07, 500 sleeps of 2 ms on a
		// locked thread: the monitor thread 30.7 µs a sleep and two others
		// 10.3 µs through the runtime's call, 5.0 and 2.1 µs raw; that
		// CPU is the harness's, which cpu-ns/op would count as the
		// step's). A signal (EINTR) is the runtime asking this thread to
		// stop (a GC's stop-the-world, a preemption): the rest of the
		// sleep goes through the runtime's call, which lets it.
		_, _, e := syscall.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, uintptr(unix.CLOCK_MONOTONIC), uintptr(unix.TIMER_ABSTIME),
			uintptr(unsafe.Pointer(&w.ts)), 0, 0, 0)
		if e != unix.EINTR {
			if e == 0 {
				return nil
			}
			return e
		}
	}
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &w.ts, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
