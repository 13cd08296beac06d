package sim

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// PairedT is a parametric reference, not a method anyone ships: the paired
// t-test of ln(B/A) over every round (no quarantine, no null arm), α 0.05
// two-sided for faster or slower, and the t-TOST (two one-sided tests at
// α 0.05 against ±ln 1.02) for equivalence. Under normal per-round noise
// it is the most powerful test there is, so it bounds what any method can
// reach on the same trials; heavy tails and shared bursts hurt it.
func PairedT() Method {
	const alpha = 0.05
	L := math.Log1p(0.02)
	return Method{Name: "paired-t", Fixed: func(t Trial) Call {
		la, lb := logs(t.A), logs(t.B)
		if la == nil || lb == nil {
			return Undecided
		}
		two, err := stats.PairedTTest(lb, la, 0, stats.LocationDiffers)
		if err != nil {
			return Undecided
		}
		if two.P < alpha {
			if stats.Mean(lb) > stats.Mean(la) {
				return Slower
			}
			return Faster
		}
		up, err1 := stats.PairedTTest(lb, la, -L, stats.LocationGreater)
		down, err2 := stats.PairedTTest(lb, la, L, stats.LocationLess)
		if err1 == nil && err2 == nil && up.P < alpha && down.P < alpha {
			return Equivalent
		}
		return Undecided
	}}
}

// logs returns the natural logarithms of xs, nil when any is not positive.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
}
