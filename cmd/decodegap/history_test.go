package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/prreport"
	"github.com/gapbench/gapbench/nullband"
)

// gitRepo makes a git repository with one commit in a temporary
// directory and changes into it.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	t.Chdir(dir)
	return dir
}

func histRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHistoryAddOnFreshRepoNeedsNoSetup(t *testing.T) {
	dir := gitRepo(t)
	require.NoError(t, os.WriteFile("bench.txt", []byte("goos: linux\nBenchmarkStep-2 100 1000 ns/op\n"), 0o644))
	code, out, errOut := histRun(t, "history", "add", "bench.txt")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `^stored bench\.txt: 1 values, 0 verdict rows; commit [0-9a-f]{10} `, out)
	assert.Contains(t, out, "1 of 1 files new in "+filepath.Join(dir, ".gapbench", "history.db"))
	assert.FileExists(t, filepath.Join(dir, ".gapbench", "history.db"))

	code, out, _ = histRun(t, "history", "add", "bench.txt")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "already stored bench.txt (the same bytes")
	assert.Contains(t, out, "0 of 1 files new")

	// A bad file among good ones: exit 2, the position, nothing stored.
	require.NoError(t, os.WriteFile("good2.txt", []byte("BenchmarkStep-2 100 1100 ns/op\n"), 0o644))
	require.NoError(t, os.WriteFile("bad.txt", []byte("BenchmarkStep-2 100 x ns/op\n"), 0o644))
	code, _, errOut = histRun(t, "history", "add", "good2.txt", "bad.txt")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "bad.txt:1: ")
	assert.Contains(t, errOut, "nothing was stored")
	code, out, _ = histRun(t, "history", "files")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "1 files in ")
}

// writeHistory writes n benchfmt files into dir, one a commit, with a
// shift of effect from commit at on, 5 runs each.
func writeHistory(t *testing.T, dir string, n, at int, effect float64) {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "commit: %s\ncommit-date: %s\nhost: ci-1\ngo: go1.26.8\n", fakeHash(i+1), t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
		level := 1000.0
		if i >= at {
			level *= 1 + effect
		}
		for r := 0; r < 5; r++ {
			fmt.Fprintf(&b, "BenchmarkStep-2 100 %.1f ns/op\n", level*math.Exp(0.01*rng.NormFloat64()))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("run%03d.txt", i)), []byte(b.String()), 0o644))
	}
}

// fakeHash is the made-up commit hash of the n-th commit.
func fakeHash(n int) string { return fmt.Sprintf("%04d", n) + strings.Repeat("a", 36) }

