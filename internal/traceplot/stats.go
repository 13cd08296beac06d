package traceplot

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// unit is a time unit for an axis: its name and its length in ns.
type unit struct {
	name string
	ns   float64
}

// unitFor picks ns, µs, ms or s so that a typical value ns reads as a
// number between 1 and 1000 where it can.
func unitFor(typical float64) unit {
	switch a := math.Abs(typical); {
	case a >= 1e9:
		return unit{"s", 1e9}
	case a >= 1e6:
		return unit{"ms", 1e6}
	case a >= 1e3:
		return unit{"µs", 1e3}
	}
	return unit{"ns", 1}
}

// format formats ns in u with three significant digits and the unit's name.
func (u unit) format(ns float64) string {
	return fmt.Sprintf("%.3g %s", ns/u.ns, u.name)
}

// formatNs formats ns in the unit that suits it.
func formatNs(ns float64) string { return unitFor(ns).format(ns) }

// sorted returns a sorted copy of v.
func sorted(v []int64) []int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// quantile returns the q-quantile of the sorted s (linear interpolation
// between closest ranks); s must not be empty.
func quantile(s []int64, q float64) float64 {
	if len(s) == 1 {
		return float64(s[0])
	}
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return float64(s[len(s)-1])
	}
	f := pos - float64(i)
	return float64(s[i])*(1-f) + float64(s[i+1])*f
}

// mean returns the mean of v; v must not be empty.
func mean(v []int64) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return sum / float64(len(v))
}

// preciseTicks are gonum's default ticks labelled with as many decimals as
// it takes to tell two neighbouring major ticks apart: ratios near 1, or a
// 1 ms gap that overshoots by µs, differ in the second or third decimal,
// which the default labels round away.
type preciseTicks struct{}

// Ticks implements plot.Ticker.
func (preciseTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	step := math.Inf(1)
	prev := math.NaN()
	for _, t := range ts {
		if t.IsMinor() {
			continue
		}
		if !math.IsNaN(prev) {
			step = math.Min(step, t.Value-prev)
		}
		prev = t.Value
	}
	if math.IsInf(step, 1) || step <= 0 {
		return ts
	}
	prec := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	for k := 0; k < 3; k++ { // 0.025 needs one decimal more than 0.05
		x := step * math.Pow(10, float64(prec))
		if math.Abs(x-math.Round(x)) < 1e-6 {
			break
		}
		prec++
	}
	for i := range ts {
		if !ts[i].IsMinor() {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', prec, 64)
		}
	}
	return ts
}
