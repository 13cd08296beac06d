package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
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

// TestCIWorkflowDoc parses the workflow in docs/ci-workflow.md and checks
// that it runs on pull requests, can see the base revision and comment,
// and that its decodegap pr command line is one this command accepts.
func TestCIWorkflowDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci-workflow.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	require.True(t, ok, "docs/ci-workflow.md has no ```yaml block")
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
		{[]string{"-base", "main", "-delta", "0"}, "want a margin between 0% and 100%"},
		{[]string{"-base", "main", "-alpha", "0.7"}, "-alpha 0.7"},
		{[]string{"-base", "main", "-bench", "("}, "-bench: error parsing regexp"},
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
}
