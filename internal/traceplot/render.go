package traceplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/quantile"
	"github.com/gapbench/gapbench/internal/trace"
)

// Size of the trace picture: the panels stacked, each with its legend in a
// column to its right (never over the data or a label).
const (
	plotWidth   = 24 * vg.Centimeter
	legendWidth = 8 * vg.Centimeter
	panelHeight = 8.5 * vg.Centimeter
)

// maxPoints is the most points a panel draws for one series. A longer series
// is drawn as every k-th step (which keeps the shape of the distribution)
// plus, for each run of k steps, its maximum when that is above the series'
// p99 (which keeps every spike), so that the file stays small.
const maxPoints = 6000

// maxGlyphBoundaries is the most boundaries the contention panel marks with
// a glyph each; with more, it draws lines only.
const maxGlyphBoundaries = 200

// titleWidth is the most characters of a title line; longer lines are
// wrapped at spaces.
const titleWidth = 140

// Labels drawn on the trace picture; tests look for them.
const (
	labelSteady      = "steady window"
	labelNotReached  = "steady state not reached"
	labelMean        = "mean"
	labelP90         = "p90"
	labelMedian      = "window median"
	labelIteration   = "iteration"
	labelNoGap       = "no gap in this trace: none injected, or not kept"
	labelNoContenion = "no contention figures recorded"
)

// Colors of the trace picture.
var (
	colorSteps     = color.NRGBA{R: 90, G: 110, B: 160, A: 255}
	colorMedian    = color.NRGBA{R: 20, G: 20, B: 20, A: 255}
	colorWarmup    = color.NRGBA{R: 255, G: 200, B: 120, A: 90}
	colorSlowdown  = color.NRGBA{R: 200, G: 120, B: 220, A: 70}
	colorBefore    = color.NRGBA{R: 160, G: 160, B: 160, A: 70}
	colorSteady    = color.NRGBA{R: 120, G: 200, B: 120, A: 60}
	colorMean      = color.NRGBA{R: 0, G: 130, B: 0, A: 255}
	colorP90       = color.NRGBA{R: 200, G: 60, B: 0, A: 255}
	colorRequested = color.NRGBA{R: 230, G: 130, B: 0, A: 255}
	colorChange    = color.NRGBA{R: 120, G: 120, B: 120, A: 255}
)

// panel is one row of the picture: a plot and the legend drawn beside it.
type panel struct {
	p      *plot.Plot
	legend plot.Legend
}

// Render draws t to path, as SVG or PNG by path's extension: step latency
// over iterations (every step a point, window medians as a line, the part
// before the steady window shaded and named by the steady-state class, the
// steady window marked with its mean and p90, the change points), the
// achieved and requested gap, and the contention figures over the window
// boundaries (percentages and load on separate axes, by their metric
// names). It does not modify t.
func Render(t *trace.Trace, path string) error {
	return writeFile(path, func(w io.Writer, format string) error { return WriteTrace(w, t, format) })
}

// WriteTrace draws t to w in format ("svg" or "png"); see Render.
func WriteTrace(w io.Writer, t *trace.Trace, format string) error {
	if len(t.Latency) == 0 {
		return errors.New("traceplot: the trace has no recorded iterations: nothing to draw (was b.N 0?)")
	}
	panels := append([]*panel{latencyPanel(t), gapPanel(t)}, contentionPanels(t)...)
	c, err := newCanvas(format, plotWidth+legendWidth, vg.Length(len(panels))*panelHeight)
	if err != nil {
		return err
	}
	rows := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		pn.p.X.Min, pn.p.X.Max = 0, float64(iterations(t))
		rows[i] = []*plot.Plot{pn.p}
	}
	tiles := draw.Tiles{
		Rows: len(panels), Cols: 1,
		PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter,
	}
	dc := draw.New(c)
	canvases := plot.Align(rows, tiles, draw.Crop(dc, 0, -legendWidth, 0, 0))
	for i, pn := range panels {
		tile := canvases[i][0]
		pn.p.Draw(tile)
		// The legend's column: beside the tile, from the top of its data
		// area (below the title) down.
		data := pn.p.DataCanvas(tile)
		pn.legend.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: tile.Max.X + 2*vg.Millimeter, Y: tile.Min.Y},
			Max: vg.Point{X: dc.Max.X - vg.Millimeter, Y: data.Max.Y},
		}})
	}
	if _, err := c.WriteTo(pictureWriter(w, format)); err != nil {
		return fmt.Errorf("traceplot: writing the %s picture: %w", format, err)
	}
	return nil
}

