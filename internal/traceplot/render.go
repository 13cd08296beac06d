package traceplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gapbench/gapbench/internal/trace"
)

// Size of the trace picture: three panels stacked.
const (
	traceWidth  = 26 * vg.Centimeter
	traceHeight = 26 * vg.Centimeter
)

// maxPoints is the most points a panel draws for one series. A longer series
// is drawn as every k-th step (which keeps the shape of the distribution)
// plus, for each run of k steps, its maximum when that is above the series'
// p99 (which keeps every spike), so that the file stays small.
const maxPoints = 6000

// maxGlyphBoundaries is the most boundaries the contention panel marks with
// a glyph each; with more, it draws lines only.
const maxGlyphBoundaries = 200

// Labels drawn on the trace picture; tests look for them.
const (
	labelWarmup      = "warm-up"
	labelSteady      = "steady"
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
	colorSteady    = color.NRGBA{R: 120, G: 200, B: 120, A: 60}
	colorMean      = color.NRGBA{R: 0, G: 130, B: 0, A: 255}
	colorP90       = color.NRGBA{R: 200, G: 60, B: 0, A: 255}
	colorRequested = color.NRGBA{R: 230, G: 130, B: 0, A: 255}
	colorChange    = color.NRGBA{R: 120, G: 120, B: 120, A: 255}
)

// Render draws t to path, as SVG or PNG by path's extension: step latency
// over iterations (every step a point, window medians as a line, the
// warm-up shaded, the steady window marked with its mean and p90), the
// achieved and requested gap, and the contention figures over the window
// boundaries. It does not modify t.
func Render(t *trace.Trace, path string) error {
	return writeFile(path, func(w io.Writer, format string) error { return WriteTrace(w, t, format) })
}

