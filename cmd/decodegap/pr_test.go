package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gapbench/gapbench/internal/report"
)

// shellWords splits a POSIX shell command line into words: single and
// double quotes, backslash escapes and line continuations; "$VAR" and
// "${VAR}" stay as written. It is enough for the workflow's run: lines.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			inWord = true
			i++
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			require.GreaterOrEqual(t, j, 0, "unclosed ' in %q", s)
			cur.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			require.GreaterOrEqual(t, j, 0, `unclosed " in %q`, s)
			cur.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestCIWorkflowDoc parses the workflow in docs/guide/ci-workflow.md and checks
// that it runs on pull requests, can see the base revision and comment,
// and that its decodegap pr command line is one this command accepts.
func TestCIWorkflowDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/guide/ci-workflow.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	require.True(t, ok, "docs/guide/ci-workflow.md has no ```yaml block")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok, "the yaml block is not closed")

	var wf struct {
		On          map[string]any    `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				If   string            `yaml:"if"`
				With map[string]any    `yaml:"with"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(block), &wf))
	assert.Contains(t, wf.On, "pull_request")
	assert.Equal(t, "write", wf.Permissions["pull-requests"], "posting a comment needs pull-requests: write")
	require.Len(t, wf.Jobs, 1)
	var prRuns, comments int
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if strings.HasPrefix(st.Uses, "actions/checkout@") {
				assert.EqualValues(t, 0, st.With["fetch-depth"], "the base revision must be fetched")
			}
			if strings.Contains(st.Run, "gh pr comment") {
				comments++
				assert.Contains(t, st.If, "always()", "the report is posted also when the check fails")
				assert.Contains(t, st.Run, "bench.md")
			}
			if !strings.Contains(st.Run, "decodegap pr ") {
				continue
			}
			prRuns++
			words := shellWords(t, st.Run)
			require.GreaterOrEqual(t, len(words), 2)
			require.Equal(t, []string{"decodegap", "pr"}, words[:2])
			args := words[2:]
			for i, a := range args {
				if strings.HasPrefix(a, "$") {
					name := strings.Trim(a, "${}")
					assert.Contains(t, st.Env, name, "the step sets %s", a)
					args[i] = "origin/main"
				}
			}
			var errb bytes.Buffer
			f, pkgs, status, ok := parsePRFlags(args, &errb)
			require.True(t, ok, "decodegap pr rejects the workflow's command line (status %d): %s", status, errb.String())
			assert.Equal(t, "bench.md", f.md)
			assert.Equal(t, "slower>3%", f.failOn)
			assert.Equal(t, []string{"./..."}, pkgs)
		}
	}
	assert.Equal(t, 1, prRuns, "one step runs decodegap pr")
	assert.Equal(t, 1, comments, "one step posts the report")
}

func TestPRFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-base is required"},
		{[]string{"-base", "main", "-fail-on", "faster>3%"}, "-fail-on \"faster>3%\": write slower>N%"},
		{[]string{"-base", "main", "-max-rounds", "1"}, "-max-rounds 1: want at least 2"},
		{[]string{"-base", "main", "-delta", "0"}, "the margin must lie between 0 and 100%"},
		{[]string{"-base", "main", "-alpha", "0.7"}, "-alpha 0.7"},
		{[]string{"-base", "main", "-bench", "("}, "-bench: error parsing regexp"},
		{[]string{"-base", "main", "-budget", "0"}, "-max-rounds 0 sets the rounds from -budget, and -budget is 0 (none)"},
		{[]string{"-base", "--output=x"}, `-base "--output=x", -head "": a revision cannot start with '-'`},
		{[]string{"-base", "main", "-head", "-p"}, `-head "-p": a revision cannot start with '-'`},
	} {
		var errb bytes.Buffer
		_, _, status, ok := parsePRFlags(c.args, &errb)
		assert.False(t, ok, "%v", c.args)
		assert.Equal(t, 2, status, "%v", c.args)
		assert.Contains(t, errb.String(), c.want, "%v", c.args)
	}
	var errb bytes.Buffer
	f, pkgs, _, ok := parsePRFlags([]string{"-base", "main", "-delta", "1.5%", "./x"}, &errb)
	require.True(t, ok, errb.String())
	assert.InDelta(t, 0.015, float64(f.delta), 1e-12)
	assert.Equal(t, []string{"./x"}, pkgs)
	assert.Equal(t, 20*60.0, f.budget.Seconds())
	assert.Equal(t, 0, f.maxRounds, "the rounds come from -budget")
	f, _, _, ok = parsePRFlags([]string{"-base", "main", "-shard", "1/2"}, &errb)
	require.True(t, ok, errb.String())
	assert.Equal(t, 30, f.maxRounds, "a shard runs its share of a fixed total")
}