func TestHistoryDetectTextJSONAndPlot(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, filepath.Join(dir, "runs"), 60, 35, 0.05)
	db := filepath.Join(dir, "h.db")
	code, out, errOut := histRun(t, "history", "import", "-db", db, filepath.Join(dir, "runs"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "60 of 60 files new")

	code, out, errOut = histRun(t, "history", "detect", "-db", db)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 change points in 1 series (60 points)")
	assert.Regexp(t, `(?m)^Step-2 +sec/op +\+[45]\.\d% +\+\d\.\d% … \+\d\.\d% +0\.0\d\d +`+fakeHash(35)[:10]+` +`+fakeHash(36)[:10]+` +3[45] \| 2[45] +ci-1$`, out)

	code, out, errOut = histRun(t, "history", "detect", "-db", db, "-json")
	require.Equal(t, 0, code, errOut)
	var got detectOut
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Changes, 1)
	c := got.Changes[0]
	assert.Equal(t, fakeHash(35), c.Good)
	assert.Equal(t, fakeHash(36), c.Bad)
	assert.InDelta(t, 1.05, float64(c.Ratio), 0.01)
	assert.Less(t, c.Lo, c.Ratio)
	assert.Greater(t, c.Hi, c.Ratio)
	assert.LessOrEqual(t, c.P, 0.05)

	code, _, _ = histRun(t, "history", "detect", "-db", db, "-min-magnitude", "10%")
	require.Equal(t, 0, code)

	// Otava's variant on the same history: the same commit, a t-test
	// p-value below Otava's 0.001, and the method named in text and JSON.
	code, out, errOut = histRun(t, "history", "detect", "-db", db, "-method", "otava")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 change points in 1 series (60 points)")
	assert.Contains(t, out, "Otava's E-Divisive: windows of 50, t test p < 0.001 (-method otava, -window, -pvalue)")
	assert.Regexp(t, `(?m)^Step-2 +sec/op +\+[45]\.\d% .* 0\.000 +`+fakeHash(35)[:10]+` +`+fakeHash(36)[:10]+` `, out)
	code, out, errOut = histRun(t, "history", "detect", "-db", db, "-method", "otava", "-window", "30", "-json")
	require.Equal(t, 0, code, errOut)
	got = detectOut{}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "otava", got.Method)
	assert.Equal(t, 30, got.Window)
	assert.Equal(t, 0.001, got.PValue)
	require.Len(t, got.Changes, 1)
	assert.Equal(t, fakeHash(36), got.Changes[0].Bad)
	assert.Less(t, got.Changes[0].P, 0.001)
	code, _, errOut = histRun(t, "history", "detect", "-db", db, "-method", "hunter")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `-method "hunter": want edivisive or otava`)

	png := filepath.Join(dir, "s.png")
	code, out, errOut = histRun(t, "history", "plot", "-db", db, "-o", png, "Step-2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "60 commits, 1 change points")
	data, err := os.ReadFile(png)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG")))

	code, out, errOut = histRun(t, "history", "plot", "-db", db, "-method", "otava", "-o", filepath.Join(dir, "o.svg"), "Step-2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "60 commits, 1 change points")

	code, _, errOut = histRun(t, "history", "plot", "-db", db, "Nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no stored values of Nope in sec/op")
}

func TestBisectUsageErrors(t *testing.T) {
	code, _, errOut := histRun(t, "bisect", "-bad", "HEAD", "-bench", ".")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-good and -bad are required")
	code, _, errOut = histRun(t, "bisect", "-good", "HEAD~1", "-bad", "HEAD")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-bench is required")
}

// TestBisectFindsPlantedSlowdown runs the real search on a synthetic
// repository (scripts/bisect-fixture.sh): 4 commits, the loop 40% longer
// from commit 3. A large effect and short runs keep it to a minute; the
// margin of 25% lets a step with no change be told apart on a busy host
// (at 10% it stayed undecided under make test's parallel packages).
func TestBisectFindsPlantedSlowdown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs test binaries of 3 comparisons")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	script, err := filepath.Abs("../../scripts/bisect-fixture.sh")
	require.NoError(t, err)
	out, err := exec.Command("bash", script, repo, "4", "3", "40").Output()
	require.NoError(t, err)
	commits := strings.Fields(string(out))
	require.Len(t, commits, 5)
	// Under make test's parallel packages one search in several has read
	// the 40% as a few percent on its first step (+6.2%, 15 rounds): a
	// second search is tried before the test fails.
	var code int
	var stdout, errOut string
	for range 2 {
		code, stdout, errOut = histRun(t, "bisect", "-C", repo, "-good", commits[0], "-bad", commits[4], "-bench", "^BenchmarkWork$",
			"-benchtime", "100ms", "-delta", "25%", "-bisect-unit", "cpu-sec/op", "-lock=false", "-max-rounds", "30", "-budget", "60s", ".")
		if code == 0 && strings.Contains(stdout, "first slower commit: ") {
			break
		}
	}
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "bisect: 4 commits after "+commits[0][:10])
	assert.Contains(t, stdout, "at most 3 comparisons, each at 98.33% confidence (-alpha 0.05 split over them, Bonferroni)")
	assert.Contains(t, stdout, "first slower commit: "+commits[3]+" (#3 of 4)")
}

