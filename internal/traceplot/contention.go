package traceplot

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gapbench/gapbench/internal/trace"
)

// figures maps a trace's contention name to the metric name decodegap
// reports it under, for the picture's labels; a name not here is shown as
// it is.
var figures = map[string]string{
	trace.ContentionForeignBusyPct:  "foreign-%",
	trace.ContentionSiblingBusyPct:  "sibling-%",
	trace.ContentionStealPct:        "steal-%",
	trace.ContentionPSISomePct:      "psi-some-%",
	trace.ContentionLoad1:           "load1",
	trace.ContentionRunQueueWaitPct: "runq-wait-%",
}

// figureName returns the name the picture gives a trace's contention or
// counter name: its metric name when it has one.
func figureName(k string) string {
	if m, ok := figures[k]; ok {
		return m
	}
	return k
}

// isPercent reports whether the trace's contention figure k is a
// percentage (its name ends in _pct), drawn on the % axis; the others
// (load1) are drawn on their own axis.
func isPercent(k string) bool { return strings.HasSuffix(k, "_pct") }

// contentionPanels draws the contention figures over the window
// boundaries: the percentages on one panel, the others (load1) on a second,
// each by its metric name. The first panel's title names the figures and
// counters that were unavailable. A trace without contention figures gets
// one panel that says so.
func contentionPanels(t *trace.Trace) []*panel {
	pct, other := map[string]bool{}, map[string]bool{}
	unavailable := map[string]string{} // the first reason given
	missed := map[string]int{}         // windows without the figure
	windows := 0                       // boundaries that end a window
	for _, b := range t.Boundaries {
		if len(b.Contention) > 0 || len(b.Unavailable) > 0 {
			windows++
		}
		for k := range b.Contention {
			if isPercent(k) {
				pct[k] = true
			} else {
				other[k] = true
			}
		}
		for k, why := range b.Unavailable {
			missed[k]++
			if _, ok := unavailable[k]; !ok {
				unavailable[k] = why
			}
		}
	}
	var missing string
	if len(unavailable) > 0 {
		ks := slices.Sorted(maps.Keys(unavailable))
		var parts []string
		for i, k := range ks {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(ks)-3))
				break
			}
			where := ""
			if pct[k] || other[k] { // drawn where it was read
				where = fmt.Sprintf(" in %d of %d windows", missed[k], windows)
			}
			parts = append(parts, fmt.Sprintf("%s%s (%s)", figureName(k), where, unavailable[k]))
		}
		missing = "\nunavailable: " + strings.Join(parts, "; ")
	}
	if len(pct) == 0 && len(other) == 0 {
		pn := newPanel("contention: "+labelNoContenion+missing, "")
		pn.p.Add(text(float64(iterations(t))/2, 0.5, labelNoContenion, draw.XCenter, draw.YCenter, color.Black))
		pn.p.Y.Min, pn.p.Y.Max = 0, 1
		pn.p.Y.Tick.Marker = plot.ConstantTicks{}
		return []*panel{pn}
	}
	var out []*panel
	if len(pct) > 0 {
		out = append(out, figurePanel(t, "contention in each window (%)"+missing, "%", pct))
		missing = ""
	}
	if len(other) > 0 {
		out = append(out, figurePanel(t, "load average at each window's end"+missing, "load (tasks)", other))
	}
	return out
}

// figurePanel draws the contention figures names over the boundaries of t.
func figurePanel(t *trace.Trace, title, ylabel string, names map[string]bool) *panel {
	pn := newPanel(title, ylabel)
	p := pn.p
	ymax := math.Inf(-1)
	for i, k := range slices.Sorted(maps.Keys(names)) {
		var xys plotter.XYs
		for _, b := range t.Boundaries {
			if v, ok := b.Contention[k]; ok {
				xys = append(xys, plotter.XY{X: float64(b.Iter), Y: v})
				ymax = math.Max(ymax, v)
			}
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue // values were checked finite by trace.Write/Read
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		s.Shape, s.Radius = plotutil.Shape(i), vg.Points(2)
		if len(xys) > maxGlyphBoundaries {
			p.Add(l)
			pn.legend.Add(figureName(k), l)
			continue
		}
		p.Add(l, s)
		pn.legend.Add(figureName(k), l, s)
	}
	if ymax <= 0 || math.IsInf(ymax, -1) {
		ymax = 1
	}
	p.Y.Min, p.Y.Max = 0, 1.15*ymax
	return pn
}
