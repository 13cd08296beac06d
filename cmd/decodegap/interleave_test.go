package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/testutil"
)

const examplePkg = "../../examples/interleave"

// A real run: the example package built by go test -c, three arms (base,
// 10% more work, null), six rounds, parsed back with benchfmt.
func TestInterleaveRealRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-rounds", "6", "-seed", "7", "-benchtime", "200x", "-o", out,
		"-lock-path", filepath.Join(dir, "lock"), "-plot", filepath.Join(dir, "verdict.svg"), "-json", filepath.Join(dir, "v.json"),
		"old=" + examplePkg, "new=" + examplePkg + " -work=110"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr:\n%s", stderr.String())
	kinds := rowsByKind(readJSONReport(t, filepath.Join(dir, "v.json"), "interleave"))
	assert.Positive(t, kinds["candidate new"])
	assert.Positive(t, kinds["null-check null"])

	// -plot: one picture per judged unit, named after the candidate and unit.
	for _, name := range []string{"verdict-new-sec_op.svg", "verdict-new-p50-sec_op.svg"} {
		svg, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "stdout:\n%s", stdout.String())
		assert.Contains(t, string(svg), "<svg")
		assert.Contains(t, string(svg), "new / old")
		assert.Contains(t, stdout.String(), "verdict picture: "+filepath.Join(dir, name))
	}

	res := testutil.ResultsFile(t, out)
	require.Len(t, res, 18, "3 arms × 6 rounds, one result each")
	perArm := map[string]int{}
	var order [][]string // order[r] = arms of round r+1 in file order
	for _, r := range res {
		arm, round := r.GetConfig("arm"), r.GetConfig("round")
		perArm[arm]++
		assert.Contains(t, []string{"clean", "contended", "unavailable"}, r.GetConfig("screen"))
		assert.Equal(t, "Step-2", string(r.Name.Full()))
		_, ok := r.Value("sec/op")
		assert.True(t, ok)
		var ri int
		fmt.Sscan(round, &ri)
		for len(order) < ri {
			order = append(order, nil)
		}
		order[ri-1] = append(order[ri-1], arm)
	}
	assert.Equal(t, map[string]int{"old": 6, "new": 6, "null": 6}, perArm)

	// The order is the seeded plan's: a permutation per round, and no arm
	// twice in a row across a round boundary.
	plan, err := interleave.NewPlan([]interleave.Arm{{Name: "old", Args: []string{"x"}}, {Name: "new", Args: []string{"x"}}, {Name: "null", Args: []string{"x"}}}, 6, 7)
	require.NoError(t, err)
	distinct := map[string]bool{}
	var planned [][]int
	for _, o := range plan.Orders() {
		planned = append(planned, o)
	}
	for r, o := range order {
		var want []string
		for _, a := range planned[r] {
			want = append(want, plan.Arms[a].Name)
		}
		assert.Equal(t, want, o, "round %d", r+1)
		assert.ElementsMatch(t, []string{"old", "new", "null"}, o)
		distinct[strings.Join(o, " ")] = true
		if r > 0 {
			assert.NotEqual(t, order[r-1][2], o[0], "round %d starts with the arm that ended round %d", r+1, r)
		}
	}
	assert.Greater(t, len(distinct), 1, "the order changes between rounds")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# round 1 order "+strings.Join(order[0], " ")+"\n")
	assert.Contains(t, string(data), "# decodegap interleave: 6 rounds, seed 7, base old, null null = a second process of old\n")

	// Progress: one line per run on stderr.
	assert.Regexp(t, regexp.MustCompile(`(?m)^round 1/6  arm \w+ \(1/3\)  elapsed \S+  ETA unknown$`), stderr.String())
	assert.Regexp(t, regexp.MustCompile(`(?m)^round 6/6  arm \w+ \(3/3\)  elapsed \S+  ETA \S+$`), stderr.String())
	assert.Contains(t, stderr.String(), "decodegap interleave: 18 runs (3 arms × 6 rounds, seed 7) into "+out)

	// The table's benchstat column is benchstat's delta of the medians
	// (benchmath over the same file).
	vals := map[string][]float64{}
	for _, r := range res {
		v, _ := r.Value("sec/op")
		vals[r.GetConfig("arm")] = append(vals[r.GetConfig("arm")], v)
	}
	med := func(arm string) float64 {
		return benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64(nil), vals[arm]...), &benchmath.DefaultThresholds), 0.95).Center
	}
	delta := regexp.QuoteMeta(fmt.Sprintf("%+.1f%%", 100*(med("new")/med("old")-1)))
	table := stdout.String()
	assert.Regexp(t, regexp.MustCompile(`(?m)^benchmark +arm +metric +verdict +B/A +(9\d(\.\d)?% )?CI +δ / MDE +rounds +benchstat$`), table)
	assert.Regexp(t, regexp.MustCompile(`(?m)^Step-2 +new +sec/op +(faster|slower|equivalent|undecided) +\d\.\d{3} +\S+( \(9\d(\.\d)?%\))? +(-|±2\.0%|MDE \S+) +\d(\+\dq)? +(~|`+delta+`) p=\d\.\d{3}$`), table)
	assert.Contains(t, table, "benchstat: go tool benchstat -col 'arm@(old new null)' -ignore round,screen "+out+"\n")

	// benchstat itself, on the file, with the command we print.
	bs := exec.Command("go", "tool", "benchstat", "-col", "arm@(old new null)", "-ignore", "round,screen", out)
	bsOut, err := bs.CombinedOutput()
	require.NoError(t, err, "%s", bsOut)
	m := regexp.MustCompile(`Step-2 +(\S+)µ ± \S+ +(\S+)µ ± `).FindStringSubmatch(string(bsOut))
	require.Len(t, m, 3, "%s", bsOut)
	for i, arm := range []string{"old", "new"} {
		var got float64
		fmt.Sscan(m[i+1], &got)
		want := benchmath.AssumeNothing.Summary(benchmath.NewSample(vals[arm], &benchmath.DefaultThresholds), 0.95).Center
		assert.InDelta(t, want*1e6, got, want*1e6*0.001, "benchstat's %s median", arm)
	}
	// One column per arm, in the order named, and one table per unit: the
	// rounds and screens are pooled.
	assert.Regexp(t, regexp.MustCompile(`(?m)^ +│ +old +│ +new +│ +null +│$`), string(bsOut))
	assert.NotContains(t, string(bsOut), "round:")
}

