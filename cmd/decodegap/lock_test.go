package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

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
