package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runPRFault runs decodegap pr on repo with the fault and extra flags, and
// returns its exit status, stdout and stderr.
func runPRFault(t *testing.T, repo, fault, side string, extra ...string) (int, string, string, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"pr", "-base", "HEAD~1", "-head", "HEAD", "-max-rounds", "3", "-benchtime", "20x", "-unit", "sec/op",
		"-o", filepath.Join(dir, "out.txt"), "-lock-path", filepath.Join(dir, "lock"), "-screen=false", "-fail-on", "slower>3%"}, extra...)
	cmd := exec.Command(buildDecodegap(t), append(args, "./...")...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GAPBENCH_FAULT="+fault, "GAPBENCH_FAULT_DIR="+dir, "GAPBENCH_FAULT_SIDE="+side)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	el := time.Since(t0)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	t.Logf("exit %d after %v\nstdout:\n%s\nstderr:\n%s", cmd.ProcessState.ExitCode(), el, stdout.String(), stderr.String())
	assert.Empty(t, worktrees(t, repo), "pr left a worktree")
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String(), el
}

// A head benchmark that panics in every run is not judged: the check fails
// naming the count, and pr exits 3 (main f271f84 printed "Check passed" and
// exited 0). Likewise a failure at the base only.
func TestPRFailedBenchmarkFailsCheck(t *testing.T) {
	for _, side := range []string{"head", "base"} {
		t.Run(side, func(t *testing.T) {
			t.Parallel()
			repo := faultRepo(t, false) // its own: worktrees are counted
			code, stdout, stderr, _ := runPRFault(t, repo, "*=crash", side, "-max-failed", "1")
			assert.Equal(t, 3, code)
			assert.Contains(t, stdout, "Check failed: 1 benchmark could not be judged (-fail-on slower>3% passes only when every benchmark is): fault.Step.")
			assert.NotContains(t, stdout, "Check passed")
			assert.Contains(t, stdout, "Not judged: fault.Step failed: ")
			assert.Contains(t, stderr, "decodegap pr: 1 of 1 benchmark could not be judged: its runs failed (exit status 3)")
		})
	}
}

// A -benchtime that no run could use is a usage error (main f271f84 ran
// every job into a failure and printed "Check passed").
func TestPRBadBenchtime(t *testing.T) {
	for _, bt := range []string{"abc", "0x", "-1s", "0s"} {
		var out, errb strings.Builder
		_, _, status, ok := parsePRFlags([]string{"-base", "main", "-benchtime", bt}, &errb)
		assert.False(t, ok, bt)
		assert.Equal(t, 2, status, bt)
		assert.Contains(t, errb.String(), "-benchtime \""+bt+"\": want a duration", bt)
		_ = out
	}
}

// A benchmark that hangs in every run, with no per-run timeout: -budget
// stops the run in flight, pr ends within the budget and a small grace, and
// the unjudged benchmark fails the check (exit 1).
func TestPRBudgetBoundsHangingRun(t *testing.T) {
	t.Parallel()
	repo := faultRepo(t, false)
	const budget = 3 * time.Second
	code, stdout, stderr, el := runPRFault(t, repo, "*=hang", "", "-budget", budget.String(), "-run-timeout", "0")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "decodegap pr: -budget 3s ran out during a round, which was stopped and dropped")
	assert.Contains(t, stdout, "Check failed: 1 benchmark could not be judged")
	assert.Contains(t, stdout, "Not judged: fault.Step did not run: the budget ran out first (raise -budget).")
	// Building is not in the budget; it is in el. The first run's start
	// (its pid file) is about when the budget's clock started.
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(findOut(stdout)), "pid.*.1"))
	require.NotEmpty(t, m)
	fi, err := os.Stat(m[0])
	require.NoError(t, err)
	since := time.Since(fi.ModTime())
	t.Logf("pr with -budget %v and a hanging benchmark: %v from the first run's start to the end (%v with building)", budget, since, el)
	assert.Less(t, since, budget+5*time.Second, "budget + 2 s SIGKILL grace + judging")
	pid, err := os.ReadFile(m[0])
	require.NoError(t, err)
	p, _ := strconv.Atoi(string(pid))
	assert.True(t, processGone(p))
}

func findOut(stdout string) string {
	for _, l := range strings.Split(stdout, "\n") {
		if s, ok := strings.CutPrefix(l, "benchstat: go tool benchstat -col 'arm@(base head null)' -ignore round,screen "); ok {
			return s
		}
	}
	return ""
}

// A module that requires a sibling directory through a relative replace
// (replace example.com/dep => ../dep, as the README's own-module section
// writes it) builds at the base, in its temporary worktree (main f271f84:
// "replacement directory ../dep does not exist", exit 3).
func TestPRRelativeReplace(t *testing.T) {
	t.Parallel()
	repo := faultRepo(t, true)
	code, stdout, stderr, _ := runPRFault(t, repo, "", "", "-max-rounds", "2")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "replace example.com/dep => "+filepath.Join(filepath.Dir(repo), "dep")+" (was ../dep)")
	assert.Contains(t, stdout, "Check passed")
	// The user's go.mod is untouched.
	b, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "replace example.com/dep => ../dep")
}

// A base revision that does not exist is a build failure: exit 3, and
// nothing is left registered.
func TestPRBuildFailureExit3(t *testing.T) {
	t.Parallel()
	repo := faultRepo(t, false)
	dir := t.TempDir()
	cmd := exec.Command(buildDecodegap(t), "pr", "-base", "no-such-ref", "-o", filepath.Join(dir, "out.txt"), "-lock-path", filepath.Join(dir, "lock"), "./...")
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 3, ee.ExitCode(), "%s", out)
	assert.Contains(t, string(out), `base "no-such-ref" is not a commit here`)
	assert.Empty(t, worktrees(t, repo))
	assert.NoFileExists(t, filepath.Join(dir, "out.txt"))
}
