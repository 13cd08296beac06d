package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileStore stores a 12-commit history in dir/h.db and returns its
// path.
func hostileStore(t *testing.T, dir string) string {
	t.Helper()
	writeHistory(t, filepath.Join(dir, "runs"), 12, 6, 0.3)
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, filepath.Join(dir, "runs"))
	require.Equal(t, 0, code, errOut)
	return db
}

func TestHistoryPlotDefaultNameRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	db := hostileStore(t, dir)
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("precious", []byte("keep"), 0o600))
	require.NoError(t, os.Symlink("precious", "history-Step-2.png"))
	code, _, errOut := histRun(t, "history", "plot", "-db", db, "Step-2")
	assert.Equal(t, 1, code)
	assert.Equal(t, "decodegap history plot: -o history-Step-2.png: history-Step-2.png is a symlink, not a regular file: refusing to replace it (remove it, or give another path)\n", errOut)
	b, _ := os.ReadFile("precious")
	assert.Equal(t, "keep", string(b))
}

func TestHistoryAddCommitIsNeverAGitOption(t *testing.T) {
	dir := gitRepo(t)
	require.NoError(t, os.WriteFile("bench.txt", []byte("BenchmarkStep-2 100 1000 ns/op\n"), 0o644))
	out := filepath.Join(dir, "out")
	db := filepath.Join(t.TempDir(), "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, "-commit", "--output="+out, "bench.txt")
	assert.Equal(t, 2, code)
	assert.Equal(t, `decodegap history add: -commit "--output=`+out+`": a revision or ref cannot start with '-'`+"\n", errOut)
	matches, _ := filepath.Glob(out + "*")
	assert.Empty(t, matches, "git wrote a file")
	code, _, errOut = histRun(t, "history", "add", "-db", db, "-notes", "--output="+out)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `-notes "--output=`+out+`": a revision or ref cannot start with '-'`)
	matches, _ = filepath.Glob(out + "*")
	assert.Empty(t, matches, "git wrote a file")
}

func TestHistoryReadCommandsNeedAStore(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "hsitory.db")
	for _, args := range [][]string{
		{"history", "files", "-db", typo},
		{"history", "detect", "-db", typo},
		{"history", "plot", "-db", typo, "-o", filepath.Join(dir, "x.png"), "Step-2"},
	} {
		code, _, errOut := histRun(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, errOut, "-db "+typo+": no such store ('decodegap history add -db "+typo+"' creates one); check the path\n", "%v", args)
		_, err := os.Stat(typo)
		assert.True(t, os.IsNotExist(err), "%v created the store", args)
	}
	// The default -db outside any store: said so, nothing created.
	gitRepo(t)
	code, _, errOut := histRun(t, "history", "detect")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "(the default -db): store results first with 'decodegap history add', or give -db\n")
	assert.NoDirExists(t, ".gapbench")
}
