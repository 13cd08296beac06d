package interleave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/runner"
)

// fakeArm runs this test binary as a fake benchmark binary (see TestMain).
func fakeArm(name string, args ...string) Arm {
	return Arm{Name: name, Args: append([]string{os.Args[0]}, args...)}
}

// childEnv marks the child; GORACE keeps a -race child from sleeping 1 s at
// exit.
func childEnv() []string {
	return append(os.Environ(), "NULLBAND_CHILD=1", "GORACE=atexit_sleep_ms=0")
}

func readAll(t *testing.T, b []byte) []*benchfmt.Result {
	t.Helper()
	rd := benchfmt.NewReader(bytes.NewReader(b), "out.txt")
	var out []*benchfmt.Result
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			out = append(out, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("output does not parse: %v", rec)
		}
	}
	require.NoError(t, rd.Err())
	return out
}

func TestRunnerWritesEveryRunInPlanOrder(t *testing.T) {
	arms := []Arm{fakeArm("old", "-value=1000"), fakeArm("new", "-value=1100"), fakeArm("null", "-value=1001")}
	plan, err := NewPlan(arms, 6, 3)
	require.NoError(t, err)
	var out, progress bytes.Buffer
	var n atomic.Int32
	var cpu atomic.Int64
	screener := ScreenerFunc(func() func(time.Duration) ScreenResult {
		i := n.Add(1)
		return func(child time.Duration) ScreenResult {
			cpu.Add(int64(child))
			if i%4 == 0 {
				return ScreenResult{Verdict: "contended", Detail: fmt.Sprintf("foreign 22%% on CPU 1 (run %d)", i)}
			}
			return ScreenResult{Verdict: "clean"}
		}
	})
	clock := time.Unix(0, 0)
	r := &Runner{Plan: plan, Out: &out, Progress: &progress, Screener: screener, Env: childEnv(),
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	runs, err := r.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, runs, 18)

	res := readAll(t, out.Bytes())
	require.Len(t, res, 18, "one result per run")
	order := orders(plan)
	for i, rr := range res {
		round, pos := i/3, i%3
		want := plan.Arms[order[round][pos]].Name
		assert.Equal(t, want, rr.GetConfig(KeyArm), "run %d", i)
		assert.Equal(t, fmt.Sprint(round+1), rr.GetConfig(KeyRound))
		assert.Equal(t, "example.com/fake", rr.GetConfig("pkg"), "the child's own keys pass through")
		screen := "clean"
		if (i+1)%4 == 0 {
			screen = "contended"
		}
		assert.Equal(t, screen, rr.GetConfig(KeyScreen), "run %d", i)
		assert.Equal(t, "Fake-2", string(rr.Name.Full()))
		assert.Equal(t, runs[i].Arm, want)
		assert.Equal(t, round+1, runs[i].Round)
		assert.Equal(t, pos+1, runs[i].Pos)
	}
	assert.Positive(t, cpu.Load(), "the screen is given the children's CPU time")
	assert.Contains(t, out.String(), "# round 2 arm "+plan.Arms[order[1][0]].Name+" screen contended: foreign 22% on CPU 1 (run 4)\n")
	assert.Contains(t, out.String(), "# round 2 order "+plan.OrderString(order[1])+"\n")

	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	require.Len(t, lines, 18)
	assert.Equal(t, fmt.Sprintf("round 1/6  arm %s (1/3)  elapsed 1s  ETA unknown", plan.Arms[order[0][0]].Name), lines[0])
	// The second progress line: 2 s elapsed over 1 finished run (the
	// clock ticks once per call), 17 to go.
	assert.Equal(t, fmt.Sprintf("round 1/6  arm %s (2/3)  elapsed 2s  ETA 34s", plan.Arms[order[0][1]].Name), lines[1])
	assert.Regexp(t, regexp.MustCompile(`^round 6/6  arm \w+ \(3/3\)  elapsed 18s  ETA 1.1s$`), lines[17])

	// Read back: one value per arm and round.
	tb, err := judge.FromBenchfmt(res)
	require.NoError(t, err)
	require.Equal(t, []string{"Fake-2"}, tb.Benchmarks())
	s := tb.Samples("Fake-2", "sec/op", "old", "new", "null")
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, s.Round)
	for i := range 6 {
		assert.InDelta(t, 1.0e-6, s.Base[i], 1e-15)
		assert.InDelta(t, 1.1e-6, s.Candidate[i], 1e-15)
		assert.InDelta(t, 1.001e-6, s.Null[i], 1e-15)
	}
}

// OnRun sees every run as it ends and can stop the Runner.
func TestRunnerOnRunStops(t *testing.T) {
	plan, err := NewPlan([]Arm{fakeArm("a"), fakeArm("b")}, 1000, 1)
	require.NoError(t, err)
	var out bytes.Buffer
	var seen []string
	r := &Runner{Plan: plan, Out: &out, Env: childEnv(), OnRun: func(run Run) bool {
		seen = append(seen, fmt.Sprintf("%d.%d %s %d", run.Round, run.Pos, run.Arm, len(run.Results)))
		return run.Round == 2 && run.Pos == 2
	}}
	runs, err := r.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, runs, 4)
	require.Len(t, seen, 4)
	assert.Regexp(t, `^2\.2 [ab] 1$`, seen[3])
	assert.Len(t, readAll(t, out.Bytes()), 4)
	assert.NotContains(t, out.String(), "# round 3 order")
}