func TestClassifyRows(t *testing.T) {
	row := func(o nullband.Outcome, ratio, lo, hi float64) prreport.Row {
		return prreport.Row{Bench: "Work-2", Unit: "sec/op", Verdict: nullband.Verdict{Outcome: o, Effect: nullband.Effect{Ratio: ratio, Lo: lo, Hi: hi}}}
	}
	cases := []struct {
		name string
		rows []prreport.Row
		want history.StepOutcome
	}{
		{"slower by more than half of delta", []prreport.Row{row(nullband.Slower, 1.08, 1.03, 1.12)}, history.StepChanged},
		{"slower by less than half of delta", []prreport.Row{row(nullband.Slower, 1.03, 1.01, 1.05)}, history.StepUnchanged},
		{"equivalent", []prreport.Row{row(nullband.Equivalent, 1.0, 0.97, 1.03)}, history.StepUnchanged},
		{"faster is not slower", []prreport.Row{row(nullband.Faster, 0.8, 0.75, 0.85)}, history.StepUnchanged},
		// Regression: an undecided row whose interval already excludes a
		// -delta slowdown ended searches that had their answer.
		{"undecided, delta excluded", []prreport.Row{row(nullband.Undecided, 0.96, 0.88, 1.04)}, history.StepUnchanged},
		{"undecided, delta possible", []prreport.Row{row(nullband.Undecided, 1.02, 0.95, 1.15)}, history.StepUndecided},
		{"one slower row decides", []prreport.Row{row(nullband.Undecided, 1.02, 0.95, 1.15), row(nullband.Slower, 1.2, 1.1, 1.3)}, history.StepChanged},
	}
	for _, c := range cases {
		got := classifyRows(c.rows, stepRule{changed: 0.05, excluded: 0.10}, 7, history.Slower)
		assert.Equal(t, c.want, got.Outcome, c.name)
		assert.Equal(t, 7, got.Rounds)
		assert.Contains(t, got.Detail, "Work-2 sec/op: ")
	}
	// -faster: the mirror image on the log scale, with -delta 10%: a row
	// is faster beyond B/A 1/1.05 = 0.952; an undecided row is no
	// obstacle when its interval's low end is above 1/1.1 = 0.909.
	faster := []struct {
		name string
		rows []prreport.Row
		want history.StepOutcome
	}{
		{"faster by more than half of delta", []prreport.Row{row(nullband.Faster, 0.85, 0.80, 0.90)}, history.StepChanged},
		{"faster by less than half of delta", []prreport.Row{row(nullband.Faster, 0.96, 0.94, 0.98)}, history.StepUnchanged},
		{"slower is not faster", []prreport.Row{row(nullband.Slower, 1.2, 1.1, 1.3)}, history.StepUnchanged},
		{"equivalent", []prreport.Row{row(nullband.Equivalent, 1.0, 0.97, 1.03)}, history.StepUnchanged},
		{"undecided, delta excluded", []prreport.Row{row(nullband.Undecided, 1.02, 0.93, 1.12)}, history.StepUnchanged},
		{"undecided, delta possible", []prreport.Row{row(nullband.Undecided, 0.98, 0.88, 1.05)}, history.StepUndecided},
		{"one faster row decides", []prreport.Row{row(nullband.Undecided, 0.98, 0.88, 1.05), row(nullband.Faster, 0.7, 0.6, 0.8)}, history.StepChanged},
	}
	for _, c := range faster {
		got := classifyRows(c.rows, stepRule{changed: 0.05, excluded: 0.10}, 7, history.Faster)
		assert.Equal(t, c.want, got.Outcome, "-faster: "+c.name)
		assert.Equal(t, 7, got.Rounds)
		assert.Contains(t, got.Detail, "Work-2 sec/op: ")
	}
}