func TestInterleaveFailingArm(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-rounds", "3", "-seed", "1", "-benchtime", "10x", "-o", out, "-lock=false", "-screen=false", "-max-failed", "0",
		"old=" + examplePkg, "bad=" + examplePkg + " -work=lots"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	e := stderr.String()
	assert.Contains(t, e, "decodegap interleave: lost round 1 arm bad: failed: exit status 2\n")
	assert.Regexp(t, regexp.MustCompile(`arm bad, round 1: \S+\.test '-test\.run=\^\$' -test\.bench=\. -test\.count=1 -test\.benchtime=10x -work=lots \(in \S+/examples/interleave\): exit status 2; its output:\ninvalid value "lots" for flag -work`), e)
	assert.Regexp(t, regexp.MustCompile(`decodegap interleave: 1 run lost, more than -max-failed 0, so the rest were not run; (the \d finished runs are in |the 1 finished run is in |no run finished, so )`+regexp.QuoteMeta(out)+`( holds no result)?\n`), e)
	res := testutil.ResultsFile(t, out)
	for _, r := range res {
		assert.Equal(t, "1", r.GetConfig("round"))
		assert.NotEqual(t, "bad", r.GetConfig("arm"))
		assert.Equal(t, "unavailable", r.GetConfig("screen"))
	}
	data, _ := os.ReadFile(out)
	assert.Contains(t, string(data), "# round 1 arm bad lost: exited: exit status 2\n")
	if len(res) > 0 {
		assert.Contains(t, string(data), "screen unavailable: screening turned off (-screen=false)")
		assert.Contains(t, e, "decodegap interleave: nothing to judge: "+out+" has no result of arm bad\n")
		assert.Equal(t, "\nlost runs (1; their arm has no value in that round):\n  round 1 arm bad: failed: exit status 2\n", stdout.String())
	}
}