func TestRunnerNoScreener(t *testing.T) {
	plan, err := NewPlan([]Arm{fakeArm("a"), fakeArm("b")}, 1, 1)
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = (&Runner{Plan: plan, Out: &out, Env: childEnv(), NoScreen: "hostmon has no screen yet"}).Run(context.Background())
	require.NoError(t, err)
	for _, r := range readAll(t, out.Bytes()) {
		assert.Equal(t, "unavailable", r.GetConfig(KeyScreen))
	}
	assert.Contains(t, out.String(), "screen unavailable: hostmon has no screen yet\n")
}

func TestRunnerStopsAtFailingRun(t *testing.T) {
	arms := []Arm{fakeArm("old"), fakeArm("bad", "-fail"), fakeArm("null")}
	plan, err := NewPlan(arms, 3, 5)
	require.NoError(t, err)
	var out bytes.Buffer
	runs, err := (&Runner{Plan: plan, Out: &out, Env: childEnv()}).Run(context.Background())
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "bad", re.Arm)
	assert.Equal(t, 1, re.Round)
	require.NotEmpty(t, runs)
	exit := runs[len(runs)-1].Exit
	assert.Equal(t, runner.Failed, exit.Outcome)
	assert.Equal(t, 3, exit.ExitCode)
	assert.Equal(t, "child: step 17 failed: boom", re.Output)
	assert.Equal(t, Exited, re.Cause)
	assert.Equal(t, fmt.Sprintf("arm bad, round 1: %s -fail: exit status 3; its output:\nchild: step 17 failed: boom", os.Args[0]), err.Error())
	// The runs before it in round 1 finished and were written; the
	// failed run is the last run returned, and its cause is in Out.
	before := 0
	for _, a := range orders(plan)[0] {
		if plan.Arms[a].Name == "bad" {
			break
		}
		before++
	}
	require.Len(t, runs, before+1)
	assert.Same(t, re, runs[before].Err)
	assert.Empty(t, runs[before].Results)
	assert.Len(t, readAll(t, out.Bytes()), before)
	assert.Contains(t, out.String(), "# round 1 arm bad lost: exited: exit status 3\n")
}

func TestRunnerNoResults(t *testing.T) {
	plan, err := NewPlan([]Arm{fakeArm("quiet", "-none")}, 1, 1)
	require.NoError(t, err)
	_, err = (&Runner{Plan: plan, Out: &bytes.Buffer{}, Env: childEnv()}).Run(context.Background())
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, NoResults, re.Cause)
	assert.Equal(t, "it exited 0 but printed no benchmark results: check that the benchmark pattern (-test.bench) matches a benchmark in it", re.Err.Error())
	assert.Equal(t, "PASS", re.Output, "stdout when stderr is empty")
}

func TestRunnerInterrupted(t *testing.T) {
	arms := []Arm{fakeArm("fast"), fakeArm("slow", "-sleep=30s")}
	plan, err := NewPlan(arms, 2, 1)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	// Cancel as soon as the slow arm's process has started.
	r := &Runner{Plan: plan, Out: &out, Env: childEnv(), Screener: ScreenerFunc(func() func(time.Duration) ScreenResult {
		return func(time.Duration) ScreenResult { return ScreenResult{Verdict: "clean"} }
	})}
	slowPos := 0
	for i, a := range orders(plan)[0] {
		if plan.Arms[a].Name == "slow" {
			slowPos = i
		}
	}
	r.Progress = &lineHook{fn: func(line string) {
		if strings.Contains(line, "arm slow") {
			go func() { time.Sleep(200 * time.Millisecond); cancel() }()
		}
	}}
	t0 := time.Now()
	runs, err := r.Run(ctx)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), err)
	assert.Contains(t, err.Error(), fmt.Sprintf("interrupted in round 1, arm slow, after %d of 4 runs", slowPos))
	assert.Len(t, runs, slowPos)
	assert.Len(t, readAll(t, out.Bytes()), slowPos)
	assert.Less(t, time.Since(t0), 25*time.Second, "the slow child was stopped, not waited for")
}

type lineHook struct{ fn func(string) }

func (h *lineHook) Write(p []byte) (int, error) { h.fn(string(p)); return len(p), nil }

func headTailOf(s string) string {
	var o outputReader
	o.read(strings.NewReader(s))
	return o.tail.String()
}

func TestHeadTail(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprint(i))
	}
	got := headTailOf(strings.Join(lines, "\n") + "\n")
	assert.Equal(t, "1\n2\n3\n4\n5\n[… 10 lines left out]\n16\n17\n18\n19\n20\n21\n22\n23\n24\n25\n26\n27\n28\n29\n30", got)
	assert.Equal(t, strings.Join(lines[:21], "\n"), headTailOf(strings.Join(lines[:21], "\n")), "21 lines are kept whole")
	assert.Equal(t, "a\n\nb", headTailOf("a\n\nb\n"), "an empty line is a line")
}
