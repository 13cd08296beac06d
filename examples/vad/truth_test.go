package vad

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// truthFlag is -vad.truth: the known extra costs of the ground-truth trial
// (scripts/truth-trials.sh).
var truthFlag = flag.String("vad.truth", "", "ground truth: comma-separated fractions (0.05,0.10): BenchmarkVAD then compares intra1-spin with an identical arm (same) and, per fraction F, an arm that busy-waits F × the base's median step after each model call (plus5pct, ...)")

// parseTruth parses -vad.truth into fractions in (0, 1].
func parseTruth(s string) ([]float64, error) {
	var fs []float64
	for f := range strings.SplitSeq(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0 && x <= 1) {
			return nil, fmt.Errorf("-vad.truth=%q: want comma-separated fractions in (0, 1], e.g. 0.05,0.10", s)
		}
		fs = append(fs, x)
	}
	return fs, nil
}

// truthName is the arm name of fraction f: "plus5pct" for 0.05.
func truthName(f float64) string { return fmt.Sprintf("plus%gpct", 100*f) }

// truthArms returns the ground-truth arms at gap g: the base
// (Settings[0]), an identical arm, and per fraction the base with a busy
// wait of fraction × the base's median step (measured by pilot at gap g)
// after each model call.
func truthArms(b *testing.B, g time.Duration, fracs []float64) []decodegap.Arm {
	base := Settings[0]
	med, err := pilotMedian(base.Options, g, 300)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("ground truth: the base's median step at gap %v is %v (pilot of 300 steps); extra busy waits: %v", g, med, fracs)
	arms := []decodegap.Arm{{Name: base.Name, Open: Open(base.Options, 0)}, {Name: "same", Open: Open(base.Options, 0)}}
	for _, f := range fracs {
		arms = append(arms, decodegap.Arm{Name: truthName(f), Open: withBusyWait(Open(base.Options, 0), time.Duration(f*float64(med)))})
	}
	return arms
}

// withBusyWait returns open's steps followed by a busy wait of d.
func withBusyWait(open decodegap.Opener, d time.Duration) decodegap.Opener {
	return func() (decodegap.Step, func() error, error) {
		step, closeFn, err := open()
		if err != nil {
			return nil, nil, err
		}
		return func() error {
			err := step()
			end := time.Now().Add(d)
			for time.Now().Before(end) {
			}
			return err
		}, closeFn, nil
	}
}

// pilotMedian returns the median step of n steps of a fresh VAD with opts,
// each after a gap g slept with nanosleep.
func pilotMedian(opts ort.Options, g time.Duration, n int) (time.Duration, error) {
	v, err := ort.OpenVAD(ort.VADConfig{Options: opts})
	if err != nil {
		return 0, err
	}
	defer v.Close()
	lat := make([]time.Duration, 0, n)
	for i := -warmup; i < n; i++ {
		if g > 0 {
			ts := unix.NsecToTimespec(g.Nanoseconds())
			_ = unix.Nanosleep(&ts, nil)
		}
		t0 := time.Now()
		if err := v.Step(); err != nil {
			return 0, err
		}
		if i >= 0 {
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	return lat[n/2], nil
}

func TestParseTruth(t *testing.T) {
	fs, err := parseTruth("0.05, 0.10")
	if err != nil || !slices.Equal(fs, []float64{0.05, 0.10}) {
		t.Fatalf("parseTruth = %v, %v", fs, err)
	}
	for _, bad := range []string{"", "5", "0", "x", "0.05,"} {
		if _, err := parseTruth(bad); err == nil || !strings.Contains(err.Error(), "-vad.truth=") {
			t.Errorf("parseTruth(%q) = %v, want an error naming -vad.truth", bad, err)
		}
	}
	if n := truthName(0.05); n != "plus5pct" {
		t.Errorf("truthName(0.05) = %q", n)
	}
}

func TestWithBusyWaitAddsItsCostAfterTheStep(t *testing.T) {
	var order []string
	open := func() (decodegap.Step, func() error, error) {
		return func() error { order = append(order, "step"); return nil }, nil, nil
	}
	step, _, err := withBusyWait(open, 2*time.Millisecond)()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := step(); err != nil {
		t.Fatal(err)
	}
	// At least the wait: a lower bound, never a speed.
	if d := time.Since(t0); d < 2*time.Millisecond || len(order) != 1 {
		t.Fatalf("step took %v with %v, want ≥ 2ms after one step", d, order)
	}
}