func TestInterleaveUsageErrors(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.txt")
	require.NoError(t, os.WriteFile(exists, nil, 0o644))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	exe := filepath.Join(dir, "x.test")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"a=" + exe}, "give at least two arms, base first: old=./old.test new=./new.test (for an A/A check, the same target twice: a=./x.test b=./x.test)"},
		{[]string{"a" + exe, "b=" + exe}, fmt.Sprintf("arm %q: write name=TARGET, e.g. new=./new.test or new=./pkg", "a"+exe)},
		{[]string{"a=" + exe, "a=" + exe}, fmt.Sprintf(`arm "a=%s": two arms are named "a"; give each its own name`, exe)},
		{[]string{"a=" + exe, "null=" + exe}, fmt.Sprintf(`arm "null=%s": "null" is the null arm's name; rename the arm, or the null arm with -null`, exe)},
		{[]string{"a=" + exe, "b=" + exe + " -test.count=3"}, fmt.Sprintf(`arm "b=%s -test.count=3": interleave runs each arm once per run (-test.count=1); use -rounds for more samples`, exe)},
		{[]string{"a=" + exe, "b=" + plain}, fmt.Sprintf("arm b: %s is not executable: build it with go test -c -o %s, or give the package directory", plain, plain)},
		{[]string{"a=" + exe, "b=" + filepath.Join(dir, "missing")}, fmt.Sprintf("arm b: stat %s: no such file or directory: TARGET must be a test binary or a package directory", filepath.Join(dir, "missing"))},
		{[]string{"-rounds", "0", "a=" + exe, "b=" + exe}, "-rounds 0: need at least 1 (4 or more for a verdict)"},
		{[]string{"-rounds", "1000000001", "a=" + exe, "b=" + exe}, "-rounds 1000000001: at most 1000000000"},
		{[]string{"-timeout", "-1s", "a=" + exe, "b=" + exe}, "-run-timeout -1s: must be ≥ 0 (0 means no limit)"},
		{[]string{"-max-failed", "-1", "a=" + exe, "b=" + exe}, "-max-failed -1: must be ≥ 0 (0 stops at the first lost run)"},
		{[]string{"-o", exists, "-lock=false", "a=" + exe, "b=" + exe}, fmt.Sprintf("-o %s: the file exists; give another name, or remove it", exists)},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"interleave"}, c.args...), &stdout, &stderr)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Equal(t, "decodegap interleave: "+c.msg+"\nrun 'decodegap interleave -h' for usage\n", stderr.String(), "%v", c.args)
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, dispatch([]string{"interleave", "-h"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "usage: decodegap interleave [flags] base=TARGET cand=TARGET")
	assert.Contains(t, stderr.String(), "-rounds rounds")
	assert.Contains(t, stderr.String(), "tests to run beside the benchmarks (^$ matches none) (default \"^$\")")
	assert.NotContains(t, stderr.String(), "(the default runs no tests)")
	assert.Contains(t, stderr.String(), "-timeout duration")
	assert.Contains(t, stderr.String(), "-run-timeout duration")
}

