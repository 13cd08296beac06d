package basic

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/testutil"
)

// TestBenchstatReadsTheMetrics runs this package's benchmark for real with
// `go test -bench -count 3` (2000 steps: p99-ns/op is reported only when
// the steady window bounds it), the way a user does, and feeds the output to the
// benchstat pinned in go.mod (`go tool benchstat`): every metric Run reports
// must come through benchfmt and benchstat.
func TestBenchstatReadsTheMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a benchmark binary")
	}
	out := filepath.Join(t.TempDir(), "out.txt")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "MatVec/gap=(0s|100µs)$", "-benchtime=2000x", "-count", "3", ".")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	require.NoError(t, os.WriteFile(out, b, 0o644))

	// benchfmt sees 3 results per sub-benchmark, each with Run's metrics.
	res := testutil.ResultsString(t, string(b))
	for _, r := range res {
		for _, unit := range []string{"sec/op", "p50-sec/op", "p90-sec/op", "p99-sec/op", "gap-sec/op", "cpu/wall", "vcsw/op", "peak-RSS-B"} {
			_, has := r.Value(unit)
			assert.True(t, has, "%s lacks %s", r.Name.Full(), unit)
		}
	}
	assert.Len(t, res, 6)

	st := exec.Command("go", "tool", "benchstat", "-col", "/gap", out)
	sb, err := st.CombinedOutput()
	require.NoError(t, err, string(sb))
	table := string(sb)
	for _, want := range []string{"sec/op", "p50-sec/op", "p99-sec/op", "gap-sec/op", "cpu/wall", "peak-RSS-B", "0s", "100µs"} {
		assert.Contains(t, table, want)
	}
	assert.NotContains(t, table, "no data")
}
