package traceplot

import (
	"bytes"
	"flag"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/quantile"
	"github.com/gapbench/gapbench/internal/trace"
)

var outDir = flag.String("out", "", "also write the test pictures to this folder, to look at them")

// shape is the latency of iteration i of n, in ns, before noise.
type shape func(i, n int) float64

var (
	flat     shape = func(int, int) float64 { return 250e3 }
	warmup   shape = func(i, _ int) float64 { return 250e3 + 400e3*math.Exp(-float64(i)/60) }
	drifting shape = func(i, n int) float64 { return 250e3 + 200e3*float64(i)/float64(n) }
)

// synthetic returns a trace of n iterations of the given shape with 2%
// deterministic noise, a 100 µs requested gap, boundaries every 32
// iterations with two contention figures, and the given steady result.
func synthetic(name string, n int, f shape, st trace.Steady) *trace.Trace {
	r := rand.New(rand.NewPCG(1, 2))
	t := &trace.Trace{Header: trace.Header{
		Format: trace.Format, Benchmark: "BenchmarkSynthetic/" + name, Start: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC),
		GoVersion: "go1.26.8", Host: "2 CPUs", Steady: st,
	}}
	for i := range n {
		t.Latency = append(t.Latency, int64(f(i, n)*(1+0.02*r.NormFloat64())))
		t.Requested = append(t.Requested, 100e3)
		t.Gap = append(t.Gap, 100e3+int64(5e3*r.ExpFloat64()))
	}
	for i := 0; i <= n; i += 32 {
		t.Boundaries = append(t.Boundaries, trace.Boundary{
			Iter: i, TimeNs: int64(i) * 350e3,
			Contention:  map[string]float64{"foreign_busy_pct": 5 + 3*math.Sin(float64(i)/100), "load1": 1 + float64(i)/float64(n)},
			Unavailable: map[string]string{"psi_cpu_some_avg10": "no /proc/pressure/cpu"},
		})
	}
	return t
}

// svgOf renders t as SVG, writes it to -out when given, and returns it.
func svgOf(t *testing.T, tr *trace.Trace) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteTrace(&buf, tr, "svg"))
	if *outDir != "" {
		base := filepath.Join(*outDir, strings.ReplaceAll(t.Name(), "/", "_"))
		require.NoError(t, os.WriteFile(base+".svg", buf.Bytes(), 0o644))
		require.NoError(t, Render(tr, base+".png"))
	}
	return buf.String()
}

// texts returns the text of every <text> element of an SVG.
func texts(svg string) []string {
	var out []string
	for _, part := range strings.Split(svg, "<text")[1:] {
		start := strings.Index(part, ">")
		end := strings.Index(part, "</text>")
		if start >= 0 && end > start {
			out = append(out, part[start+1:end])
		}
	}
	return out
}

