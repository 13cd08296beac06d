package interleave

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script writes a shell script arm running body and returns the arm.
func script(t *testing.T, name, body string) Arm {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".sh")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return Arm{Name: name, Args: []string{path}}
}

// gone reports whether process pid has exited (or is a zombie nobody
// reaps), waiting up to 5 s.
func gone(pid int) bool {
	for range 100 {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// pidIn reads the pid a script wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var b []byte
	for range 100 {
		b, _ = os.ReadFile(path)
		if len(bytes.TrimSpace(b)) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err, "the script wrote no pid to %s", path)
	return pid
}

// A run that hangs is stopped at the timeout, named in the error, and its
// whole process group dies: also a grandchild that ignores SIGINT (a
// non-interactive shell starts background jobs so) and a shell that traps
// it, which need SIGKILL after the grace period.
func TestRunnerTimeoutStopsTheGroup(t *testing.T) {
	for _, trap := range []string{"", "trap '' INT; "} {
		dir := t.TempDir()
		gc := filepath.Join(dir, "gc")
		arm := script(t, "hang", trap+"sleep 300 & echo $! > "+gc+"; wait; wait")
		plan, err := NewPlan([]Arm{arm}, 1, 1)
		require.NoError(t, err)
		var out bytes.Buffer
		t0 := time.Now()
		runs, err := (&Runner{Plan: plan, Out: &out, Timeout: 300 * time.Millisecond, Grace: 300 * time.Millisecond}).Run(context.Background())
		assert.Less(t, time.Since(t0), 10*time.Second)
		var re *RunError
		require.ErrorAs(t, err, &re, "trap %q", trap)
		assert.Equal(t, TimedOut, re.Cause)
		assert.Equal(t, 300*time.Millisecond, re.Timeout)
		assert.Equal(t, 1, re.Round)
		assert.Equal(t, "hang", re.Arm)
		assert.Contains(t, err.Error(), "arm hang, round 1: "+arm.Args[0]+": still running after the timeout of 300ms, so its process group was stopped")
		require.Len(t, runs, 1)
		assert.Same(t, re, runs[0].Err)
		assert.Contains(t, out.String(), "# round 1 arm hang lost: timed-out: still running after the timeout of 300ms")
		assert.True(t, gone(pidIn(t, gc)), "trap %q: the grandchild sleep outlived the run", trap)
	}
}

// An interrupt stops the run's whole process group.
func TestRunnerInterruptStopsTheGroup(t *testing.T) {
	dir := t.TempDir()
	gc := filepath.Join(dir, "gc")
	arm := script(t, "slow", "sleep 300 & echo $! > "+gc+"; wait")
	plan, err := NewPlan([]Arm{arm}, 1, 1)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { pidIn(t, gc); cancel() }()
	runs, err := (&Runner{Plan: plan, Out: &bytes.Buffer{}}).Run(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "interrupted in round 1, arm slow, after 0 of 1 runs")
	assert.Empty(t, runs)
	assert.True(t, gone(pidIn(t, gc)), "the grandchild sleep outlived the interrupt")
}

// A run that exits leaving a process behind (holding its output open) ends
// when its process exits, keeps its result, and leaves nothing running.
func TestRunnerKillsWhatARunLeavesBehind(t *testing.T) {
	dir := t.TempDir()
	gc := filepath.Join(dir, "gc")
	arm := script(t, "leaky", "echo 'BenchmarkX-2 1 1000 ns/op'; sleep 300 & echo $! > "+gc)
	plan, err := NewPlan([]Arm{arm}, 2, 1)
	require.NoError(t, err)
	var out bytes.Buffer
	t0 := time.Now()
	runs, err := (&Runner{Plan: plan, Out: &out}).Run(context.Background())
	require.NoError(t, err)
	assert.Less(t, time.Since(t0), 20*time.Second, "the runner waited for the process left behind (sleep 300)")
	assert.Len(t, readAll(t, out.Bytes()), 2)
	require.Len(t, runs, 2)
	assert.True(t, gone(pidIn(t, gc)))
}

// Lines of any length: a 1 MB log line does not stop the run; a result
// line too long to read is reported at its line.
func TestRunnerReadsLinesOfAnyLength(t *testing.T) {
	long := script(t, "long", "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo 'BenchmarkX-2 1 1000 ns/op'")
	plan, err := NewPlan([]Arm{long}, 1, 1)
	require.NoError(t, err)
	var out bytes.Buffer
	runs, err := (&Runner{Plan: plan, Out: &out}).Run(context.Background())
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Len(t, runs[0].Results, 1)
	assert.Len(t, readAll(t, out.Bytes()), 1)

	huge := script(t, "huge", "echo 'goos: linux'; printf 'BenchmarkX-2 1 1000 ns/op'; head -c 100000 /dev/zero | tr '\\0' ' '; echo")
	plan, err = NewPlan([]Arm{huge}, 1, 1)
	require.NoError(t, err)
	_, err = (&Runner{Plan: plan, Out: &bytes.Buffer{}}).Run(context.Background())
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, Malformed, re.Cause)
	assert.Equal(t, 2, re.Line)
	assert.EqualError(t, re.Err, "line 2 of its output begins with Benchmark but is 100025 bytes long, too long to be a result")
	assert.Contains(t, re.Output, "goos: linux\nBenchmarkX-2 1 1000 ns/op    ")
	assert.Contains(t, re.Output, "… (100025 bytes in all)")
}

