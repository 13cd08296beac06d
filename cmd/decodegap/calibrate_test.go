package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/testutil"
	"github.com/gapbench/gapbench/nullband"
)

// aaFile writes an A/A interleave file: per round, arms a, a2 and null with
// sec/op values 100 µs × (1 + noise) and p50-sec/op with a tenth of the
// noise; in the rounds in contended, a2's run is screened contended.
func aaFile(rounds int, contended map[int]bool) ([]byte, [3][]float64) {
	var b bytes.Buffer
	var vals [3][]float64
	for r := 1; r <= rounds; r++ {
		for i, arm := range []string{"a", "a2", "null"} {
			screen := "clean"
			if contended[r] && arm == "a2" {
				screen = "contended"
			}
			// A fixed, uneven pattern: no randomness in the test.
			noise := 0.02 * math.Sin(float64(7*r+3*i))
			vals[i] = append(vals[i], 100e-6*(1+noise))
			fmt.Fprintf(&b, "arm: %s\nround: %d\nscreen: %s\nBenchmarkStep-2 100 %.1f ns/op %.1f p50-ns/op\n",
				arm, r, screen, 100e3*(1+noise), 90e3*(1+noise/10))
		}
	}
	return b.Bytes(), vals
}

func TestCalibrateRows(t *testing.T) {
	data, vals := aaFile(12, map[int]bool{3: true})
	want := samplesAA(t, data)
	rows, _, err := calibrateRows(data, []string{"sec/op", "p50-sec/op"})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	mean, p50 := rows[0], rows[1]
	assert.Equal(t, "Step-2", mean.benchmark)
	assert.Equal(t, "sec/op", mean.unit)
	assert.Equal(t, "p50-sec/op", p50.unit)
	assert.Equal(t, 12, mean.used+mean.quarantined)
	for i := range 12 {
		assert.InEpsilon(t, vals[0][i], want.Base[i], 1e-6, "a is the base")
		assert.InEpsilon(t, vals[1][i], want.Candidate[i], 1e-6, "a2 is the candidate")
		assert.InEpsilon(t, vals[2][i], want.Null[i], 1e-6)
	}

	// The MDE is nullband's, at each round count, on a2 against a, with the
	// rounds as the rounds table gives them (round 3 marked contended).
	assert.True(t, want.Contended[2], "the screen: key reaches the verdict")
	for i, n := range calibrateRounds {
		assert.Equal(t, nullband.MDEAt(want, n, nullband.Options{}), mean.mde[i], "MDE at %d rounds", n)
	}
	assert.Greater(t, mean.mde[0], mean.mde[1], "more rounds, a smaller MDE")
	assert.Greater(t, mean.mde[1], mean.mde[2])
	// 1/√rounds, times Student's t₀.₉₇₅ + t₀.₈ (9 and 19 degrees of freedom).
	assert.InDelta(t, math.Sqrt2*(2.262+0.883)/(2.093+0.861), math.Log1p(mean.mde[0])/math.Log1p(mean.mde[1]), 0.002, "the MDE scales as 1/√rounds, widened at few rounds")
	assert.Less(t, p50.mde[0], mean.mde[0], "p50 has a tenth of the noise")

	var out bytes.Buffer
	writeCalibration(&out, rows, "3.10 2.00 1.00")
	text := out.String()
	assert.Regexp(t, `(?m)^benchmark +metric +rounds used +quarantined +MDE at 10 +MDE at 20 +MDE at 40 +a2/a verdict +null/a \(A/A check\)$`, text)
	assert.Regexp(t, `(?m)^Step-2 +sec/op +\d+ +\d+ +\d+\.\d% +\d+\.\d% +\d+\.\d% +(equivalent|undecided|faster|slower) +(equivalent|undecided|faster|slower)$`, text)
	assert.Regexp(t, `(?m)^Step-2: mean: \d+\.\d% at 10 rounds, \d+\.\d% at 20, \d+\.\d% at 40; p50: \d+\.\d% at 10 rounds, \d+\.\d% at 20, \d+\.\d% at 40$`, text)
	assert.Contains(t, text, "load average at the end: 3.10 2.00 1.00")
	assert.Contains(t, text, mdePct(mean.mde[0])+" at 10 rounds")
}

// samplesAA is a2 against a on sec/op as the rounds table gives them.
func samplesAA(t *testing.T, data []byte) nullband.Samples {
	t.Helper()
	tb, err := judge.FromBenchfmt(testutil.ResultsString(t, string(data)))
	require.NoError(t, err)
	return tb.Samples("Step-2", "sec/op", "a", "a2", "null")
}

