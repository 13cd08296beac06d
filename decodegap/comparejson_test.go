package decodegap

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/testutil"
)

// GAPBENCH_JSON names a folder: Compare writes its rows there as JSON,
// the same rows its table prints, the A/A check included.
func TestCompareWritesJSON(t *testing.T) {
	dir := t.TempDir()
	out, err := testutil.Bench(t, []string{childEnv + "=compare", JSONEnv + "=" + dir}, "^BenchmarkChild$",
		"-test.benchtime=32x", "-test.count=6", "-test.cpu=1")
	require.NoError(t, err, out)
	f, err := os.Open(filepath.Join(dir, "BenchmarkChild.json"))
	require.NoError(t, err)
	defer f.Close()
	d, err := report.ReadJSON(f)
	require.NoError(t, err)
	assert.Equal(t, "compare", d.Command)
	kinds := map[string]int{}
	for _, r := range d.Rows {
		assert.Equal(t, "Child-1", r.Bench)
		assert.Equal(t, "fast", r.Base)
		kinds[r.Kind+" "+r.Arm]++
		assert.NotEmpty(t, r.Rounds)
	}
	assert.Positive(t, kinds["candidate slow"])
	assert.Positive(t, kinds["null-check null"])
}

// Without -v, progress is one line a round, naming every arm's median
// step; with -v, one line a block.
func TestCompareProgressIsOneLineARound(t *testing.T) {
	out, err := runChildArgs(t, "compare", "-test.benchtime=32x", "-test.count=6", "-test.cpu=1")
	require.NoError(t, err, out)
	var rounds, blocks int
	for _, l := range strings.Split(out, "\n") {
		switch {
		case regexp.MustCompile(`^decodegap.Compare: BenchmarkChild: round \d+/6, GOMAXPROCS 1: step p50 fast \S+, slow \S+, null \S+; elapsed \S+, ETA \S+ \(-v: a line per block\)$`).MatchString(l):
			rounds++
		case strings.Contains(l, `arm "`) && strings.HasPrefix(l, "decodegap.Compare: BenchmarkChild: round "):
			blocks++
		}
	}
	assert.Positive(t, rounds)
	assert.Zero(t, blocks, "no line a block without -v")
}