// TestClassifyRowsHalfChange: without -delta, a later step's threshold
// is half of the change step 1 measured (+12.4% → 6.2%, the 16-commit
// fixture's first step), and the interval decides: the fixture's step 2
// (#7 against #0, equal work: +0.7%, −2.2% … +4.3% after 20 rounds), a
// mere undecided under the -delta 2% rule, is not slower.
func TestClassifyRowsHalfChange(t *testing.T) {
	row := func(o nullband.Outcome, ratio, lo, hi float64) prreport.Row {
		return prreport.Row{Bench: "B-2", Unit: "sec/op", Verdict: nullband.Verdict{Outcome: o, Effect: nullband.Effect{Ratio: ratio, Lo: lo, Hi: hi}}}
	}
	first := history.StepResult{Outcome: history.StepChanged, Ratio: 1.124, Lo: 1.10, Hi: 1.15}
	half := history.HalfChange(first, history.Slower)
	assert.InDelta(t, 0.062, half, 1e-9)
	rule := stepRule{changed: half, excluded: half, strict: true, from: history.ThresholdHalfChange}
	old := stepRule{changed: 0.01, excluded: 0.02}
	cases := []struct {
		name     string
		row      prreport.Row
		want     history.StepOutcome
		wantOld  history.StepOutcome
		whyDiffs string
	}{
		{"equal work, undecided at ±2%", row(nullband.Undecided, 1.007, 0.978, 1.043), history.StepUnchanged, history.StepUndecided, "the interval is below 6.2%, not below 2%"},
		{"the planted +15%, decided", row(nullband.Slower, 1.13, 1.09, 1.17), history.StepChanged, history.StepChanged, ""},
		{"slower by less than half the change, interval below it", row(nullband.Slower, 1.03, 1.01, 1.05), history.StepUnchanged, history.StepChanged, "3% is a slowdown past -delta/2 but less than half of 12.4%"},
		{"slower, interval reaching past half the change", row(nullband.Slower, 1.05, 1.01, 1.09), history.StepUndecided, history.StepChanged, "5% could be 9%: more than half"},
		{"equivalent within ±6.2%", row(nullband.Equivalent, 1.0, 0.96, 1.065), history.StepUnchanged, history.StepUnchanged, ""},
		{"faster is not slower", row(nullband.Faster, 0.9, 0.85, 0.95), history.StepUnchanged, history.StepUnchanged, ""},
		{"undecided across half the change", row(nullband.Undecided, 1.04, 0.99, 1.10), history.StepUndecided, history.StepUndecided, ""},
	}
	for _, c := range cases {
		got := classifyRows([]prreport.Row{c.row}, rule, 20, history.Slower)
		assert.Equal(t, c.want, got.Outcome, c.name)
		assert.Equal(t, half, got.Threshold)
		assert.Equal(t, history.ThresholdHalfChange, got.ThresholdFrom)
		assert.Equal(t, c.wantOld, classifyRows([]prreport.Row{c.row}, old, 20, history.Slower).Outcome, "-delta 2%%: "+c.name+" "+c.whyDiffs)
	}
	// -faster: a speed-up to B/A 0.8 (A/B 1.25) gives half 12.5%: a
	// middle at B/A 0.95 (A/B 1.053) whose interval stays above 1/1.125 is
	// not faster; one at 0.85 decided faster is.
	fhalf := history.HalfChange(history.StepResult{Ratio: 0.8}, history.Faster)
	assert.InDelta(t, 0.125, fhalf, 1e-9)
	frule := stepRule{changed: fhalf, excluded: fhalf, strict: true, from: history.ThresholdHalfChange}
	assert.Equal(t, history.StepUnchanged, classifyRows([]prreport.Row{row(nullband.Faster, 0.95, 0.92, 0.98)}, frule, 9, history.Faster).Outcome)
	assert.Equal(t, history.StepChanged, classifyRows([]prreport.Row{row(nullband.Faster, 0.85, 0.82, 0.88)}, frule, 9, history.Faster).Outcome)
	assert.Equal(t, history.StepUndecided, classifyRows([]prreport.Row{row(nullband.Faster, 0.92, 0.85, 0.99)}, frule, 9, history.Faster).Outcome)
	assert.Equal(t, "half-change", history.ThresholdHalfChange.String())
	assert.Equal(t, "delta", history.ThresholdDelta.String())
	assert.Equal(t, "slower is a change above 6.2%, half of the 12.4% step 1 measured between -good and -bad (-delta not given)",
		thresholdWords(half, history.ThresholdHalfChange, history.Slower))
	assert.Equal(t, "slower is a change above 1.0%, half of -delta", thresholdWords(0.01, history.ThresholdDelta, history.Slower))
}

