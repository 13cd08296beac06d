package main

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gapbench/gapbench/internal/atomicfile"
	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/history/edivisive"
)

const historyPlotUsage = `usage: decodegap history plot [flags] BENCH

Draws the stored series of the benchmark named BENCH (its full name without
the Benchmark prefix, e.g. Step-2) in -unit over commit order: one point a
commit, each stretch between change points with its median as a line, a
dashed line at each change point and a grey one at each host change. The
change points are 'history detect's with the same -method, -pvalue, -window
and -seed.

flags:
`

func historyPlot(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history plot", historyPlotUsage, stderr)
	db := dbFlag(fs, false)
	unit := fs.String("unit", "sec/op", "the `unit` to draw")
	out := fs.String("o", "", "output `file` (.png or .svg); default history-BENCH.png")
	methodName := fs.String("method", "edivisive", "change point `method`: edivisive or otava (as 'history detect')")
	pvalue := fs.Float64("pvalue", 0, "largest `p-value` of a change point; 0 is the method's default: 0.05 (edivisive), 0.001 (otava)")
	window := fs.Int("window", 50, "`points` of each window of -method otava")
	seed := fs.Uint64("seed", 1234, "`seed` of the permutations")
	if st := parseFlags(fs, args); st >= 0 {
		return st
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "decodegap history plot: give one benchmark name, e.g. Step-2 ('decodegap history detect' lists them)")
		return 2
	}
	method, err := history.ParseMethod(*methodName)
	if err != nil || !(*pvalue >= 0 && *pvalue < 1) || *window < 2 {
		fmt.Fprintf(stderr, "decodegap history plot: -method %q, -pvalue %g, -window %d: want edivisive or otava, a p-value in (0, 1) (0: the method's default), a window ≥ 2\n", *methodName, *pvalue, *window)
		return 2
	}
	name := fs.Arg(0)
	if *out == "" {
		*out = "history-" + regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(name, "_") + ".png"
	}
	if !strings.HasSuffix(*out, ".png") && !strings.HasSuffix(*out, ".svg") {
		fmt.Fprintf(stderr, "decodegap history plot: -o %s: want a .png or .svg file\n", *out)
		return 2
	}
	ctx, stop := interruptible(0)
	defer stop()
	s, err := openStore(ctx, *db, false)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history plot: %v\n", err)
		return 2
	}
	defer s.Close()
	series, err := s.Series(ctx, history.Filter{Bench: regexp.MustCompile("^" + regexp.QuoteMeta(name) + "$"), Units: []string{*unit}})
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history plot: %v\n", err)
		return 1
	}
	if len(series) == 0 {
		fmt.Fprintf(stderr, "decodegap history plot: no stored values of %s in %s (check the name and -unit)\n", name, *unit)
		return 1
	}
	opt := history.DetectOptions{Method: method, EDivisive: edivisive.Options{PValue: *pvalue, Seed: *seed},
		Otava: edivisive.OtavaOptions{Window: *window, PValue: *pvalue}}
	if *pvalue == 0 {
		opt.EDivisive.PValue, opt.Otava.PValue = 0.05, 0.001
	}
	changes, skipped, err := history.Detect(ctx, series, opt)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "decodegap history plot: interrupted while searching for change points; nothing written")
		return 130
	}
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history plot: %v\n", err)
		return 1
	}
	if len(skipped) > 0 {
		writeSkipped(stderr, "history plot", skipped)
		return 1
	}
	if err := drawHistory(series[0], changes, *out); err != nil {
		fmt.Fprintf(stderr, "decodegap history plot: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %s %s, %d commits, %d change points\n", *out, name, *unit, len(series[0].Points), len(changes))
	return 0
}

// drawHistory renders sr with its change points to path (.png or .svg).
func drawHistory(sr history.Series, changes []history.Change, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%s) over commits", sr.Benchmark, sr.Unit)
	p.X.Label.Text = "commit (order stored)"
	p.Y.Label.Text = sr.Unit
	pts := make(plotter.XYs, len(sr.Points))
	for i, pt := range sr.Points {
		pts[i] = plotter.XY{X: float64(i), Y: pt.Value}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Radius = vg.Points(1.8)
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	p.Add(sc)
	vline := func(x float64, c color.Color, dashed bool) {
		l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		l.Color = c
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
	}
	// Segment medians: between consecutive change points.
	bounds := []int{0}
	for _, c := range changes {
		bounds = append(bounds, c.Index)
	}
	for _, st := range history.Stretches(sr.Points) {
		if st.Start > 0 {
			bounds = append(bounds, st.Start)
		}
	}
	bounds = append(bounds, len(sr.Points))
	slices.Sort(bounds)
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]
		if a == b {
			continue
		}
		vals := make([]float64, 0, b-a)
		for _, pt := range sr.Points[a:b] {
			vals = append(vals, pt.Value)
		}
		m := medianOf(vals)
		l, _ := plotter.NewLine(plotter.XYs{{X: float64(a), Y: m}, {X: float64(b - 1), Y: m}})
		l.Color = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
		l.Width = vg.Points(2)
		p.Add(l)
	}
	for _, st := range history.Stretches(sr.Points) {
		if st.Start > 0 {
			vline(float64(st.Start)-0.5, color.Gray{Y: 0xa0}, false)
		}
	}
	for _, c := range changes {
		vline(float64(c.Index)-0.5, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, true)
	}
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	wt, err := p.WriterTo(8*vg.Inch, 4*vg.Inch, format)
	if err != nil {
		return err
	}
	// atomicfile: a symlink, device or fifo at path is refused, never
	// written through (plot.Save would).
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	return nil
}

func medianOf(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
