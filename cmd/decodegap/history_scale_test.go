package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/history"
)

// A negative duration is refused at add with its file and line, and
// nothing is stored (it made detect report a −100% change with an
// interval down to −176%).
func TestHistoryAddRefusesANegativeDuration(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "neg.txt")
	require.NoError(t, os.WriteFile(bad, []byte("commit: c1\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\nBenchmarkStep-2 100 -5 ns/op\n"), 0o644))
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, bad)
	assert.Equal(t, 2, code)
	assert.Equal(t, "decodegap history add: "+bad+":4: Step-2: -5 ns/op is a duration below 0; nothing was stored\n", errOut)
}

// With no series, detect says how many values are stored and which
// flag, or which kind of file, left them out.
func TestHistoryDetectSaysWhyNoSeries(t *testing.T) {
	dir := t.TempDir()
	pr := filepath.Join(dir, "pr.txt")
	require.NoError(t, os.WriteFile(pr, []byte("commit: c1\ncommit-date: 2026-11-01T00:00:00Z\narm: base\nBenchmarkStep-2 100 1000 ns/op\narm: head\nBenchmarkStep-2 100 1200 ns/op\n"), 0o644))
	plain := filepath.Join(dir, "plain.txt")
	require.NoError(t, os.WriteFile(plain, []byte("commit: c2\ncommit-date: 2026-11-02T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op 64 B/op\nBenchmarkOther-2 100 5 ns/op\n"), 0o644))
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, pr, plain)
	require.Equal(t, 0, code, errOut)

	code, out, errOut := histRun(t, "history", "detect", "-db", db, "-bench", "^Step", "-unit", "allocs/op")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "0 change points in 0 series (0 points)")
	assert.Contains(t, out, "\n0 series from the 5 values stored: 2 are arms of pr or interleave files (lines with an arm: key compare two commits, no history of one); "+
		"1 are of benchmarks -bench \"^Step\" does not match; 2 are of units -unit \"allocs/op\" leaves out (the units stored: B/op, sec/op)\n")

	code, out, errOut = histRun(t, "history", "detect", "-db", db, "-bench", "^Step", "-unit", "allocs/op", "-json")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Census struct {
			Values, Armed, OtherBench, OtherUnit, Used int
			Units                                      []string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, 5, got.Census.Values)
	assert.Equal(t, 2, got.Census.Armed)
	assert.Equal(t, 1, got.Census.OtherBench)
	assert.Equal(t, 2, got.Census.OtherUnit)
	assert.Equal(t, 0, got.Census.Used)
	assert.Equal(t, []string{"B/op", "sec/op"}, got.Census.Units)

	// Only arms: the words name them and nothing else.
	db2 := filepath.Join(dir, "h2.db")
	code, _, errOut = histRun(t, "history", "add", "-db", db2, pr)
	require.Equal(t, 0, code, errOut)
	code, out, _ = histRun(t, "history", "detect", "-db", db2)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "\n0 series from the 2 values stored: 2 are arms of pr or interleave files (lines with an arm: key compare two commits, no history of one)\n")
}

// A bimodal step (about 10 ns or about 1000 ns) whose fast mode doubles
// at commit 100 (the shape of Perfolizer's Test2): detect finds it on ln
// of the values, and reports the change on the values' own scale.
func TestHistoryDetectBimodalOnLogScale(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	rng := rand.New(rand.NewPCG(1, 0x7e572))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200 {
		small := 10.0
		if i >= 100 {
			small = 20
		}
		v := small * (1 + 0.1*rng.NormFloat64())
		if rng.Float64() < 0.3 {
			v = 1000 * (1 + 0.08*rng.NormFloat64())
		}
		body := fmt.Sprintf("commit: %s\ncommit-date: %s\nhost: ci-1\nBenchmarkStep-2 100 %.3f ns/op\n", fakeHash(i+1), t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), v)
		require.NoError(t, os.WriteFile(filepath.Join(runs, fmt.Sprintf("r%03d.txt", i)), []byte(body), 0o644))
	}
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, runs)
	require.Equal(t, 0, code, errOut)
	code, out, errOut := histRun(t, "history", "detect", "-db", db, "-json")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Changes []struct {
			Bad           string
			Index         int
			Ratio, Lo, Hi float64
			Scale         string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.Changes, 1, out)
	c := got.Changes[0]
	assert.Equal(t, "log", c.Scale)
	assert.InDelta(t, 100, c.Index, 4)
	assert.InDelta(t, 2, c.Ratio, 0.3, "the median is in the fast mode: it doubles")
	assert.True(t, c.Lo > 1.3 && c.Hi < 3 && !math.IsNaN(c.Hi), "interval %v … %v", c.Lo, c.Hi)
	code, out, _ = histRun(t, "history", "detect", "-db", db)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "\nsearched on ln of the values.\n")
}

// A stored negative duration (a store written before add refused them)
// leaves its series out, named with the reason; a B/op series holding 0
// is searched on the values, and the text says so.
func TestHistoryDetectNegativeStoredAndLinearWords(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		alloc := 0
		if i >= 15 {
			alloc = 64
		}
		body := fmt.Sprintf("commit: %s\ncommit-date: %s\nhost: ci-1\nBenchmarkStep-2 100 %d ns/op %d B/op\n", fakeHash(i+1), t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), 1000+i%3, alloc)
		require.NoError(t, os.WriteFile(filepath.Join(runs, fmt.Sprintf("r%02d.txt", i)), []byte(body), 0o644))
	}
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, runs)
	require.Equal(t, 0, code, errOut)
	s, err := history.Open(context.Background(), db)
	require.NoError(t, err)
	f := &history.File{Name: "old.txt", SHA256: "x", Prov: history.Provenance{Commit: fakeHash(40), Date: t0.Add(-time.Hour), Host: "ci-1"},
		Results: []history.Value{{Name: "Old-2", Unit: "sec/op", Value: -5e-9, Iters: 1}}}
	_, err = s.Add(context.Background(), []*history.File{f})
	require.NoError(t, err)
	s.Close()
	code, out, errOut := histRun(t, "history", "detect", "-db", db)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "decodegap history detect: Old-2 sec/op left out: commit "+fakeHash(40)[:10]+"'s value is -5e-09, a duration below 0 (stored before 'history add' refused them?)\n", errOut)
	assert.Contains(t, out, "\nsearched on ln of the values, but on the values themselves for Step-2 B/op: a value of 0 or below.\n")
	code, out, _ = histRun(t, "history", "detect", "-db", db, "-json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"Why": "negative-duration"`)
	assert.Contains(t, out, `"Scale": "linear"`)
}