// TestWriteBisectFaster: a -faster search's report and JSON speak of
// faster, not slower: the steps' verdicts, the named commit, the
// Direction and Why fields.
func TestWriteBisectFaster(t *testing.T) {
	commits := []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd", "eeeeeeeeeeee"}
	step := func(g, c int, o history.StepOutcome, ratio float64) history.BisectStep {
		return history.BisectStep{Good: commits[g], Candidate: commits[c], GoodIndex: g, CandidateIndex: c, Confidence: 1 - 0.05/3,
			Result: history.StepResult{Outcome: o, Ratio: ratio, Lo: ratio - 0.02, Hi: ratio + 0.02, Rounds: 6}}
	}
	r := &history.BisectResult{Commits: commits, Tests: 3, Alpha: 0.05, Direction: history.Faster, First: 3, Lo: 2, Hi: 3, Why: history.WhyNamed,
		Steps: []history.BisectStep{step(0, 4, history.StepChanged, 0.8), step(0, 2, history.StepUnchanged, 1.0), step(2, 3, history.StepChanged, 0.8)}}
	var b strings.Builder
	writeBisect(&b, r, 0.05)
	out := b.String()
	assert.Contains(t, out, "first faster commit: dddddddddddd (#3 of 4): faster (by more than 2.5%, half of -delta) than cccccccccc, which was not")
	assert.Contains(t, out, "not faster")
	assert.NotContains(t, out, "slower")
	j := bisectJSON(r, 0.05)
	assert.Equal(t, "faster", j.Direction)
	assert.Equal(t, []string{"faster", "not-faster", "faster"}, []string{j.Steps[0].Outcome, j.Steps[1].Outcome, j.Steps[2].Outcome})

	r.Why, r.First, r.Steps = history.WhyNoChange, -1, r.Steps[:1]
	r.Steps[0].Result.Outcome = history.StepUnchanged
	b.Reset()
	writeBisect(&b, r, 0.05)
	assert.Contains(t, b.String(), "no commit named: the bad end was not faster (by more than 2.5%, half of -delta) than the good end")
	assert.Equal(t, "no-speed-up", bisectJSON(r, 0.05).Why)

	// Regression: a search whose first comparison failed (no values of
	// -bisect-unit) panicked in the report, indexing Commits[−1].
	r.Why, r.Steps, r.Lo, r.Hi = history.WhyFailed, nil, 0, 4
	b.Reset()
	writeBisect(&b, r, 0.05)
	assert.Contains(t, b.String(), "no commit named: step 1 failed to build or run (its error is above); the speed-up, if any, is after aaaaaaaaaa and at or before eeeeeeeeee (4 commits)")
	j = bisectJSON(r, 0.05)
	assert.Equal(t, "failed", j.Why)
	assert.False(t, j.Named)

	// An interrupted search says so (issue 39 item 9: a SIGINT'd bisect
	// said "failed to build or run").
	r.Why = history.WhyInterrupted
	b.Reset()
	writeBisect(&b, r, 0.05)
	assert.Contains(t, b.String(), "no commit named: interrupted during step 1 (SIGINT or SIGTERM); the speed-up, if any, is after aaaaaaaaaa and at or before eeeeeeeeee (4 commits)")
	assert.NotContains(t, b.String(), "failed")
	assert.Equal(t, "interrupted", bisectJSON(r, 0.05).Why)
}

// TestHistoryDetectConfirmBisects stores a history of a synthetic
// repository's commits whose values step up at commit 8 and checks that
// -confirm bisects the change point's range with real builds and runs
// (one commit in the range: one comparison).
func TestHistoryDetectConfirmBisects(t *testing.T) {
	stdout := confirmFixture(t, 40, 1.4)
	assert.Contains(t, stdout, "confirm Work-2 sec/op (+")
	assert.Contains(t, stdout, "first slower commit: ")
}

// TestHistoryDetectConfirmBisectsASpeedUp: a change point whose values
// fall is bisected for the first faster commit (bisect -faster), in a
// repository whose commit 8 makes the loop 30% shorter.
func TestHistoryDetectConfirmBisectsASpeedUp(t *testing.T) {
	stdout := confirmFixture(t, -30, 0.7)
	assert.Contains(t, stdout, "confirm Work-2 sec/op (-")
	assert.Contains(t, stdout, "faster")
	assert.Contains(t, stdout, "first faster commit: ")
	assert.NotContains(t, stdout, "slower")
}