// stride returns the number of iterations per sample of t.
func stride(t *trace.Trace) int { return max(1, t.Header.Stride) }

// iterations returns the number of recorded iterations of t.
func iterations(t *trace.Trace) int {
	if t.Header.Iterations > 0 {
		return t.Header.Iterations
	}
	return len(t.Latency) * stride(t)
}

// xOf returns the iteration of sample k of t, as an x coordinate.
func xOf(t *trace.Trace, k int) float64 { return float64(k * stride(t)) }

// axisRange returns the y range to draw sorted values s (ns) in: the data's
// range, unless the largest values are far above the rest (max > 3×p99),
// in which case the top is 1.5×p99 and the values above it are clipped.
func axisRange(s []int64) (lo, hi float64, clipped bool) {
	lo, hi = float64(s[0]), float64(s[len(s)-1])
	if p99 := quantile.Sorted(s, 0.99); p99 > 0 && hi > 3*p99 && hi-lo > 0 {
		return lo, 1.5 * p99, true
	}
	return lo, hi, false
}

// seriesPoints returns v (ns, sample k at x = k×every) as points in u: all
// of them, or for a long series every stride-th one plus the maximum of each
// stride when it is above spike (ns). Values above top (in u) are returned
// separately, at top, to be drawn as clipped.
func seriesPoints(v []int64, every int, u unit, top float64, spike float64) (in, above plotter.XYs, stride int) {
	stride = 1
	if len(v) > maxPoints {
		stride = (len(v) + maxPoints - 1) / maxPoints
	}
	add := func(i int) {
		y := float64(v[i]) / u.ns
		if y > top {
			above = append(above, plotter.XY{X: float64(i * every), Y: top})
			return
		}
		in = append(in, plotter.XY{X: float64(i * every), Y: y})
	}
	for b := 0; b < len(v); b += stride {
		add(b)
		hi := -1
		for i := b + 1; i < min(b+stride, len(v)); i++ {
			if hi < 0 || v[i] > v[hi] {
				hi = i
			}
		}
		if hi >= 0 && float64(v[hi]) > spike {
			add(hi)
		}
	}
	return in, above, stride
}

// windows returns the windows to take medians over, as [start, end)
// sample ranges: those between the trace's boundaries, or, when it has
// fewer than two, about 50 equal windows.
func windows(t *trace.Trace) [][2]int {
	n, st := len(t.Latency), stride(t)
	var cuts []int
	for _, b := range t.Boundaries {
		k := (b.Iter + st - 1) / st // the first sample at or after the boundary
		if k > 0 && k < n && (len(cuts) == 0 || cuts[len(cuts)-1] != k) {
			cuts = append(cuts, k)
		}
	}
	if len(cuts) == 0 {
		size := max(1, n/50)
		for c := size; c < n; c += size {
			cuts = append(cuts, c)
		}
	}
	var ws [][2]int
	start := 0
	for _, c := range append(cuts, n) {
		if c > start {
			ws = append(ws, [2]int{start, c})
			start = c
		}
	}
	return ws
}