// calibrate's rows are those of interleave's judge (internal/judge) on
// the same file under calibrate's policy: the same verdicts.
func TestCalibrateJudgesAsInterleave(t *testing.T) {
	data, _ := aaFile(12, map[int]bool{3: true, 7: true})
	units := []string{"sec/op", "p50-sec/op"}
	rows, _, err := calibrateRows(data, units)
	require.NoError(t, err)
	want, _, err := interleave.Judge(testutil.ResultsString(t, string(data)), calibratePolicy(units))
	require.NoError(t, err)
	require.Len(t, want, 4, "a2 and the null arm's A/A rows, two units each")
	for i, r := range rows {
		// %+v: a verdict holds NaNs, which == never matches.
		assert.Equal(t, fmt.Sprintf("%+v", want[i].Verdict), fmt.Sprintf("%+v", r.verdict), r.unit)
		assert.Equal(t, fmt.Sprintf("%+v", want[i+2].Verdict), fmt.Sprintf("%+v", r.check), r.unit)
	}
}

func TestCalibrateTooFewRounds(t *testing.T) {
	data, _ := aaFile(3, nil)
	rows, _, err := calibrateRows(data, []string{"sec/op"})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	for i := range calibrateRounds {
		assert.True(t, math.IsInf(rows[0].mde[i], 1), "3 rounds give no interval, so no MDE")
	}
	var out bytes.Buffer
	writeCalibration(&out, rows, "")
	assert.Contains(t, out.String(), "Step-2: mean: unknown at 10 rounds, unknown at 20, unknown at 40")
	assert.NotContains(t, out.String(), "load average")
}

func TestCalibrateNoSuchUnit(t *testing.T) {
	data, _ := aaFile(6, nil)
	_, _, err := calibrateRows(data, []string{"B/op"})
	assert.ErrorContains(t, err, "no B/op values")
}

func TestCalibrateUsage(t *testing.T) {
	for _, args := range [][]string{{"calibrate"}, {"calibrate", "-rounds", "0", examplePkg}, {"calibrate", "a", "b"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, dispatch(args, &stdout, &stderr), "%v", args)
		assert.Contains(t, stderr.String(), "decodegap calibrate: ")
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, dispatch([]string{"calibrate", "-lock=false", "./no-such-dir"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "give a test binary or a package directory")
}

// TestCalibrateRealRun runs a real tiny benchmark binary (the interleave
// example, 200 steps a block) as A/A for 6 rounds.
func TestCalibrateRealRun(t *testing.T) {
	bin := exampleTest(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"calibrate", "-rounds", "6", "-seed", "3", "-benchtime", "200x",
		"-lock-path", filepath.Join(dir, "lock"), "-o", filepath.Join(dir, "aa.txt"), "-json", filepath.Join(dir, "aa.json"), bin}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr:\n%s", stderr.String())
	assert.Positive(t, rowsByKind(readJSONReport(t, filepath.Join(dir, "aa.json"), "calibrate"))["candidate a2"])
	assert.Contains(t, stderr.String(), "decodegap calibrate: 18 runs (a, a2 and null × 6 rounds, seed 3)")
	res := testutil.ResultsFile(t, filepath.Join(dir, "aa.txt"))
	assert.Len(t, res, 18, "3 processes × 6 rounds")

	text := stdout.String()
	row := regexp.MustCompile(`(?m)^Step-2 +p50-sec/op +(\d+) +(\d+) +(\S+) +(\S+) +(\S+) +\S+ +\S+$`).FindStringSubmatch(text)
	require.NotNil(t, row, "stdout:\n%s", text)
	used, _ := strconv.Atoi(row[1])
	quarantined, _ := strconv.Atoi(row[2])
	assert.Equal(t, 6, used+quarantined)
	if used >= 6 {
		// With 6 used rounds there is an interval, so an MDE, and it
		// shrinks with rounds.
		pct := func(s string) float64 {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
			require.NoError(t, err, "%q", s)
			return v
		}
		assert.GreaterOrEqual(t, pct(row[3]), pct(row[4]))
		assert.GreaterOrEqual(t, pct(row[4]), pct(row[5]))
	}
	assert.Regexp(t, `(?m)^Step-2: mean: \S+ at 10 rounds, \S+ at 20, \S+ at 40; p50: \S+ at 10 rounds, \S+ at 20, \S+ at 40; cpu: `, text)
}
