package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// history add of a pr output files each revision under its own commit,
// dated as that commit is, not both under HEAD (as it did when pr wrote
// no pr-base: and pr-head: lines, and add took every result for HEAD's).
func TestHistoryAddPROutputFilesEachRevision(t *testing.T) {
	dir := gitRepo(t)
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-11-20T10:00:00Z")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	base := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "second")
	head := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "third: HEAD, measured by neither arm")
	pr := "# decodegap pr: base " + base + "\n\ngoos: linux\npr-base: " + base + " " + base + "\npr-head: " + head + " " + head + "\n" +
		"arm: base\nround: 1\nBenchmarkStep-2 100 1000 ns/op\narm: head\nBenchmarkStep-2 100 1200 ns/op\narm: null\nBenchmarkStep-2 100 1010 ns/op\n"
	require.NoError(t, os.WriteFile("pr.txt", []byte(pr), 0o644))
	code, out, errOut := histRun(t, "history", "add", "pr.txt")
	require.Equal(t, 0, code, errOut)
	t.Log(out)

	s, err := openStore(context.Background(), filepath.Join(dir, ".gapbench", "history.db"), false)
	require.NoError(t, err)
	defer s.Close()
	files, err := s.Files(context.Background())
	require.NoError(t, err)
	got := map[string]int{}
	for _, f := range files {
		got[f.Prov.Commit] = f.Results
		if f.Prov.Commit == head {
			assert.Equal(t, "2026-11-20T10:00:00Z", f.Prov.Date.UTC().Format("2006-01-02T15:04:05Z"), "the head's own commit date")
		}
	}
	assert.Equal(t, map[string]int{base: 2, head: 1}, got, "base and null under the base's commit, head under the head's")

	// Added again: nothing new.
	code, out, _ = histRun(t, "history", "add", "pr.txt")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "0 of 2 files new")
}