// text returns a Labels plotter that writes s at (x, y) with the given
// alignment, in color c.
func text(x, y float64, s string, xa draw.XAlignment, ya draw.YAlignment, c color.Color) *plotter.Labels {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{s}})
	if err != nil {
		panic(err) // one finite point and one label: cannot fail
	}
	l.TextStyle[0].XAlign, l.TextStyle[0].YAlign = xa, ya
	l.TextStyle[0].Color = c
	l.TextStyle[0].Font.Size = vg.Points(9)
	if xa == draw.XLeft {
		l.Offset.X = vg.Points(3) // clear of the edge it starts at
	}
	return l
}

// rect returns a filled rectangle without an outline.
func rect(x0, x1, y0, y1 float64, fill color.Color) *plotter.Polygon {
	p, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	if err != nil {
		panic(err) // finite corners: cannot fail
	}
	p.Color = fill
	p.LineStyle.Width = 0
	return p
}

// hline returns a horizontal line from x0 to x1 at y.
func hline(x0, x1, y float64, c color.Color, dashes []vg.Length) *plotter.Line {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		panic(err) // finite points: cannot fail
	}
	l.Color, l.Dashes, l.Width = c, dashes, vg.Points(1.5)
	return l
}

// vline returns a vertical line at x from y0 to y1.
func vline(x, y0, y1 float64, c color.Color, dashes []vg.Length) *plotter.Line {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}})
	if err != nil {
		panic(err) // finite points: cannot fail
	}
	l.Color, l.Dashes, l.Width = c, dashes, vg.Points(1)
	return l
}

// scatter returns points with a small glyph.
func scatter(xys plotter.XYs, c color.Color, g draw.GlyphDrawer, r vg.Length) *plotter.Scatter {
	s, err := plotter.NewScatter(xys)
	if err != nil {
		panic(err) // finite points: cannot fail
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Shape: g, Radius: r}
	return s
}

// newPanel returns a panel with the package's common style; the title's
// lines are wrapped to titleWidth.
func newPanel(title, ylabel string) *panel {
	p := plot.New()
	p.Title.Text = wrap(title, titleWidth)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = labelIteration
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = preciseTicks{}
	p.Y.Tick.Marker = preciseTicks{}
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(9)
	l.ThumbnailWidth = vg.Points(14)
	return &panel{p: p, legend: l}
}

