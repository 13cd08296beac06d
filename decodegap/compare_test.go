package decodegap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/decodegap/internal/cpucost"
	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/quantile"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/testutil"
	"github.com/gapbench/gapbench/nullband"
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
	// A screen that marks nothing contended: on a loaded host every round
	// would be quarantined and the verdicts undecided.
	never := hostmon.Thresholds{ForeignBusyPct: 1e9, SiblingBusyPct: 1e9, RunQueueWaitPct: 1e9, StealPct: 1e9, PSISomePct: 1e9, Load1PerCPU: 1e9, ThrottledPct: 1e9}
	Compare(b, CompareConfig{Window: 8, Seed: 3, Screen: Screen{Thresholds: never}, Parity: func() error { fmt.Fprintln(os.Stderr, "parity checked"); return nil }},
		Arm{Name: "fast", Open: open(5 * time.Microsecond)},
		Arm{Name: "slow", Open: open(10 * time.Microsecond)})
}

// compareFailChild is the "compare-fail" mode: arm "b"'s third open fails,
// or returns a nil step with DECODEGAP_TEST_NIL=1.
func compareFailChild(b *testing.B) {
	opens := 0
	Compare(b, CompareConfig{Window: 8, NoNullArm: true},
		Arm{Name: "a", Open: Func(spinFor(2 * time.Microsecond))},
		Arm{Name: "b", Open: func() (Step, func() error, error) {
			opens++
			switch {
			case opens < 3:
				return spinFor(2 * time.Microsecond), nil, nil
			case os.Getenv("DECODEGAP_TEST_NIL") == "1":
				return nil, nil, nil
			case os.Getenv("DECODEGAP_TEST_PANIC") == "1":
				steps := 0
				return func() error {
					if steps++; steps == 5 {
						panic("index out of range in the decoder")
					}
					return nil
				}, nil, nil
			}
			return nil, nil, errors.New("the model file vanished")
		}})
}

// benchResults parses benchfmt results out of a child's output.
func benchResults(t *testing.T, out string) []*benchfmt.Result {
	t.Helper()
	return testutil.ResultsString(t, out)
}

// armOf returns a result's arm and GOMAXPROCS as benchfmt reads them.
func armOf(r *benchfmt.Result) (arm string, procs int) {
	_, parts := r.Name.Parts()
	procs = 1
	for _, p := range parts {
		switch {
		case strings.HasPrefix(string(p), "/arm="):
			arm = strings.TrimPrefix(string(p), "/arm=")
		case strings.HasPrefix(string(p), "-"):
			procs, _ = strconv.Atoi(string(p[1:]))
		}
	}
	return arm, procs
}

