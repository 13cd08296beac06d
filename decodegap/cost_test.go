package decodegap

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/internal/testutil"
)

// costEnv makes BenchmarkCostChild run; BenchmarkAnalysisCost sets it in
// its children.
const costEnv = "DECODEGAP_COST_CHILD"

// spinStep returns a step that spins for d.
func spinStep(d time.Duration) Step {
	return func() error {
		end := gap.Now() + int64(d)
		for gap.Now() < end {
		}
		return nil
	}
}

// BenchmarkCostChild is Run with a 1 µs step and no gap, reporting the wall
// time Run spends outside its timed loop over the loop's (overhead-ratio):
// setup and analysis; and the same for process CPU time (overhead-cpu-ratio:
// CPU outside the loop over CPU between its first and last step, which a
// preemption on a busy host does not inflate). The process CPU clock is
// read before the first step and after the last only (it is a system call:
// read at every step, it would make the step several times longer).
// BenchmarkAnalysisCost runs it in children.
func BenchmarkCostChild(b *testing.B) {
	if os.Getenv(costEnv) == "" {
		b.Skip("run by BenchmarkAnalysisCost in a child process")
	}
	var cpu0, cpu1, cpuLoop0, cpuLoop1 unix.Timespec
	var ru0, ru1, ruLoop0, ruLoop1 unix.Rusage
	step := spinStep(time.Microsecond)
	calls := 0
	t0 := time.Now()
	_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &cpu0)
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	Run(b, RunConfig{}, func() (Step, func() error, error) {
		return func() error {
			calls++
			if calls == 1 {
				_ = unix.Getrusage(unix.RUSAGE_SELF, &ruLoop0)
				_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &cpuLoop0)
			}
			err := step()
			if calls == b.N { // RunConfig{} has no warm-up
				_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &cpuLoop1)
				_ = unix.Getrusage(unix.RUSAGE_SELF, &ruLoop1)
			}
			return err
		}, nil, nil
	})
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &cpu1)
	total, loop := time.Since(t0), b.Elapsed()
	inCPU := cpuLoop1.Nano() - cpuLoop0.Nano()
	b.ReportMetric(float64(total-loop)/float64(loop), "overhead-ratio")
	b.ReportMetric(float64(cpu1.Nano()-cpu0.Nano()-inCPU)/float64(inCPU), "overhead-cpu-ratio")
	b.ReportMetric(float64(ru1.Minflt-ru0.Minflt-(ruLoop1.Minflt-ruLoop0.Minflt)), "outside-faults")
	b.ReportMetric(float64(ruLoop1.Minflt-ruLoop0.Minflt), "loop-faults")
	b.ReportMetric(float64(total-loop)/1e6, "outside-ms")
	b.ReportMetric(float64(loop)/1e6, "loop-ms")
}

