package history

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	baseHash = "1111111111111111111111111111111111111111"
	headHash = "2222222222222222222222222222222222222222"
)

// A pr file holds two revisions: its base and null arms are filed under
// the base's commit, its head arm under the head's, each with its own
// results only and its own key.
func TestSplitRevisions(t *testing.T) {
	data := []byte("# decodegap pr: base main, head HEAD\n\ngoos: linux\npr-base: main " + baseHash + "\npr-head: worktree " + headHash + "\n" +
		"arm: base\nround: 1\nBenchmarkStep-2 100 1000 ns/op\n" +
		"arm: head\nBenchmarkStep-2 100 1200 ns/op\n" +
		"arm: null\nBenchmarkStep-2 100 1010 ns/op\n" +
		"arm: head\nround: 2\nBenchmarkStep-2 100 1190 ns/op\n")
	f, err := ParseFile("pr.txt", data)
	require.NoError(t, err)
	parts, unc, ok := SplitRevisions(f, data)
	require.True(t, ok)
	assert.Zero(t, unc)
	require.Len(t, parts, 2)
	base, head := parts[0], parts[1]
	assert.Equal(t, baseHash, base.Prov.Commit)
	assert.Equal(t, headHash, head.Prov.Commit)
	assert.Equal(t, "pr.txt@111111111111", base.Name)
	assert.NotEqual(t, base.SHA256, head.SHA256)
	assert.NotEqual(t, f.SHA256, base.SHA256)
	var bv, hv []float64
	for _, v := range base.Results {
		bv = append(bv, math.Round(v.Value*1e9))
		assert.Contains(t, []string{"base", "null"}, v.Arm)
	}
	for _, v := range head.Results {
		hv = append(hv, math.Round(v.Value*1e9))
		assert.Equal(t, "head", v.Arm)
	}
	assert.Equal(t, []float64{1000, 1010}, bv)
	assert.Equal(t, []float64{1200, 1190}, hv)
	assert.NotContains(t, base.Configs, Config{"arm", "head"})
	assert.Contains(t, head.Configs, Config{"round", "2"})

	// Again: the same keys, so a second add writes nothing.
	again, _, _ := SplitRevisions(f, data)
	assert.Equal(t, base.SHA256, again[0].SHA256)

	// A dirty work tree as head: its lines are counted, not filed.
	dirty := []byte("pr-base: main " + baseHash + "\npr-head: worktree-dirty\narm: base\nBenchmarkStep-2 100 1000 ns/op\narm: head\nBenchmarkStep-2 100 1200 ns/op\n")
	f, err = ParseFile("dirty.txt", dirty)
	require.NoError(t, err)
	parts, unc, ok = SplitRevisions(f, dirty)
	require.True(t, ok)
	assert.Equal(t, 1, unc)
	require.Len(t, parts, 1)
	assert.Equal(t, baseHash, parts[0].Prov.Commit)

	// A plain go test file is not split.
	plain := []byte("BenchmarkStep-2 100 1000 ns/op\n")
	f, err = ParseFile("plain.txt", plain)
	require.NoError(t, err)
	_, _, ok = SplitRevisions(f, plain)
	assert.False(t, ok)
}
