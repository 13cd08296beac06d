package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plotFixture is a trace written by hand (no gapbench code), following the
// format's package doc: 256 iterations, warm-up to 160, a 1 ms gap.
const plotFixture = "testdata/plot-fixture.jsonl"

// copyFixture copies the fixture trace into a fresh folder and returns its
// path there, so that pictures drawn beside it land in the test's folder.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(plotFixture)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func TestPlotFixtureToSVG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.svg")
	var stdout, stderr bytes.Buffer
	// The flag after the trace, as a person types it.
	code := dispatch([]string{"plot", plotFixture, "-o", out}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Equal(t, plotFixture+" -> "+out+"\n", stdout.String())
	svg, err := os.ReadFile(out)
	require.NoError(t, err)
	for _, s := range []string{
		"BenchmarkFixture/gap=1ms (count 0): step latency",
		"steady state: steady — fixture: windows 5-7 within 1.5% of their median",
		">warm-up<", "steady window [160, 256)", "mean 251 µs (steady window)", "p90 256 µs (steady window)",
		"requested median 1 ms", "foreign_busy_pct", "psi_cpu_some_avg10",
	} {
		assert.True(t, strings.Contains(string(svg), s), "no %q in the SVG", s)
	}
}

func TestPlotBesideEachTraceAsPNG(t *testing.T) {
	a, b := copyFixture(t, "a.jsonl"), copyFixture(t, "b.jsonl")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"plot", "-format", "png", a, b}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	for _, p := range []string{a, b} {
		pic := strings.TrimSuffix(p, ".jsonl") + ".png"
		assert.Contains(t, stdout.String(), p+" -> "+pic)
		f, err := os.Open(pic)
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(f)
		f.Close()
		require.NoError(t, err)
		assert.Greater(t, cfg.Width, 500)
	}
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"kind":"header","format":"gapbench-trace/1","samples":5,"stride":1}`+"\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no trace", nil, 2, "no TRACE given"},
		{"-o with two traces", []string{"-o", filepath.Join(dir, "x.svg"), plotFixture, plotFixture}, 2, "drop -o"},
		{"unknown extension", []string{plotFixture, "-o", filepath.Join(dir, "x.pdf")}, 2, "name the output .svg or .png"},
		{"unknown format", []string{"-format", "gif", plotFixture}, 2, `-format "gif": use one of svg, png`},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, 1, "no such file"},
		{"truncated trace", []string{bad}, 1, bad + ":1: 0 samples, the header says 5: the file is truncated"},
		{"-format against -o", []string{"-format", "png", plotFixture, "-o", filepath.Join(dir, "x.svg")}, 2, "drop -format"},
		{"unknown flag", []string{"-x", plotFixture}, 2, "flag provided but not defined: -x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, tc.code, dispatch(append([]string{"plot"}, tc.args...), &stdout, &stderr))
			assert.Contains(t, stderr.String(), tc.msg)
		})
	}
	_, err := os.Stat(filepath.Join(dir, "bad.svg"))
	assert.True(t, os.IsNotExist(err), "no picture for a trace that does not read")

	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, dispatch([]string{"plot", "-h"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "usage: decodegap plot")
}
