package sim

// This file is a private copy of the verdict rule of nullband.Judge as it
// was on main at commit 92a12bd (nullband/verdict.go and regime.go), with its
// default Options (Confidence 0.95, BandCoverage 0.90, RejectRatio 1.25,
// MaxBand 1.10, MaxRejected 0.25, RegimeGap 3) and without its sentences:
// the comparator the new verdict replaces.

import (
	"math"
	"sort"

	"golang.org/x/perf/benchmath"
)

const (
	bandConfidence  = 0.95
	bandCoverage    = 0.90
	bandRejectRatio = 1.25
	bandMaxBand     = 1.10
	bandMaxRejected = 0.25
	bandRegimeGap   = 3
)

// bandRule judges one trial by the old band rule.
func bandRule(a, b, null []float64) Call {
	n := len(a)
	var ratios, nulls []float64
	var accA, accB, accN []float64
	rejected, incomplete := 0, 0
	for i := range n {
		x, y, z := a[i], b[i], null[i]
		switch {
		case math.IsNaN(x), math.IsNaN(y), math.IsNaN(z), !(x > 0), !(y > 0), !(z > 0):
			rejected++
			incomplete++
			continue
		case z/x < 1/bandRejectRatio || z/x > bandRejectRatio:
			rejected++
			continue
		}
		ratios = append(ratios, y/x)
		nulls = append(nulls, z/x)
		accA, accB, accN = append(accA, x), append(accB, y), append(accN, z)
	}
	complete := n - incomplete
	if disagree := rejected - incomplete; disagree > 0 && float64(disagree) > bandMaxRejected*float64(complete) {
		return Undecided
	}
	for _, arm := range [][]float64{accA, accB, accN} {
		if len(regimes(arm, bandRegimeGap)) > 1 {
			return Undecided
		}
	}
	th := &benchmath.DefaultThresholds
	if len(ratios) == 0 {
		return Undecided
	}
	ratio := benchmath.AssumeNothing.Summary(benchmath.NewSample(ratios, th), bandConfidence)
	if !finiteSummary(ratio) {
		return Undecided
	}
	lo := quantile(nulls, (1-bandCoverage)/2)
	hi := quantile(nulls, (1+bandCoverage)/2)
	switch {
	case ratio.Lo > hi:
		return Slower
	case ratio.Hi < lo:
		return Faster
	case ratio.Center >= lo && ratio.Center <= hi:
		if w := math.Max(math.Max(hi, 1/lo), 1); w > bandMaxBand {
			return Undecided
		}
		return Equivalent
	}
	return Undecided
}

// quantile is the q-quantile of xs by linear interpolation (type 7).
func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 1 {
		return s[0]
	}
	h := q * float64(len(s)-1)
	i := int(math.Floor(h))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

// regimes is nullband.Regimes at 92a12bd: it returns the number of regimes
// only (as a slice of their sizes).
func regimes(values []float64, factor float64) []int {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	if len(s) == 0 {
		return nil
	}
	minSide := max(3, int(math.Ceil(float64(len(s))/10)))
	return split(s, factor, minSide, math.Abs(s[len(s)/2]))
}

func split(s []float64, factor float64, minSide int, scale float64) []int {
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
			var out []int
			for _, p := range parts {
				out = append(out, split(p, factor, minSide, scale)...)
			}
			return out
		}
	}
	return []int{len(s)}
}
