package ort

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv, when set, makes TestInitErrors call Init with the path it names
// and print the error: a process loads ONNX Runtime once, so failures to
// load are tested in fresh child processes.
const childEnv = "GAPBENCH_ORT_TEST_INIT"

// initInChild returns what Init(path) says in a fresh test process.
func initInChild(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInitErrors$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}

func TestInitErrors(t *testing.T) {
	if p := os.Getenv(childEnv); p != "" {
		if err := Init(p); err != nil {
			os.Stdout.WriteString(err.Error())
		} else {
			os.Stdout.WriteString("no error")
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "libonnxruntime.so.1")
	require.NoError(t, os.WriteFile(bad, []byte("not a library"), 0o644))
	out := initInChild(t, bad)
	assert.Contains(t, out, "ONNX Runtime library at "+bad+" (13 bytes) is not a whole shared library (EOF), so it was not loaded")
	assert.Contains(t, out, "(it must be libonnxruntime.so.1 from ONNX Runtime 1.30.0 for linux/x64: run `make deps`, or set ONNXRUNTIME_LIB)")

	gone := filepath.Join(dir, "missing.so")
	assert.Equal(t, "ONNX Runtime library not found at "+gone+": run `make deps` (or `bash scripts/fetch-ort.sh`) at the repository root, or set ONNXRUNTIME_LIB",
		initInChild(t, gone))
}