// WriteTrace draws t to w in format ("svg" or "png"); see Render.
func WriteTrace(w io.Writer, t *trace.Trace, format string) error {
	if len(t.Latency) == 0 {
		return errors.New("traceplot: the trace has no recorded iterations: nothing to draw (was b.N 0?)")
	}
	c, err := newCanvas(format, traceWidth, traceHeight)
	if err != nil {
		return err
	}
	panels := [][]*plot.Plot{{latencyPanel(t)}, {gapPanel(t)}, {contentionPanel(t)}}
	for _, row := range panels {
		row[0].X.Min, row[0].X.Max = 0, float64(iterations(t))
	}
	tiles := draw.Tiles{
		Rows: len(panels), Cols: 1,
		PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter,
	}
	canvases := plot.Align(panels, tiles, draw.New(c))
	for i, row := range panels {
		row[0].Draw(canvases[i][0])
	}
	if _, err := c.WriteTo(w); err != nil {
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
	if p99 := quantile(s, 0.99); p99 > 0 && hi > 3*p99 && hi-lo > 0 {
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

// newPanel returns a plot with the package's common style.
func newPanel(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = labelIteration
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = preciseTicks{}
	p.Y.Tick.Marker = preciseTicks{}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.ThumbnailWidth = vg.Points(14)
	p.Add(plotter.NewGrid())
	return p
}

// latencyPanel draws step latency over iterations.
func latencyPanel(t *trace.Trace) *plot.Plot {
	s := sorted(t.Latency)
	u := unitFor(quantile(s, 0.5))
	lo, hi, clipped := axisRange(s)
	lo, hi = lo/u.ns, hi/u.ns
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi)*0.1, 1)
	}
	ymin, ymax := lo-0.05*span, hi+0.18*span // room above the data for labels
	labelY := hi + 0.15*span

	st := t.Header.Steady
	title := fmt.Sprintf("%s (count %d): step latency", t.Header.Benchmark, t.Header.Count)
	status := "steady state: " + st.Class
	if st.Class == "" {
		status = "steady state: (not classified)"
	}
	if st.Reason != "" {
		status += " — " + st.Reason
	}
	p := newPanel(title+"\n"+status, fmt.Sprintf("step latency (%s)", u.name))

	// Shading first, so that the points are drawn over it.
	if st.Found() {
		if st.Start > 0 {
			p.Add(rect(0, xOf(t, st.Start), ymin, ymax, colorWarmup),
				text(0, labelY, labelWarmup, draw.XLeft, draw.YCenter, color.Black))
		}
		if st.End > st.Start {
			from, to := int(xOf(t, st.Start)), min(int(xOf(t, st.End)), iterations(t))
			p.Add(rect(float64(from), float64(to), ymin, ymax, colorSteady),
				text(float64(from), labelY, fmt.Sprintf("%s window [%d, %d)", labelSteady, from, to), draw.XLeft, draw.YCenter, color.Black))
		}
	} else {
		p.Add(text(0, labelY, labelNotReached, draw.XLeft, draw.YCenter, color.Black))
	}
	for _, c := range st.Changepoints {
		p.Add(vline(xOf(t, c), ymin, ymax, colorChange, []vg.Length{vg.Points(2), vg.Points(2)}))
	}

	in, above, every := seriesPoints(t.Latency, stride(t), u, hi, quantile(s, 0.99))
	pts := scatter(in, colorSteps, draw.CircleGlyph{}, vg.Points(1.2))
	p.Add(pts)
	stepName := "step"
	if k := every * stride(t); k > 1 {
		stepName = fmt.Sprintf("step (1 in %d, and spikes above p99)", k)
	}
	p.Legend.Add(stepName, pts)
	if len(above) > 0 {
		clip := scatter(above, colorP90, draw.TriangleGlyph{}, vg.Points(2.5))
		p.Add(clip)
		p.Legend.Add(fmt.Sprintf("above the top (max %s)", formatNs(float64(s[len(s)-1]))), clip)
	} else if clipped {
		// Every point above the top fell in a bucket whose other extreme
		// was drawn; still say that the axis is cut.
		p.Legend.Add(fmt.Sprintf("axis cut at %s (max %s)", formatNs(hi*u.ns), formatNs(float64(s[len(s)-1]))))
	}

	var med plotter.XYs
	for _, w := range windows(t) {
		ws := sorted(t.Latency[w[0]:w[1]])
		med = append(med, plotter.XY{X: (xOf(t, w[0]) + xOf(t, w[1])) / 2, Y: quantile(ws, 0.5) / u.ns})
	}
	if ml, err := plotter.NewLine(med); err == nil {
		ml.Color, ml.Width = colorMedian, vg.Points(1.5)
		p.Add(ml)
		p.Legend.Add(labelMedian, ml)
	}

	if st.Found() && st.End > st.Start {
		win := sorted(t.Latency[st.Start:st.End])
		m, p90 := mean(win)/u.ns, quantile(win, 0.9)/u.ns
		x0, x1 := xOf(t, st.Start), math.Min(xOf(t, st.End), float64(iterations(t)))
		ml := hline(x0, x1, m, colorMean, nil)
		pl := hline(x0, x1, p90, colorP90, []vg.Length{vg.Points(4), vg.Points(2)})
		p.Add(ml, pl)
		// The values go in the legend: a label on the line would sit on
		// the points around it.
		p.Legend.Add(fmt.Sprintf("%s %s (steady window)", labelMean, u.format(m*u.ns)), ml)
		p.Legend.Add(fmt.Sprintf("%s %s (steady window)", labelP90, u.format(p90*u.ns)), pl)
	}
	p.Y.Min, p.Y.Max = ymin, ymax
	return p
}

