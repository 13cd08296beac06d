package cpushapes

import (
	"context"
	"flag"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap"
)

// truthAsInstrument swaps decodegap.Measure for GroundTruthGap in every
// test below: the tests then compare the ground truth with itself, which
// shows how much of the tolerance the ground truth's own noise uses (every
// test should pass at any load).
var truthAsInstrument = flag.Bool("truth-as-instrument", false, "measure with GroundTruthGap instead of decodegap.Measure (checks the tests' tolerances against the ground truth's own noise)")

const (
	// w is the work of a step in the checks: 4 units, about 400 µs. The
	// CPU that a shape spends besides its work (starting goroutines and
	// threads, waking parked ones) moves with the host's weather and the
	// runtime's state from one measurement to the next, by up to 15% of
	// the whole at w = 1 (sd 7–17% for FanOut, ExitingThread and Alloc,
	// ground truth against ground truth, at load 2.5), and 2–5% at w = 4
	// with the same steps' worth of time.
	w = 4
	// nBack and nGap are the steps of one measurement back to back and at
	// gapMean: about 0.1 s and 0.2 s.
	nBack = 250
	nGap  = 200
	// nPair is the steps of each measurement of TestMoreWorkReadsMore's
	// pairs: short, so that a pair meets one weather.
	nPair = 150
	// tol is the agreement asked of the instrument: ±10% of the truth.
	tol = 0.10
	// maxReps is the most repetitions a check takes; it stops as soon as
	// their median is decided (three when every one agrees).
	maxReps = 5
)

// gapMean is the gap of the gapped checks; gaps lists both.
var (
	gapMean = 500 * time.Microsecond
	gaps    = []time.Duration{0, gapMean}
)

// steps returns the steps of one measurement at gap.
func steps(gap time.Duration) int {
	if gap > 0 {
		return nGap
	}
	return nBack
}

// reading is one measurement by the instrument under test: cpu-ns/op and
// the wall time per step (the step's mean plus the achieved gap's), ns.
type reading struct{ cpuNs, wallNs float64 }

// instrument measures n steps of open at gap by decodegap.Measure and
// returns its cpu-ns/op and wall per step (or the ground truth's, under
// -truth-as-instrument).
func instrument(t *testing.T, open decodegap.Opener, n int, gap time.Duration) reading {
	t.Helper()
	runtime.GC() // as GroundTruth does: earlier garbage is not the step's
	if *truthAsInstrument {
		tr, err := GroundTruthGap(open, n, gap)
		if err != nil {
			t.Fatal(err)
		}
		return reading{tr.ClockNs, tr.WallNs}
	}
	// Sleep gaps, as the ground truth's: a hybrid gap's spin keeps the
	// CPU hot for the step, which makes some steps cheaper (a real
	// effect, not the instrument's).
	res, err := decodegap.Measure(context.Background(), decodegap.RunConfig{Gap: decodegap.Gap{Mean: gap, Kind: decodegap.GapSleep}}, n, open)
	if err != nil {
		t.Fatal(err)
	}
	cpu, ok := metric(res, "cpu-ns/op")
	if !ok {
		t.Fatalf("decodegap.Measure (n=%d, RunConfig.Gap.Mean=%v) reported no cpu-ns/op: the unit was unavailable", n, gap)
	}
	wall := res.Latency.Mean
	if g := res.Gap.Mean; !math.IsNaN(g) {
		wall += g
	}
	return reading{cpu, wall}
}

// metric returns the value of unit in r's metrics; ok is false when r does
// not report it.
func metric(r *decodegap.Result, unit string) (v float64, ok bool) {
	for _, m := range r.Metrics {
		if m.Unit == unit {
			return m.Value, true
		}
	}
	return 0, false
}

// truth is GroundTruthGap or the test's failure.
func truth(t *testing.T, open decodegap.Opener, n int, gap time.Duration) Truth {
	t.Helper()
	tr, err := GroundTruthGap(open, n, gap)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// median runs rep (which returns one ratio) up to maxReps times and
// returns the ratios and whether their median lies in [lo, hi]. It stops
// as soon as that is decided: once three ratios are not below lo and three
// not above hi (the median of maxReps is then inside whatever the rest
// read), or three lie below lo or three above hi.
func median(lo, hi float64, rep func(i int) float64) (ratios []float64, ok bool) {
	need := maxReps/2 + 1
	below, above := 0, 0
	for i := range maxReps {
		r := rep(i)
		ratios = append(ratios, r)
		switch {
		case r < lo:
			below++
		case r > hi:
			above++
		}
		if below >= need || above >= need {
			return ratios, false
		}
		if len(ratios)-below >= need && len(ratios)-above >= need {
			return ratios, true
		}
	}
	return ratios, true // unreachable: five ratios always decide
}

// med returns the median of xs.
func med(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// fmtRatios prints ratios to three places.
func fmtRatios(rs []float64) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.3f", r)
	}
	return b.String()
}