// wrap breaks each line of s at spaces so that no line is longer than width
// characters, where a word allows it.
func wrap(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(line) {
			switch {
			case cur == "":
				cur = w
			case len([]rune(cur))+1+len([]rune(w)) > width:
				out = append(out, cur)
				cur = w
			default:
				cur += " " + w
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// SteadyFigures returns the mean and the 90th percentile (by the rule of
// internal/quantile) of the latencies in t's steady window, ns: the figures
// the picture marks, and the same data and rule as the run's ns/op and
// p90-ns/op. ok is false when the trace has no steady window or it is
// empty.
func SteadyFigures(t *trace.Trace) (mean, p90 float64, ok bool) {
	st := t.Header.Steady
	if !st.Found() || st.End <= st.Start || st.End > len(t.Latency) {
		return math.NaN(), math.NaN(), false
	}
	win := sorted(t.Latency[st.Start:st.End])
	return meanOf(win), quantile.Sorted(win, 0.9), true
}

// before returns the name and color of the shaded part before the steady
// window, by the steady-state class: a warm-up only when the series got
// faster into the steady window.
func before(class string) (name string, fill color.Color) {
	switch class {
	case trace.ClassWarmup:
		return "warm-up", colorWarmup
	case trace.ClassSlowdown:
		return "before the slowdown", colorSlowdown
	case trace.ClassFlat:
		return "earlier levels within the margin", colorBefore
	}
	return "before the steady window", colorBefore
}

// latencyPanel draws step latency over iterations.
func latencyPanel(t *trace.Trace) *panel {
	s := sorted(t.Latency)
	u := unitFor(quantile.Sorted(s, 0.5))
	lo, hi, clipped := axisRange(s)
	lo, hi = lo/u.ns, hi/u.ns
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi)*0.1, 1)
	}
	ymin, ymax := lo-0.05*span, hi+0.12*span // room above the data for a label

	st := t.Header.Steady
	title := fmt.Sprintf("%s (count %d): step latency", t.Header.Benchmark, t.Header.Count)
	status := "steady state: " + st.Class
	if st.Class == "" {
		status = "steady state: (not classified)"
	}
	if st.Reason != "" {
		status += " — " + st.Reason
	}
	pn := newPanel(title+"\n"+status, fmt.Sprintf("step latency (%s)", u.name))
	p, lg := pn.p, &pn.legend

	// Shading first, so that the points are drawn over it; the names go
	// in the legend, where no label or point can cover them.
	var shades []struct {
		name string
		r    *plotter.Polygon
	}
	if st.Found() {
		if st.Start > 0 {
			name, fill := before(st.Class)
			to := int(xOf(t, st.Start))
			r := rect(0, float64(to), ymin, ymax, fill)
			p.Add(r)
			shades = append(shades, struct {
				name string
				r    *plotter.Polygon
			}{fmt.Sprintf("%s, dropped [0, %d)", name, to), r})
		}
		if st.End > st.Start {
			from, to := int(xOf(t, st.Start)), min(int(xOf(t, st.End)), iterations(t))
			r := rect(float64(from), float64(to), ymin, ymax, colorSteady)
			p.Add(r)
			shades = append(shades, struct {
				name string
				r    *plotter.Polygon
			}{fmt.Sprintf("%s [%d, %d)", labelSteady, from, to), r})
		}
	} else {
		p.Add(text(0, hi+0.08*span, labelNotReached, draw.XLeft, draw.YCenter, color.Black))
	}
	var change *plotter.Line
	for _, c := range st.Changepoints {
		change = vline(xOf(t, c), ymin, ymax, colorChange, []vg.Length{vg.Points(2), vg.Points(2)})
		p.Add(change)
	}

	in, above, every := seriesPoints(t.Latency, stride(t), u, hi, quantile.Sorted(s, 0.99))
	pts := scatter(in, colorSteps, draw.CircleGlyph{}, vg.Points(1.2))
	p.Add(pts)
	stepName := "step"
	if k := every * stride(t); k > 1 {
		stepName = fmt.Sprintf("step (1 in %d, and spikes above p99)", k)
	}
	lg.Add(stepName, pts)
	if len(above) > 0 {
		clip := scatter(above, colorP90, draw.TriangleGlyph{}, vg.Points(2.5))
		p.Add(clip)
		lg.Add(fmt.Sprintf("above the top (max %s)", durfmt.Ns(float64(s[len(s)-1]))), clip)
	} else if clipped {
		// Every point above the top fell in a bucket whose other extreme
		// was drawn; still say that the axis is cut.
		lg.Add(fmt.Sprintf("axis cut at %s (max %s)", durfmt.Ns(hi*u.ns), durfmt.Ns(float64(s[len(s)-1]))))
	}

	var med plotter.XYs
	for _, w := range windows(t) {
		ws := sorted(t.Latency[w[0]:w[1]])
		med = append(med, plotter.XY{X: (xOf(t, w[0]) + xOf(t, w[1])) / 2, Y: quantile.Sorted(ws, 0.5) / u.ns})
	}
	if ml, err := plotter.NewLine(med); err == nil {
		ml.Color, ml.Width = colorMedian, vg.Points(1.5)
		p.Add(ml)
		lg.Add(labelMedian, ml)
	}
	for _, sh := range shades {
		lg.Add(sh.name, sh.r)
	}
	if change != nil {
		lg.Add(changeName(t), change)
	}

	if m, p90, ok := SteadyFigures(t); ok {
		x0, x1 := xOf(t, st.Start), math.Min(xOf(t, st.End), float64(iterations(t)))
		ml := hline(x0, x1, m/u.ns, colorMean, nil)
		pl := hline(x0, x1, p90/u.ns, colorP90, []vg.Length{vg.Points(4), vg.Points(2)})
		p.Add(ml, pl)
		lg.Add(fmt.Sprintf("%s %s (steady window)", labelMean, durfmt.Ns(m)), ml)
		lg.Add(fmt.Sprintf("%s %s (steady window)", labelP90, durfmt.Ns(p90)), pl)
	}
	p.Y.Min, p.Y.Max = ymin, ymax
	return pn
}