// A package without test files builds nothing; the message says so.
func TestInterleaveNoTestFiles(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "notests")
	require.NoError(t, os.Mkdir(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "go.mod"), []byte("module notests\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "a.go"), []byte("package notests\n"), 0o644))
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-o", filepath.Join(dir, "o.txt"), "-lock=false",
		"a=" + pkg, "b=" + pkg}, &stdout, &stderr)
	assert.Equal(t, 1, code, stderr.String())
	assert.Contains(t, stderr.String(), "decodegap interleave: arm a: "+pkg+" has no test files")
	assert.Contains(t, stderr.String(), "has no test files, so go test -c built nothing: give a package with a Benchmark in a _test.go file")
}

// interruptWhen starts cmd, sends it SIGINT once a line of its stderr
// satisfies match, checks that it exits with status 130 (interrupted), and
// returns the rest of its stderr.
func interruptWhen(t *testing.T, cmd *exec.Cmd, match func(line string) bool) []byte {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if match(sc.Text()) {
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			break
		}
	}
	rest, _ := io.ReadAll(stderr)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr:\n%s\n%s", strings.Join(lines, "\n"), rest)
	assert.Equal(t, 130, ee.ExitCode())
	return rest
}

// SIGINT to the running command: every finished run is in the file and it
// parses; the exit status says it was interrupted.
func TestInterleaveInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := buildDecodegap(t)
	exBin := exampleTest(t)
	out := filepath.Join(dir, "out.txt")
	cmd := exec.Command(bin, "interleave", "-rounds", "100", "-benchtime", "2000x", "-o", out, "-lock=false",
		"a="+exBin, "b="+exBin+" -work=110")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	rest := interruptWhen(t, cmd, func(line string) bool { return strings.HasPrefix(line, "round 3/100 ") })
	assert.Regexp(t, regexp.MustCompile(`decodegap interleave: interrupted in round 3, arm \w+, after \d+ of 300 runs: context canceled; the (\d+) finished runs are in `+regexp.QuoteMeta(out)), string(rest))
	m := regexp.MustCompile(`the (\d+) finished runs`).FindStringSubmatch(string(rest))
	require.Len(t, m, 2)
	res := testutil.ResultsFile(t, out)
	assert.Equal(t, m[1], fmt.Sprint(len(res)), "every finished run is in the file")
	assert.GreaterOrEqual(t, len(res), 6, "two whole rounds at least")
	for _, r := range res {
		_, ok := r.Value("sec/op")
		assert.True(t, ok)
	}
	assert.Contains(t, stdout.String(), "Step-2  ", "a partial verdict is printed")
}

func TestWithoutChild(t *testing.T) {
	sp := hostmon.Span{Seconds: 2, CPUs: hostmon.NewCPUSet(0, 1), ForeignBusyPct: hostmon.Figure{Value: 60, Unit: "%"}}
	// The child used 2 s of CPU over 2 s on 2 CPUs: 50 of the 60%.
	got := withoutChild(sp, 2*time.Second)
	assert.InDelta(t, 10, got.ForeignBusyPct.Value, 1e-9)
	assert.InDelta(t, 0, withoutChild(sp, 4*time.Second).ForeignBusyPct.Value, 1e-9, "clamped at 0")
	un := hostmon.Span{Seconds: 2, CPUs: hostmon.NewCPUSet(0), ForeignBusyPct: hostmon.Figure{Unit: "%", Reason: "no /proc/stat"}}
	assert.Equal(t, un, withoutChild(un, time.Second), "an unavailable figure stays unavailable")

	clean := screenResult(got, hostmon.Verdict{})
	assert.Equal(t, interleave.ScreenResult{Verdict: "clean"}, clean)
	bad := screenResult(got, hostmon.Verdict{Contended: true, Over: []hostmon.Over{{Check: hostmon.ForeignBusy, Value: 22, Limit: 5, CPUs: hostmon.NewCPUSet(0, 1)}}})
	assert.Equal(t, "contended", bad.Verdict)
	assert.Equal(t, "contended: foreign 22% on CPUs 0,1 > 5% (CPUs 0,1 over 2.00s)", bad.Detail)
	part := screenResult(got, hostmon.Verdict{Unscreened: []hostmon.Unscreened{{Check: hostmon.Steal, Figure: hostmon.Figure{Unit: "%", Reason: "no /proc/stat"}}}})
	assert.Equal(t, "clean", part.Verdict)
	assert.Equal(t, "clean (not screened: steal: unavailable (no /proc/stat)) (CPUs 0,1 over 2.00s)", part.Detail)
}