// hasText reports whether some <text> of svg contains s.
func hasText(svg, s string) bool {
	for _, x := range texts(svg) {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

var update = flag.Bool("update", false, "rewrite the golden text files under testdata/golden")

// slowdown: 200 µs for the first 300 iterations, then 260 µs.
var slowdown shape = func(i, _ int) float64 {
	if i < 300 {
		return 200e3
	}
	return 260e3
}

// shapes are the steady-state classes a picture must label right, each on
// a series of that shape.
var shapes = []struct {
	name      string
	shape     shape
	steady    trace.Steady
	want, not []string
}{
	{"flat", flat, trace.Steady{Class: trace.ClassFlat, Start: 0, End: 500, Reason: "one level over all 15 windows"},
		[]string{"steady window [0, 500)", "mean 250µs (steady window)", "p90 ", "steady state: flat — one level over all 15 windows"},
		[]string{"warm-up", "not reached", "slowdown", "change"}},
	{"warm-up", warmup, trace.Steady{Class: trace.ClassWarmup, Start: 320, End: 500, Changepoints: []int{96, 320}},
		[]string{"warm-up, dropped [0, 320)", "steady window [320, 500)", "mean ", "p90 ", "changes of level at 96, 320"},
		[]string{"not reached", "slowdown"}},
	{"slowdown", slowdown, trace.Steady{Class: trace.ClassSlowdown, Start: 300, End: 500, Changepoints: []int{300},
		Reason: "median 200µs in iterations 0–299, slower at 260µs in the steady window from iteration 300"},
		[]string{"before the slowdown, dropped [0, 300)", "steady window [300, 500)", "mean 260µs (steady window)",
			"change of level at 300", "steady state: slowdown — median 200µs"},
		[]string{"warm-up", "not reached"}},
	{"no steady state", drifting, trace.Steady{Class: trace.ClassNoSteadyState, Start: -1, End: -1, Reason: "level still drifting"},
		[]string{"steady state not reached", "steady state: no steady state — level still drifting"},
		[]string{"warm-up", "steady window", "mean ", "p90 "}},
}

func TestRenderShapes(t *testing.T) {
	common := []string{"iteration", "step latency (µs)", "gap (µs)", "window median", "achieved", "requested",
		"foreign-%", "load1", "%", "load (tasks)", "unavailable: psi_cpu_some_avg10 (no /proc/pressure/cpu)", "BenchmarkSynthetic/"}
	for _, tc := range shapes {
		t.Run(tc.name, func(t *testing.T) {
			tr := synthetic(tc.name, 500, tc.shape, tc.steady)
			before := *tr
			before.Latency = slices.Clone(tr.Latency)
			svg := svgOf(t, tr)
			assert.Equal(t, before.Latency, tr.Latency, "Render must not modify the trace")
			assert.Greater(t, len(svg), 20_000, "an SVG with 500 points is not that small")
			assert.Less(t, len(svg), 2_000_000)
			for _, s := range append(common, tc.want...) {
				assert.True(t, hasText(svg, s), "no text %q in the SVG; texts: %q", s, texts(svg))
			}
			for _, s := range tc.not {
				assert.False(t, hasText(svg, s), "unexpected text %q in the SVG", s)
			}
			assert.Contains(t, texts(svg), "250", "iteration ticks")
			assert.NotContains(t, texts(svg), "250.00", "iterations are labelled as integers")
			assert.False(t, hasText(svg, "foreign_busy_pct"), "figures go by their metric names")
		})
	}
}

// TestRenderGolden pins every text of the picture of each shape: titles,
// axis names, ticks and legend, in drawing order. Run with -update to
// rewrite testdata/golden after a deliberate change, and read the diff.
func TestRenderGolden(t *testing.T) {
	for _, tc := range shapes {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(texts(svgOf(t, synthetic(tc.name, 500, tc.shape, tc.steady))), "\n") + "\n"
			path := filepath.Join("testdata", "golden", strings.ReplaceAll(tc.name, " ", "-")+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to write it")
			assert.Equal(t, string(want), got)
		})
	}
}

// TestLegendBesideThePlot checks that no legend entry is drawn over the
// data area: every legend text starts right of the plots.
func TestLegendBesideThePlot(t *testing.T) {
	svg := svgOf(t, synthetic("legend", 500, warmup, shapes[1].steady))
	xs := textX(svg)
	for _, s := range []string{"step", "window median", "warm-up, dropped [0, 320)", "steady window [320, 500)", "achieved", "foreign-%", "load1"} {
		x, ok := xs[s]
		require.True(t, ok, "no text %q; texts at: %v", s, xs)
		assert.Greater(t, x, plotWidth.Points(), "legend entry %q at x=%vpt is inside the plots' %vpt", s, x, plotWidth.Points())
	}
	assert.Less(t, xs["iteration"], plotWidth.Points())
}

// textX returns the x position in points of each text of an SVG drawn by
// gonum's vgsvg, by text (the first when a text repeats).
func textX(svg string) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`<text x="([-0-9.e]+)"[^>]*>([^<]*)</text>`)
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		if x, err := strconv.ParseFloat(m[1], 64); err == nil {
			if _, seen := out[m[2]]; !seen {
				out[m[2]] = x
			}
		}
	}
	return out
}

