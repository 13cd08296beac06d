package prreport

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureWork is the work of fixture benchmark i at the first commit: the
// number of mixing steps per op.
func fixtureWork(i int) int { return 2000 + 100*i }

// fixtureSource is the fixture module's benchmark file with work(i) steps
// per op for benchmark i.
func fixtureSource(n int, work func(int) int) string {
	var b strings.Builder
	b.WriteString(`package fix

import "testing"

var sink uint64

// mix does n steps of a multiply-xorshift mix: pure CPU, no memory.
//
//go:noinline
func mix(n int) uint64 {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}
`)
	for i := range n {
		fmt.Fprintf(&b, "\nfunc BenchmarkStep%02d(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tsink += mix(%d)\n\t}\n}\n", i, work(i))
	}
	return b.String()
}

// fixtureRepo builds a git repository with a module of n benchmarks in
// package fix and two commits: the second makes benchmark slower do 10%
// more work and benchmark faster 5% less. It returns the repository's
// directory; the commits are HEAD~1 and HEAD.
func fixtureRepo(t *testing.T, n, slower, faster int) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("go.mod", "module example.com/fix\n\ngo 1.21\n")
	write("fix/fix.go", "// Package fix is a fixture.\npackage fix\n")
	write("fix/fix_test.go", fixtureSource(n, fixtureWork))
	git("add", ".")
	git("commit", "-q", "-m", "base")
	write("fix/fix_test.go", fixtureSource(n, func(i int) int {
		switch i {
		case slower:
			return fixtureWork(i) * 110 / 100
		case faster:
			return fixtureWork(i) * 95 / 100
		}
		return fixtureWork(i)
	}))
	git("commit", "-q", "-am", "head")
	return dir
}

func TestPrepareFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module twice")
	}
	repo := fixtureRepo(t, 20, 3, 7)
	b, err := Prepare(context.Background(), BuildConfig{Dir: repo, Base: "HEAD~1", Head: "HEAD", Patterns: []string{"./..."}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(b.tmp); !os.IsNotExist(err) {
			t.Errorf("Close left %s behind", b.tmp)
		}
	}()
	if len(b.Packages) != 1 || b.Benchmarks() != 20 {
		t.Fatalf("packages %+v: want 1 package with 20 benchmarks", b.Packages)
	}
	p := b.Packages[0]
	if p.ImportPath != "example.com/fix/fix" || p.Benchmarks[0] != "BenchmarkStep00" || p.Benchmarks[19] != "BenchmarkStep19" {
		t.Errorf("package %s benchmarks %v", p.ImportPath, p.Benchmarks)
	}
	if b.Base.Commit == b.Head.Commit || len(b.Base.Commit) != 40 {
		t.Errorf("base %q head %q: want two different full hashes", b.Base.Commit, b.Head.Commit)
	}
	for _, bin := range []string{p.BaseBin, p.HeadBin} {
		if _, err := os.Stat(bin); err != nil {
			t.Error(err)
		}
	}

	// The work tree as head: no worktree for it, and a change shows as dirty.
	if err := os.WriteFile(filepath.Join(repo, "fix", "fix.go"), []byte("// Package fix is a fixture, edited.\npackage fix\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Prepare(context.Background(), BuildConfig{Dir: filepath.Join(repo, "fix"), Base: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Head.Ref != "" || !w.Head.Dirty || w.Benchmarks() != 20 {
		t.Errorf("work tree head: %+v, %d benchmarks; want dirty, 20", w.Head, w.Benchmarks())
	}

	if _, err := Prepare(context.Background(), BuildConfig{Dir: repo, Base: "no-such-ref"}); err == nil || !strings.Contains(err.Error(), `base "no-such-ref" is not a commit`) {
		t.Errorf("bad ref: err = %v", err)
	}
}

// Several pr runs at once in one repository (CI shards on one runner) each
// get their worktrees: git names a worktree's admin folder after its root's
// last element, and a shared "base" raced ("failed to read
// .git/worktrees/base/commondir" in one CI run).
func TestPrepareConcurrentInOneRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module several times")
	}
	repo := fixtureRepo(t, 2, 0, 1)
	const n = 6
	builds := make([]*Build, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			builds[i], errs[i] = Prepare(context.Background(), BuildConfig{Dir: repo, Base: "HEAD~1", Head: "HEAD", Patterns: []string{"./..."}})
		}()
	}
	wg.Wait()
	roots := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Errorf("run %d: %v", i, errs[i])
			continue
		}
		assert.Equal(t, 2, builds[i].Benchmarks(), "run %d", i)
		for _, r := range []string{builds[i].Base.Root, builds[i].Head.Root} {
			assert.False(t, roots[filepath.Base(r)], "worktree name %s used twice", filepath.Base(r))
			roots[filepath.Base(r)] = true
		}
	}
	for _, b := range builds {
		if b != nil {
			assert.NoError(t, b.Close())
		}
	}
	out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(out), "worktree "), "worktrees left:\n%s", out)
}

