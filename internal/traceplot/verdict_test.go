package traceplot

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func verdictData() VerdictData {
	return VerdictData{
		Title: "BenchmarkVAD", ArmA: "base", ArmB: "spin-off", Metric: "ns/op",
		Ratios:   []float64{1.04, 1.05, 1.03, 1.12, 1.045, 1.06, 0.99, 1.05},
		Rejected: []bool{false, false, false, true, false, false, true, false},
		NullLow:  0.98, NullHigh: 1.025,
		Ratio: 1.045, CILow: 1.035, CIHigh: 1.055, CILevel: 0.95,
		Verdict: "B is 4.5% slower: outside the null band",
	}
}

func verdictSVG(t *testing.T, v VerdictData) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteVerdict(&buf, v, "svg"))
	if *outDir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(*outDir, t.Name()+".svg"), buf.Bytes(), 0o644))
	}
	return buf.String()
}

func TestVerdictLabels(t *testing.T) {
	svg := verdictSVG(t, verdictData())
	for _, s := range []string{
		"BenchmarkVAD", "B is 4.5% slower: outside the null band",
		"spin-off / base (ns/op)", "round",
		"null band [0.98, 1.025]", "no change (1)",
		"round (6 kept)", "rejected round (2)",
		"estimate 1.045, 95% CI [1.035, 1.055]",
		"1", "8", "estimate", // ticks: every round, and the estimate's column
	} {
		assert.True(t, hasText(svg, s), "no text %q in the SVG; texts: %q", s, texts(svg))
	}
}

func TestVerdictWithoutBandOrRejections(t *testing.T) {
	v := verdictData()
	v.Rejected, v.NullLow, v.NullHigh, v.CILevel, v.ArmA, v.ArmB, v.Metric, v.Verdict = nil, 0, 0, 0, "", "", "", ""
	v.Ratios = make([]float64, 40)
	for i := range v.Ratios {
		v.Ratios[i] = 1 + 0.01*math.Sin(float64(i))
	}
	svg := verdictSVG(t, v)
	assert.True(t, hasText(svg, "B / A"))
	assert.True(t, hasText(svg, "round (40 kept)"))
	assert.True(t, hasText(svg, "estimate 1.045, CI [1.035, 1.055]"), "texts: %q", texts(svg))
	assert.False(t, hasText(svg, "null band"), "texts: %q", texts(svg))
	var yticks []string
	for _, x := range texts(svg) {
		if strings.HasPrefix(x, "0.") || strings.HasPrefix(x, "1.") {
			yticks = append(yticks, x)
		}
	}
	assert.Greater(t, len(yticks), 1)
	assert.Len(t, yticks, len(slices.Compact(slices.Clone(yticks))), "ratio ticks must be told apart: %q", yticks)
	assert.False(t, hasText(svg, "rejected"))
	assert.NotContains(t, texts(svg), "37", "40 rounds get the default ticks, not one each")
	assert.Contains(t, texts(svg), "20")
}

func TestVerdictPNGFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verdict.png")
	require.NoError(t, Verdict(verdictData(), path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(5000))
}

func TestVerdictErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*VerdictData)
		msg    string
	}{
		{"no rounds", func(v *VerdictData) { v.Ratios, v.Rejected = nil, nil }, "Ratios is empty"},
		{"rejected length", func(v *VerdictData) { v.Rejected = v.Rejected[:2] }, "len(VerdictData.Rejected) = 2"},
		{"band upside down", func(v *VerdictData) { v.NullLow, v.NullHigh = 1.1, 1.0 }, "0 < NullLow <= NullHigh"},
		{"estimate outside CI", func(v *VerdictData) { v.Ratio = 1.2 }, "CILow <= Ratio <= CIHigh"},
		{"level as percent", func(v *VerdictData) { v.CILevel = 95 }, "CILevel = 95"},
		{"NaN round", func(v *VerdictData) { v.Ratios[3] = math.NaN() }, "Ratios[3] = NaN"},
		{"zero round", func(v *VerdictData) { v.Ratios[0] = 0 }, "Ratios[0] = 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdictData()
			v.Ratios = append([]float64(nil), v.Ratios...)
			tc.modify(&v)
			dir := t.TempDir()
			err := Verdict(v, filepath.Join(dir, "v.svg"))
			assert.ErrorContains(t, err, tc.msg)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "no partial picture left behind")
		})
	}
}
