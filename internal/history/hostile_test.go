package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A path holding '#', '?', '%' or being ":memory:" names a file of that
// name: stored values are there when it is opened again.
func TestOpenPathIsAFileName(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := context.Background()
	for _, name := range []string{"a#b.db", "q?mode=memory.db", "p%41.db", ":memory:", "file:x.db"} {
		s, err := Open(ctx, name)
		require.NoError(t, err, name)
		f, err := ParseFile(name+".txt", []byte("commit: c1\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\n"))
		require.NoError(t, err)
		_, err = s.Add(ctx, []*File{f})
		require.NoError(t, err, name)
		require.NoError(t, s.Close())
		fi, err := os.Stat(name)
		require.NoError(t, err, "%s: no file of that name", name)
		assert.True(t, fi.Mode().IsRegular(), name)

		s, err = OpenExisting(ctx, name)
		require.NoError(t, err, name)
		files, err := s.Files(ctx)
		require.NoError(t, err)
		assert.Len(t, files, 1, name)
		s.Close()
	}
	ents, _ := os.ReadDir(".")
	for _, e := range ents {
		assert.NotEqual(t, "a", e.Name(), "'#' cut the name")
		assert.NotEqual(t, "q", e.Name(), "'?' cut the name")
		assert.NotEqual(t, "pA.db", e.Name(), "'%41' was decoded")
	}
}

func TestOpenExistingCreatesNothing(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := OpenExisting(context.Background(), "sub/typo.db")
	assert.True(t, errors.Is(err, ErrNoStore), "%v", err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	assert.EqualError(t, err, "history: sub/typo.db: no history store there: file does not exist")
	_, err = os.Stat("sub")
	assert.True(t, errors.Is(err, fs.ErrNotExist), "the folder was created")
}

func TestParseFileRefusesNonFiniteValues(t *testing.T) {
	for _, v := range []string{"+Inf", "-Inf", "Inf", "NaN"} {
		_, err := ParseFile("b.txt", []byte("goos: linux\nBenchmarkStep-2 100 1000 ns/op\nBenchmarkStep-2 100 "+v+" ns/op\n"))
		var ie *InputError
		require.ErrorAs(t, err, &ie, v)
		assert.Equal(t, 3, ie.Line, v)
		assert.Contains(t, err.Error(), "b.txt:3: Step-2: ", v)
		assert.Contains(t, err.Error(), " ns/op is not a finite number", v)
	}
}

// A series holding an infinite point (a store written before add refused
// them) is skipped; the others are still searched.
func TestDetectSkipsANonFiniteSeries(t *testing.T) {
	var good, bad Series
	good.Benchmark, good.Unit = "Good", "sec/op"
	bad.Benchmark, bad.Unit = "Bad", "sec/op"
	for i := range 30 {
		v := 1.0
		if i >= 15 {
			v = 2
		}
		good.Points = append(good.Points, Point{Commit: fmt.Sprint(i), Host: "h", Value: v + 0.01*float64(i%3), N: 1, Spread: math.NaN()})
		bad.Points = append(bad.Points, Point{Commit: fmt.Sprint(i), Host: "h", Value: 1, N: 1, Spread: math.NaN()})
	}
	bad.Points[7].Value = math.Inf(1)
	changes, skipped, err := Detect(context.Background(), []Series{bad, good}, DetectOptions{})
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "Good", changes[0].Benchmark)
	assert.Equal(t, 15, changes[0].Index)
	require.Len(t, skipped, 1)
	assert.Equal(t, Skipped{Benchmark: "Bad", Unit: "sec/op", Commit: "7", Value: math.Inf(1)}, skipped[0])
}

func TestDetectStopsWhenCancelled(t *testing.T) {
	var sr Series
	for i := range 40 {
		sr.Points = append(sr.Points, Point{Commit: fmt.Sprint(i), Host: "h", Value: float64(i % 7), Spread: math.NaN()})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	changes, _, err := Detect(ctx, []Series{sr}, DetectOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, changes)
}

// A file whose commit: line starts with '-' is refused by Add (git would
// read the stored commit as an option), as an *InputError naming the
// file; nothing is stored.
func TestAddRefusesOptionLikeCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	require.NoError(t, err)
	defer s.Close()
	f, err := ParseFile("b.txt", []byte("commit: --upload-pack=touch x\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\n"))
	require.NoError(t, err)
	_, err = s.Add(ctx, []*File{f})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.EqualError(t, err, `b.txt: commit "--upload-pack=touch x": a revision cannot start with '-' (git would read it as an option)`)
	files, err := s.Files(ctx)
	require.NoError(t, err)
	assert.Empty(t, files)
	assert.True(t, OptionLike("-x"))
	assert.False(t, OptionLike("main"))
}
