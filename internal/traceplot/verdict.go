package traceplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of the verdict picture.
const (
	verdictWidth  = 20 * vg.Centimeter
	verdictHeight = 12 * vg.Centimeter
)

// Labels drawn on the verdict picture; tests look for them.
const (
	labelKept      = "round"
	labelRejected  = "rejected round"
	labelNullBand  = "null band"
	labelCI        = "CI"
	labelEstimate  = "estimate"
	labelNoChange  = "no change"
	labelRoundAxis = "round"
)

// Colors of the verdict picture.
var (
	colorBand    = color.NRGBA{R: 150, G: 150, B: 150, A: 70}
	colorRound   = color.NRGBA{R: 40, G: 70, B: 150, A: 255}
	colorCI      = color.NRGBA{R: 200, G: 40, B: 0, A: 255}
	colorUnitRat = color.NRGBA{R: 60, G: 60, B: 60, A: 255}
)

// VerdictData is what the verdict picture shows: the per-round ratios of
// an interleaved A/B comparison, the null band, and the ratio's confidence
// interval. It is plain data so that the caller (nullband's interleave
// command) fills it from its own types. Ratios are B/A: 1.05 is B 5%
// slower when the metric is a time.
type VerdictData struct {
	// Title is the picture's title, for example the benchmark's name.
	Title string
	// ArmA and ArmB name the two arms; they label the ratio axis "B/A".
	ArmA, ArmB string
	// Metric names the compared metric with its unit ("ns/op").
	Metric string
	// Ratios are the per-round B/A ratios, in round order (round 1 first).
	// Every one must be finite and > 0.
	Ratios []float64
	// Rejected marks the rounds left out of the verdict (drawn hollow):
	// nil for none, else len(Ratios) long.
	Rejected []bool
	// NullLow and NullHigh bound the null band (the range of A/A ratios),
	// as ratios. Both 0 means no band is drawn; otherwise 0 < NullLow <=
	// NullHigh.
	NullLow, NullHigh float64
	// Ratio is the point estimate of B/A over the kept rounds, > 0.
	Ratio float64
	// CILow and CIHigh bound Ratio's confidence interval:
	// 0 < CILow <= Ratio <= CIHigh.
	CILow, CIHigh float64
	// CILevel is the interval's confidence level, a fraction (0.95). 0
	// leaves the level out of the label.
	CILevel float64
	// Verdict is the verdict in words, printed under the title.
	Verdict string
}

// validate returns an error naming the first field that breaks its
// documented invariant.
func (v *VerdictData) validate() error {
	pos := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
	switch {
	case len(v.Ratios) == 0:
		return errors.New("traceplot: VerdictData.Ratios is empty: give one B/A ratio per round")
	case v.Rejected != nil && len(v.Rejected) != len(v.Ratios):
		return fmt.Errorf("traceplot: len(VerdictData.Rejected) = %d, len(Ratios) = %d: give one flag per round, or nil", len(v.Rejected), len(v.Ratios))
	case !(v.NullLow == 0 && v.NullHigh == 0) && !(pos(v.NullLow) && pos(v.NullHigh) && v.NullLow <= v.NullHigh):
		return fmt.Errorf("traceplot: VerdictData null band [%v, %v]: want 0 < NullLow <= NullHigh, or both 0 for none", v.NullLow, v.NullHigh)
	case !(pos(v.Ratio) && pos(v.CILow) && pos(v.CIHigh) && v.CILow <= v.Ratio && v.Ratio <= v.CIHigh):
		return fmt.Errorf("traceplot: VerdictData Ratio %v, CI [%v, %v]: want 0 < CILow <= Ratio <= CIHigh", v.Ratio, v.CILow, v.CIHigh)
	case v.CILevel < 0 || v.CILevel >= 1:
		return fmt.Errorf("traceplot: VerdictData.CILevel = %v: want a fraction in (0, 1), or 0", v.CILevel)
	}
	for i, r := range v.Ratios {
		if !pos(r) {
			return fmt.Errorf("traceplot: VerdictData.Ratios[%d] = %v: want a finite ratio > 0", i, r)
		}
	}
	return nil
}

// Verdict draws v to path, as SVG or PNG by path's extension: each round's
// B/A ratio as a point (rejected rounds hollow), the null band shaded, a
// line at 1 (no change), and right of the rounds the ratio's estimate with
// its confidence interval as a bar.
func Verdict(v VerdictData, path string) error {
	return writeFile(path, func(w io.Writer, format string) error { return WriteVerdict(w, v, format) })
}

