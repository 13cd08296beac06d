package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesAPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	path := filepath.Join(dir, "r.json")
	require.NoError(t, os.Symlink(target, path))
	require.NoError(t, Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }))
	b, _ := os.ReadFile(target)
	assert.Equal(t, "keep", string(b))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	b, _ = os.ReadFile(path)
	assert.Equal(t, "new", string(b))
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	err := Write(filepath.Join(dir, "r.json"), func(io.Writer) error { return errors.New("boom") })
	assert.EqualError(t, err, "boom")
	ents, _ := os.ReadDir(dir)
	assert.Empty(t, ents)
}
