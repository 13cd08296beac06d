package zstd

import (
	"context"
	"errors"
	"flag"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/examples/cpushapes"
)

var gapFlag = flag.Duration("gap", 2*time.Millisecond, "BenchmarkZstdConcurrency's hybrid gap between steps")

// BenchmarkZstdConcurrency compares the decoder at concurrency 4 ("c4")
// with concurrency 1 ("c1", the base) at a 2 ms gap (-gap), with the null
// arm: c4 decodes the same bytes on more goroutines, and costs the process
// about 1.6× the CPU (TestZstdCPUAgreesWithRusage, cmd/zstdtime).
func BenchmarkZstdConcurrency(b *testing.B) {
	decodegap.Compare(b, decodegap.CompareConfig{
		Gap:    decodegap.Gap{Mean: *gapFlag},
		Parity: func() error { return errors.Join(Check(1), Check(4)) },
	}, decodegap.Arm{Name: "c1", Open: Open(1)}, decodegap.Arm{Name: "c4", Open: Open(4)})
}

func TestStreamDecodes(t *testing.T) {
	src, err := Stream()
	require.NoError(t, err)
	require.Len(t, Data(), StreamSize)
	require.Less(t, len(src), StreamSize/2, "compressible: the stream is %d bytes for %d", len(src), StreamSize)
	for _, c := range []int{1, 4} {
		require.NoError(t, Check(c))
		step, closeFn, err := Open(c)()
		require.NoError(t, err)
		for range 3 {
			require.NoError(t, step(), "concurrency %d", c)
		}
		require.NoError(t, closeFn())
	}
}

const (
	// nSteps is one measurement's steps: about 15 ms at concurrency 1,
	// 25 ms at 4. The decoder at concurrency 4 costs the process about
	// 73 µs a step here, and three times that in bursts of 0.1–0.2 s when
	// the host is busy (its goroutines' hand-offs wait for a CPU): short
	// measurements, many of them and their median, keep a burst to one
	// or two pairs.
	nSteps = 300
	reps   = 9
	// tol is 15%: the medians read 1.08–1.10 for c1 and 0.97–1.03 for c4
	// in five runs on 2026-12-07 (load 2–5) once the ground truth's step
	// ran unlocked as the harness's does; c1's 4 µs a step above its
	// ground truth is not explained yet (an inline step of 50 µs of work
	// reads 0.97–1.07). The direction, the claim this example exists for,
	// is held exactly.
	tol = 0.15
)

// TestZstdCPUAgreesWithRusage holds decodegap.Measure's cpu-ns/op of each
// arm, back to back, to the ground truth (cpushapes.GroundTruth:
// getrusage over a plain loop), within ±15%, and the ratio c4/c1 to the
// ground truth's direction. Each of nine repetitions is a ground truth and
// a measurement of c1, then of c4; their medians decide.
func TestZstdCPUAgreesWithRusage(t *testing.T) {
	arms := [2]int{1, 4}
	var ratio [2][]float64         // cpu-ns/op over the ground truth, per arm
	var truthDir, gotDir []float64 // c4/c1 by each
	for i := range reps {
		var truth, cpu [2]float64
		for k, c := range arms {
			tr, err := cpushapes.GroundTruth(Open(c), nSteps)
			require.NoError(t, err)
			runtime.GC()
			res, err := decodegap.Measure(context.Background(), decodegap.RunConfig{}, nSteps, Open(c))
			require.NoError(t, err)
			v, ok := metric(res, "cpu-ns/op")
			require.True(t, ok, "decodegap.Measure reported no cpu-ns/op at concurrency %d: the unit was unavailable", c)
			truth[k], cpu[k] = tr.RusageNs, v
			ratio[k] = append(ratio[k], v/tr.RusageNs)
			t.Logf("repetition %d, c%d: cpu-ns/op %.1fµs, ground truth %.1fµs by getrusage (%.1fµs by the clock): %.3f",
				i+1, c, v/1e3, tr.RusageNs/1e3, tr.ClockNs/1e3, v/tr.RusageNs)
		}
		truthDir, gotDir = append(truthDir, truth[1]/truth[0]), append(gotDir, cpu[1]/cpu[0])
	}
	for k, c := range arms {
		if m := median(ratio[k]); m < 1-tol || m > 1+tol {
			t.Errorf("concurrency %d (arm c%d), n=%d back to back: decodegap.Measure's cpu-ns/op reads %.2f× getrusage's ground truth (median of %d repetitions; want %.2f–%.2f)",
				c, c, nSteps, m, reps, 1-tol, 1+tol)
		}
	}
	truth, got := median(truthDir), median(gotDir)
	if (got > 1) != (truth > 1) {
		t.Errorf("c4/c1, n=%d back to back: decodegap.Measure's cpu-ns/op ratio is %.2f and getrusage's %.2f (medians of %d repetitions): the instrument calls the wrong arm the costlier",
			nSteps, got, truth, reps)
	}
	t.Logf("c4/c1: %.3f by cpu-ns/op, %.3f by getrusage (medians)", got, truth)
}

// median returns the median of xs.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func metric(r *decodegap.Result, unit string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Unit == unit {
			return m.Value, true
		}
	}
	return 0, false
}
