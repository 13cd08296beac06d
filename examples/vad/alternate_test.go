package vad

import (
	"flag"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap/ort"
)

// The -alternate.* flags configure BenchmarkVADAlternate, the experiment
// of docs/noise-levels.md that located the between-block spread: two
// identical sessions measured in turns of -alternate.turn steps.
var (
	alternateOn   = flag.Bool("alternate", false, "run BenchmarkVADAlternate (two identical sessions in turns; docs/noise-levels.md)")
	alternateTurn = flag.Int("alternate.turn", 10, "steps per turn; -benchtime=Nx steps per session a round, -count rounds")
	alternateSwap = flag.Bool("alternate.swap", true, "open the two sessions in the other order every other round (false: a always first)")
)

// BenchmarkVADAlternate measures how much of the block-to-block spread of
// the Silero VAD's median step at a 2 ms gap two sessions share when they
// run at the same time. Each call (round) opens two sessions a and b of
// one configuration (one intra-op thread), warms both, then runs them in
// turns of -alternate.turn steps, every step after a 2 ms sleep, until
// each has N; it reports the ratio of b's median step to a's (b/a), each
// one's median (a-p50-ns, b-p50-ns), and first-b (1 when b was opened
// first). With a turn of N (one turn each) the two sessions run one after
// the other as Compare's whole blocks do; the spread of ln(b/a) over the
// rounds is what a round's pairing leaves.
//
//	go test -run '^$' -bench BenchmarkVADAlternate -alternate -alternate.turn 10 -benchtime 300x -count 16
func BenchmarkVADAlternate(b *testing.B) {
	if !*alternateOn {
		b.Skip("BenchmarkVADAlternate is the experiment of docs/noise-levels.md: pass -alternate")
	}
	ort.Require(b)
	if b.N == 1 {
		return // testing's probe run
	}
	if *alternateTurn < 1 {
		b.Fatalf("-alternate.turn=%d: want >= 1", *alternateTurn)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	opts := ort.Options{IntraOpThreads: 1}
	v1, err := ort.OpenVAD(ort.VADConfig{Options: opts})
	if err != nil {
		b.Fatal(err)
	}
	defer v1.Close()
	v2, err := ort.OpenVAD(ort.VADConfig{Options: opts})
	if err != nil {
		b.Fatal(err)
	}
	defer v2.Close()
	alternateRound++
	va, vb, firstB := v1, v2, 0.0
	if *alternateSwap && alternateRound%2 == 0 {
		va, vb, firstB = v2, v1, 1
	}
	steps := [2]func() error{va.Step, vb.Step}
	for range warmup {
		for _, st := range steps {
			if err := st(); err != nil {
				b.Fatal(err)
			}
		}
	}
	lat := [2][]int64{make([]int64, 0, b.N), make([]int64, 0, b.N)}
	gap := unix.NsecToTimespec((2 * time.Millisecond).Nanoseconds())
	for done := 0; done < b.N; done += *alternateTurn {
		for a, st := range steps {
			for range min(*alternateTurn, b.N-done) {
				_ = unix.Nanosleep(&gap, nil)
				t0 := time.Now()
				if err := st(); err != nil {
					b.Fatal(err)
				}
				lat[a] = append(lat[a], int64(time.Since(t0)))
			}
		}
	}
	ma, mb := median(lat[0]), median(lat[1])
	b.ReportMetric(mb/ma, "b/a")
	b.ReportMetric(math.Log(mb/ma), "ln-b/a")
	b.ReportMetric(ma, "a-p50-ns")
	b.ReportMetric(mb, "b-p50-ns")
	b.ReportMetric(firstB, "first-b")
}

// alternateRound counts BenchmarkVADAlternate's measured calls (rounds).
var alternateRound int

// median returns the median of xs, sorting xs.
func median(xs []int64) float64 {
	slices.Sort(xs)
	return float64(xs[len(xs)/2])
}