// confirmFixture builds an 11-commit fixture repository whose commit 8
// changes the loop by pct percent, stores a history whose values step by
// the factor level at commit 8, runs detect -confirm and checks that it
// named commit 8 (#1 of the one commit between the change point's
// commits); it returns detect's output.
func confirmFixture(t *testing.T, pct int, step float64) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs test binaries")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	script, err := filepath.Abs("../../scripts/bisect-fixture.sh")
	require.NoError(t, err)
	out, err := exec.Command("bash", script, repo, "11", "8", strconv.Itoa(pct)).Output()
	require.NoError(t, err)
	commits := strings.Fields(string(out))
	require.Len(t, commits, 12)
	runs := filepath.Join(dir, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range commits {
		var b strings.Builder
		fmt.Fprintf(&b, "commit: %s\ncommit-date: %s\nhost: ci-1\n", c, t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
		level := 250000.0
		if i >= 8 {
			level *= step
		}
		for r := 0; r < 5; r++ {
			fmt.Fprintf(&b, "BenchmarkWork-2 100 %.0f ns/op\n", level*math.Exp(0.01*rng.NormFloat64()))
		}
		require.NoError(t, os.WriteFile(filepath.Join(runs, fmt.Sprintf("r%02d.txt", i)), []byte(b.String()), 0o644))
	}
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, runs)
	require.Equal(t, 0, code, errOut)
	code, stdout, errOut := histRun(t, "history", "detect", "-db", db, "-confirm", "-C", repo, "-benchtime", "50ms", "-bisect-unit", "cpu-sec/op",
		"-delta", "10%", "-lock=false", "-max-rounds", "30", "-budget", "60s", ".")
	require.Equal(t, 1, code, "exit 1: a bisect named a commit\n%s\n%s", stdout, errOut)
	assert.Contains(t, stdout, "bisect: 1 commits after "+commits[7][:10])
	assert.Contains(t, stdout, " commit: "+commits[8]+" (#1 of 1)")
	return stdout
}

// -bench splits as testing splits -test.bench: the top level picks the
// jobs, the rest goes to each job's -test.bench (one sub-benchmark a run:
// then cpu-sec/op is measured); detect -confirm selects the change's own
// sub-benchmark.
func TestBenchSel(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		match         bool
		flag          string
	}{
		{"Detect100k", "BenchmarkDetect100k", true, "-test.bench=^BenchmarkDetect100k$"},
		{"Detect100k/drift", "BenchmarkDetect100k", true, "-test.bench=^BenchmarkDetect100k$/drift"},
		{"Detect100k/drift", "BenchmarkOther", false, ""},
		{"Step/gap=[0-9/]+ms/x", "BenchmarkStep", true, "-test.bench=^BenchmarkStep$/gap=[0-9/]+ms/x"},
		{"(A|B/C)/d", "BenchmarkA", true, "-test.bench=^BenchmarkA$/d"},
		{`a\/b/c`, `Benchmarka/b`, true, `-test.bench=^Benchmarka/b$/c`},
	} {
		sel, err := parseBenchSel(c.pattern)
		require.NoError(t, err, c.pattern)
		assert.Equal(t, c.match, sel.top.MatchString(c.name), c.pattern)
		if c.match {
			assert.Equal(t, c.flag, sel.testBench(c.name), c.pattern)
		}
	}
	_, err := parseBenchSel("Step/(")
	assert.ErrorContains(t, err, "missing closing )")
	code, _, errOut := histRun(t, "bisect", "-good", "HEAD~1", "-bad", "HEAD", "-bench", "Step/[")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "decodegap bisect: -bench: error parsing regexp: missing closing ]")

	sel := exactBenchmark("Detect100k/warm-up-2")
	assert.True(t, sel.top.MatchString("BenchmarkDetect100k"))
	assert.False(t, sel.top.MatchString("BenchmarkDetect100kX"))
	assert.Equal(t, "-test.bench=^BenchmarkDetect100k$/^warm-up(-2)?$", sel.testBench("BenchmarkDetect100k"))
	assert.Equal(t, `-test.bench=^BenchmarkStep$/^gap=1ms$/^n=2\.5(-8)?$`, exactBenchmark("Step/gap=1ms/n=2.5-8").testBench("BenchmarkStep"))
	// At GOMAXPROCS=1 "size-64" is the name itself; either way it runs.
	sizes := exactBenchmark("Alloc/size-64")
	last := regexp.MustCompile(strings.TrimPrefix(sizes.sub, "/"))
	assert.True(t, last.MatchString("size-64"))
	assert.True(t, last.MatchString("size"))
	assert.False(t, last.MatchString("size-6"))
	work := exactBenchmark("Work-2")
	assert.True(t, work.top.MatchString("BenchmarkWork"))
	assert.True(t, work.top.MatchString("BenchmarkWork-2"))
	assert.False(t, work.top.MatchString("BenchmarkWorkX"))
	assert.Equal(t, "-test.bench=^BenchmarkWork$", work.testBench("BenchmarkWork"))

	// testing reads A|B/x as "A, or B/x": refused, with the way out.
	_, err = parseBenchSel("Detect|Step/gap=1ms")
	assert.ErrorContains(t, err, `"Detect|Step/gap=1ms": a '|' outside parentheses with a '/' means "A, or B/x" to go test; write (A|B)/x`)
	_, err = parseBenchSel("Step/gap=1ms|gap=2ms")
	assert.Error(t, err)
	for _, ok := range []string{"Detect|Step", "(Detect|Step)/x", "Step/(a|b)", `Step/a\|b`, "Step/[|]"} {
		_, err := parseBenchSel(ok)
		assert.NoError(t, err, ok)
	}
}

