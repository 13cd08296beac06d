package decodegap

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Contains(t, out, "round 3/3, GOMAXPROCS 2, arm ")
	assert.Contains(t, out, "order at GOMAXPROCS 1 ")
	assert.Contains(t, out, "order at GOMAXPROCS 2 ")
}

// TestCompareStopsWhenDecided: in sequential mode Compare stops once every
// verdict is decided, and testing prints one line per arm per round run,
// none for rounds not run.
func TestCompareStopsWhenDecided(t *testing.T) {
	out, err := runChildArgs(t, "compare-seq", "-test.benchtime=64x", "-test.count=20", "-test.cpu=1")
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
