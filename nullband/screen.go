package nullband

import (
	"math"
	"sort"
)

// screen returns the first m rounds of s with their ratios, spreads and
// quarantine. The rule is symmetric in the arms: swapping A and B (or A and
// A') in any round changes no round's quarantine.
func screen(s Samples, m int, extreme float64) (rounds []Round, limit float64) {
	rounds, limit = make([]Round, m), math.NaN()
	var spreads, clear []float64 // of the complete rounds; of those not marked
	for i := range m {
		r := Round{Label: i + 1, A: s.Base[i], B: s.Candidate[i], Null: math.NaN(), Spread: math.NaN()}
		if s.Round != nil {
			r.Label = s.Round[i]
		}
		vals := []float64{r.A, r.B}
		if s.Null != nil {
			r.Null = s.Null[i]
			vals = append(vals, r.Null)
		}
		r.Ratio, r.NullRatio = r.B/r.A, r.Null/r.A
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range vals {
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0):
				r.Cause = Missing
			case !(x > 0) && r.Cause == 0:
				r.Cause = NonPositive
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if r.Cause == 0 {
			r.Spread = math.Log(hi) - math.Log(lo)
			spreads = append(spreads, r.Spread)
			if s.Contended == nil || !s.Contended[i] {
				clear = append(clear, r.Spread)
			}
		}
		r.Quarantined = r.Cause != 0
		rounds[i] = r
	}
	// A round the screen marks is quarantined when its values show the
	// weather its arms did not share: a spread over ContendedFactor times
	// the median spread of the unmarked rounds (of all complete rounds
	// when fewer than 3 are unmarked; every marked round when fewer than 5
	// are complete).
	med, ref := math.NaN(), math.NaN()
	if len(spreads) >= 5 {
		sort.Float64s(spreads)
		med, ref = median(spreads), median(spreads)
		if len(clear) >= 3 {
			sort.Float64s(clear)
			ref = median(clear)
		}
	}
	for i := range rounds {
		r := &rounds[i]
		if !r.Quarantined && s.Contended != nil && s.Contended[i] && !(ref > 0 && r.Spread <= ContendedFactor*ref) {
			r.Quarantined, r.Cause = true, Contended
		}
	}
	if med > 0 && !math.IsInf(extreme, 1) {
		limit = extreme * med
		for i := range rounds {
			if r := &rounds[i]; !r.Quarantined && r.Spread > limit {
				r.Quarantined, r.Cause = true, Extreme
			}
		}
	}
	return rounds, limit
}

// ContendedFactor is the factor over the median spread of the unmarked
// rounds beyond which a round Samples.Contended marks is quarantined. A marked round whose arms'
// values lie as close as most rounds' did not meet weather that moved them,
// and stays: on a host at the edge of the screen's threshold, most rounds
// are marked, and quarantining them all left too few rounds to decide.
const ContendedFactor = 2