// TestRenderSteadyFigures checks that the legend's mean and p90 are those of
// the steady window, not of the whole run, and that the p90 is the one
// percentile rule's (internal/quantile), the rule of the run's p90-ns/op.
func TestRenderSteadyFigures(t *testing.T) {
	// 900 µs, then 200..209 µs: the steady window's mean is 204.5 µs and,
	// by Hyndman–Fan type 8 over its 200 values (20 of each), its p90 is at
	// position 180.63: 208 + 0.63 = 208.63 µs.
	tr := synthetic("steps", 400, func(i, _ int) float64 {
		if i < 200 {
			return 900e3
		}
		return 0
	}, trace.Steady{Class: trace.ClassWarmup, Start: 200, End: 400})
	for i := 200; i < 400; i++ {
		tr.Latency[i] = 200e3 + int64(i%10)*1e3 // exact, without synthetic's noise
	}
	m, p90, ok := SteadyFigures(tr)
	require.True(t, ok)
	assert.InDelta(t, 204_500, m, 1e-9)
	assert.InDelta(t, 208_633.33, p90, 0.01)
	assert.Equal(t, quantile.Of(tr.Latency[200:400], 0.9), p90)
	svg := svgOf(t, tr)
	assert.True(t, hasText(svg, "mean 205µs (steady window)"), "texts: %q", texts(svg))
	assert.True(t, hasText(svg, "p90 209µs (steady window)"), "texts: %q", texts(svg))

	// A thinned trace: the window is in samples, as the run's percentiles are.
	tr.Header.Stride, tr.Header.Iterations = 4, 1600
	_, p90, _ = SteadyFigures(tr)
	assert.Equal(t, quantile.Of(tr.Latency[200:400], 0.9), p90)

	for _, st := range []trace.Steady{{Start: -1}, {Start: 5, End: 5}} {
		tr.Header.Steady = st
		_, _, ok := SteadyFigures(tr)
		assert.False(t, ok, "%+v", st)
	}
}

func TestRenderNoGapNoContention(t *testing.T) {
	tr := synthetic("bare", 100, flat, trace.Steady{Class: trace.ClassWarmup, Start: 10, End: 100})
	tr.Gap, tr.Requested = nil, nil
	for i := range tr.Boundaries {
		tr.Boundaries[i].Contention = nil
	}
	svg := svgOf(t, tr)
	assert.True(t, hasText(svg, "no gap in this trace: none injected, or not kept"))
	assert.True(t, hasText(svg, "no contention figures recorded"))
	assert.True(t, hasText(svg, "psi_cpu_some_avg10"), "unavailable figures are named")
	assert.False(t, hasText(svg, "achieved"))
}

func TestRenderLongAndSpiky(t *testing.T) {
	n := 4 * maxPoints
	tr := synthetic("long", n, flat, trace.Steady{Class: trace.ClassFlat, Start: 0, End: n})
	tr.Latency[n/2] = 100e6 // one 100 ms stall among 250 µs steps
	svg := svgOf(t, tr)
	assert.Less(t, len(svg), 2_000_000, "a long series is drawn thinned, not point by point")
	assert.True(t, hasText(svg, "1 in 4, and spikes above p99"), "texts: %q", texts(svg))
	assert.True(t, hasText(svg, "above the top (max 100ms)"), "texts: %q", texts(svg))
	assert.True(t, hasText(svg, "p90 "), "the stall does not hide the steady figures")
}

func TestRenderPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.PNG")
	require.NoError(t, Render(synthetic("png", 300, warmup, trace.Steady{Class: trace.ClassWarmup, Start: 200, End: 300}), path))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	b := img.Bounds()
	assert.InDelta(t, 1209, b.Dx(), 2, "32 cm at 96 dpi")
	assert.InDelta(t, 1285, b.Dy(), 2, "4 panels of 8.5 cm")
	colors := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	assert.Greater(t, len(colors), 10, "a picture, not a blank page")
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	tr := synthetic("x", 10, flat, trace.Steady{Start: -1})
	err := Render(tr, filepath.Join(dir, "trace.jpg"))
	assert.ErrorContains(t, err, "name the output .svg or .png")
	err = Render(&trace.Trace{}, filepath.Join(dir, "empty.svg"))
	assert.ErrorContains(t, err, "no recorded iterations")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "no partial picture left behind")
	assert.ErrorContains(t, WriteTrace(&bytes.Buffer{}, tr, "gif"), `unknown picture format "gif"`)
}

