package interleave

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestCollect(t *testing.T) {
	res := readAll(t, []byte(collectInput))
	sets, err := Collect(res, "old", "null", nil)
	require.NoError(t, err)
	var got []string
	for _, s := range sets {
		got = append(got, s.Benchmark+" "+s.Unit+" "+s.Candidate)
	}
	assert.Equal(t, []string{"A-2 sec/op new", "A-2 sec/op other", "A-2 B/op new", "A-2 B/op other", "B-2 sec/op new"}, got)
	a := sets[0].Samples
	assert.Equal(t, []int{1, 2}, a.Round)
	assert.InDeltaSlice(t, []float64{1000e-9, 990e-9}, a.Base, 1e-18)
	assert.InDeltaSlice(t, []float64{1100e-9, 1090e-9}, a.Candidate, 1e-18)
	assert.InDeltaSlice(t, []float64{1010e-9, 995e-9}, a.Null, 1e-18)
	other := sets[1].Samples
	assert.True(t, math.IsNaN(other.Candidate[0]), "arm other did not run in round 1")
	b := sets[4].Samples
	assert.True(t, math.IsNaN(b.Candidate[0]))
	assert.True(t, math.IsNaN(b.Null[1]))

	only, err := Collect(res, "old", "null", []string{"B/op"})
	require.NoError(t, err)
	require.Len(t, only, 2)
	assert.Equal(t, "B/op", only[0].Unit)
}

// benchfmt keeps "0 ns/op" in ns/op; Collect puts it with the sec/op values.
func TestCollectTidiesZero(t *testing.T) {
	in := "arm: a\nround: 1\nBenchmarkZ 1 0 gc-ns/op\narm: b\nBenchmarkZ 1 5 gc-ns/op\narm: n\nBenchmarkZ 1 0 gc-ns/op\n"
	res := readAll(t, []byte(in))
	require.Equal(t, "gc-ns/op", res[0].Values[0].Unit, "benchfmt's own reading")
	require.Equal(t, "gc-sec/op", res[1].Values[0].Unit)
	sets, err := Collect(res, "a", "n", nil)
	require.NoError(t, err)
	require.Len(t, sets, 1)
	assert.Equal(t, "gc-sec/op", sets[0].Unit)
	assert.Equal(t, []float64{0}, sets[0].Samples.Base)
	assert.Equal(t, []float64{5e-9}, sets[0].Samples.Candidate)
}

func TestCollectErrors(t *testing.T) {
	res := readAll(t, []byte(collectInput))
	_, err := Collect(res, "old", "nul", nil)
	assert.EqualError(t, err, `no results for arm "nul" (arms seen: [old new null other]): the base and null arms must both be in the input`)

	dup := strings.Replace(collectInput, "arm: other\n", "arm: new\n", 1)
	_, err = Collect(readAll(t, []byte(dup)), "old", "null", nil)
	assert.EqualError(t, err, "out.txt:23: round 2 has two sec/op results of BenchmarkA-2 for arm new: run each arm once per round (-test.count=1)")

	bad := strings.Replace(collectInput, "round: 2", "round: two", 1)
	_, err = Collect(readAll(t, []byte(bad)), "old", "null", nil)
	assert.EqualError(t, err, `out.txt:15: round: "two" is not a round number`)
}

// With only the base and the null arm (decodegap ort with one -arm), the
// null arm is the candidate: an A/A check with no arm to calibrate it.
func TestCollectBaseAndNullOnly(t *testing.T) {
	in := "arm: a\nround: 1\nBenchmarkZ 1 100 ns/op\narm: n\nBenchmarkZ 1 101 ns/op\n" +
		"round: 2\narm: n\nBenchmarkZ 1 99 ns/op\narm: a\nBenchmarkZ 1 100 ns/op\n"
	sets, err := Collect(readAll(t, []byte(in)), "a", "n", nil)
	require.NoError(t, err)
	require.Len(t, sets, 1)
	assert.Equal(t, "n", sets[0].Candidate)
	assert.InDeltaSlice(t, []float64{100e-9, 100e-9}, sets[0].Samples.Base, 1e-18)
	assert.InDeltaSlice(t, []float64{101e-9, 99e-9}, sets[0].Samples.Candidate, 1e-18)
	assert.Nil(t, sets[0].Samples.Null)
}
