package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/hostmon"
)

func TestLockCommandRunsCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	var out, errb bytes.Buffer
	assert.Equal(t, 0, dispatch([]string{"lock", "-path", path, "--", "true"}, &out, &errb), errb.String())
	assert.Equal(t, 3, dispatch([]string{"lock", "-path", path, "--", "sh", "-c", "echo held; exit 3"}, &out, &errb))
	assert.Equal(t, "held\n", out.String())
	assert.Equal(t, hostmon.Holder{}, hostmon.ReadHolder(path), "released after the command")
	assert.Equal(t, 137, dispatch([]string{"lock", "-path", path, "--", "sh", "-c", "kill -9 $$"}, &out, &errb), "killed by signal 9: 128+9")
}

func TestLockCommandWaitsForHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	l, err := hostmon.Lock(context.Background(), path, nil)
	require.NoError(t, err)
	defer l.Unlock()
	var out, errb bytes.Buffer
	code := dispatch([]string{"lock", "-path", path, "-timeout", "150ms", "--", "true"}, &out, &errb)
	assert.Equal(t, 1, code)
	pid := strconv.Itoa(os.Getpid())
	assert.Contains(t, errb.String(), "hostmon: waiting for host lock "+path+", held by pid "+pid+" (")
	assert.Contains(t, errb.String(), "decodegap lock: hostmon: host lock "+path+" still held by pid "+pid)
}

func TestLockCommandErrors(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, dispatch([]string{"lock"}, &out, &errb))
	assert.Contains(t, errb.String(), "no command to run: give it after --")

	errb.Reset()
	path := filepath.Join(t.TempDir(), "host.lock")
	assert.Equal(t, 1, dispatch([]string{"lock", "-path", path, "--", "/no/such/command"}, &out, &errb))
	assert.Contains(t, errb.String(), "decodegap lock: fork/exec /no/such/command: no such file or directory")
}

// The command does not inherit an ignored SIGINT: SigIgn's bit for signal 2
// is clear in its /proc/self/status.
func TestLockCommandDoesNotIgnoreInterrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	var out, errb bytes.Buffer
	require.Equal(t, 0, dispatch([]string{"lock", "-path", path, "--", "grep", "SigIgn", "/proc/self/status"}, &out, &errb), errb.String())
	f := strings.Fields(out.String())
	require.Len(t, f, 2, out.String())
	mask, err := strconv.ParseUint(f[1], 16, 64)
	require.NoError(t, err)
	assert.Zero(t, mask&(1<<(int(syscall.SIGINT)-1)), "SIGINT is ignored in the command: SigIgn %s", f[1])
}

// SIGINT, SIGHUP and SIGTERM to decodegap lock reach the command's process group,
// and decodegap lock exits with the command's status, releasing the lock.
func TestLockCommandForwardsSignals(t *testing.T) {
	bin := buildDecodegap(t)
	for _, c := range []struct {
		sig    syscall.Signal
		script string
		code   int
	}{
		{syscall.SIGINT, "echo ready >&2; exec sleep 300", 130},
		{syscall.SIGHUP, "echo ready >&2; exec sleep 300", 129},
		{syscall.SIGTERM, `trap 'echo got TERM >&2; exit 7' TERM; echo ready >&2; while :; do sleep 0.05; done`, 7},
	} {
		path := filepath.Join(t.TempDir(), "host.lock")
		cmd := exec.Command(bin, "lock", "-path", path, "--", "sh", "-c", c.script)
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && sc.Text() != "ready" {
		}
		require.NoError(t, cmd.Process.Signal(c.sig))
		timer := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		rest, _ := io.ReadAll(stderr)
		err = cmd.Wait()
		timer.Stop()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v: %s", c.sig, rest)
		assert.Equal(t, c.code, ee.ExitCode(), "%v: %s", c.sig, rest)
		if c.sig == syscall.SIGTERM {
			assert.Contains(t, string(rest), "got TERM")
		}
		assert.Equal(t, hostmon.Holder{}, hostmon.ReadHolder(path), "released after the command")
	}
}

// SIGINT while another process holds the lock: nothing runs, exit 130.
func TestLockCommandInterruptedWhileWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	held, err := hostmon.Lock(context.Background(), path, nil)
	require.NoError(t, err)
	defer held.Unlock()
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command(buildDecodegap(t), "lock", "-path", path, "--", "touch", marker)
	rest := interruptWhen(t, cmd, func(line string) bool { return strings.Contains(line, "waiting for host lock") })
	assert.Contains(t, string(rest), "decodegap lock: interrupted while waiting for the host lock "+path+"; nothing was run\n")
	assert.NoFileExists(t, marker)
}
