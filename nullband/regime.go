package nullband

import (
	"math"
	"sort"
)

// Regime is one mode of a sample that is not one distribution: a run that is
// either ~1.17 ms or ~1.85 ms and never between has two.
type Regime struct {
	// Center is the median of the regime's values, in the sample's unit.
	Center float64
	// Lo and Hi are its smallest and largest values.
	Lo, Hi float64
	// N is how many values fell in it.
	N int
}

// Regimes splits values into regimes and returns them in ascending order; a
// sample that is one distribution returns one Regime, an empty one none.
//
// The test is a gap test on the sorted values. For k = 1, 2, … it takes the
// k widest gaps between neighbours that leave at least max(3, ⌈n/10⌉) values
// in every part, and splits there when each of those gaps is more than factor
// times the spread (max − min) of every part and at least 5% of the sample's
// median; the smallest k that qualifies wins, and each part is then tested
// again. Fewer than 6 values are never split. factor ≤ 0 means 3. values is
// not modified; NaNs are ignored.
func Regimes(values []float64, factor float64) []Regime {
	if factor <= 0 {
		factor = 3
	}
	s := finite(values)
	sort.Float64s(s)
	if len(s) == 0 {
		return nil
	}
	minSide := max(3, int(math.Ceil(float64(len(s))/10)))
	return split(s, factor, minSide, math.Abs(s[len(s)/2]))
}

func split(s []float64, factor float64, minSide int, scale float64) []Regime {
	// gaps[j] is the gap before s[idx]; only positions leaving minSide
	// values at both ends are candidates.
	type gap struct {
		idx int
		g   float64
	}
	var gaps []gap
	for i := minSide; i <= len(s)-minSide; i++ {
		gaps = append(gaps, gap{i, s[i] - s[i-1]})
	}
	sort.SliceStable(gaps, func(a, b int) bool { return gaps[a].g > gaps[b].g })
	for k := 1; k <= len(s)/minSide-1; k++ {
		// Take the widest gaps greedily, skipping any that would leave a
		// part shorter than minSide.
		var cuts []int
		smallest := math.Inf(1)
		for _, c := range gaps {
			if len(cuts) == k {
				break
			}
			ok := true
			for _, x := range cuts {
				if d := c.idx - x; d < minSide && d > -minSide {
					ok = false
					break
				}
			}
			if ok {
				cuts = append(cuts, c.idx)
				smallest = math.Min(smallest, c.g)
			}
		}
		if len(cuts) < k || smallest < 0.05*scale || smallest == 0 {
			break
		}
		sort.Ints(cuts)
		parts := make([][]float64, 0, k+1)
		prev := 0
		for _, x := range append(cuts, len(s)) {
			parts = append(parts, s[prev:x])
			prev = x
		}
		spread := 0.0
		for _, p := range parts {
			spread = math.Max(spread, p[len(p)-1]-p[0])
		}
		if smallest > factor*spread {
			var out []Regime
			for _, p := range parts {
				out = append(out, split(p, factor, minSide, scale)...)
			}
			return out
		}
	}
	return []Regime{{Center: median(s), Lo: s[0], Hi: s[len(s)-1], N: len(s)}}
}

// finite returns a copy of xs without NaNs and infinities.
func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}