// worktreeLock excludes a second holder (another pr run's git worktree
// add) until the first unlocks, and a wait ends with its context.
func TestWorktreeLockExcludes(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, exec.Command("git", "init", "-q", repo).Run())
	common, err := gitCommonDir(context.Background(), repo)
	require.NoError(t, err)
	unlock, err := worktreeLock(context.Background(), common)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = worktreeLock(ctx, common)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a second holder got the lock while the first held it")
	unlock()
	unlock2, err := worktreeLock(context.Background(), common)
	require.NoError(t, err, "the lock was not released")
	unlock2()
}

// TestHelperPrepare is not a test: run by TestPrepareAfterSIGKILL as a
// child process (PRREPORT_HELPER_REPO set), it prepares a build of that
// repository, says "prepared" and waits to be killed.
func TestHelperPrepare(t *testing.T) {
	repo := os.Getenv("PRREPORT_HELPER_REPO")
	if repo == "" {
		t.Skip("a helper process")
	}
	_, err := Prepare(context.Background(), BuildConfig{Dir: repo, Base: "HEAD~1", Head: "HEAD", Patterns: []string{"./..."}, Log: os.Stdout})
	fmt.Println("prepared", err)
	time.Sleep(time.Minute)
}

// A pr run killed by SIGKILL runs no Close: its two worktrees stay
// registered and its folder stays in the temporary directory (issue 39
// item 5). The next Prepare in the repository removes both, and says so.
func TestPrepareAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module twice")
	}
	repo := fixtureRepo(t, 2, 0, 1)
	worktrees := func() int {
		out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
		require.NoError(t, err)
		return strings.Count(string(out), "worktree ")
	}
	child := exec.Command(os.Args[0], "-test.run=^TestHelperPrepare$")
	child.Env = append(os.Environ(), "PRREPORT_HELPER_REPO="+repo)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	var tmp, said string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		l := sc.Text()
		said += l + "\n"
		if _, rest, ok := strings.Cut(l, "git worktree add --detach "); ok && tmp == "" {
			tmp = filepath.Dir(strings.Fields(rest)[0])
		}
		if strings.HasPrefix(l, "prepared") {
			break
		}
	}
	require.NoError(t, child.Process.Kill())
	child.Wait()
	require.Contains(t, said, "prepared <nil>")
	require.NotEmpty(t, tmp, said)
	require.Equal(t, 3, worktrees(), "the killed run's two worktrees are registered")
	_, err = os.Stat(tmp)
	require.NoError(t, err, "the killed run's folder is there")

	var log strings.Builder
	b, err := Prepare(context.Background(), BuildConfig{Dir: repo, Base: "HEAD", Patterns: []string{"./..."}, Log: &log})
	require.NoError(t, err)
	assert.Contains(t, log.String(), "removed "+tmp+" and its worktrees: a pr or bisect run that was killed left them\n")
	_, err = os.Stat(tmp)
	assert.True(t, os.IsNotExist(err), "%s is still there", tmp)
	assert.Equal(t, 2, worktrees(), "the killed run's worktrees are pruned; this run's base is registered")
	require.NoError(t, b.Close())
	assert.Equal(t, 1, worktrees())
}
