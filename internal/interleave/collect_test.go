package interleave

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
)

const collectInput = `goos: linux
pkg: example.com/x
arm: old
round: 1
screen: clean
BenchmarkA-2 100 1000 ns/op 10 B/op
BenchmarkB-2 100 2000 ns/op
arm: new
BenchmarkA-2 100 1100 ns/op 11 B/op
arm: null
BenchmarkA-2 100 1010 ns/op 10 B/op
BenchmarkB-2 100 2020 ns/op
arm: old
round: 2
BenchmarkA-2 100 990 ns/op 10 B/op
BenchmarkB-2 100 1990 ns/op
arm: null
BenchmarkA-2 100 995 ns/op 10 B/op
arm: new
BenchmarkA-2 100 1090 ns/op 11 B/op
BenchmarkB-2 100 2190 ns/op
arm: other
BenchmarkA-2 100 500 ns/op 5 B/op
round:
arm:
BenchmarkUnlabelled-2 100 1 ns/op
`

func TestJudgeLaysOutTheTable(t *testing.T) {
	res := readAll(t, []byte(collectInput))
	p := judge.Policy{Base: "old", Null: "null", Units: []string{"sec/op", "B/op"}}
	rows, tb, err := Judge(res, p)
	require.NoError(t, err)
	var got []string
	for _, r := range rows {
		got = append(got, r.Kind.String()+" "+r.Bench+" "+r.Unit+" "+r.Arm)
	}
	assert.Equal(t, []string{"candidate A-2 sec/op new", "candidate A-2 B/op new", "candidate A-2 sec/op other", "candidate A-2 B/op other",
		"candidate B-2 sec/op new", "null-check A-2 sec/op null", "null-check A-2 B/op null", "null-check B-2 sec/op null"}, got)
	a := tb.Samples("A-2", "sec/op", "old", "new", "null")
	assert.Equal(t, []int{1, 2}, a.Round)
	assert.InDeltaSlice(t, []float64{1000e-9, 990e-9}, a.Base, 1e-18)
	assert.InDeltaSlice(t, []float64{1100e-9, 1090e-9}, a.Candidate, 1e-18)
	assert.InDeltaSlice(t, []float64{1010e-9, 995e-9}, a.Null, 1e-18)
	other := tb.Samples("A-2", "sec/op", "old", "other", "null")
	assert.True(t, math.IsNaN(other.Candidate[0]), "arm other did not run in round 1")
	b := tb.Samples("B-2", "sec/op", "old", "new", "null")
	assert.True(t, math.IsNaN(b.Candidate[0]))
	assert.True(t, math.IsNaN(b.Null[1]))
	assert.Equal(t, []string{"A-2", "B-2"}, tb.Benchmarks(), "BenchmarkUnlabelled has no arm and round keys")
}

// benchfmt keeps "0 ns/op" in ns/op; the table puts it with the sec/op values.
func TestJudgeTidiesZero(t *testing.T) {
	in := "arm: a\nround: 1\nBenchmarkZ 1 0 gc-ns/op\narm: b\nBenchmarkZ 1 5 gc-ns/op\narm: n\nBenchmarkZ 1 0 gc-ns/op\n"
	res := readAll(t, []byte(in))
	require.Equal(t, "gc-ns/op", res[0].Values[0].Unit, "benchfmt's own reading")
	require.Equal(t, "gc-sec/op", res[1].Values[0].Unit)
	rows, tb, err := Judge(res, judge.Policy{Base: "a", Null: "n", Units: []string{"gc-sec/op"}})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, "gc-sec/op", rows[0].Unit)
	s := tb.Samples("Z", "gc-sec/op", "a", "b", "n")
	assert.Equal(t, []float64{0}, s.Base)
	assert.Equal(t, []float64{5e-9}, s.Candidate)
}

func TestJudgeErrors(t *testing.T) {
	res := readAll(t, []byte(collectInput))
	_, _, err := Judge(res, judge.Policy{Base: "old", Null: "nul"})
	assert.EqualError(t, err, `no results for arm "nul" (arms seen: [old new null other]): the base and null arms must both be in the input`)

	dup := strings.Replace(collectInput, "arm: other\n", "arm: new\n", 1)
	_, _, err = Judge(readAll(t, []byte(dup)), judge.Policy{Base: "old"})
	assert.EqualError(t, err, "out.txt:23: round 2 has two results of BenchmarkA-2 for arm new: run each arm once per round (-test.count=1)")

	bad := strings.Replace(collectInput, "round: 2", "round: two", 1)
	_, _, err = Judge(readAll(t, []byte(bad)), judge.Policy{Base: "old"})
	assert.EqualError(t, err, `out.txt:15: round: "two" is not a round number`)
}

// With only the base and the null arm (decodegap ort with one -arm), the
// rows are the null arm's A/A rows, with no arm to calibrate them.
func TestJudgeBaseAndNullOnly(t *testing.T) {
	in := "arm: a\nround: 1\nBenchmarkZ 1 100 ns/op\narm: n\nBenchmarkZ 1 101 ns/op\n" +
		"round: 2\narm: n\nBenchmarkZ 1 99 ns/op\narm: a\nBenchmarkZ 1 100 ns/op\n"
	rows, tb, err := Judge(readAll(t, []byte(in)), judge.Policy{Base: "a", Null: "n"})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, "n", rows[0].Arm)
	assert.Equal(t, report.NullCheck, rows[0].Kind)
	s := tb.Samples("Z", "sec/op", "a", "n", "")
	assert.InDeltaSlice(t, []float64{100e-9, 100e-9}, s.Base, 1e-18)
	assert.InDeltaSlice(t, []float64{101e-9, 99e-9}, s.Candidate, 1e-18)
	assert.Nil(t, s.Null)
}