// us prints ns as µs.
func us(ns float64) string { return fmt.Sprintf("%.1fµs", ns/1e3) }

// instrumentName is what the messages call the instrument under test.
func instrumentName() string {
	if *truthAsInstrument {
		return "GroundTruthGap (-truth-as-instrument)"
	}
	return "decodegap.Measure"
}

// checkAgrees measures a shape at both gaps and asserts that cpu-ns/op is
// within tol of the ground truth, each repetition a ground truth and then
// a measurement. want turns the repetition's truth and reading into the
// value cpu-ns/op should read (the truth's ClockNs, for every shape but
// Background).
func checkAgrees(t *testing.T, name string, open decodegap.Opener, want func(tr Truth, m reading) float64) {
	checkWithin(t, name, open, want, tol)
}

// checkWithin is checkAgrees within tol.
func checkWithin(t *testing.T, name string, open decodegap.Opener, want func(tr Truth, m reading) float64, tol float64) {
	for _, gap := range gaps {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			n := steps(gap)
			ratios, ok := median(1-tol, 1+tol, func(i int) float64 {
				tr := truth(t, open, n, gap)
				m := instrument(t, open, n, gap)
				w := want(tr, m)
				t.Logf("repetition %d: cpu-ns/op %s, want %s (ground truth %s by the clock, %s by getrusage, the loop thread's %s in the gaps subtracted; wall %s a step, %s in the measurement): ratio %.3f",
					i+1, us(m.cpuNs), us(w), us(tr.ClockNs), us(tr.RusageNs), us(tr.GapNs), us(tr.WallNs), us(m.wallNs), m.cpuNs/w)
				return m.cpuNs / w
			})
			if !ok {
				side := "low: it misses CPU the step costs the process"
				if med(ratios) > 1 {
					side = "high: it counts CPU the step does not cost"
				}
				t.Errorf("%s at RunConfig.Gap.Mean=%v, n=%d: %s's cpu-ns/op reads %.2f× the ground truth (median of %d repetitions: %s; want %.2f–%.2f), %s",
					name, gap, n, instrumentName(), med(ratios), len(ratios), fmtRatios(ratios), 1-tol, 1+tol, side)
			}
		})
	}
}

// clockTruth is checkAgrees's want for a shape whose whole cost is its
// steps': the ground truth's ClockNs.
func clockTruth(tr Truth, _ reading) float64 { return tr.ClockNs }

func TestInlineCPU(t *testing.T) { checkAgrees(t, "Inline(4)", Inline(w), clockTruth) }

func TestFanOut2CPU(t *testing.T) { checkAgrees(t, "FanOut(2, 4)", FanOut(2, w), clockTruth) }

func TestFanOut4CPU(t *testing.T) { checkAgrees(t, "FanOut(4, 4)", FanOut(4, w), clockTruth) }

func TestExitingThreadCPU(t *testing.T) {
	checkAgrees(t, "ExitingThread(4)", ExitingThread(w), clockTruth)
}

// TestAllocCPU holds Alloc to 15%: its GC's share moves with who else
// holds a CPU (the collector's idle workers run where a P is idle), and
// beside two busy loops (load 5.5) the medians read 1.13 where the other
// shapes held 10% (2026-12-07).
func TestAllocCPU(t *testing.T) { checkWithin(t, "Alloc(4)", Alloc(w), clockTruth, 0.15) }

// TestBackgroundCPU: the burner runs through the gaps as well as the
// steps, so a step costs its inline work plus duty × the wall time per
// step, and the wall time per step is the measurement's own (its gaps are
// not the ground truth's sleeps). The ground truth gives the inline part:
// its CPU per step less its burner's duty × its wall per step; the
// measurement's burner gives the rest, its duty (its thread's CPU clock
// over its life) × the measurement's wall per step (Latency.Mean +
// Gap.Mean). Both duties are measured by the burners themselves, never the
// 0.25 asked for.
func TestBackgroundCPU(t *testing.T) {
	bg := Background(0.25, w)
	checkAgrees(t, "Background(0.25, 4)", bg.Open, func(tr Truth, m reading) float64 {
		all := bg.Burners()
		if len(all) < 2 {
			t.Fatalf("BackgroundArm.Burners holds %d records after a ground truth and a measurement: want 2", len(all))
		}
		gt, ms := all[len(all)-2], all[len(all)-1]
		inline := tr.ClockNs - gt.Duty()*tr.WallNs
		w := inline + ms.Duty()*m.wallNs
		t.Logf("burners: duty %.3f in the ground truth, %.3f in the measurement; inline part %s, burner part %s", gt.Duty(), ms.Duty(), us(inline), us(ms.Duty()*m.wallNs))
		return w
	})
}