// history add -notes stores every note of a notes ref as a file of the
// commit it is attached to, with that commit's date; again, nothing new;
// detect finds the step the notes hold. A note that does not parse, a
// ref with no notes and -notes with -commit store nothing.
func TestHistoryAddFromGitNotes(t *testing.T) {
	dir := gitRepo(t)
	git := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(5, 6))
	var commits []string
	for i := range 16 {
		at := t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
		git([]string{"GIT_COMMITTER_DATE=" + at, "GIT_AUTHOR_DATE=" + at}, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("c", i))
		c := git(nil, "rev-parse", "HEAD")
		commits = append(commits, c)
		level := 1000.0
		if i >= 10 {
			level *= 1.3
		}
		var b strings.Builder
		b.WriteString("goos: linux\n")
		for range 5 {
			fmt.Fprintf(&b, "BenchmarkStep-2 100 %.1f ns/op\n", level*math.Exp(0.01*rng.NormFloat64()))
		}
		note := filepath.Join(t.TempDir(), "note.txt")
		require.NoError(t, os.WriteFile(note, []byte(b.String()), 0o644))
		git(nil, "notes", "--ref", "gapbench", "add", "-F", note, c)
	}
	db := filepath.Join(t.TempDir(), "h.db")
	code, out, errOut := histRun(t, "history", "add", "-db", db, "-notes", "gapbench")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "16 of 16 files new in "+db)
	assert.Contains(t, out, "stored gapbench:"+commits[0]+": 5 values, 0 verdict rows; commit "+commits[0][:10]+" (2026-11-01 00:00)")
	assert.Contains(t, out, "stored gapbench:"+commits[15]+": 5 values, 0 verdict rows; commit "+commits[15][:10]+" (2026-11-01 15:00), host notes:gapbench, go version unknown (-go)\n")
	code, out, _ = histRun(t, "history", "add", "-db", db, "-notes", "refs/notes/gapbench")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "0 of 16 files new")

	// A note rewritten (or merged from two runners) replaces its
	// earlier version: still 16 files, and the new values only.
	old := git(nil, "notes", "--ref", "gapbench", "show", commits[3])
	git(nil, "notes", "--ref", "gapbench", "add", "-f", "-m", old+"\nBenchmarkStep-2 100 1000.0 ns/op", commits[3])
	code, out, errOut = histRun(t, "history", "add", "-db", db, "-notes", "gapbench", "-host", "runner-1", "-go", "go1.99")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "stored gapbench:"+commits[3]+": 6 values, 0 verdict rows; commit "+commits[3][:10]+" (2026-11-01 03:00), host runner-1, go1.99; replacing its 1 earlier version(s)\n")
	assert.Contains(t, out, "1 of 16 files new")
	code, out, _ = histRun(t, "history", "files", "-db", db)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "16 files in ")

	// A shallow clone lacks most commits: their notes are skipped and
	// counted, the rest stored.
	shallow := filepath.Join(t.TempDir(), "shallow")
	git(nil, "clone", "-q", "--depth", "1", "file://"+dir, shallow)
	t.Chdir(shallow)
	git(nil, "-C", shallow, "fetch", "-q", "origin", "refs/notes/gapbench:refs/notes/gapbench")
	code, out, errOut = histRun(t, "history", "add", "-db", filepath.Join(t.TempDir(), "s.db"), "-notes", "gapbench")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 of 1 files new")
	assert.Contains(t, errOut, "decodegap history add: -notes: 15 of 16 notes skipped: not on a commit of this clone (a shallow clone? git fetch --unshallow)")
	t.Chdir(dir)

	code, out, errOut = histRun(t, "history", "detect", "-db", db, "-json")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Points, Quarantined int
		Changes             []struct{ Good, Bad string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, 16, rep.Points, out)
	require.Len(t, rep.Changes, 1, out)
	assert.Equal(t, commits[10], rep.Changes[0].Bad)
	assert.Equal(t, commits[9], rep.Changes[0].Good)

	// A bad note: exit 2 naming the note, nothing stored.
	git(nil, "commit", "-q", "--allow-empty", "-m", "bad")
	git(nil, "notes", "--ref", "gapbench", "add", "-m", "BenchmarkStep-2 100 x ns/op", "HEAD")
	bad := git(nil, "rev-parse", "HEAD")
	code, _, errOut = histRun(t, "history", "add", "-db", db, "-notes", "gapbench")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "decodegap history add: -notes: gapbench:"+bad+":1: ")
	assert.Contains(t, errOut, "nothing was stored")

	code, _, errOut = histRun(t, "history", "add", "-db", db, "-notes", "nosuch")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-notes: no notes in refs/notes/nosuch (git notes --ref nosuch list is empty): fetch them first, e.g. git fetch origin refs/notes/nosuch:refs/notes/nosuch; nothing was stored")
	code, _, errOut = histRun(t, "history", "add", "-db", db, "-notes", "gapbench", "-commit", "HEAD")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-notes with -commit or -date: a note's commit is the one it is attached to")
	code, out, _ = histRun(t, "history", "files", "-db", db)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "16 files in ")
}

