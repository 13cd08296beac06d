package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeNew(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }

func TestWriteRefusesAPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	path := filepath.Join(dir, "r.json")
	require.NoError(t, os.Symlink(target, path))
	err := Write(path, writeNew)
	var nr *NotRegularError
	require.ErrorAs(t, err, &nr)
	assert.EqualError(t, err, path+" is a symlink, not a regular file: refusing to replace it (remove it, or give another path)")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "keep", string(b))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.ModeSymlink, fi.Mode().Type(), "the link itself is left in place")
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 2, "no temporary file left")
}

func TestWriteReplacesARegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	require.NoError(t, Write(path, writeNew))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	b, _ := os.ReadFile(path)
	assert.Equal(t, "new", string(b))
}

func TestWriteRefusesFifoDirSocketAndDevice(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	cases := map[string]string{fifo: "a fifo", sub: "a directory"}
	sock := filepath.Join(dir, "s")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
		cases[sock] = "a socket"
	}
	// A device node of our own, never the real /dev/null: mknod needs
	// root (CAP_MKNOD); without it the case is left out.
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(1<<8|3)); err == nil {
		cases[dev] = "a character device"
	} else {
		t.Logf("mknod: %v: the device case is not run", err)
	}
	for path, what := range cases {
		before, err := os.Lstat(path)
		require.NoError(t, err)
		err = Write(path, writeNew)
		var nr *NotRegularError
		require.ErrorAs(t, err, &nr, path)
		assert.Contains(t, err.Error(), " is "+what+", not a regular file", path)
		after, err := os.Lstat(path)
		require.NoError(t, err)
		assert.Equal(t, before.Mode(), after.Mode(), path)
		assert.True(t, os.SameFile(before, after), "%s was replaced", path)
	}
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, len(cases), "no temporary file left")
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	err := Write(filepath.Join(dir, "r.json"), func(io.Writer) error { return errors.New("boom") })
	assert.EqualError(t, err, "boom")
	ents, _ := os.ReadDir(dir)
	assert.Empty(t, ents)
}
