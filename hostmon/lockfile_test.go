package hostmon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A symbolic link planted at the lock path is refused, and the file it
// points to keeps its content and mode (main f271f84 truncated it and made it
// 0666).
func TestLockRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	path := filepath.Join(dir, "host.lock")
	require.NoError(t, os.Symlink(victim, path))
	l, err := Lock(context.Background(), path, nil)
	require.Error(t, err)
	assert.Nil(t, l)
	var le *LockFileError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, KindSymlink, le.Kind)
	assert.Contains(t, err.Error(), path+" is a symbolic link")
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(b))
	fi, err := os.Stat(victim)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, Holder{}, ReadHolder(path), "ReadHolder does not follow it either")

	// A dangling link is refused too: it would create the target.
	dangling := filepath.Join(dir, "dangling.lock")
	require.NoError(t, os.Symlink(filepath.Join(dir, "created-by-lock"), dangling))
	_, err = Lock(context.Background(), dangling, nil)
	require.ErrorAs(t, err, &le)
	assert.NoFileExists(t, filepath.Join(dir, "created-by-lock"))
}

// A hard link to another file is refused: writing the holder would write
// into that file.
func TestLockRefusesHardLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	path := filepath.Join(dir, "host.lock")
	require.NoError(t, os.Link(victim, path))
	_, err := Lock(context.Background(), path, nil)
	var le *LockFileError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, KindLinked, le.Kind)
	assert.Equal(t, uint64(2), le.Links)
	b, _ := os.ReadFile(victim)
	assert.Equal(t, "precious\n", string(b))
}

// A fifo at the lock path is refused at once, not waited on.
func TestLockRefusesFifo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	require.NoError(t, syscall.Mkfifo(path, 0o666))
	done := make(chan error, 1)
	go func() { _, err := Lock(context.Background(), path, nil); done <- err }()
	select {
	case err := <-done:
		var le *LockFileError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, KindNotRegular, le.Kind)
		assert.Contains(t, err.Error(), "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("Lock blocked on a fifo")
	}
	assert.Equal(t, Holder{}, ReadHolder(path))
	_, err := Lock(context.Background(), t.TempDir(), nil)
	require.Error(t, err, "a directory")
}

// A lock file that was there already (another user's) keeps its mode and is
// never truncated: the holder is written over its first bytes, and Unlock
// blanks it.
func TestLockLeavesExistingFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	long := "123\n" + strings.Repeat("a very long command line ", 20) + "\ntrailer\n"
	require.NoError(t, os.WriteFile(path, []byte(long), 0o640))
	l, err := Lock(context.Background(), path, nil)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "not chmod-ed")
	assert.Equal(t, int64(len(long)), fi.Size(), "not truncated")
	h := ReadHolder(path)
	assert.Equal(t, os.Getpid(), h.PID)
	assert.NotContains(t, h.CmdLine, "a very long", "no rest of the old record")
	require.NoError(t, l.Unlock())
	assert.Equal(t, Holder{}, ReadHolder(path))
	fi, _ = os.Stat(path)
	assert.Equal(t, int64(len(long)), fi.Size())
}

// What a lock file names is printed sanitized: an escape sequence written
// into the file never reaches the terminal.
func TestHolderSanitized(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	hostile := "1\nrm -rf \x1b]0;owned\x07\x1b[2J\u202egnp.exe \xff ok\n"
	require.NoError(t, os.WriteFile(path, []byte(hostile), 0o666))
	h := ReadHolder(path)
	assert.Equal(t, `rm -rf \x1b]0;owned\a\x1b[2J\u202egnp.exe \xff ok`, h.CmdLine)
	s := h.String()
	for _, c := range s {
		assert.False(t, c < 0x20 || c == 0x7f || c == '\u202e', "control character %q in %q", c, s)
	}
	// Lock's waiting message names the holder the same way.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	var msg bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	_, err = Lock(ctx, path, &msg)
	require.Error(t, err)
	assert.NotContains(t, msg.String()+err.Error(), "\x1b")
	assert.Contains(t, msg.String(), `held by pid 1 (rm -rf \x1b]0;owned`)
	assert.Equal(t, "tab\\tnewline\\n", Sanitize("tab\tnewline\n"))
	assert.Equal(t, "naïve ✓", Sanitize("naïve ✓"))
}

// The default path does not move with $TMPDIR: every job shares it.
func TestDefaultLockPathFixed(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	assert.Equal(t, "/var/tmp/gapbench-host.lock", DefaultLockPath())
}
