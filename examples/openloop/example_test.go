package openloop

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

// TestStallExampleReports runs the example as a user would and reads its
// benchfmt: the open loop reports response times and a queue, the closed
// loop does not.
func TestStallExampleReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example benchmark")
	}
	out, err := exec.Command("go", "test", "-run", "^$", "-bench", "Stall", "-benchtime=2000x", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	r := benchfmt.NewReader(strings.NewReader(string(out)), "out")
	units := map[string]map[string]float64{}
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		m := map[string]float64{}
		for _, v := range res.Values {
			if v.OrigUnit == "" { // benchfmt did not tidy this unit
				m[v.Unit] = v.Value
				continue
			}
			m[v.OrigUnit] = v.OrigValue
		}
		units[strings.TrimSuffix(string(res.Name), "-"+procs(res))] = m
	}
	require.NoError(t, r.Err())
	closed, open := units["Stall/loop=closed"], units["Stall/loop=open"]
	require.NotNil(t, closed, "%s", out)
	require.NotNil(t, open, "%s", out)
	assert.NotContains(t, closed, "resp-p99-ns/op")
	assert.Contains(t, open, "resp-p99-ns/op")
	assert.GreaterOrEqual(t, open["queue-max"], 20.0, "the 50 ms stall queued the arrivals behind it")
	assert.Greater(t, open["resp-p90-ns/op"], 0.0)
}

// procs is the GOMAXPROCS suffix testing appended to the result's name.
func procs(res *benchfmt.Result) string {
	name := string(res.Name)
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// TestCompareOpenJudgesResponseTimes: with Gap.Open, Compare's verdict table
// has rows for resp-p50-sec/op and resp-p99-sec/op (benchfmt's tidied
// resp-p50-ns/op and resp-p99-ns/op) beside the service times.
func TestCompareOpenJudgesResponseTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example comparison")
	}
	out, err := exec.Command("go", "test", "-run", "^$", "-bench", "CompareOpen", "-benchtime=1000x", "-count", "6", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := string(out)
	assert.Contains(t, s, "--- decodegap.Compare: BenchmarkCompareOpen: order and verdicts")
	assert.Regexp(t, `(?m)^ +stalls +resp-p50-sec/op +(faster|slower|equivalent|undecided) `, s)
	assert.Regexp(t, `(?m)^ +stalls +resp-p99-sec/op +(faster|slower|equivalent|undecided) `, s)
	assert.Regexp(t, `(?m)^ +stalls +p50-sec/op +`, s)
	assert.Contains(t, s, "resp-p99-ns/op", "every block reports its response tail")
}