func TestCompareInterleavesArmsAndReportsEachRound(t *testing.T) {
	// Up to ten rounds: a few more than the fewest that give the verdict
	// an interval let it decide on a busy host, where a round may be
	// spoilt; Compare stops once it has (here within 4 to 10 rounds: a
	// spin twice as long is slower and takes more CPU on every metric).
	out, err := runChildArgs(t, "compare", "-test.benchtime=64x", "-test.count=10", "-test.cpu=1", "-test.v") // -v: the blocks' logs
	require.NoError(t, err, out)

	p50 := map[string][]float64{}
	for _, r := range benchResults(t, out) {
		arm, procs := armOf(r)
		assert.Equal(t, 1, procs)
		assert.Equal(t, 64, r.Iters, arm)
		_, hasThreads := r.Value("threads")
		assert.True(t, hasThreads, "every block reports its census and contention: %s", arm)
		_, hasNull := r.Value("null-ratio")
		assert.Equal(t, arm == "null", hasNull, "only the null arm's line carries null-ratio: %s", arm)
		v, ok := r.Value("p50-sec/op")
		require.True(t, ok)
		p50[arm] = append(p50[arm], v)
	}
	n := len(p50["fast"])
	require.GreaterOrEqual(t, n, 4, out)
	require.Len(t, p50["slow"], n)
	require.Len(t, p50["null"], n)
	for k := range n {
		// Spinning is at least as long as asked.
		assert.GreaterOrEqual(t, p50["slow"][k], 10e-6, "round %d", k+1)
		assert.GreaterOrEqual(t, p50["fast"][k], 5e-6, "round %d", k+1)
	}
	// The median step of a 10 µs spin against a 5 µs one, over the rounds.
	assert.Greater(t, quantile.Of(p50["slow"], 0.5), 1.5*quantile.Of(p50["fast"], 0.5))

	// The order actually used: each round a permutation of the three arms,
	// no arm twice in a row across a round boundary.
	m := regexp.MustCompile(`order at GOMAXPROCS 1 \(CompareConfig.Seed = 3\):(.*)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	rounds := strings.Split(m[1], "|")
	require.Len(t, rounds, n)
	prevLast := ""
	for _, r := range rounds {
		arms := strings.Fields(r)
		assert.ElementsMatch(t, []string{"fast", "slow", "null"}, arms)
		assert.NotEqual(t, prevLast, arms[0])
		prevLast = arms[2]
	}
	// The verdicts (internal/verdicttext), one row per judged unit.
	assert.Regexp(t, `(?m)^ +arm +metric +verdict +B/A +(9\d(\.\d)?% )?CI +δ / MDE +rounds +benchstat$`, out)
	for _, unit := range []string{"sec/op", "p50-sec/op"} {
		assert.Regexp(t, `(?m)^ +slow +`+regexp.QuoteMeta(unit)+` +(faster|slower|equivalent|undecided) +\d+\.\d{3} `, out)
	}
	// CPU time is worded as CPU, not speed; the null arm's row is the A/A check.
	assert.Regexp(t, `(?m)^ +slow +cpu-sec/op +(more CPU|less CPU|equivalent|undecided) +\d+\.\d{3} `, out)
	assert.Regexp(t, `(?m)^ +null \(A/A check\) +p50-sec/op +(faster|slower|equivalent|undecided) `, out)
	// The median step: slower, by about twice.
	v := regexp.MustCompile(`(?m)^ +slow +p50-sec/op +slower +(\d+\.\d{3}) `).FindStringSubmatch(out)
	require.NotNil(t, v, out)
	ratio, _ := strconv.ParseFloat(v[1], 64)
	assert.Greater(t, ratio, 1.5)
	// Printed once, after the arms' lines, where benchstat skips it.
	assert.Equal(t, 1, strings.Count(out, "--- decodegap.Compare: BenchmarkChild: order and verdicts"))
	assert.Contains(t, out, fmt.Sprintf("round %d of %d at GOMAXPROCS 1 (decodegap.Compare: the order and the verdicts follow the last arm's lines)", n, n))
	assert.NotContains(t, out, "opened while another was still open")
	assert.Equal(t, 1, strings.Count(out, "parity checked"), "CompareConfig.Parity runs once, before the rounds")
	// Progress: one line per block on stderr, between blocks.
	assert.Equal(t, 3*n, strings.Count(out, "decodegap.Compare: BenchmarkChild: round "), out)
	assert.Contains(t, out, fmt.Sprintf("decodegap.Compare: BenchmarkChild: round %d/10, GOMAXPROCS 1, arm ", n))
}

// TestCompareProgressAppearsWhileRunning reads the child's stderr while
// Compare is held inside round 2: both blocks of round 1 have reported
// their progress line, and the child is still running.
func TestCompareProgressAppearsWhileRunning(t *testing.T) {
	cmd := testutil.Command([]string{childEnv + "=compare-wait"}, "-test.run=^$", "-test.bench=^BenchmarkChild$", "-test.benchtime=16x", "-test.count=3", "-test.v")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var progress []string
	for len(progress) < 2 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "decodegap.Compare: BenchmarkChild: round ") {
			progress = append(progress, sc.Text())
		}
	}
	require.Len(t, progress, 2, "two progress lines before the held block")
	for _, l := range progress {
		assert.Regexp(t, `^decodegap.Compare: BenchmarkChild: round 1/3, GOMAXPROCS \d+, arm "[ab]": step p50 \S+, gap \S+; elapsed \S+, ETA \S+$`, l)
	}
	assert.NoError(t, cmd.Process.Signal(syscall.Signal(0)), "the child is still running")
	require.NoError(t, stdin.Close())
	go io.Copy(io.Discard, stderr)
	require.NoError(t, cmd.Wait())
}

func TestCompareFailureKeepsCompletedRounds(t *testing.T) {
	dir := t.TempDir()
	out, err := testutil.Bench(t, []string{childEnv + "=compare-fail", "TMPDIR=" + dir}, "^BenchmarkChild$", "-test.benchtime=32x", "-test.count=4")
	require.Error(t, err, out)
	m := regexp.MustCompile(`decodegap.Compare: round 3 of 4 at GOMAXPROCS \d+, arm "b": opening: the model file vanished; the rounds completed before it are kept in (\S+) \(benchfmt\)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	rs := testutil.ResultsFile(t, m[1])
	require.Len(t, rs, 4, "rounds 1 and 2 of both arms")
	for _, r := range rs {
		_, ok := r.Value("p50-sec/op")
		assert.True(t, ok)
	}

	out, err = testutil.Bench(t, []string{childEnv + "=compare-fail", "TMPDIR=" + dir, "DECODEGAP_TEST_NIL=1"}, "^BenchmarkChild$", "-test.benchtime=32x", "-test.count=4")
	require.Error(t, err)
	assert.Contains(t, out, `arm "b": opening returned a nil step (Arm.Open must return a step or an error)`)
	assert.NotContains(t, out, "SIGSEGV")

	// A step that panics in round 3 keeps rounds 1 and 2, as an error does.
	out, err = testutil.Bench(t, []string{childEnv + "=compare-fail", "TMPDIR=" + dir, "DECODEGAP_TEST_PANIC=1"}, "^BenchmarkChild$", "-test.benchtime=32x", "-test.count=4")
	require.Error(t, err)
	m = regexp.MustCompile(`decodegap.Compare: round 3 of 4 at GOMAXPROCS \d+, arm "b": panic: index out of range in the decoder\n(?s:.*?); the rounds completed before it are kept in (\S+) \(benchfmt\)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Len(t, testutil.ResultsFile(t, m[1]), 4, "rounds 1 and 2 of both arms")
}

func TestCheckArms(t *testing.T) {
	open := Func(func() error { return nil })
	cases := []struct {
		arms []Arm
		want string
	}{
		{nil, "no arms: pass at least one Arm"},
		{[]Arm{{Name: "a b", Open: open}}, `arms[0].Name = "a b": want printable text without white space`},
		{[]Arm{{Name: "a\rb", Open: open}}, `arms[0].Name = "a\rb"`},
		{[]Arm{{Name: "a\u00a0b", Open: open}}, `arms[0].Name = "a\u00a0b"`},
		{[]Arm{{Name: "v-2", Open: open}}, `arms[0].Name = "v-2": want printable text without white space, '/' or '=', not ending in -N (benchstat reads that as GOMAXPROCS)`},
		{[]Arm{{Name: "k=v", Open: open}}, `arms[0].Name = "k=v"`},
		{[]Arm{{Name: "null", Open: open}}, `arms[0].Name = "null" is the null arm's name`},
		{[]Arm{{Name: "a", Open: open}, {Name: "a", Open: open}}, `arms[1].Name = "a" is used twice`},
		{[]Arm{{Name: "a"}}, `arms[0].Open (arm "a") is nil`},
	}
	for _, c := range cases {
		err := checkArms(c.arms, false)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	assert.NoError(t, checkArms([]Arm{{Name: "null", Open: open}}, true))
	assert.NoError(t, checkArms([]Arm{{Name: "v2-fast", Open: open}, {Name: "µs_8", Open: open}}, false))
}

// synthetic returns a comparison of arms base, cand and null over rounds
// rounds: cand's step takes twice base's, the null arm is base again, and
// every arm uses half a core.
func synthetic(rounds int) *comparison {
	rng := rand.New(rand.NewPCG(7, 8))
	c := &comparison{cfg: &CompareConfig{}, arms: []Arm{{Name: "base"}, {Name: "cand"}, {Name: NullArm}},
		plan: plan{procs: []int{1}, count: 20}, res: [][][]*result{make([][]*result, 3)}, rows: make([][]report.Row, 1), judgeErr: make([]error, 1)}
	for a, level := range []float64{1000, 2000, 1000} {
		for range rounds {
			v := level * (1 + 0.01*rng.NormFloat64())
			c.res[0][a] = append(c.res[0][a], &result{lat: latency{mean: v, p50: v},
				proc: counterSpan{ok: true, from: 0, to: 100, wallNs: 1e9, cpuNs: 5e8 + rng.Int64N(1e6),
					cost: cpucost.Cost{Steps: 100, Ns: 100 * (5e6 + float64(rng.Int64N(1e4))), Loop: math.NaN()}}})
		}
	}
	return c
}

func TestJudgeDecidesAndKeepsContendedRounds(t *testing.T) {
	c := synthetic(14)
	assert.False(t, c.judge(0, 3), "three rounds give no interval")
	assert.False(t, c.judge(0, 10), "cpu-sec/op: equivalence needs 14 used rounds (nullband.EqFloor)")
	require.True(t, c.judge(0, 14))
	v := verdictsOf(c.rows[0], report.Candidate)
	require.Len(t, v, 3)
	assert.Equal(t, nullband.Slower, v[0].Outcome, "sec/op")
	assert.InDelta(t, 2, v[0].Ratio, 0.05)
	assert.Equal(t, nullband.Slower, v[1].Outcome, "p50-sec/op")
	assert.Equal(t, nullband.Equivalent, v[2].Outcome, "cpu-sec/op")
	units := []string{}
	for _, r := range c.rows[0] {
		units = append(units, r.Kind.String()+" "+r.Arm+" "+r.Unit)
	}
	assert.Equal(t, []string{"candidate cand sec/op", "candidate cand p50-sec/op", "candidate cand cpu-sec/op",
		"null-check null sec/op", "null-check null p50-sec/op", "null-check null cpu-sec/op"}, units, "the null arm's own rows follow")
	assert.Equal(t, 20, c.plan.count)

	// The base blocks of rounds 4–10 contended (their arms met different
	// weather), and in rounds 4–9 the weather moved the base's values.
	// The marks reach the rows, but with the null arm nullband sets no
	// round aside for them (issue 33: a mark that follows the candidate's
	// slow blocks would set aside the difference judged).
	for i, r := range c.res[0][0][3:10] {
		r.host.ok, r.host.verdict.Contended = true, true
		if i < 6 {
			r.lat.mean *= 0.3
			r.lat.p50 *= 0.3
		}
	}
	c.judge(0, 10)
	v = verdictsOf(c.rows[0], report.Candidate)
	require.NotEmpty(t, v[0].Rounds)
	assert.Equal(t, 0, v[0].Quarantined)
	assert.False(t, v[0].Has(nullband.TooManyQuarantined))
}

// verdictsOf returns the verdicts of the rows of kind k.
func verdictsOf(rows []report.Row, k report.Kind) []nullband.Verdict {
	var v []nullband.Verdict
	for _, r := range rows {
		if r.Kind == k {
			v = append(v, r.Verdict)
		}
	}
	return v
}

// CompareConfig.TimeBudget stops the rounds once it cannot pay for the
// next one at the mean round time so far; the first round always runs.
func TestCompareStopsAtItsTimeBudget(t *testing.T) {
	out, err := runChildArgs(t, "compare-budget", "-test.benchtime=32x", "-test.count=10", "-test.cpu=1")
	require.NoError(t, err, out)
	assert.Contains(t, out, "decodegap.Compare: BenchmarkChild: CompareConfig.TimeBudget 1ns cannot pay for another round after 1 of 10 rounds: stopping")
	n := map[string]int{}
	for _, r := range benchResults(t, out) {
		arm, _ := armOf(r)
		n[arm]++
	}
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "null": 1}, n, "one round of every arm")
}
