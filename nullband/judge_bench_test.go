package nullband

import "testing"

// BenchmarkJudge times one Judge call: fixed and sequential, with and
// without a null arm (the aligned-rank and the signed-rank test).
func BenchmarkJudge(b *testing.B) {
	for _, c := range []struct {
		name string
		null bool
		opt  Options
	}{
		{"fixed-20/aligned", true, Options{}},
		{"fixed-20/signed", false, Options{}},
		{"seq-20of30/aligned", true, Options{MaxRounds: 30}},
		{"seq-20of30/signed", false, Options{MaxRounds: 30}},
	} {
		s := synth(7, 20, 0.10, 0.02, 1.0)
		if !c.null {
			s.Null = nil
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Judge(s, c.opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