// TestEmptyStepCPU: a step that does nothing costs nothing, whatever the
// gaps cost the harness: measured here, a 500 µs gap slept by a system call
// the runtime sees costs the loop thread about 15–20 µs and the runtime's
// sysmon thread about 18 µs (15–200 µs with the host's load), and a hybrid
// gap spins besides. cpu-ns/op must stay within a tenth of a unit of work
// (10 µs) of zero.
func TestEmptyStepCPU(t *testing.T) {
	const limit = 0.1 * 100e3 // ns: a tenth of w = 1
	for _, gap := range gaps {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			n := steps(gap)
			var got []float64
			for range 3 {
				got = append(got, instrument(t, Inline(0), n, gap).cpuNs)
			}
			if m := med(got); math.Abs(m) > limit {
				t.Errorf("Inline(0) at RunConfig.Gap.Mean=%v, n=%d: %s's cpu-ns/op reads %s (median of %s, %s, %s) for an empty step: want within ±%s; the harness's own CPU is counted as the step's",
					gap, n, instrumentName(), us(m), us(got[0]), us(got[1]), us(got[2]), us(limit))
			}
		})
	}
}

// TestEqualWorkDifferentShapes: Inline(4) and FanOut(2, 4) do the same
// work, and FanOut pays for starting and waking its goroutines besides
// (by the ground truth here: 2–20% more at w = 4, 5–60% at w = 1, as the
// scheduler's threads were parked). The instrument must read the ratio the
// ground truth reads, within tol, back to back.
func TestEqualWorkDifferentShapes(t *testing.T) {
	a, b := Inline(w), FanOut(2, w)
	ratios, ok := median(1-tol, 1+tol, func(i int) float64 {
		ta, tb := truth(t, a, nBack, 0), truth(t, b, nBack, 0)
		ma, mb := instrument(t, a, nBack, 0), instrument(t, b, nBack, 0)
		gr, mr := tb.ClockNs/ta.ClockNs, mb.cpuNs/ma.cpuNs
		t.Logf("repetition %d: FanOut/Inline %.3f by cpu-ns/op (%s / %s), %.3f by the ground truth (%s / %s): %.3f", i+1, mr, us(mb.cpuNs), us(ma.cpuNs), gr, us(tb.ClockNs), us(ta.ClockNs), mr/gr)
		return mr / gr
	})
	if !ok {
		t.Errorf("FanOut(2, 4) against Inline(4), n=%d back to back: %s's cpu-ns/op ratio is %.2f× the ground truth's (median of %d repetitions: %s; want %.2f–%.2f): equal work in two shapes reads unequal",
			nBack, instrumentName(), med(ratios), len(ratios), fmtRatios(ratios), 1-tol, 1+tol)
	}
}

// TestMoreWorkReadsMore: in every shape, an arm with 10% more work never
// reads less CPU. Pairs back to back (w = 4, then w = 4.4), up to five: the
// median pair must read B/A > 1. (One pair may read lower by the ground
// truth itself: the shapes' own CPU moves by 2–5% from one measurement to
// the next, and by up to 15% now and then.)
func TestMoreWorkReadsMore(t *testing.T) {
	for _, s := range []struct {
		name string
		open func(w float64) decodegap.Opener
	}{
		{"Inline", Inline},
		{"FanOut2", func(w float64) decodegap.Opener { return FanOut(2, w) }},
		{"FanOut4", func(w float64) decodegap.Opener { return FanOut(4, w) }},
		{"Background", func(w float64) decodegap.Opener { return Background(0.25, w).Open }},
		{"ExitingThread", ExitingThread},
		{"Alloc", Alloc},
	} {
		t.Run(s.name, func(t *testing.T) {
			a, b := s.open(w), s.open(w*1.1)
			ratios, ok := median(1, math.Inf(1), func(i int) float64 {
				ma, mb := instrument(t, a, nPair, 0), instrument(t, b, nPair, 0)
				r := mb.cpuNs / ma.cpuNs
				t.Logf("pair %d: w=4 reads %s, w=4.4 reads %s: %.3f", i+1, us(ma.cpuNs), us(mb.cpuNs), r)
				return r
			})
			if !ok {
				t.Errorf("%s, w=4.4 against w=4, n=%d back to back: %s's cpu-ns/op reads the arm with 10%% more work as less CPU (B/A median %.3f of %d pairs: %s)",
					s.name, nPair, instrumentName(), med(ratios), len(ratios), fmtRatios(ratios))
			}
		})
	}
}
