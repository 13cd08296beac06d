package decodegap

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
)

// spinFor returns a step that spins for d.
func spinFor(d time.Duration) Step {
	return func() error {
		end := gap.Now() + int64(d)
		for gap.Now() < end {
		}
		return nil
	}
}

// compareChild is BenchmarkChild's "compare" mode: arm "slow" does twice
// the work of arm "fast"; opens and closes are logged.
func compareChild(b *testing.B) {
	var opened, closed int
	open := func(d time.Duration) Opener {
		return func() (Step, func() error, error) {
			opened++
			if opened-closed != 1 {
				return nil, nil, errors.New("an arm was opened while another was still open")
			}
			return spinFor(d), func() error { closed++; return nil }, nil
		}
	}
	Compare(b, Config{Window: 8, Seed: 3, Parity: func() error { fmt.Fprintln(os.Stderr, "parity checked"); return nil }},
		Arm{Name: "fast", Open: open(5 * time.Microsecond)},
		Arm{Name: "slow", Open: open(10 * time.Microsecond)})
}

func TestCompareInterleavesArmsAndReportsEachRound(t *testing.T) {
	out, err := runChildArgs(t, "compare", "-test.benchtime=64x", "-test.count=4")
	require.NoError(t, err, out)

	// Parse the output as benchstat would.
	rd := benchfmt.NewReader(strings.NewReader(out), "child")
	counts := map[string]int{}
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			name := regexp.MustCompile(`-\d+$`).ReplaceAllString(string(r.Name.Full()), "")
			counts[name]++
			assert.Equal(t, 64, r.Iters, name)
			_, hasThreads := r.Value("threads")
			assert.True(t, hasThreads, "every block reports its census and contention: %s", name)
			if strings.HasSuffix(name, "arm=null") {
				_, ok := r.Value("null-ratio")
				assert.True(t, ok, "the null arm's line carries null-ratio")
			}
		}
	}
	require.NoError(t, rd.Err())
	assert.Equal(t, map[string]int{"Child/arm=fast": 4, "Child/arm=slow": 4, "Child/arm=null": 4}, counts)

	// The order actually used: four rounds, each a permutation of the three
	// arms, no arm twice in a row across a round boundary.
	m := regexp.MustCompile(`order \(Config.Seed = 3\):(.*)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	rounds := strings.Split(m[1], "|")
	require.Len(t, rounds, 4)
	prevLast := ""
	for _, r := range rounds {
		arms := strings.Fields(r)
		assert.ElementsMatch(t, []string{"fast", "slow", "null"}, arms)
		assert.NotEqual(t, prevLast, arms[0])
		prevLast = arms[2]
	}
	assert.Contains(t, out, "slow vs fast: ns/op ")
	assert.Contains(t, out, "; p50-ns/op ")
	assert.Contains(t, out, "; cpu/wall ")
	assert.Contains(t, out, "round 4 of 4 (decodegap.Compare: the order and the verdicts head")
	assert.NotContains(t, out, "opened while another was still open")
	assert.Equal(t, 1, strings.Count(out, "parity checked"), "Config.Parity runs once, before the rounds")
}

func TestCheckArms(t *testing.T) {
	open := Opener(func() (Step, func() error, error) { return func() error { return nil }, nil, nil })
	cases := []struct {
		arms []Arm
		cfg  Config
		want string
	}{
		{nil, Config{}, "no arms: pass at least one Arm"},
		{[]Arm{{Name: "a b", Open: open}}, Config{}, `arms[0].Name = "a b": want a non-empty name without white space or '/'`},
		{[]Arm{{Name: "null", Open: open}}, Config{}, `arms[0].Name = "null" is the null arm's name`},
		{[]Arm{{Name: "a", Open: open}, {Name: "a", Open: open}}, Config{}, `arms[1].Name = "a" is used twice`},
		{[]Arm{{Name: "a"}}, Config{}, `arms[0].Open (arm "a") is nil`},
		{[]Arm{{Name: "a", Open: open}}, Config{Null: open}, "Config.Null is set: Compare opens its own null arm"},
		{[]Arm{{Name: "a", Open: open}}, Config{Open: open}, "Config.Open is set: Compare opens each arm with its Arm.Open"},
		{[]Arm{{Name: "a", Open: open}}, Config{Sessions: 2}, "Config.Sessions = 2: Compare runs one session per arm"},
	}
	for _, c := range cases {
		err := checkArms(c.arms, &c.cfg)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	cfg := Config{NoNullArm: true}
	assert.NoError(t, checkArms([]Arm{{Name: "null", Open: open}}, &cfg))
}

func TestCompareSummaryWithoutNullArm(t *testing.T) {
	cfg := Config{NoNullArm: true}
	lines := compareSummary(&cfg, []Arm{{Name: "a"}, {Name: "b"}}, [][]int{{1, 0}, {0, 1}}, nil)
	assert.Equal(t, "order (Config.Seed = 0): b a | a b", lines[0])
	assert.Contains(t, lines[1], "verdicts: none without a null arm (Config.NoNullArm is set)")
}