// The report of a search without -delta names each step's threshold and
// its source, and the rounds of the horizon set from -budget.
func TestWriteBisectHalfChange(t *testing.T) {
	commits := []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"}
	r := &history.BisectResult{Commits: commits, Tests: 2, Alpha: 0.05, Direction: history.Slower, First: 2, Lo: 1, Hi: 2, Why: history.WhyNamed,
		Steps: []history.BisectStep{
			{Good: commits[0], Candidate: commits[2], GoodIndex: 0, CandidateIndex: 2, Confidence: 0.975,
				Result: history.StepResult{Outcome: history.StepChanged, Ratio: 1.124, Lo: 1.10, Hi: 1.15, Rounds: 8, MaxRounds: 31, Threshold: 0.01}},
			{Good: commits[0], Candidate: commits[1], GoodIndex: 0, CandidateIndex: 1, Confidence: 0.975,
				Result: history.StepResult{Outcome: history.StepUnchanged, Ratio: 1.007, Lo: 0.978, Hi: 1.043, Rounds: 20, MaxRounds: 31, Threshold: 0.062, ThresholdFrom: history.ThresholdHalfChange}},
		}}
	var b strings.Builder
	writeBisect(&b, r, 0.02)
	out := b.String()
	assert.Contains(t, out, "8 of 31")
	assert.Contains(t, out, "1.0%, half of -delta")
	assert.Contains(t, out, "20 of 31  6.2%, half of step 1's change\n")
	assert.Contains(t, out, "first slower commit: cccccccccccc (#2 of 2): slower (by more than 1.0%, half of -delta) than bbbbbbbbbb, which was not")
	j := bisectJSON(r, 0.02)
	assert.Equal(t, "half-change", j.Steps[1].ThresholdFrom)
	assert.InDelta(t, 0.062, float64(j.Steps[1].Threshold), 1e-12)
	assert.Equal(t, 31, j.Steps[1].MaxRounds)
}

func TestBisectRoundsNeedABudget(t *testing.T) {
	code, _, errOut := histRun(t, "bisect", "-good", "HEAD~1", "-bad", "HEAD", "-bench", ".", "-budget", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "decodegap bisect: -max-rounds 0 sets the rounds from -budget, and -budget is 0s (none): give one of them\n")
	code, _, errOut = histRun(t, "bisect", "-good", "HEAD~1", "-bad", "HEAD", "-bench", ".", "-max-rounds", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "decodegap bisect: -max-rounds 1: want at least 2, or 0 to set them from -budget\n")
}