// Output that is not text is quoted with Go's escapes and shortened.
func TestRunnerQuotesGarbage(t *testing.T) {
	arm := script(t, "garbage", `printf 'fine\n\001\377\033[31mred'; head -c 5000 /dev/zero; printf '\n' >&1; printf 'caf\303\251 au lait\n'; exit 3`)
	plan, err := NewPlan([]Arm{arm}, 1, 1)
	require.NoError(t, err)
	_, err = (&Runner{Plan: plan, Out: &bytes.Buffer{}}).Run(context.Background())
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, Exited, re.Cause)
	quoted := `"\x01\xff\x1b[31mred` + strings.Repeat(`\x00`, 50) + `"` // the first 60 bytes
	assert.Equal(t, "fine\n"+quoted+"… (5010 bytes in all)\ncafé au lait", re.Output)
}

// A malformed or duplicated result is reported at the run, and the line,
// that printed it.
func TestRunnerMalformedResults(t *testing.T) {
	for _, c := range []struct {
		out   string
		cause Cause
		line  int
		msg   string
	}{
		{"goos: linux\nBenchmarkX-2 1 1000 ns/op\nBenchmarkX-2 1 1010 ns/op\nPASS", Duplicate, 3,
			"lines 2 and 3 of its output both give a result of BenchmarkX-2: a run must print one result per benchmark (-test.count=1)"},
		{"BenchmarkX-2 1 +Inf ns/op", Malformed, 1, "line 1 of its output gives +Inf ns/op, not a finite number: BenchmarkX-2 1 +Inf ns/op"},
		{"log\nBenchmarkX-2 1 NaN ns/op 3 B/op", Malformed, 2, "line 2 of its output gives NaN ns/op, not a finite number: BenchmarkX-2 1 NaN ns/op 3 B/op"},
		// 0 iterations measured nothing (issue 39 item 8): it was judged.
		{"goos: linux\nBenchmarkX-2 0 1000 ns/op", Malformed, 2, "line 2 of its output gives 0 iterations: a result measures at least one: BenchmarkX-2 0 1000 ns/op"},
		{"BenchmarkX-2 1 1000 ns/op 3", Malformed, 1, "line 1 of its output is not a benchmark result (missing units): BenchmarkX-2 1 1000 ns/op 3"},
	} {
		arm := script(t, "bad", "cat <<'END'\n"+c.out+"\nEND")
		plan, err := NewPlan([]Arm{{Name: "ok", Args: script(t, "ok", "echo 'BenchmarkX-2 1 1000 ns/op'").Args}, arm}, 1, 1)
		require.NoError(t, err)
		var out bytes.Buffer
		runs, err := (&Runner{Plan: plan, Out: &out, MaxFailed: 1}).Run(context.Background())
		require.NoError(t, err, "one failure is tolerated")
		require.Len(t, runs, 2)
		for _, r := range runs {
			if r.Arm != "bad" {
				assert.Nil(t, r.Err)
				continue
			}
			require.NotNil(t, r.Err, c.out)
			assert.Equal(t, c.cause, r.Err.Cause, c.out)
			assert.Equal(t, c.line, r.Err.Line, c.out)
			assert.EqualError(t, r.Err.Err, c.msg)
			assert.Empty(t, r.Results)
		}
		res := readAll(t, out.Bytes())
		require.Len(t, res, 1, "only the good run's result is written")
		assert.Equal(t, "ok", res[0].GetConfig(KeyArm))
		assert.Contains(t, out.String(), "# round 1 arm bad lost: "+c.cause.String()+": "+c.msg+"\n")
	}
}

// With MaxFailed, the runner goes on after failures, keeps every good run,
// and stops at the failure after MaxFailed.
func TestRunnerMaxFailed(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "n")
	// Fails on its 2nd, 3rd and 5th run.
	flaky := script(t, "flaky", `n=$(($(cat `+count+` 2>/dev/null || echo 0) + 1)); echo $n > `+count+`
case $n in 2|3|5) echo "flaky run $n failed" >&2; exit 1;; esac
echo "BenchmarkX-2 1 1000 ns/op"`)
	good := script(t, "good", "echo 'BenchmarkX-2 1 1000 ns/op'")
	plan, err := NewPlan([]Arm{good, flaky}, 6, 1)
	require.NoError(t, err)
	var out bytes.Buffer
	var seen int
	runs, err := (&Runner{Plan: plan, Out: &out, MaxFailed: 2, OnRun: func(Run) bool { seen++; return false }}).Run(context.Background())
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 5, re.Round, "the third failure stops the runner")
	assert.Equal(t, "flaky run 5 failed", re.Output)
	assert.Equal(t, len(runs), seen, "OnRun sees failed runs too")
	lost := 0
	for _, r := range runs {
		if r.Err != nil {
			lost++
		}
	}
	assert.Equal(t, 3, lost)
	assert.Len(t, readAll(t, out.Bytes()), len(runs)-3, "every good run is kept")
	for _, round := range []int{2, 3, 5} {
		assert.Contains(t, out.String(), fmt.Sprintf("# round %d arm flaky lost: exited: exit status 1\n", round))
	}
}