// built caches binaries built once per test process, by name.
var built sync.Map // name → *builtBin

// builtBin is one binary built once: its path, or why it could not be built.
type builtBin struct {
	once sync.Once
	path string
	err  error
}

// buildOnce runs `go VERB -o PATH ARGS...` once per test process to build the
// binary name into a temporary folder, and returns its path.
func buildOnce(t *testing.T, name, verb string, args ...string) string {
	t.Helper()
	v, _ := built.LoadOrStore(name, &builtBin{})
	bb := v.(*builtBin)
	bb.once.Do(func() {
		dir, err := os.MkdirTemp("", "gapbench-"+name+"-")
		if err != nil {
			bb.err = err
			return
		}
		bb.path = filepath.Join(dir, name)
		out, err := exec.Command("go", append([]string{verb, "-o", bb.path}, args...)...).CombinedOutput()
		if err != nil {
			bb.err = fmt.Errorf("go %s %s: %v\n%s", verb, strings.Join(args, " "), err, out)
		}
	})
	require.NoError(t, bb.err)
	return bb.path
}

// exampleTest builds the example's test binary once for the tests below.
func exampleTest(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "ex.test", "test", "-c", examplePkg)
}

func TestInterleaveScreenUnavailable(t *testing.T) {
	bin := exampleTest(t)
	dir := t.TempDir()
	defer func(f func() (hostmon.FS, error)) { hostFS = f }(hostFS)
	hostFS = func() (hostmon.FS, error) {
		return hostmon.NewFS(filepath.Join(dir, "proc"), filepath.Join(dir, "sys"))
	}
	out := filepath.Join(dir, "out.txt")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-rounds", "1", "-benchtime", "100x", "-o", out, "-lock=false", "a=" + bin, "b=" + bin}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Regexp(t, regexp.MustCompile(`(?m)^decodegap interleave: screen: unavailable: .*`+regexp.QuoteMeta(dir)), stderr.String())
	res := testutil.ResultsFile(t, out)
	require.Len(t, res, 3)
	for _, r := range res {
		assert.Equal(t, "unavailable", r.GetConfig("screen"))
	}
	// One round gives no confidence interval: the verdict says so, at the
	// level weighted Holm gives each unit (sec/op and cpu-sec/op 1/4 of
	// 5%, p50 2/4), for the candidate and the null arm's A/A rows alike.
	words := strings.Join(strings.Fields(stdout.String()), " ")
	// (A round whose blocks held a stall in some arms only is
	// quarantined instead: a loaded host makes that likely.)
	assert.Regexp(t, `too few rounds \(b sec/op: 1 used of 5 needed at 98\.8%;|too many rounds quarantined \(b sec/op: 1 of 1;`, words)
	assert.Contains(t, words, "false alarms: every benchmark and arm's units (a p50- unit weighing twice the others) form one family of 3 rows under Holm's procedure: the chance that any of them is called faster or slower while unchanged is at most 5%")
	assert.Regexp(t, `(?m)^Step-2 +null \(A/A check\) +p50-sec/op +undecided `, stdout.String())
}

