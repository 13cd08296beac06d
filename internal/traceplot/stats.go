package traceplot

import (
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

// sorted returns a sorted copy of v.
func sorted(v []int64) []int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// meanOf returns the mean of v; v must not be empty.
func meanOf(v []int64) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return sum / float64(len(v))
}

// preciseTicks are gonum's default ticks with each major tick labelled by
// its exact value: the fewest decimals (up to 6) that print every major
// tick's value without rounding. gonum's own labels round to three
// significant digits, which puts "1.08" at 1.075 and makes ratios near 1,
// or a 1 ms gap that overshoots by µs, read wrong or alike.
type preciseTicks struct{}

// Ticks implements plot.Ticker.
func (preciseTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	exact := func(prec int) bool {
		for _, t := range ts {
			if t.IsMinor() {
				continue
			}
			back, err := strconv.ParseFloat(strconv.FormatFloat(t.Value, 'f', prec, 64), 64)
			if err != nil || math.Abs(back-t.Value) > 1e-9*math.Max(1, math.Abs(t.Value)) {
				return false
			}
		}
		return true
	}
	prec := 0
	for prec < 6 && !exact(prec) {
		prec++
	}
	for i := range ts {
		if !ts[i].IsMinor() {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', prec, 64)
		}
	}
	return ts
}