// BenchmarkAnalysisCost sweeps b.N of Run from 1e3 to 1e7 with a step of
// 1 µs and no gap, each size in a fresh child process (its first Run call
// is testing's N=1 probe, as in any benchmark), and reports the time Run
// spends outside its timed loop (setup and analysis) over the loop's wall
// time, which the issue caps at 0.2:
//
//	overhead-ratio      (Run's wall time − timed loop) / timed loop
//	overhead-cpu-ratio  the same for the process's CPU time
//	outside-ms          Run's wall time − timed loop
//	loop-ms             the timed loop
//	outside-faults      the process's minor page faults in Run outside the
//	                    loop (between its first and last step)
//	loop-faults         those between its first and last step
//
// b.N repeats each size. Run it with
//
//	go test -run '^$' -bench AnalysisCost -benchtime=1x ./decodegap/
func BenchmarkAnalysisCost(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5, 1e6, 1e7} {
		b.Run(fmt.Sprintf("N=%.0e", float64(n)), func(b *testing.B) {
			sums := map[string]float64{}
			for range b.N {
				out, err := testutil.Bench(b, []string{costEnv + "=1"}, "^BenchmarkCostChild$", fmt.Sprintf("-test.benchtime=%dx", n))
				if err != nil {
					b.Fatalf("child: %v\n%s", err, out)
				}
				rs := testutil.ResultsString(b, out)
				if len(rs) != 1 {
					b.Fatalf("child printed %d results:\n%s", len(rs), out)
				}
				for _, unit := range []string{"overhead-ratio", "overhead-cpu-ratio", "outside-ms", "loop-ms", "outside-faults", "loop-faults"} {
					v, ok := rs[0].Value(unit)
					if !ok {
						b.Fatalf("child reported no %s:\n%s", unit, out)
					}
					sums[unit] += v
				}
			}
			for unit, v := range sums {
				b.ReportMetric(v/float64(b.N), unit)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkCounterBudget proves the counter budget: "take" is the cost of
// one counter snapshot (process counters, runtime metrics, the host
// sampler and one user counter) on this host, and each run/ case is Run
// with that snapshot machinery, reporting snap-% (the snapshots' share of
// the timed loop, which the rate limit keeps at most 1%) beside its own
// figures. Run it with
//
//	go test -run '^$' -bench CounterBudget -benchtime=20000x ./decodegap/
func BenchmarkCounterBudget(b *testing.B) {
	b.Run("take", func(b *testing.B) {
		h, err := openHost(&settings{})
		if err != nil || h.sampler == nil {
			b.Skipf("no host sampler: %v %s", err, h.why)
		}
		defer h.close()
		var reads float64
		cr := &counterReader{samples: newMetricSamples(), sampler: h.sampler,
			user: []Counter{{Name: "reads", Read: func() (float64, error) { reads++; return reads, nil }}}}
		snaps := cr.prepare(maxSnapshots)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			snaps = cr.next(snaps)
			cr.take(&snaps[len(snaps)-1], i)
			i++
		}
	})
	for _, tc := range []struct {
		name string
		cfg  RunConfig
		step time.Duration
	}{
		{"run/nogap-1us", RunConfig{}, time.Microsecond},
		{"run/hybrid-100us", RunConfig{Gap: Gap{Mean: 100 * time.Microsecond}}, 10 * time.Microsecond},
		{"run/window4-1us", RunConfig{Window: 4}, time.Microsecond},
	} {
		b.Run(tc.name, func(b *testing.B) {
			Run(b, tc.cfg, Func(spinStep(tc.step)))
		})
	}
}

// BenchmarkStepPeriod compares the mean period between steps under Run
// (measure, the whole timed loop: the step, the clock readings, the
// record, the snapshots) with a plain loop's (what b.Loop runs), on a 1 µs
// step with no gap, interleaved: every iteration times a plain loop of
// 100000 steps, then a measurement of 100000 (a tenth of a second: the
// first and last snapshots, which the counter budget cannot space, are
// 0.2 ms of it), and reports the geometric mean of their ratios
// (run/loop-period), the worst (max-run/loop-period) and the measurements'
// snap-%.
//
//	go test -run '^$' -bench StepPeriod -benchtime 10x ./decodegap/
func BenchmarkStepPeriod(b *testing.B) {
	const n = 100000
	step := spinStep(time.Microsecond)
	s := (&RunConfig{}).settings()
	var logSum, worst, snap float64
	rounds := 0
	for b.Loop() {
		t0 := gap.Now()
		for range n {
			_ = step()
		}
		plain := float64(gap.Now()-t0) / n
		res, done, err := measure(context.Background(), s, n, Func(step), &singleMode{}, nil, "")
		if err != nil {
			b.Fatal(err)
		}
		run := float64(res.loopNs) / n
		snap += 100 * float64(res.snapNs) / float64(res.loopNs)
		if err := done(); err != nil {
			b.Fatal(err)
		}
		logSum += math.Log(run / plain)
		worst = max(worst, run/plain)
		rounds++
	}
	b.ReportMetric(math.Exp(logSum/float64(rounds)), "run/loop-period")
	b.ReportMetric(worst, "max-run/loop-period")
	b.ReportMetric(snap/float64(rounds), "snap-%")
}