func TestInterleaveNoSuchUnit(t *testing.T) {
	bin := exampleTest(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-rounds", "1", "-benchtime", "100x", "-o", out, "-lock=false", "-screen=false", "-unit", "B/op", "a=" + bin, "b=" + bin}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "decodegap interleave: "+out+" holds no B/op values to judge: choose -unit from the units the benchmarks report\n")
	assert.Len(t, testutil.ResultsFile(t, out), 3, "the runs are kept")
}

func TestInterleaveLockFails(t *testing.T) {
	bin := exampleTest(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "no-such-dir", "lock")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-o", filepath.Join(dir, "out.txt"), "-lock-path", lock, "a=" + bin, "b=" + bin}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Regexp(t, regexp.MustCompile(`^decodegap interleave: taking the host lock `+regexp.QuoteMeta(lock)+`: .*no such file or directory.* \(or run with -lock=false\)\n$`), stderr.String())
	_, err := os.Stat(filepath.Join(dir, "out.txt"))
	assert.True(t, os.IsNotExist(err), "no empty output file is left behind")
}

func TestInterleaveBuildFails(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "broken")
	require.NoError(t, os.Mkdir(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "go.mod"), []byte("module broken\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "b_test.go"), []byte("package broken\nfunc BenchmarkX(b *testing.B) {}\n"), 0o644))
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"interleave", "-o", filepath.Join(dir, "out.txt"), "-lock=false", "a=" + pkg, "b=" + pkg}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "decodegap interleave: arm a: go test -c in "+pkg+" failed (exit status 1):\n")
	assert.Contains(t, stderr.String(), "undefined: testing")
	_, err := os.Stat(filepath.Join(dir, "out.txt"))
	assert.True(t, os.IsNotExist(err), "nothing is written before the arms are built")
}

// SIGINT while another process holds the host lock: nothing ran, exit 130.
func TestInterleaveInterruptedWaitingForLock(t *testing.T) {
	bin := exampleTest(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "lock")
	held, err := hostmon.Lock(context.Background(), lockPath, nil)
	require.NoError(t, err)
	defer held.Unlock()
	decodegap := buildDecodegap(t)
	out := filepath.Join(dir, "out.txt")
	cmd := exec.Command(decodegap, "interleave", "-o", out, "-lock-path", lockPath, "a="+bin, "b="+bin)
	// hostmon names the holder while it waits.
	rest := interruptWhen(t, cmd, func(line string) bool { return strings.Contains(line, "waiting for host lock") })
	assert.Contains(t, string(rest), "decodegap interleave: interrupted while waiting for the host lock "+lockPath+"; nothing was run\n")
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err))
}

// buildDecodegap builds this command once for the tests that signal it.
func buildDecodegap(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "decodegap", "build", ".")
}

// Every run lost: the lines say no run finished and the file holds no
// result, not "the 0 finished runs are in" it, and no verdict is printed.
func TestInterleaveEveryRunLost(t *testing.T) {
	dir := t.TempDir()
	fail := filepath.Join(dir, "fail.sh")
	require.NoError(t, os.WriteFile(fail, []byte("#!/bin/sh\nexit 3\n"), 0o755))
	for _, c := range []struct {
		maxFailed string
		want      string
	}{
		{"100", "decodegap interleave: no run finished, so {out} holds no result; 6 runs lost\n"},
		{"0", "decodegap interleave: 1 run lost, more than -max-failed 0, so the rest were not run; no run finished, so {out} holds no result\n"},
	} {
		out := filepath.Join(dir, "out-"+c.maxFailed+".txt")
		c.want = strings.ReplaceAll(c.want, "{out}", out)
		var stdout, stderr bytes.Buffer
		code := dispatch([]string{"interleave", "-rounds", "2", "-seed", "1", "-o", out, "-lock=false", "-screen=false", "-max-failed", c.maxFailed,
			"old=" + fail, "new=" + fail}, &stdout, &stderr)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr.String(), c.want)
		assert.NotContains(t, stderr.String(), "0 finished")
		assert.Empty(t, stdout.String(), "no verdict without a result")
		assert.Empty(t, testutil.ResultsFile(t, out))
	}
	assert.Equal(t, "the 1 finished run is in o.txt", finishedRuns(1, "o.txt"))
	assert.Equal(t, "the 2 finished runs are in o.txt", finishedRuns(2, "o.txt"))
}
