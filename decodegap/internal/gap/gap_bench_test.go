package gap

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cpuNow returns the CPU time of the calling thread in ns.
func cpuNow(b *testing.B) int64 {
	ns, err := ThreadCPU()
	if err != nil {
		b.Fatalf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", err)
	}
	return ns
}

// load1 returns the 1-minute load average, or -1.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return -1
	}
	return v
}

// arm is one way to spend a gap in BenchmarkGapAccuracy.
type arm struct {
	name string
	w    *Waiter // nil for time.Sleep
	late []int64 // achieved minus requested gap, ns
	cpu  int64   // thread CPU time over the arm's blocks, ns
	wall int64   // wall time of the arm's blocks, ns
}

// BenchmarkGapAccuracy spends gaps of 100 µs and 2 ms each way, interleaved
// in blocks (every round runs a block of each arm, in a rotating order, so
// that all arms see the same weather), and reports for each arm how late
// the gaps ended (achieved minus requested, Now after the wait minus Now
// before it, as Run measures it) at p50 and p99, and the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID) over the wall time of its blocks:
//
//	ARM-late-p50-ns, ARM-late-p99-ns   lateness percentiles
//	ARM-cpu-%                          thread CPU / wall time of the gaps
//	hybrid-spin-ns                     the learned stretch at the end
//	load1                              1-minute load average at the end
//
// The arms: time.Sleep, Sleep, Hybrid (learned stretch, default ceiling),
// Hybrid with MaxCPU 1 (accuracy first), Busy. b.N counts rounds. The
// issue's targets: Hybrid at 100 µs within +2 µs at p50, +20 µs at p99, at
// most 40% CPU; at 2 ms within +2 µs at p50 at most 5% CPU. Run it with
//
//	go test -run '^$' -bench GapAccuracy -benchtime=40x ./decodegap/internal/gap/
func BenchmarkGapAccuracy(b *testing.B) {
	for _, gap := range []time.Duration{100 * time.Microsecond, 2 * time.Millisecond} {
		b.Run(fmt.Sprint(gap), func(b *testing.B) { benchAccuracy(b, gap) })
	}
}

func benchAccuracy(b *testing.B, gap time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	arms := []*arm{
		{name: "time.Sleep"},
		{name: "sleep", w: NewWaiter(Spec{Kind: Sleep, Mean: gap})},
		{name: "hybrid", w: NewWaiter(Spec{Kind: Hybrid, Mean: gap})},
		{name: "hybrid-accuracy", w: NewWaiter(Spec{Kind: Hybrid, Mean: gap, MaxCPU: 1})},
		{name: "busy", w: NewWaiter(Spec{Kind: Busy, Mean: gap})},
	}
	for _, a := range arms {
		if a.w != nil {
			if err := a.w.Begin(); err != nil {
				b.Fatal(err)
			}
		}
	}
	defer func() {
		for i := len(arms) - 1; i >= 0; i-- {
			if arms[i].w != nil {
				arms[i].w.End()
			}
		}
	}()
	// A block of at least 20 gaps and 10 ms.
	block := max(20, int(10*time.Millisecond/gap))
	for _, a := range arms {
		a.late = make([]int64, 0, b.N*block)
	}
	b.ResetTimer()
	for round := range b.N {
		for k := range arms {
			a := arms[(round+k)%len(arms)]
			wait := func(deadline int64) { time.Sleep(time.Duration(deadline - Now())) }
			if a.w != nil {
				wait = a.w.WaitUntil
			}
			cpu0, wall0 := cpuNow(b), Now()
			for range block {
				t0 := Now()
				wait(t0 + int64(gap))
				a.late = append(a.late, Now()-t0-int64(gap))
			}
			a.cpu += cpuNow(b) - cpu0
			a.wall += Now() - wall0
		}
	}
	b.StopTimer()
	for _, a := range arms {
		slices.Sort(a.late)
		pct := func(p int) float64 { return float64(a.late[(len(a.late)*p+99)/100-1]) }
		b.ReportMetric(pct(50), a.name+"-late-p50-ns")
		b.ReportMetric(pct(99), a.name+"-late-p99-ns")
		b.ReportMetric(100*float64(a.cpu)/float64(a.wall), a.name+"-cpu-%")
	}
	b.ReportMetric(float64(arms[2].w.Spin()), "hybrid-spin-ns")
	b.ReportMetric(load1(), "load1")
}

// BenchmarkNow is the cost of one clock reading, which Run pays twice a step.
func BenchmarkNow(b *testing.B) {
	var s int64
	for b.Loop() {
		s += Now()
	}
	_ = s
}

// BenchmarkThreadCPU is the cost of one CLOCK_THREAD_CPUTIME_ID reading,
// which a sleeping gap pays twice to account for its CPU.
func BenchmarkThreadCPU(b *testing.B) {
	for b.Loop() {
		_, _ = ThreadCPU()
	}
}

// BenchmarkNext is the cost of drawing one requested gap.
func BenchmarkNext(b *testing.B) {
	for _, shape := range []Shape{Constant, Uniform, Exponential, Trace} {
		b.Run([]string{"constant", "uniform", "exponential", "trace"}[shape], func(b *testing.B) {
			q := NewSequence(Spec{Shape: shape, Mean: 100 * time.Microsecond, Jitter: 0.5, Trace: []time.Duration{1, 2, 3}})
			var s time.Duration
			for b.Loop() {
				s += q.Next()
			}
			_ = s
		})
	}
}
