package sim

import (
	"fmt"
	"testing"

	"github.com/gapbench/gapbench/nullband"
)

// BenchmarkAligned3 times one judgement of the aligned-rank test against
// nullband.Judge (fixed rounds, zero Options) on the same lognormal-p50
// trials with a 2% effect:
//
//	GOMAXPROCS=1 go test ./nullband/sim -run '^$' -bench Aligned3 -benchtime 2s
//
// "calls" computes only the three tests the call needs (θ = 0, ±ln 1.02);
// "interval" also the estimate and both intervals (binary search over the
// 2n² differences), exactly; "interval-normal" the same with the normal
// approximation throughout.
func BenchmarkAligned3(b *testing.B) {
	m, _ := ModelByName("lognormal-p50")
	for _, n := range []int{10, 20, 100} {
		trials := make([]Trial, 32)
		for i := range trials {
			trials[i] = m.Generate(1, i, n, 0.02)
		}
		calls, interval, normal := defaultAligned(), defaultAligned(), defaultAligned()
		interval.interval, normal.interval, normal.exactMax = true, true, 0
		for _, v := range []struct {
			name string
			cfg  alignedConfig
		}{{"calls", calls}, {"interval", interval}, {"interval-normal", normal}} {
			b.Run(fmt.Sprintf("n=%d/aligned3-%s", n, v.name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					alignedJudge(trials[i%len(trials)], v.cfg)
					i++
				}
			})
		}
		b.Run(fmt.Sprintf("n=%d/judge", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				t := trials[i%len(trials)]
				if _, err := nullband.Judge(nullband.Samples{Base: t.A, Candidate: t.B, Null: t.Null}, nullband.Options{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