func TestBesidePath(t *testing.T) {
	assert.Equal(t, "d/BenchmarkX.gap-1ms.count0.svg", BesidePath("d/BenchmarkX.gap-1ms.count0.jsonl", "svg"))
	assert.Equal(t, "trace.png", BesidePath("trace", "png"))
	assert.Equal(t, "B.gap-1ms.png", BesidePath("B.gap-1ms", "png"), "only the trace extension is replaced")
}

func TestPreciseTicksTellMajorsApart(t *testing.T) {
	for _, r := range [][2]float64{{0.99, 1.05}, {1.0, 1.04}, {0.97, 1.03}, {0.9635, 1.2}, {0.966, 1.183}, {1000.1, 1000.3}, {0, 700}} {
		var labels []string
		for _, tk := range (preciseTicks{}).Ticks(r[0], r[1]) {
			if !tk.IsMinor() {
				labels = append(labels, tk.Label)
				v, err := strconv.ParseFloat(tk.Label, 64)
				require.NoError(t, err)
				assert.InDelta(t, tk.Value, v, 1e-9, "range %v: label %q on a tick at %v", r, tk.Label, tk.Value)
			}
		}
		assert.GreaterOrEqual(t, len(labels), 2, "range %v", r)
		assert.Equal(t, len(labels), len(slices.Compact(slices.Clone(labels))), "range %v: labels %q", r, labels)
	}
}

// TestRenderThinned draws a trace whose samples are every 4th iteration and
// which kept no requested gaps: the x axis counts iterations, the steady
// window is labelled in iterations (the axis reaches 1800), and the gap
// panel shows what it has.
func TestRenderThinned(t *testing.T) {
	tr := synthetic("thinned", 500, warmup, trace.Steady{Class: trace.ClassWarmup, Start: 100, End: 500})
	tr.Header.Stride, tr.Header.Iterations = 4, 1998
	tr.Requested = nil
	tr.Boundaries = []trace.Boundary{{Iter: 0}, {Iter: 1000, Contention: map[string]float64{"load1": 1}}, {Iter: 1998, Contention: map[string]float64{"load1": 2}}}
	svg := svgOf(t, tr)
	for _, s := range []string{"steady window [400, 1998)", "warm-up", "achieved median", "1800"} {
		assert.True(t, hasText(svg, s), "no text %q; texts: %q", s, texts(svg))
	}
	assert.False(t, hasText(svg, "requested"))
	assert.False(t, hasText(svg, "overshoot"))
}

// A figure missing from some windows only is drawn where it was read, and
// the title says in how many windows it was not.
func TestRenderFigureMissingInSomeWindows(t *testing.T) {
	tr := synthetic("gaps", 128, flat, trace.Steady{Class: trace.ClassFlat, Start: 0, End: 128})
	// Boundaries at 0, 32, 64, 96, 128: the four windows end at 32..128.
	tr.Boundaries[0].Contention, tr.Boundaries[0].Unavailable = nil, nil
	delete(tr.Boundaries[2].Contention, trace.ContentionForeignBusyPct)
	tr.Boundaries[2].Unavailable = map[string]string{trace.ContentionForeignBusyPct: "no clock tick counted"}
	svg := svgOf(t, tr)
	assert.True(t, hasText(svg, "foreign-% in 1 of 4 windows (no clock tick counted)"), "texts: %q", texts(svg))
	assert.True(t, hasText(svg, "psi_cpu_some_avg10 (no /proc/pressure/cpu)"), "never read: no count")
}
