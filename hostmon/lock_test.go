package hostmon

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/testutil"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startHolder re-executes the test binary as a process that takes the lock
// at path and waits; it returns once the child holds it.
func startHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	return testutil.Start(t, []string{"HOSTMON_TEST_HOLD_LOCK=" + path}, "locked", "-test.run=^$")
}

func TestLockUncontended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	var msg bytes.Buffer
	l, err := Lock(context.Background(), path, &msg)
	require.NoError(t, err)
	assert.Empty(t, msg.String(), "no message when the lock was free")
	h := ReadHolder(path)
	assert.Equal(t, os.Getpid(), h.PID)
	assert.Contains(t, h.CmdLine, filepath.Base(os.Args[0]))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm(), "other users must be able to take the lock")
	require.NoError(t, l.Unlock())
	assert.Equal(t, Holder{}, ReadHolder(path), "Unlock clears the holder")
	assert.Error(t, l.Unlock(), "second Unlock")

	// Free again: a second Lock in the same process gets it at once.
	l2, err := Lock(context.Background(), path, nil)
	require.NoError(t, err)
	require.NoError(t, l2.Unlock())
}

func TestLockTakesOverFromKilledHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	child := startHolder(t, path)
	pid := child.Process.Pid
	assert.Equal(t, pid, ReadHolder(path).PID)

	var msg syncBuffer
	got := make(chan error, 1)
	var l *HostLock
	go func() {
		var err error
		l, err = Lock(context.Background(), path, &msg)
		got <- err
	}()
	// Lock must block and name the holder while it does.
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(msg.String()), []byte("held by pid "+strconv.Itoa(pid)))
	}, 10*time.Second, 10*time.Millisecond, "message so far: %q", msg.String())
	select {
	case err := <-got:
		t.Fatalf("Lock returned (%v) while pid %d held the lock", err, pid)
	default:
	}
	require.NoError(t, child.Process.Kill())
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Lock did not take over from the killed holder")
	}
	t.Log(msg.String())
	assert.Contains(t, msg.String(), "hostmon: waiting for host lock "+path+", held by pid "+strconv.Itoa(pid)+" (")
	assert.Contains(t, msg.String(), "took over host lock "+path+" from pid "+strconv.Itoa(pid))
	assert.Contains(t, msg.String(), "which has exited")
	assert.Equal(t, os.Getpid(), ReadHolder(path).PID)
	require.NoError(t, l.Unlock())
}

func TestLockContextCancelNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	child := startHolder(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var msg bytes.Buffer
	l, err := Lock(ctx, path, &msg)
	require.Error(t, err)
	assert.Nil(t, l)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "still held by pid "+strconv.Itoa(child.Process.Pid))
	assert.Equal(t, 1, bytes.Count(msg.Bytes(), []byte("waiting for host lock")), "one message per holder, not one per poll: %q", msg.String())
}

func TestLockErrorNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "host.lock")
	_, err := Lock(context.Background(), path, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "-path")
}

func TestParseHolder(t *testing.T) {
	assert.Equal(t, Holder{PID: 42, CmdLine: "go test -bench ."}, parseHolder([]byte("42\ngo test -bench .\n")))
	assert.Equal(t, Holder{PID: 42}, parseHolder([]byte("42\n")))
	assert.Equal(t, Holder{}, parseHolder(nil))
	assert.Equal(t, Holder{}, parseHolder([]byte("x\ny\n")))
	assert.Equal(t, Holder{}, parseHolder([]byte("-3\n")))
	assert.Equal(t, "an unknown process", Holder{}.String())
	assert.Equal(t, "pid 7", Holder{PID: 7}.String())
	assert.Equal(t, "pid 7 (a b)", Holder{PID: 7, CmdLine: "a b"}.String())
}

func FuzzParseHolder(f *testing.F) {
	f.Add([]byte("42\ngo test\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := parseHolder(b)
		if h.PID < 0 {
			t.Fatalf("negative pid %d", h.PID)
		}
		if h.PID == 0 && h.CmdLine != "" {
			t.Fatalf("command line without a pid: %q", h.CmdLine)
		}
	})
}
