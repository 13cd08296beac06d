package decodegap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/testutil"
)

func TestLastCall(t *testing.T) {
	cases := []struct {
		benchtime string
		n         int
		elapsed   time.Duration
		want      bool
	}{
		{"2000x", 1, 0, false}, // testing's N=1 probe
		{"2000x", 2000, 0, true},
		{"1x", 1, 0, true},
		{"1s", 1, time.Millisecond, false},
		{"1s", 5000, 999 * time.Millisecond, false},
		{"1s", 5000, 1001 * time.Millisecond, true},
		{"1s", 1e9, time.Millisecond, true},
		{"bogus", 3, 0, true},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, lastCall(c.benchtime, c.n, c.elapsed), "%s N=%d elapsed=%v", c.benchtime, c.n, c.elapsed)
	}
}

// compareSeqChild is the "compare-seq" mode: the verdicts are taken as
// decided after round 7 (judgeRounds replaced), so Compare stops there.
func compareSeqChild(b *testing.B) {
	judge := judgeRounds
	judgeRounds = func(c *comparison, pi, rounds int) bool {
		judge(c, pi, rounds)
		return rounds >= 7
	}
	Compare(b, CompareConfig{Window: 8},
		Arm{Name: "fast", Open: Func(spinFor(5 * time.Microsecond))},
		Arm{Name: "slow", Open: Func(spinFor(20 * time.Microsecond))})
}

// compare20Child is the "compare-20" mode: two arms (and the null arm) for
// every round of -count, the verdict never decided early, with the host's
// own contention screen (a shared host marks blocks contended).
func compare20Child(b *testing.B) {
	judge := judgeRounds
	judgeRounds = func(c *comparison, pi, rounds int) bool {
		judge(c, pi, rounds)
		return false
	}
	Compare(b, CompareConfig{Window: 8},
		Arm{Name: "fast", Open: Func(spinFor(5 * time.Microsecond))},
		Arm{Name: "slow", Open: Func(spinFor(10 * time.Microsecond))})
}

// compareAAChild is the "compare-aa" mode: an A/A Compare, arm "cand"
// the same step as arm "base" (and the null arm), for every round of
// -count, with the host's own contention screen, as compare20Child.
func compareAAChild(b *testing.B) {
	judge := judgeRounds
	judgeRounds = func(c *comparison, pi, rounds int) bool {
		judge(c, pi, rounds)
		return false
	}
	Compare(b, CompareConfig{Window: 8},
		Arm{Name: "base", Open: Func(spinFor(5 * time.Microsecond))},
		Arm{Name: "cand", Open: Func(spinFor(5 * time.Microsecond))})
}

// compareWaitChild is the "compare-wait" mode: arm "b"'s second open
// waits until stdin closes, so the test can look at stderr mid-run.
func compareWaitChild(b *testing.B) {
	opens := 0
	Compare(b, CompareConfig{Window: 8, NoNullArm: true},
		Arm{Name: "a", Open: Func(spinFor(2 * time.Microsecond))},
		Arm{Name: "b", Open: func() (Step, func() error, error) {
			if opens++; opens == 2 {
				io.Copy(io.Discard, os.Stdin)
			}
			return spinFor(2 * time.Microsecond), nil, nil
		}})
}

