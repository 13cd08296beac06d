package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/history"
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

func TestHistoryDetectJSONChangeFromZero(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		alloc := 0
		if i >= 15 {
			alloc = 64
		}
		body := fmt.Sprintf("commit: %s\ncommit-date: %s\nhost: ci-1\n", fakeHash(i+1), t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
		for r := range 3 {
			body += fmt.Sprintf("BenchmarkStep-2 100 %d ns/op %d B/op\n", 1000+r, alloc)
		}
		require.NoError(t, os.WriteFile(filepath.Join(runs, fmt.Sprintf("r%02d.txt", i)), []byte(body), 0o644))
	}
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, runs)
	require.Equal(t, 0, code, errOut)
	code, out, errOut := histRun(t, "history", "detect", "-db", db, "-unit", "B/op", "-json")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Changes []struct {
			Bad           string
			Before, After float64
			Ratio         string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.Changes, 1, out)
	assert.Equal(t, fakeHash(16), got.Changes[0].Bad)
	assert.Equal(t, 0.0, got.Changes[0].Before)
	assert.Equal(t, 64.0, got.Changes[0].After)
	assert.Equal(t, "+Inf", got.Changes[0].Ratio)
}

func TestHistoryAddRefusesNonFiniteAndDetectSkipsAStoredOne(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inf.txt"), []byte("commit: c1\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 +Inf ns/op\n"), 0o644))
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, filepath.Join(dir, "inf.txt"))
	assert.Equal(t, 2, code)
	assert.Equal(t, "decodegap history add: "+filepath.Join(dir, "inf.txt")+":3: Step-2: +Inf ns/op is not a finite number; nothing was stored\n", errOut)

	// A store written before add refused them: the series is named and
	// left out, the others searched.
	db = hostileStore(t, dir)
	s, err := history.Open(context.Background(), db)
	require.NoError(t, err)
	f := &history.File{Name: "old.txt", SHA256: "x", Prov: history.Provenance{Commit: fakeHash(3), Date: time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC), Host: "ci-1"},
		Results: []history.Value{{Name: "Old-2", Unit: "sec/op", Value: math.Inf(1), Iters: 1}}}
	_, err = s.Add(context.Background(), []*history.File{f})
	require.NoError(t, err)
	s.Close()
	code, out, errOut := histRun(t, "history", "detect", "-db", db)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "decodegap history detect: Old-2 sec/op left out: commit "+fakeHash(3)[:10]+"'s value is +Inf, not a finite number (stored before 'history add' refused them?)\n", errOut)
	assert.Contains(t, out, "1 change points in 2 series")
	code, _, errOut = histRun(t, "history", "plot", "-db", db, "-o", filepath.Join(dir, "old.png"), "Old-2")
	assert.Equal(t, 1, code)
	assert.Equal(t, "decodegap history plot: Old-2 sec/op left out: commit "+fakeHash(3)[:10]+"'s value is +Inf, not a finite number (stored before 'history add' refused them?)\n", errOut)
	assert.NoFileExists(t, filepath.Join(dir, "old.png"))
	code, out, _ = histRun(t, "history", "detect", "-db", db, "-json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"Skipped": [
    {
      "Benchmark": "Old-2",`)
}

func TestHistoryDetectPermutationsCap(t *testing.T) {
	code, _, errOut := histRun(t, "history", "detect", "-db", filepath.Join(t.TempDir(), "h.db"), "-permutations", "1000000000")
	assert.Equal(t, 2, code)
	assert.Equal(t, "decodegap history detect: -permutations 1000000000: want 1 to 10000 (p-values down to 1/10001; each shuffle costs a search of every series)\n", errOut)
	code, _, errOut = histRun(t, "history", "detect", "-permutations", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-permutations 0: want 1 to 10000")
	code, _, errOut = histRun(t, "history", "detect", "-pvalue", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-pvalue 1: want a p-value in (0, 1), or 0 for the method's default")
	code, _, errOut = histRun(t, "history", "detect", "-window", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-window 1: want 2 points or more")
}

func TestHistoryAddReadsRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	db := filepath.Join(dir, "h.db")
	for path, mode := range map[string]string{fifo: "a fifo", "/dev/zero": "a character device"} {
		done := make(chan struct{})
		var code int
		var errOut string
		go func() {
			defer close(done)
			code, _, errOut = histRun(t, "history", "add", "-db", db, "-commit", "c1", "-date", "2026-11-01T00:00:00Z", path)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("history add %s still reading after 10 s", path)
		}
		assert.Equal(t, 2, code, path)
		assert.Equal(t, "decodegap history add: "+path+" is "+mode+", not a regular file: give benchfmt files or directories of them; nothing was stored\n", errOut)
	}
}

func TestHistoryNoteCommitIsTheAttachedOne(t *testing.T) {
	dir := gitRepo(t)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	commit := strings.TrimSpace(string(head))
	note := "commit: " + fakeHash(9) + "\ncommit-date: 2020-01-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\n"
	cmd := exec.Command("git", "-c", "user.email=t@t", "-c", "user.name=t", "notes", "--ref", "gapbench", "add", "-m", note, "HEAD")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	db := filepath.Join(t.TempDir(), "h.db")
	code, stdout, errOut := histRun(t, "history", "add", "-db", db, "-notes", "gapbench")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "decodegap history add: -notes: 1 of 1 notes have a commit: line naming another commit (gapbench:"+commit+" says \""+fakeHash(9)+"\"); each is stored under the commit it is attached to\n", errOut)
	assert.Contains(t, stdout, "stored gapbench:"+commit+": 1 values, 0 verdict rows; commit "+commit[:10]+" (")
	assert.NotContains(t, stdout, "2020-01-01")
	code, stdout, _ = histRun(t, "history", "files", "-db", db)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "\n"+commit[:10]+" ")
	assert.NotContains(t, stdout, fakeHash(9)[:10])
}

// -json refuses a fifo, a symlink and a device of its own (never the
// real /dev/full: as root the old writer renamed over it).
func TestJSONRefusesNonRegularTargets(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(filepath.Join(dir, "target"), link))
	cases := map[string]string{fifo: "a fifo", link: "a symlink"}
	full := filepath.Join(dir, "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, int(1<<8|7)); err == nil {
		cases[full] = "a character device"
	}
	for path, kind := range cases {
		err := writeJSONRows(path, "interleave", nil)
		assert.EqualError(t, err, "-json "+path+": "+path+" is "+kind+", not a regular file: refusing to replace it (remove it, or give another path)")
		fi, lerr := os.Lstat(path)
		require.NoError(t, lerr)
		assert.False(t, fi.Mode().IsRegular(), "%s was replaced by a regular file", path)
	}
	assert.NoFileExists(t, filepath.Join(dir, "target"))
}

// TestHistoryStoredCommitIsNeverAGitOption: a file's commit: line that
// starts with '-' is refused at add, naming the file; and a store that
// holds one (written before that check) is refused at detect -confirm
// before git runs (it ran git rev-parse --verify --upload-pack=…).
func TestHistoryStoredCommitIsNeverAGitOption(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	writeHistory(t, runs, 12, 6, 0.3)
	evil := "--upload-pack=touch " + filepath.Join(dir, "pwned")
	p := filepath.Join(runs, "run006.txt")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "commit: "+fakeHash(7), "commit: "+evil, 1)), 0o644))
	db := filepath.Join(dir, "h.db")
	code, _, errOut := histRun(t, "history", "add", "-db", db, runs)
	assert.Equal(t, 2, code)
	assert.Equal(t, "decodegap history add: "+p+`: commit "`+evil+`": a revision cannot start with '-' (git would read it as an option); nothing was stored`+"\n", errOut)

	// A store written before the check.
	require.NoError(t, os.WriteFile(p, b, 0o644))
	code, _, errOut = histRun(t, "history", "add", "-db", db, runs)
	require.Equal(t, 0, code, errOut)
	sdb, err := sql.Open("sqlite", db)
	require.NoError(t, err)
	_, err = sdb.Exec(`UPDATE files SET commit_hash = ? WHERE commit_hash = ?`, evil, fakeHash(7))
	require.NoError(t, err)
	require.NoError(t, sdb.Close())
	repo := gitRepo(t)
	code, _, errOut = histRun(t, "history", "detect", "-db", db, "-confirm", "-C", repo, "-benchtime", "1x", "./...")
	assert.Equal(t, 3, code)
	assert.Contains(t, errOut, `decodegap history detect: -confirm: the change's bad commit "`+evil+`" (a stored commit: line) starts with '-': git would read it as an option; not bisected`)
	_, err = os.Stat(filepath.Join(dir, "pwned"))
	assert.True(t, os.IsNotExist(err), "git ran the stored commit as an option")
}

// TestHistoryDBPasswordNeverPrinted: a password in a postgres:// -db URL,
// as user:pass@ or as the query parameter password or sslpassword, is
// masked in the error of a store that cannot be reached (port 1 of this
// host: refused at once).
func TestHistoryDBPasswordNeverPrinted(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:secret@127.0.0.1:1/db?sslmode=disable",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=secret",
		"postgresql://u@127.0.0.1:1/db?sslpassword=secret&sslmode=disable",
	} {
		code, stdout, errOut := histRun(t, "history", "files", "-db", dsn)
		assert.Equal(t, 2, code, dsn)
		assert.Contains(t, errOut, "decodegap history files: -db: history: postgres", dsn)
		assert.Contains(t, errOut, "***", dsn)
		assert.NotContains(t, stdout+errOut, "secret", dsn)
	}
}
