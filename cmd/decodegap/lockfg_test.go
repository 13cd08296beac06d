package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the master and the slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return m, s
}

// syncBuf is a bytes.Buffer for one writer and one reader.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// decodegap lock at a terminal gives its command the foreground: a command
// that reads the terminal reads it (main f271f84 ran it in a background
// group, where the read stops it with SIGTTIN forever), and the foreground
// comes back to lock's group after.
func TestLockCommandGetsForeground(t *testing.T) {
	bin := buildDecodegap(t)
	master, slave := openPTY(t)
	path := filepath.Join(t.TempDir(), "host.lock")
	cmd := exec.Command(bin, "lock", "-path", path, "--", "sh", "-c",
		`echo ready; read x; echo "got-$x"; ps -o pgid= -p $$ | tr -d ' ' > `+filepath.Join(filepath.Dir(path), "pgid"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	slave.Close()
	var out syncBuf
	go func() { bufio.NewReader(master).WriteTo(&out) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "ready") }, 10*time.Second, 10*time.Millisecond, "%q", out.String())
	_, err := master.Write([]byte("hello\n"))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "%q", out.String())
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the command did not read the terminal (stopped by SIGTTIN?): %q", out.String())
	}
	assert.Contains(t, out.String(), "got-hello")
}

// SIGKILL of decodegap lock: its command dies too (the parent-death
// signal), and at no moment is the command running while the lock is free.
func TestLockCommandKilledParent(t *testing.T) {
	bin := buildDecodegap(t)
	path := filepath.Join(t.TempDir(), "host.lock")
	cmd := exec.Command(bin, "lock", "-path", path, "--", "sh", "-c", "echo $$; exec sleep 300")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t0 := time.Now()
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	for {
		// A process that the kernel is ending (PF_EXITING) has closed
		// its files, the lock among them, before it shows as a zombie:
		// it runs nothing any more. The lock first: a process that runs
		// after the lock was seen free ran while it was free.
		free := lockFree(t, path)
		alive := processRunning(pid)
		require.False(t, alive && free, "the command %d runs while the lock is free", pid)
		if processGone0(pid) {
			break
		}
		require.Less(t, time.Since(t0), 5*time.Second, "the command outlived decodegap lock's SIGKILL")
		time.Sleep(time.Millisecond)
	}
	t.Logf("command gone %v after SIGKILL of decodegap lock", time.Since(t0))
	require.Eventually(t, func() bool { return lockFree(t, path) }, 10*time.Second, 5*time.Millisecond, "the watcher keeps the lock")
}

// processGone0 reports, without waiting, whether pid has exited.
func processGone0(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// processRunning reports whether pid exists and is not exiting: not a
// zombie, and without the kernel's PF_EXITING flag (0x4 in the flags field
// of /proc/PID/stat), which do_exit sets before it closes the files.
func processRunning(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return err == nil && flags&0x4 == 0
}

// lockFree reports whether the host lock at path can be taken now.
func lockFree(t *testing.T, path string) bool {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return true
}

// SIGKILL of decodegap lock while its command's child runs, a child that
// has closed the lock's descriptor (as go test's test binary does): the
// watcher kills it and holds the lock until it is gone.
func TestLockCommandKilledParentGrandchild(t *testing.T) {
	bin := buildDecodegap(t)
	path := filepath.Join(t.TempDir(), "host.lock")
	cmd := exec.Command(bin, "lock", "-path", path, "--", "sh", "-c", "sleep 300 3>&- & echo $!; wait")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t0 := time.Now()
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	for {
		free := lockFree(t, path)
		alive := processRunning(pid)
		require.False(t, alive && free, "the command's child %d runs while the lock is free", pid)
		if processGone0(pid) {
			break
		}
		require.Less(t, time.Since(t0), 5*time.Second, "the command's child outlived decodegap lock's SIGKILL")
		time.Sleep(time.Millisecond)
	}
	t.Logf("the command's child gone %v after SIGKILL of decodegap lock", time.Since(t0))
	require.Eventually(t, func() bool { return lockFree(t, path) }, 10*time.Second, 10*time.Millisecond, "the watcher keeps the lock")
}