// gapPanel draws the achieved and requested gap over iterations, each when
// the trace has it.
func gapPanel(t *trace.Trace) *plot.Plot {
	if t.Gap == nil && t.Requested == nil {
		p := newPanel("gap before each step", "gap")
		p.Add(text(float64(iterations(t))/2, 0.5, labelNoGap, draw.XCenter, draw.YCenter, color.Black))
		p.Y.Min, p.Y.Max = 0, 1
		p.Y.Tick.Marker = plot.ConstantTicks{}
		return p
	}
	var s, rs []int64 // sorted achieved and requested gaps, when present
	var parts []string
	typical := 0.0
	if t.Requested != nil {
		rs = sorted(t.Requested)
		typical = quantile(rs, 0.5)
	}
	if t.Gap != nil {
		s = sorted(t.Gap)
		if typical == 0 {
			typical = quantile(s, 0.5)
		}
	}
	u := unitFor(typical)
	if s != nil {
		parts = append(parts, "achieved median "+u.format(quantile(s, 0.5)))
	}
	if rs != nil {
		parts = append(parts, "requested median "+u.format(quantile(rs, 0.5)))
	}
	if s != nil && rs != nil {
		over := make([]int64, len(t.Gap))
		for i := range over {
			over[i] = t.Gap[i] - t.Requested[i]
		}
		parts = append(parts, "median overshoot "+formatNs(quantile(sorted(over), 0.5)))
	}
	all := sorted(append(slices.Clone(t.Gap), t.Requested...))
	lo, hi, _ := axisRange(all)
	lo, hi = lo/u.ns, hi/u.ns
	p := newPanel("gap before each step: "+strings.Join(parts, ", "), fmt.Sprintf("gap (%s)", u.name))

	if s != nil {
		in, above, _ := seriesPoints(t.Gap, stride(t), u, hi, quantile(s, 0.99))
		ach := scatter(in, colorSteps, draw.CircleGlyph{}, vg.Points(1.2))
		p.Add(ach)
		p.Legend.Add("achieved", ach)
		if len(above) > 0 {
			clip := scatter(above, colorP90, draw.TriangleGlyph{}, vg.Points(2.5))
			p.Add(clip)
			p.Legend.Add(fmt.Sprintf("above the top (max %s)", formatNs(float64(s[len(s)-1]))), clip)
		}
	}
	if rs != nil {
		rin, rabove, _ := seriesPoints(t.Requested, stride(t), u, hi, quantile(rs, 0.99))
		req := scatter(append(rin, rabove...), colorRequested, draw.CircleGlyph{}, vg.Points(0.8))
		p.Add(req)
		p.Legend.Add("requested", req)
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi)*0.1, 1)
	}
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.25*span
	return p
}

// contentionPanel draws each contention figure over the window boundaries,
// and names the figures and counters that were unavailable.
func contentionPanel(t *trace.Trace) *plot.Plot {
	names := map[string]bool{}
	unavailable := map[string]string{}
	for _, b := range t.Boundaries {
		for k := range b.Contention {
			names[k] = true
		}
		for k, why := range b.Unavailable {
			if _, ok := unavailable[k]; !ok {
				unavailable[k] = why
			}
		}
	}
	sortedNames := make([]string, 0, len(names))
	for k := range names {
		sortedNames = append(sortedNames, k)
	}
	sort.Strings(sortedNames)

	title := "contention over window boundaries (unit in each name)"
	if len(sortedNames) == 0 {
		title = "contention: " + labelNoContenion
	}
	if len(unavailable) > 0 {
		ks := make([]string, 0, len(unavailable))
		for k := range unavailable {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var parts []string
		for i, k := range ks {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(ks)-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", k, unavailable[k]))
		}
		title += "\nunavailable: " + strings.Join(parts, "; ")
	}
	p := newPanel(title, "figure")
	if len(sortedNames) == 0 {
		p.Add(text(float64(iterations(t))/2, 0.5, labelNoContenion, draw.XCenter, draw.YCenter, color.Black))
		p.Y.Min, p.Y.Max = 0, 1
		p.Y.Tick.Marker = plot.ConstantTicks{}
		return p
	}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, k := range sortedNames {
		var xys plotter.XYs
		for _, b := range t.Boundaries {
			if v, ok := b.Contention[k]; ok {
				xys = append(xys, plotter.XY{X: float64(b.Iter), Y: v})
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
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
			p.Legend.Add(k, l)
			continue
		}
		p.Add(l, s)
		p.Legend.Add(k, l, s)
	}
	span := ymax - ymin
	if span == 0 {
		span = math.Max(math.Abs(ymax)*0.1, 1)
	}
	p.Y.Min, p.Y.Max = math.Min(0, ymin), ymax+0.3*span
	return p
}
