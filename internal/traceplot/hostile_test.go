package traceplot

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A planted symlink at the picture's path is refused, and its target is
// left as it was.
func TestVerdictRefusesPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious.txt")
	require.NoError(t, os.WriteFile(target, []byte("keep me"), 0o600))
	path := filepath.Join(dir, "x.svg")
	require.NoError(t, os.Symlink(target, path))

	err := Verdict(verdictData(), path)
	assert.ErrorContains(t, err, path+" is a symlink, not a regular file: refusing to replace it")

	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(got), "the symlink's target was written")
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "x.svg is %v, want the link left as it was", fi.Mode())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "a temporary file was left behind: %v", entries)
}

// A failed write leaves the path as it was and no temporary file.
func TestVerdictFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.svg")
	bad := verdictData()
	bad.Ratios = nil
	require.Error(t, Verdict(bad, path))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// Control characters in a benchmark name still give an SVG that parses as
// XML, and markup characters stay text.
func TestVerdictSVGIsXMLWithControlCharacters(t *testing.T) {
	v := verdictData()
	v.Title = "BenchmarkX/\x1b[31mred\x00<b>&"
	var buf bytes.Buffer
	require.NoError(t, WriteVerdict(&buf, v, "svg"))
	d := xml.NewDecoder(&buf)
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	svg := verdictSVG(t, v)
	assert.True(t, hasText(svg, "BenchmarkX/?[31mred?&lt;b&gt;&amp;"), "texts: %q", texts(svg))
}

// The interval's level is printed as a person writes it.
func TestVerdictCILevelLabel(t *testing.T) {
	v := verdictData()
	v.CILevel = 1 - 0.05/3
	svg := verdictSVG(t, v)
	assert.True(t, hasText(svg, "estimate 1.045, 98.33% CI [1.035, 1.055]"), "texts: %q", texts(svg))
}
