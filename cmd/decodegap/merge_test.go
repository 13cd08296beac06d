package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/prreport"
)

// yamlBlocks returns the ```yaml blocks of a Markdown file.
func yamlBlocks(t *testing.T, path string) []string {
	t.Helper()
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	rest := string(doc)
	for {
		_, after, ok := strings.Cut(rest, "```yaml\n")
		if !ok {
			return out
		}
		block, tail, ok := strings.Cut(after, "```")
		require.True(t, ok, "a yaml block of %s is not closed", path)
		out = append(out, block)
		rest = tail
	}
}

// substitute replaces each word that is an environment reference ($X or
// ${X}) by vars[X]; a reference to a variable vars lacks fails the test.
func substitute(t *testing.T, words []string, vars map[string]string) []string {
	t.Helper()
	out := make([]string, len(words))
	for i, w := range words {
		for {
			j := strings.IndexByte(w, '$')
			if j < 0 {
				break
			}
			end := j + 1
			name := ""
			if strings.HasPrefix(w[end:], "{") {
				k := strings.IndexByte(w[end:], '}')
				name, end = w[end+1:end+k], end+k+1
			} else {
				for end < len(w) && (w[end] == '_' || w[end] >= 'A' && w[end] <= 'Z' || w[end] >= '0' && w[end] <= '9') {
					end++
				}
				name = w[j+1 : end]
			}
			v, ok := vars[name]
			require.True(t, ok, "the command uses $%s, which is not set", name)
			w = w[:j] + v + w[end:]
		}
		out[i] = w
	}
	return out
}

type ghStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	With map[string]any    `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// TestShardWorkflowDoc parses the GitHub Actions workflow of
// docs/guide/ci-workflow-shards.md: a matrix job whose every shard runs a
// decodegap pr command line this command accepts, with its own share and
// one run ID, uploads the file it writes; and a merge job that runs after
// all of them (also when one failed), downloads those files, merges them
// with a command line merge accepts, and posts the report.
func TestShardWorkflowDoc(t *testing.T) {
	blocks := yamlBlocks(t, "../../docs/guide/ci-workflow-shards.md")
	require.Len(t, blocks, 2, "a GitHub Actions workflow and a GitLab CI file")
	var wf struct {
		On          map[string]any    `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Needs    string `yaml:"needs"`
			If       string `yaml:"if"`
			Strategy struct {
				FailFast *bool `yaml:"fail-fast"`
				Matrix   struct {
					Shard []int `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []ghStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(blocks[0]), &wf))
	assert.Contains(t, wf.On, "pull_request")
	assert.Equal(t, "write", wf.Permissions["pull-requests"])
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	n := len(shard.Strategy.Matrix.Shard)
	require.GreaterOrEqual(t, n, 2, "the matrix lists the shards")
	require.NotNil(t, shard.Strategy.FailFast)
	assert.False(t, *shard.Strategy.FailFast, "one failed shard must not cancel the others")

	outs := map[string]bool{}
	runIDs := map[string]bool{}
	prRuns := 0
	for _, i := range shard.Strategy.Matrix.Shard {
		expr := map[string]string{"${{ matrix.shard }}": strconv.Itoa(i), "${{ strategy.job-total }}": strconv.Itoa(n),
			"${{ github.event.pull_request.base.sha }}": "origin/main", "${{ github.run_id }}-${{ github.run_attempt }}": "77-1"}
		expand := func(s string) string {
			for k, v := range expr {
				s = strings.ReplaceAll(s, k, v)
			}
			return s
		}
		var out string
		for _, st := range shard.Steps {
			if strings.HasPrefix(st.Uses, "actions/checkout@") {
				assert.EqualValues(t, 0, st.With["fetch-depth"], "the base revision must be fetched")
			}
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
				assert.Contains(t, st.If, "always()", "a shard cut short still uploads what it measured")
				require.NotEmpty(t, out, "the upload comes after the shard's run")
				assert.Equal(t, out, expand(fmt.Sprint(st.With["path"])), "the upload is the file the shard wrote")
				assert.Equal(t, "shard-"+strconv.Itoa(i), expand(fmt.Sprint(st.With["name"])))
			}
			if !strings.Contains(st.Run, "decodegap pr ") {
				continue
			}
			prRuns++
			env := map[string]string{}
			for k, v := range st.Env {
				env[k] = expand(v)
			}
			words := substitute(t, shellWords(t, st.Run), env)
			require.Equal(t, []string{"decodegap", "pr"}, words[:2])
			var errb bytes.Buffer
			f, _, status, ok := parsePRFlags(words[2:], &errb)
			require.True(t, ok, "decodegap pr rejects shard %d's command line (status %d): %s", i, status, errb.String())
			assert.Equal(t, prreport.Shard{I: i, N: n}, f.shard.shard)
			out = f.out
			outs[out] = true
			runIDs[f.shard.runID] = true
		}
	}
	assert.Equal(t, n, prRuns)
	assert.Len(t, outs, n, "every shard writes its own file")
	assert.Equal(t, map[string]bool{"77-1": true}, runIDs, "the shards share one run ID")

	assert.Equal(t, "shard", merge.Needs)
	assert.Contains(t, merge.If, "always()", "the report is written when a shard failed")
	merges, comments := 0, 0
	for _, st := range merge.Steps {
		if strings.HasPrefix(st.Uses, "actions/download-artifact@") {
			assert.Equal(t, "shard-*", st.With["pattern"])
			assert.Equal(t, true, st.With["merge-multiple"], "every shard's file lands in one directory")
		}
		if strings.Contains(st.Run, "gh pr comment") {
			comments++
			assert.Contains(t, st.If, "always()")
			assert.Contains(t, st.Env, "GH_REPO", "the merge job has no checkout: gh needs the repository")
		}
		if !strings.Contains(st.Run, "decodegap merge ") {
			continue
		}
		merges++
		words := shellWords(t, st.Run)
		var errb bytes.Buffer
		f, files, status, ok := parseMergeFlags(words[2:], &errb)
		require.True(t, ok, "decodegap merge rejects the command line (status %d): %s", status, errb.String())
		assert.Equal(t, "slower>3%", f.failOn)
		assert.Equal(t, "bench.md", f.md)
		require.Len(t, files, 1)
		for o := range outs {
			m, err := filepath.Match(files[0], o)
			assert.NoError(t, err)
			assert.True(t, m, "%s matches %s", files[0], o)
		}
	}
	assert.Equal(t, 1, merges)
	assert.Equal(t, 1, comments)
}

// TestShardGitLabDoc parses the GitLab CI file of
// docs/guide/ci-workflow-shards.md: N parallel copies, each a decodegap pr
// command line accepted with -shard CI_NODE_INDEX/CI_NODE_TOTAL, whose
// files the report job collects and merges.
func TestShardGitLabDoc(t *testing.T) {
	blocks := yamlBlocks(t, "../../docs/guide/ci-workflow-shards.md")
	require.Len(t, blocks, 2)
	type job struct {
		Stage     string            `yaml:"stage"`
		Parallel  int               `yaml:"parallel"`
		Needs     []string          `yaml:"needs"`
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
		Artifacts struct {
			When  string   `yaml:"when"`
			Paths []string `yaml:"paths"`
		} `yaml:"artifacts"`
	}
	var ci map[string]yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(blocks[1]), &ci))
	var bench, report job
	b, r := ci["bench-shard"], ci["bench-report"]
	require.NoError(t, b.Decode(&bench))
	require.NoError(t, r.Decode(&report))
	n := bench.Parallel
	require.GreaterOrEqual(t, n, 2)
	assert.Equal(t, "0", bench.Variables["GIT_DEPTH"], "the base revision must be in the clone")
	assert.Equal(t, "always", bench.Artifacts.When)
	require.Len(t, bench.Artifacts.Paths, 1)
	outs := map[string]bool{}
	for i := 1; i <= n; i++ {
		vars := map[string]string{"CI_NODE_INDEX": strconv.Itoa(i), "CI_NODE_TOTAL": strconv.Itoa(n),
			"CI_MERGE_REQUEST_DIFF_BASE_SHA": "origin/main", "CI_PIPELINE_ID": "901"}
		runs := 0
		for _, line := range bench.Script {
			if !strings.HasPrefix(line, "decodegap pr ") {
				continue
			}
			runs++
			words := substitute(t, shellWords(t, line), vars)
			var errb bytes.Buffer
			f, pkgs, status, ok := parsePRFlags(words[2:], &errb)
			require.True(t, ok, "decodegap pr rejects copy %d's command line (status %d): %s", i, status, errb.String())
			assert.Equal(t, prreport.Shard{I: i, N: n}, f.shard.shard)
			assert.Equal(t, "901", f.shard.runID)
			assert.Equal(t, []string{"./..."}, pkgs)
			m, _ := filepath.Match(bench.Artifacts.Paths[0], f.out)
			assert.True(t, m, "the artifacts keep %s", f.out)
			outs[f.out] = true
		}
		assert.Equal(t, 1, runs)
	}
	assert.Len(t, outs, n)
	assert.Equal(t, []string{"bench-shard"}, report.Needs)
	merges := 0
	for _, line := range report.Script {
		if !strings.HasPrefix(line, "decodegap merge ") {
			continue
		}
		merges++
		var errb bytes.Buffer
		f, files, _, ok := parseMergeFlags(shellWords(t, line)[2:], &errb)
		require.True(t, ok, errb.String())
		assert.Equal(t, "slower>3%", f.failOn)
		for o := range outs {
			m, _ := filepath.Match(files[0], o)
			assert.True(t, m, "%s matches %s", files[0], o)
		}
	}
	assert.Equal(t, 1, merges)
}

func TestShardAndMergeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-base", "main", "-shard", "5/4"}, `-shard: "5/4": want 1 ≤ i ≤ n ≤ 1000`},
		{[]string{"-base", "main", "-shard", "2"}, `write i/n, e.g. 2/4`},
		{[]string{"-base", "main", "-run-id", "x"}, "-run-id needs -shard i/n"},
		{[]string{"-base", "main", "-shard", "1/2", "-run-id", "a b"}, `-run-id "a b": want one word`},
		{[]string{"-base", "main", "-shard", "1/2", "-min-rounds", "4"}, "-min-rounds 4 has no effect with -shard"},
		{[]string{"-base", "main", "-shard", "5/8", "-max-rounds", "4"}, "-shard 5/8: -max-rounds 4 leaves this shard no round; want -max-rounds ≥ 8"},
		{[]string{"-base", "main", "-cpus", "x"}, "-cpus: "},
		{[]string{"-base", "main", "-shard", "1/2", "-fail-on", "slower>3%"}, "-md, -json and -fail-on apply to the merged report with -shard: give them to decodegap merge"},
	} {
		var errb bytes.Buffer
		_, _, status, ok := parsePRFlags(c.args, &errb)
		assert.False(t, ok, "%v", c.args)
		assert.Equal(t, 2, status, "%v", c.args)
		assert.Contains(t, errb.String(), c.want, "%v", c.args)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no FILE: give the -o files of the shards"},
		{[]string{"-fail-on", "faster>1%", "a"}, "-fail-on"},
		{[]string{"-alpha", "0.9", "a"}, "-alpha 0.9"},
	} {
		var errb bytes.Buffer
		_, _, status, ok := parseMergeFlags(c.args, &errb)
		assert.False(t, ok, "%v", c.args)
		assert.Equal(t, 2, status)
		assert.Contains(t, errb.String(), c.want)
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 3, dispatch([]string{"merge", filepath.Join(t.TempDir(), "none.txt")}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "decodegap merge: open ")
}

// TestHelperDecodegap is not a test: run by TestPRShardsMergeReal as a
// child process (DECODEGAP_HELPER_ARGS set), it is decodegap.
func TestHelperDecodegap(t *testing.T) {
	args := os.Getenv("DECODEGAP_HELPER_ARGS")
	if args == "" {
		t.Skip("a helper process")
	}
	os.Exit(dispatch(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// TestPRShardsMergeReal runs decodegap pr as 2 shards, each a separate
// process confined to its own CPU (CPU 0 and the last online CPU, the
// same one on a 1-CPU host), side by side, on the fixture repository whose
// head triples one benchmark's work, and merges the two files: the merged
// report decides the tripled row slower, fails -fail-on, names both
// runners with their CPU, judges every row on the rounds of both shards,
// and keeps each benchmark's rounds to its own rows: Same's B/A lies
// nearer the unchanged 1 than the tripled 3 (within √3 of 1). Same's
// verdict is not asserted: an unchanged benchmark is called slower or
// faster at the family's false-alarm rate (a run at load 5.6: Same sec/op
// slower by 3.3% [+0.17%, +57%]), which the verdict simulations check, not
// this test.
func TestPRShardsMergeReal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	fs, err := hostFS()
	require.NoError(t, err)
	topo, err := fs.Topology()
	require.NoError(t, err)
	cpus := []int{topo.Online[0], topo.Online[len(topo.Online)-1]}
	repo := prFixture(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	logs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"pr", "-base", "HEAD~1", "-head", "HEAD", "-shard", fmt.Sprintf("%d/2", i+1), "-run-id", "t1",
				"-cpus", strconv.Itoa(cpus[i]), "-max-rounds", "8", "-benchtime", "20ms", "-unit", "sec/op,cpu-sec/op",
				"-lock=false", "-screen=false", "-o", filepath.Join(dir, fmt.Sprintf("s%d.txt", i+1)), "./..."}
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDecodegap$")
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "DECODEGAP_HELPER_ARGS="+strings.Join(args, "\x1f"))
			cmd.Stdout, cmd.Stderr = &logs[i], &logs[i]
			errs[i] = cmd.Run()
		}()
	}
	wg.Wait()
	for i := range 2 {
		t.Logf("shard %d:\n%s", i+1, logs[i].String())
		require.NoError(t, errs[i], "shard %d", i+1)
		assert.Contains(t, logs[i].String(), fmt.Sprintf("shard %d/2 of run t1: 2 of 2 benchmarks ran, up to 4 rounds each", i+1))
		assert.Contains(t, logs[i].String(), "confined to "+hostmon.NewCPUSet(cpus[i]).Words())
	}
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"merge", "-unit", "sec/op,cpu-sec/op", "-fail-on", "slower>3%", "-json", filepath.Join(dir, "m.json"),
		filepath.Join(dir, "s2.txt"), filepath.Join(dir, "s1.txt")}, &stdout, &stderr)
	doc := readJSONReport(t, filepath.Join(dir, "m.json"), "merge")
	assert.Equal(t, 4, rowsByKind(doc)["candidate head"], "Same and Triple, sec/op and cpu-sec/op")
	t.Logf("merge:\n%s\n%s", stdout.String(), stderr.String())
	assert.Equal(t, 1, code, "the tripled benchmark fails the check")
	out := stdout.String()
	assert.Regexp(t, `fix\.Triple +(sec/op|cpu-sec/op) .* slower by`, out)
	same := 0
	for _, r := range doc.Rows {
		assert.Equal(t, 8, r.Used+r.Quarantined, "%s %s %s: the rounds of both shards", r.Bench, r.Arm, r.Unit)
		if strings.Contains(r.Bench, "Same") && r.Kind == "candidate" {
			same++
			assert.InDelta(t, 0, math.Log(float64(r.Ratio)), math.Log(3)/2, "%s %s: B/A %v, nearer the tripled benchmark's 3 than 1", r.Bench, r.Unit, r.Ratio)
		}
	}
	assert.Equal(t, 2, same, "Same's sec/op and cpu-sec/op rows")
	assert.Contains(t, out, "Runners: 2 of 2 shards of run t1, merged")
	for i := range 2 {
		assert.Regexp(t, fmt.Sprintf(`Runner %d/2: host [^ ]+ \(.*confined to %s\): 4 rounds of 2 benchmarks in `, i+1, hostmon.NewCPUSet(cpus[i]).Words()), out)
	}
	assert.Contains(t, out, "-ignore round,screen,run-id,shard,runner,")
}

// TestMergeRefusesHostileFiles: merge reads regular files only, without
// blocking on a fifo that has no writer or reading /dev/zero without end,
// and refuses a file of more result lines than a shard writes before it
// parses them (10^6 extra lines cost 2 GB of RSS when parsed).
func TestMergeRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("BenchmarkX-2 1 1 sec/op\n"), maxShardResults+1), 0o644))
	for _, c := range []struct{ path, want string }{
		{fifo, fifo + " is a fifo, not a regular file: give the -o files of decodegap pr -shard i/n"},
		{"/dev/zero", "/dev/zero is a character device, not a regular file: give the -o files of decodegap pr -shard i/n"},
		{dir, dir + " is a directory, not a regular file: give the -o files of decodegap pr -shard i/n"},
		{big, big + ": more than 100000 result lines, more than one shard of decodegap pr -shard i/n writes"},
	} {
		var stdout, stderr bytes.Buffer
		done := make(chan int)
		go func() { done <- dispatch([]string{"merge", c.path}, &stdout, &stderr) }()
		select {
		case code := <-done:
			assert.Equal(t, 3, code, c.path)
			assert.Equal(t, "decodegap merge: "+c.want+"\n", stderr.String())
			assert.Empty(t, stdout.String())
		case <-time.After(10 * time.Second):
			t.Fatalf("merge %s still reading after 10 s", c.path)
		}
	}
}