// changeName names the change-point lines in the legend, with their
// iterations when there are few.
func changeName(t *trace.Trace) string {
	cps := t.Header.Steady.Changepoints
	if len(cps) > 4 {
		return fmt.Sprintf("%d change points of level", len(cps))
	}
	at := make([]string, len(cps))
	for i, c := range cps {
		at[i] = fmt.Sprint(int(xOf(t, c)))
	}
	if len(cps) == 1 {
		return "change of level at " + at[0]
	}
	return "changes of level at " + strings.Join(at, ", ")
}

// gapPanel draws the achieved and requested gap over iterations, each when
// the trace has it.
func gapPanel(t *trace.Trace) *panel {
	if t.Gap == nil && t.Requested == nil {
		pn := newPanel("gap before each step", "gap")
		pn.p.Add(text(float64(iterations(t))/2, 0.5, labelNoGap, draw.XCenter, draw.YCenter, color.Black))
		pn.p.Y.Min, pn.p.Y.Max = 0, 1
		pn.p.Y.Tick.Marker = plot.ConstantTicks{}
		return pn
	}
	var s, rs []int64 // sorted achieved and requested gaps, when present
	var parts []string
	typical := 0.0
	if t.Requested != nil {
		rs = sorted(t.Requested)
		typical = quantile.Sorted(rs, 0.5)
	}
	if t.Gap != nil {
		s = sorted(t.Gap)
		if typical == 0 {
			typical = quantile.Sorted(s, 0.5)
		}
	}
	u := unitFor(typical)
	if s != nil {
		parts = append(parts, "achieved median "+durfmt.Ns(quantile.Sorted(s, 0.5)))
	}
	if rs != nil {
		parts = append(parts, "requested median "+durfmt.Ns(quantile.Sorted(rs, 0.5)))
	}
	if s != nil && rs != nil {
		over := make([]int64, len(t.Gap))
		for i := range over {
			over[i] = t.Gap[i] - t.Requested[i]
		}
		parts = append(parts, "median overshoot "+durfmt.Ns(quantile.Of(over, 0.5)))
	}
	all := sorted(append(slices.Clone(t.Gap), t.Requested...))
	lo, hi, _ := axisRange(all)
	lo, hi = lo/u.ns, hi/u.ns
	pn := newPanel("gap before each step: "+strings.Join(parts, ", "), fmt.Sprintf("gap (%s)", u.name))
	p, lg := pn.p, &pn.legend

	if s != nil {
		in, above, _ := seriesPoints(t.Gap, stride(t), u, hi, quantile.Sorted(s, 0.99))
		ach := scatter(in, colorSteps, draw.CircleGlyph{}, vg.Points(1.2))
		p.Add(ach)
		lg.Add("achieved", ach)
		if len(above) > 0 {
			clip := scatter(above, colorP90, draw.TriangleGlyph{}, vg.Points(2.5))
			p.Add(clip)
			lg.Add(fmt.Sprintf("above the top (max %s)", durfmt.Ns(float64(s[len(s)-1]))), clip)
		}
	}
	if rs != nil {
		rin, rabove, _ := seriesPoints(t.Requested, stride(t), u, hi, quantile.Sorted(rs, 0.99))
		req := scatter(append(rin, rabove...), colorRequested, draw.CircleGlyph{}, vg.Points(0.8))
		p.Add(req)
		lg.Add("requested", req)
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi)*0.1, 1)
	}
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.1*span
	return pn
}