// TestCompareMeasuresEveryCPUSetting: with -cpu 1,2 the -2 lines are
// measured at GOMAXPROCS 2, not copies of the last -1 round.
func TestCompareMeasuresEveryCPUSetting(t *testing.T) {
	out, err := runChildArgs(t, "compare", "-test.benchtime=32x", "-test.count=3", "-test.cpu=1,2")
	require.NoError(t, err, out)
	// Each line's whole set of values: a copy would repeat every one of
	// them (latencies, gaps, counters, contention).
	lines := map[[2]any][]string{}
	for _, r := range benchResults(t, out) {
		arm, procs := armOf(r)
		lines[[2]any{arm, procs}] = append(lines[[2]any{arm, procs}], fmt.Sprint(r.Values))
	}
	for _, arm := range []string{"fast", "slow", "null"} {
		one, two := lines[[2]any{arm, 1}], lines[[2]any{arm, 2}]
		require.Len(t, one, 3, out)
		require.Len(t, two, 3, out)
		for _, l := range two {
			assert.NotContains(t, one, l, "a -2 line is a copy of a -1 line")
		}
	}
	assert.Contains(t, out, "round 3/3, GOMAXPROCS 2: ")
	assert.Contains(t, out, "order at GOMAXPROCS 1 ")
	assert.Contains(t, out, "order at GOMAXPROCS 2 ")
}

// TestCompareStopsWhenDecided: in sequential mode Compare stops once every
// verdict is decided, and testing prints one line per arm per round run,
// none for rounds not run.
func TestCompareStopsWhenDecided(t *testing.T) {
	out, err := runChildArgs(t, "compare-seq", "-test.benchtime=64x", "-test.count=20", "-test.cpu=1", "-test.v") // -v: the blocks' logs
	require.NoError(t, err, out)
	m := regexp.MustCompile(`every verdict decided after (\d+) of 20 rounds \(-count is the most\): stopping`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	rounds, _ := strconv.Atoi(m[1])
	require.Equal(t, 7, rounds)
	lines := map[string]int{}
	for _, r := range benchResults(t, out) {
		arm, _ := armOf(r)
		lines[arm]++
	}
	assert.Equal(t, map[string]int{"fast": rounds, "slow": rounds, "null": rounds}, lines)
	assert.Contains(t, out, fmt.Sprintf("round %d of %d at GOMAXPROCS 1", rounds, rounds))
}

func TestParseCPUAndBenchtime(t *testing.T) {
	got, err := parseCPU("1, 2,4")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 4}, got)
	got, err = parseCPU("")
	require.NoError(t, err)
	assert.Equal(t, []int{runtime.GOMAXPROCS(0)}, got)
	_, err = parseCPU("1,x")
	assert.EqualError(t, err, `-cpu = "1,x": "x" is not a positive whole number`)
	_, err = parseCPU("0")
	assert.Error(t, err)

	n, d, err := parseBenchtime("2000x")
	require.NoError(t, err)
	assert.Equal(t, 2000, n)
	assert.Zero(t, d)
	n, d, err = parseBenchtime("1.5s")
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, 1500*time.Millisecond, d)
	for _, bad := range []string{"0x", "-3x", "x", "soon", "-1s"} {
		_, _, err := parseBenchtime(bad)
		assert.Error(t, err, bad)
	}
}

// TestArmNoteNamesTheFlaggedRounds: the one line an arm prints without -v
// names each flag with its rounds, and is empty when nothing was flagged.
func TestArmNoteNamesTheFlaggedRounds(t *testing.T) {
	var rs []*result
	for r := 1; r <= 8; r++ {
		res := &result{round: r, procs: 2, reached: true}
		rs = append(rs, res)
	}
	assert.Empty(t, armNote("fast", rs))
	for _, r := range []int{1, 2, 3, 7} {
		rs[r-1].reached = false
	}
	rs[4].stall = stallInfo{maxNs: 1e9, phase: StallWarmup, ratio: 1e4}
	rs[5].traceErr = errors.New("read-only")
	assert.Equal(t, "arm fast: not steady in rounds 1–3, 7; a step ≥10× p50 outside the window (max-ns/op) in round 5; trace not written in round 6; -v prints each block's log", armNote("fast", rs))
	rs[6].procs = 4
	assert.Contains(t, armNote("fast", rs), "not steady in rounds 1–3 at GOMAXPROCS 2, round 7 at GOMAXPROCS 4;")
}