// prFixture builds a git repository of one package with two benchmarks and
// two commits; at the second, Triple does three times the work.
func prFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := func(work int) string {
		return fmt.Sprintf(`package fix

import "testing"

var sink uint64

//go:noinline
func mix(n int) uint64 {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

func BenchmarkSame(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += mix(3000)
	}
}

func BenchmarkTriple(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += mix(%d)
	}
}
`, work)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	git("init", "-q", "-b", "main")
	write("go.mod", "module example.com/fix\n\ngo 1.21\n")
	write("fix_test.go", src(3000))
	git("add", ".")
	git("commit", "-q", "-m", "base")
	write("fix_test.go", src(9000))
	git("commit", "-q", "-am", "head")
	return dir
}

// TestPRRealRun runs decodegap pr on a fixture repository whose head
// triples one benchmark's work: that row is decided slower, -fail-on
// trips (exit 1), the Markdown report and the benchfmt output are
// written, and Same is never flagged. The screen is off: on a busy test
// host it would quarantine every round (as it should), and the test is of
// the command, not of the host.
func TestPRRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	repo := prFixture(t)
	t.Chdir(repo)
	out := filepath.Join(t.TempDir(), "pr.txt")
	md := filepath.Join(t.TempDir(), "pr.md")
	var stdout, stderr bytes.Buffer
	var code int
	// The unchanged benchmark may be called different at the family's
	// 5% false-alarm rate (and its two binaries differ in layout): one
	// second run is allowed before that counts as a failure.
	same := regexp.MustCompile(`fix\.Same-\d+ +[a-z0-9-]+/op .*(slower|faster|more CPU|less CPU) by`)
	for try := range 2 {
		stdout.Reset()
		stderr.Reset()
		os.Remove(out)
		code = dispatch([]string{"pr", "-base", "HEAD~1", "-head", "HEAD", "-budget", "90s", "-max-rounds", "12",
			"-benchtime", "20ms", "-unit", "sec/op,cpu-sec/op", "-o", out, "-md", md, "-lock-path", filepath.Join(t.TempDir(), "lock"),
			"-fail-on", "slower>3%", "-screen=false", "-json", out + ".json", "./..."}, &stdout, &stderr)
		t.Logf("try %d: stdout:\n%s\nstderr:\n%s", try+1, stdout.String(), stderr.String())
		if !same.MatchString(stdout.String()) {
			break
		}
	}
	assert.Equal(t, 1, code, "the tripled benchmark fails the check")
	assert.Contains(t, stdout.String(), "slower by")
	assert.Regexp(t, `fix\.Triple-\d+ +(sec/op|cpu-sec/op) .* slower by`, stdout.String())
	// The head's rows of the unchanged benchmark (not the A/A rows, which
	// a host that moved between the two base processes may flag).
	assert.NotRegexp(t, `fix\.Same-\d+ +[a-z0-9-]+/op .*(slower|faster|more CPU|less CPU) by`, stdout.String())
	assert.Contains(t, stdout.String(), "benchstat: go tool benchstat -col 'arm@(base head null)' -ignore round,screen "+out)
	assert.Contains(t, stderr.String(), "base: go test -c example.com/fix")
	assert.Regexp(t, `fix BenchmarkTriple round \d+: `, stderr.String())

	doc := readJSONReport(t, out+".json", "pr")
	assert.Positive(t, rowsByKind(doc)["candidate head"])
	// The JSON records the commits compared, and the refs as given.
	revParse := func(rev string) string {
		b, err := exec.Command("git", "-C", repo, "rev-parse", rev).Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	require.NotNil(t, doc.Revisions)
	assert.Equal(t, report.Revisions{Base: report.Revision{Ref: "HEAD~1", Commit: revParse("HEAD~1")},
		Head: report.Revision{Ref: "HEAD", Commit: revParse("HEAD")}}, *doc.Revisions)
	m, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Regexp(t, `^### Benchmarks: \d+ slower`, string(m))
	assert.Contains(t, string(m), "**Check failed** (-fail-on slower>3%): Triple-")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# decodegap pr: base HEAD~1 (")
	assert.Contains(t, string(data), "arm: null")
	assert.Contains(t, string(data), "\npr-base: HEAD~1 "+revParse("HEAD~1")+"\n", "the output names its commits, for history add")
	assert.Contains(t, string(data), "\npr-head: HEAD "+revParse("HEAD")+"\n")
	assert.Contains(t, string(data), "cpu-sec/op")

	// The output file must not be overwritten.
	stderr.Reset()
	assert.Equal(t, 2, dispatch([]string{"pr", "-base", "HEAD", "-o", out, "-lock=false"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "the file exists")
}

// A -good or -bad that starts with '-' would reach git as an option: it
// is refused before git runs.
func TestBisectRefusesOptionLikeRevisions(t *testing.T) {
	for _, args := range [][]string{
		{"bisect", "-good", "--output=/tmp/x", "-bad", "HEAD", "-bench", "Step"},
		{"bisect", "-good", "HEAD~1", "-bad", "-p", "-bench", "Step"},
	} {
		var o, e bytes.Buffer
		assert.Equal(t, 2, dispatch(args, &o, &e), "%v", args)
		assert.Contains(t, e.String(), "a revision cannot start with '-' (git would read it as an option)", "%v", args)
	}
}
