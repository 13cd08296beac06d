package decodegap

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/decodegap/internal/cpucost"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/prreport"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

// readRoutes reads testdata/routes.txt with the arms renamed: base,
// cand and null become names[0], names[1] and names[2].
func readRoutes(t *testing.T, names [3]string) []*benchfmt.Result {
	t.Helper()
	data, err := os.ReadFile("testdata/routes.txt")
	require.NoError(t, err)
	text := strings.NewReplacer("arm: base\n", "arm: "+names[0]+"\n", "arm: cand\n", "arm: "+names[1]+"\n",
		"arm: null\n", "arm: "+names[2]+"\n").Replace(string(data))
	rd := benchfmt.NewReader(strings.NewReader(text), "routes.txt")
	var out []*benchfmt.Result
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			out = append(out, r.Clone())
		}
	}
	require.NoError(t, rd.Err())
	return out
}

// canon writes rows for comparison: keyed by kind and unit, with the
// route's own names (arms, package) left out, every number with %v (NaN
// reads as NaN, which == would not match).
func canon(rows []report.Row) []string {
	var out []string
	for _, r := range rows {
		r.Arm, r.Base, r.Pkg = "", "", ""
		out = append(out, fmt.Sprintf("%v %s: %+v", r.Kind, r.Unit, r))
	}
	slices.Sort(out)
	return out
}

// One benchfmt file gives identical verdict rows through Compare's judge,
// decodegap interleave's (and ort's), calibrate's and pr's: the one judge
// (internal/judge) under the one policy, whatever route built the table.
func TestOneFileSameRowsEveryRoute(t *testing.T) {
	opt := nullband.Options{MaxRounds: 20}

	// Compare: blocks by arm and round, as Compare files its results.
	res := readRoutes(t, [3]string{"base", "cand", NullArm})
	c := &comparison{cfg: &CompareConfig{}, arms: []Arm{{Name: "base"}, {Name: "cand"}, {Name: NullArm}}, plan: plan{count: 20}}
	blocks := make([][]judge.Block, 3)
	for _, r := range res {
		a := slices.IndexFunc(c.arms, func(x Arm) bool { return x.Name == r.GetConfig(judge.KeyArm) })
		round, err := strconv.Atoi(r.GetConfig(judge.KeyRound))
		require.NoError(t, err)
		require.Len(t, blocks[a], round-1, "one block per arm and round, in order")
		blocks[a] = append(blocks[a], judge.BlockOf(r))
	}
	require.Equal(t, judge.Policy{Base: "base", Null: NullArm, Options: opt}, c.policy(), "Compare's policy is the default one")
	compare, err := judgeBlocks("Step-2", []string{"base", "cand", NullArm}, blocks, c.policy())
	require.NoError(t, err)

	// interleave and ort: the output file read back.
	inter, _, err := interleave.Judge(res, judge.Policy{Base: "base", Null: "null", Options: opt})
	require.NoError(t, err)

	// calibrate: its arms a, a2 and null, under calibrate's policy with
	// the same options (cmd/decodegap's TestCalibrateJudgesAsInterleave
	// ties calibrate's rows to this path).
	calib, _, err := interleave.Judge(readRoutes(t, [3]string{"a", "a2", "null"}), judge.Policy{Base: "a", Null: "null", Options: opt})
	require.NoError(t, err)

	// pr: a job given the file's rounds one at a time, as its scheduler
	// does, judged by JudgeJobs.
	prRes := readRoutes(t, [3]string{prreport.ArmBase, prreport.ArmHead, prreport.ArmNull})
	job := &prreport.Job{Pkg: "example.com/trials", Name: "BenchmarkStep"}
	for round := 1; round <= 14; round++ {
		var in []*benchfmt.Result
		for _, r := range prRes {
			if r.GetConfig(judge.KeyRound) == strconv.Itoa(round) {
				in = append(in, r)
			}
		}
		require.NoError(t, job.Add(round, in))
		job.Rounds = round
	}
	sched := &prreport.Scheduler{Options: opt}
	pr, un, err := prreport.JudgeJobs([]*prreport.Job{job}, sched.Policy())
	require.NoError(t, err)
	require.Empty(t, un)

	want := canon(compare)
	require.Len(t, want, 6, "three units, candidate and A/A rows")
	assert.Equal(t, want, canon(inter), "interleave")
	assert.Equal(t, want, canon(calib), "calibrate")
	assert.Equal(t, want, canon(pr), "pr")

	// The file's marks reached the verdict: round 6's base block stalled,
	// rounds 4 and 9 had the null arm alone contended.
	for _, r := range compare {
		assert.Equal(t, []int{6}, r.Stalled, "%v %s", r.Kind, r.Unit)
		assert.Equal(t, 14, r.Verdict.Given)
	}
	cpu := compare[slices.IndexFunc(compare, func(r report.Row) bool { return r.Kind == report.Candidate && r.Unit == "cpu-sec/op" })]
	assert.Equal(t, nullband.Slower, cpu.Verdict.Outcome, "5% more CPU time, at 0.8% noise")
}

// blockOf files a block's values as its result line prints them: the
// table Compare judges equals the one a benchfmt reader builds from
// Compare's own output.
func TestBlockOfIsThePrintedLine(t *testing.T) {
	r := &result{lat: latency{mean: 35123.456, p50: 34999.5}, out: outliers{count: 1, largest: 4e5, share: 0.07},
		proc: counterSpan{ok: true, from: 0, to: 2000, wallNs: 2e8, cpuNs: 70123456789, userNs: 5e7,
			cost: cpucost.Cost{Steps: 2000, Ns: 2000*35e6 + 123456789, User: 2000 * 35e6, Sys: 123456789, Loop: 2000 * 35e6}}}
	var b strings.Builder
	b.WriteString("arm: a\nround: 1\n")
	// testing prints each metric with prettyPrint's precision; benchLine
	// prints %g. Print as testing does.
	b.WriteString("BenchmarkX 2000")
	for _, m := range r.metrics() {
		v := reportValue(m.value)
		fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(printed(v), 'f', -1, 64), reportUnit(metric{v, m.unit}))
	}
	b.WriteString("\n")
	rd := benchfmt.NewReader(strings.NewReader(b.String()), "x")
	require.True(t, rd.Scan())
	fromFile := &judge.Table{}
	require.NoError(t, fromFile.AddResult(rd.Result().(*benchfmt.Result)))
	fromCompare := &judge.Table{}
	require.NoError(t, fromCompare.Add("X", "a", 1, blockOf(r)))
	for _, u := range fromFile.Units() {
		assert.Equal(t, fromFile.Value("X", u, "a", 1), fromCompare.Value("X", u, "a", 1), u)
	}
	assert.Equal(t, fromFile.Units(), fromCompare.Units())
	assert.InDelta(t, 35123e-9, fromCompare.Value("X", "sec/op", "a", 1), 1e-15, "testing prints ns/op of 35123.456 as 35123")
	assert.InDelta(t, 35.06e-3, fromCompare.Value("X", "cpu-sec/op", "a", 1), 1e-5, "the step's own CPU plus its open's threads' per step")
}