// proseLines are the lines of a child's stdout that are neither benchfmt
// result lines nor configuration lines (key: value): what a person reads
// besides the numbers.
func proseLines(out string) []string {
	result := regexp.MustCompile(`^Benchmark\S+\s+\d+\s`)
	config := regexp.MustCompile(`^[a-z][^\sA-Z:]*: `)
	var ls []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !result.MatchString(l) && !config.MatchString(l) {
			ls = append(ls, l)
		}
	}
	return ls
}

// TestCompareIsQuietWithoutVerbose: a 20-round A/A Compare (two arms of
// the same step and the null arm) prints, on stdout without -v, its result
// lines, at most one note line per arm and the summary: no block's log
// (issue 23: 638 lines, 387 of them over 160 characters), and at most 60
// lines besides its result and configuration lines (issue 33: 90, most of
// them the lists of stalled and quarantined rounds and the prose legend).
// With -v every block's log is back, and the lists in full.
func TestCompareIsQuietWithoutVerbose(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 20-round Compare twice")
	}
	run := func(args ...string) string {
		cmd := testutil.Command([]string{childEnv + "=compare-aa"}, append([]string{"-test.run=^$", "-test.bench=^BenchmarkChild$", "-test.benchtime=64x", "-test.count=20"}, args...)...)
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		require.Len(t, benchResults(t, string(out)), 60, "%s", out)
		return string(out)
	}
	out := run()
	long := 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		// The result lines are benchfmt's; the order line is the summary's
		// (compare.go), one word per block.
		if len(l) > 160 && !strings.HasPrefix(l, "BenchmarkChild/") && !strings.HasPrefix(l, "    order at ") && !strings.Contains(l, "-v prints each block's log") {
			long++
		}
	}
	assert.Zero(t, long, "no long log line:\n%s", out)
	assert.NotContains(t, out, "steady state: ")
	assert.LessOrEqual(t, strings.Count(out, "-v prints each block's log"), 3, "one note per arm at the most")

	prose := proseLines(out)
	t.Logf("stdout: %d lines besides the result and configuration lines", len(prose))
	assert.LessOrEqual(t, len(prose), 60, "%s", strings.Join(prose, "\n"))
	// The lists are counted, one line each, and the legend is short.
	assert.NotContains(t, out, "stalled rounds of ")
	assert.NotContains(t, out, "quarantined rounds of ")
	flat := strings.Join(strings.Fields(out), " ")
	assert.NotContains(t, flat, "two one-sided tests")
	assert.NotContains(t, flat, "under Holm's procedure")
	assert.LessOrEqual(t, strings.Count(out, "    stalled rounds ("), 1)
	assert.LessOrEqual(t, strings.Count(out, "    quarantined rounds ("), 1)
	assert.Equal(t, quarantinedInTable(out) > 0, strings.Contains(out, "    quarantined rounds (the +Nq of the rounds column"), "the count line when the table shows +Nq:\n%s", out)

	verbose := run("-test.v")
	assert.Contains(t, verbose, "round 20 of 20 at GOMAXPROCS")
	assert.Contains(t, verbose, "steady state: ")
	sum := verbose[strings.Index(verbose, "--- decodegap.Compare: "):]
	assert.NotContains(t, sum, "-v lists them")
	assert.Equal(t, quarantinedInTable(sum) > 0, strings.Contains(sum, "quarantined rounds of "), "the full list when the table shows +Nq:\n%s", sum)
	if regexp.MustCompile(`(?m)^ +\S.*sec/op +equivalent `).MatchString(sum) {
		assert.Contains(t, strings.Join(strings.Fields(sum), " "), "two one-sided tests", sum)
	}
}

// quarantinedInTable is the number of verdict rows whose rounds column
// shows quarantined rounds (+Nq).
func quarantinedInTable(out string) int {
	return len(regexp.MustCompile(`(?m)^ +\S.* \d+\+\d+q +`).FindAllString(out, -1))
}
