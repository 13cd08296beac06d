package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/prreport"
)

// bisect skips a commit that does not build, as git bisect skip does,
// and names the first slower commit from its neighbours: 4 commits, #2
// does not compile (#3 mends it), the loop 40% longer from #4. Before,
// the failed build ended the search ("no commit named: step 2 failed").
func TestBisectSkipsCommitThatDoesNotBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs test binaries of 3 comparisons")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	script, err := filepath.Abs("../../scripts/bisect-fixture.sh")
	require.NoError(t, err)
	out, err := exec.Command("bash", script, repo, "4", "4", "40", "2").Output()
	require.NoError(t, err)
	commits := strings.Fields(string(out))
	require.Len(t, commits, 5)
	var code int
	var stdout, errOut string
	for range 2 {
		code, stdout, errOut = histRun(t, "bisect", "-C", repo, "-good", commits[0], "-bad", commits[4], "-bench", "^BenchmarkWork$", "-json",
			"-benchtime", "20ms", "-delta", "25%", "-bisect-unit", "cpu-sec/op", "-lock=false", "-max-rounds", "30", "-budget", "60s", ".")
		if code == 0 && strings.Contains(stdout, `"Named": true`) {
			break
		}
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, errOut)
	require.Equal(t, 0, code, errOut)
	var res bisectOut
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Equal(t, "named", res.Why)
	assert.Equal(t, commits[4], res.First)
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, commits[2], res.Skipped[0].Commit)
	assert.Contains(t, res.Skipped[0].Error, "undefined")
	assert.LessOrEqual(t, len(res.Steps), res.Tests)
	for _, s := range res.Steps {
		assert.NotEqual(t, commits[2], s.Candidate, "the broken commit is never a step")
	}
	assert.Contains(t, errOut, "does not build: skipped")
}

// A search that skipped its way to an ambiguous range names the
// candidates, as git bisect does, in text and JSON.
func TestWriteBisectSkipped(t *testing.T) {
	commits := []string{"aaaaaaaaaa00", "bbbbbbbbbb11", "cccccccccc22", "dddddddddd33", "eeeeeeeeee44"}
	r := &history.BisectResult{Commits: commits, Tests: 3, Alpha: 0.05, First: -1, Lo: 1, Hi: 3, Why: history.WhySkipped,
		Skipped: []history.BisectSkip{{Index: 2, Commit: commits[2], Err: fmt.Errorf("%w: head: x: go test -c: exit status 1: # x\n./work.go:17:17: undefined: undefinedName", history.ErrSkip)}},
		Steps: []history.BisectStep{
			{Good: commits[0], Candidate: commits[4], CandidateIndex: 4, Result: history.NaNStep(history.StepChanged)},
			{Good: commits[0], Candidate: commits[1], CandidateIndex: 1, Result: history.NaNStep(history.StepUnchanged)},
			{Good: commits[1], Candidate: commits[3], GoodIndex: 1, CandidateIndex: 3, Result: history.NaNStep(history.StepChanged)}}}
	var b strings.Builder
	writeBisect(&b, r, 0.04)
	assert.Contains(t, b.String(), "skipped cccccccccc (#2): it does not build: ./work.go:17:17: undefined: undefinedName\n")
	assert.Contains(t, b.String(), "no single commit named: every commit after bbbbbbbbbb and before dddddddddd was skipped (it does not build), so the first slower commit is one of these 2: cccccccccc dddddddddd\n")
	j := bisectJSON(r, 0.04)
	assert.Equal(t, "skipped", j.Why)
	assert.Equal(t, []string{commits[2], commits[3]}, j.Candidates)
	assert.False(t, j.Named)

	r.Why = history.WhyOutOfTests
	b.Reset()
	writeBisect(&b, r, 0.04)
	assert.Contains(t, b.String(), "no single commit named: the 3 comparisons -alpha is split over were used")
	assert.Equal(t, "out-of-tests", bisectJSON(r, 0.04).Why)
}

// TestBisectRangeIsAUsageError: -good equal to -bad, or after it, is bad
// usage (exit 2, naming the flags), refused before anything is built; it
// exited 3, the status of a build or run that failed.
func TestBisectRangeIsAUsageError(t *testing.T) {
	dir := gitRepo(t)
	for range 2 {
		out, err := exec.Command("git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "next").CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	h := strings.TrimSpace(string(head))
	for _, c := range []struct {
		good, bad, want string
	}{
		{"HEAD", "HEAD", `decodegap bisect: -good "HEAD" and -bad "HEAD" are one commit (` + h[:10] + `): give a -good without the change and a -bad with it`},
		{h, "HEAD", `are one commit`},
		{"HEAD", "HEAD~2", `decodegap bisect: -good "HEAD" (` + h[:10] + `) comes after -bad "HEAD~2" (`},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch([]string{"bisect", "-C", dir, "-good", c.good, "-bad", c.bad, "-bench", "Step", "-lock=false"}, &stdout, &stderr)
		assert.Equal(t, 2, code, "%s..%s: %s", c.good, c.bad, stderr.String())
		assert.Contains(t, stderr.String(), c.want)
		assert.Contains(t, stderr.String(), "run 'decodegap bisect -h' for usage")
	}
}

// TestBisectNoMatchNamesTheRevision: a step with no benchmark matching
// -bench at both revisions names the one that lacks it (it said "at both"
// when the benchmark was at -good).
func TestBisectNoMatchNamesTheRevision(t *testing.T) {
	sel, err := parseBenchSel("Step")
	require.NoError(t, err)
	good, cand := strings.Repeat("a", 40), strings.Repeat("b", 40)
	b := &prreport.Build{Packages: []prreport.Package{{ImportPath: "example.com/x", OnlyBase: []string{"BenchmarkStep"}, OnlyHead: []string{"BenchmarkOther"}}}}
	assert.EqualError(t, noMatch(b, sel, []string{"./..."}, good, cand),
		`-bench "Step" matches BenchmarkStep in ./... at aaaaaaaaaa (good) but no benchmark at bbbbbbbbbb (the candidate): the candidate lacks it`)
	b.Packages[0].OnlyBase, b.Packages[0].OnlyHead = nil, []string{"BenchmarkStep"}
	assert.EqualError(t, noMatch(b, sel, []string{"./..."}, good, cand),
		`-bench "Step" matches BenchmarkStep in ./... at bbbbbbbbbb (the candidate) but no benchmark at aaaaaaaaaa (good): good lacks it`)
	assert.EqualError(t, noMatch(&prreport.Build{}, sel, []string{"./x"}, good, cand),
		`no benchmark matching -bench "Step" in ./x at aaaaaaaaaa (good) or at bbbbbbbbbb (the candidate)`)
}