// WriteVerdict draws v to w in format ("svg" or "png"); see Verdict.
func WriteVerdict(w io.Writer, v VerdictData, format string) error {
	if err := v.validate(); err != nil {
		return err
	}
	c, err := newCanvas(format, verdictWidth, verdictHeight)
	if err != nil {
		return err
	}
	verdictPlot(&v).Draw(draw.New(c))
	if _, err := c.WriteTo(pictureWriter(w, format)); err != nil {
		return fmt.Errorf("traceplot: writing the %s picture: %w", format, err)
	}
	return nil
}

// verdictPlot builds the verdict picture.
func verdictPlot(v *VerdictData) *plot.Plot {
	n := len(v.Ratios)
	a, b := v.ArmA, v.ArmB
	if a == "" {
		a = "A"
	}
	if b == "" {
		b = "B"
	}
	p := plot.New()
	p.Title.Text = v.Title
	if v.Verdict != "" {
		if p.Title.Text != "" {
			p.Title.Text += "\n"
		}
		p.Title.Text += v.Verdict
	}
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = labelRoundAxis
	p.Y.Label.Text = fmt.Sprintf("%s / %s", b, a)
	if v.Metric != "" {
		p.Y.Label.Text += " (" + v.Metric + ")"
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())

	ciX := float64(n) + 1.5
	xmin, xmax := 0.3, ciX+0.7
	lo, hi := math.Min(v.CILow, 1), math.Max(v.CIHigh, 1)
	for _, r := range v.Ratios {
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if v.NullHigh > 0 {
		lo, hi = math.Min(lo, v.NullLow), math.Max(hi, v.NullHigh)
		band := rect(xmin, xmax, v.NullLow, v.NullHigh, colorBand)
		p.Add(band)
		p.Legend.Add(fmt.Sprintf("%s [%.4g, %.4g]", labelNullBand, v.NullLow, v.NullHigh), band)
	}
	one := hline(xmin, xmax, 1, colorUnitRat, []vg.Length{vg.Points(3), vg.Points(3)})
	one.Width = vg.Points(0.8)
	p.Add(one)
	p.Legend.Add(labelNoChange+" (1)", one)

	var kept, rejected plotter.XYs
	for i, r := range v.Ratios {
		xy := plotter.XY{X: float64(i + 1), Y: r}
		if v.Rejected != nil && v.Rejected[i] {
			rejected = append(rejected, xy)
		} else {
			kept = append(kept, xy)
		}
	}
	if len(kept) > 0 {
		s := scatter(kept, colorRound, draw.CircleGlyph{}, vg.Points(3))
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("%s (%d kept)", labelKept, len(kept)), s)
	}
	if len(rejected) > 0 {
		s := scatter(rejected, colorRound, draw.RingGlyph{}, vg.Points(3))
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("%s (%d)", labelRejected, len(rejected)), s)
	}

	bar, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{
		plotter.XYs{{X: ciX, Y: v.Ratio}},
		plotter.YErrors{{Low: v.Ratio - v.CILow, High: v.CIHigh - v.Ratio}},
	})
	if err == nil { // finite by validate
		bar.Color, bar.Width, bar.CapWidth = colorCI, vg.Points(2), vg.Points(10)
		est := scatter(plotter.XYs{{X: ciX, Y: v.Ratio}}, colorCI, draw.BoxGlyph{}, vg.Points(3.5))
		p.Add(bar, est)
		ciName := labelCI
		if v.CILevel > 0 {
			ciName = fmt.Sprintf("%.4g%% %s", 100*v.CILevel, labelCI)
		}
		p.Legend.Add(fmt.Sprintf("%s %.4g, %s [%.4g, %.4g]", labelEstimate, v.Ratio, ciName, v.CILow, v.CIHigh), est)
	}

	// Ticks: the rounds (all of them when few, else the default's), and
	// the estimate's column.
	var ticks []plot.Tick
	if n <= 20 {
		for i := 1; i <= n; i++ {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: strconv.Itoa(i)})
		}
	} else {
		for _, t := range (plot.DefaultTicks{}).Ticks(1, float64(n)) {
			if t.Value >= 1 && t.Value <= float64(n) {
				ticks = append(ticks, t)
			}
		}
	}
	ticks = append(ticks, plot.Tick{Value: ciX, Label: labelEstimate})
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = preciseTicks{}

	span := hi - lo
	if span == 0 {
		span = 0.01
	}
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = lo-0.1*span, hi+0.45*span // room for the legend
	return p
}
