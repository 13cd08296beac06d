package decodegap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/testutil"
	"github.com/gapbench/gapbench/internal/trace"
)

func TestRunWritesATraceThatParses(t *testing.T) {
	dir := t.TempDir()
	out, err := testutil.Bench(t, []string{childEnv + "=gap", trace.EnvDir + "=" + dir}, "^BenchmarkChild$", "-test.benchtime=300x", "-test.count=2")
	require.NoError(t, err, out)

	files, err := filepath.Glob(filepath.Join(dir, "*"+trace.Ext))
	require.NoError(t, err)
	require.Len(t, files, 2, "one trace per -count run, none for the N=1 probes, none overwritten")
	assert.Contains(t, out, "trace: "+dir)

	tr, err := trace.ReadFile(files[0])
	require.NoError(t, err)
	assert.Equal(t, "BenchmarkChild", tr.Header.Benchmark)
	assert.Equal(t, 300, tr.Header.Iterations)
	assert.Len(t, tr.Latency, 300)
	assert.Len(t, tr.Gap, 300)
	require.Len(t, tr.Requested, 300)
	assert.Equal(t, int64(20000), tr.Requested[7], "requested gaps regenerated from the seed")
	assert.Equal(t, "busy", tr.Header.Config["gap.kind"])
	assert.NotEmpty(t, tr.Header.Steady.Class)
	require.GreaterOrEqual(t, len(tr.Boundaries), 2)
	assert.Equal(t, 0, tr.Boundaries[0].Iter)
	assert.Equal(t, 300, tr.Boundaries[len(tr.Boundaries)-1].Iter)
	assert.Contains(t, tr.Boundaries[0].Counters, trace.CounterProcessCPUNs)
}

// TestUnwritableTraceIsAWarning: a trace folder that is a file, or a trace
// name longer than the file system allows, is a warning in the log; the
// benchmark passes and its result line stays (issue 24: it failed the
// benchmark and dropped the line).
func TestUnwritableTraceIsAWarning(t *testing.T) {
	inTheWay := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(inTheWay, []byte("x"), 0o644))
	for name, dir := range map[string]string{"file in the way": inTheWay, "long name": filepath.Join(t.TempDir(), strings.Repeat("d", 300))} {
		out, err := testutil.Bench(t, []string{childEnv + "=gap", trace.EnvDir + "=" + dir}, "^BenchmarkChild$", "-test.benchtime=300x")
		require.NoError(t, err, "%s: %s", name, out)
		assert.Regexp(t, `(?m)^BenchmarkChild(-\d+)?\s+300\s+.* ns/op`, out, name)
		assert.Contains(t, out, "trace: NOT WRITTEN (RunConfig.Trace or $"+trace.EnvDir+"): ", name)
		assert.Contains(t, out, "the figures above stand", name)
	}
}

// TestCompareUnwritableTraceKeepsTheRounds: in Compare too, a trace that
// cannot be written loses no round: every result line is printed and the
// arm's note names the rounds (issue 24: the error stopped Compare).
func TestCompareUnwritableTraceKeepsTheRounds(t *testing.T) {
	inTheWay := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(inTheWay, []byte("x"), 0o644))
	out, err := testutil.Bench(t, []string{childEnv + "=compare-20", trace.EnvDir + "=" + inTheWay}, "^BenchmarkChild$", "-test.benchtime=32x", "-test.count=3")
	require.NoError(t, err, out)
	assert.Len(t, testutil.ResultsString(t, out), 9, out)
	assert.Contains(t, out, "trace not written in rounds 1–3", out)
}
