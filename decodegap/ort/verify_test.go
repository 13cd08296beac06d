package ort

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// truncatedLibrary writes the first half of a shared library into a new
// cache folder at the library's cache path and returns the cache: the
// ONNX Runtime library when the shared cache has it, else this test
// binary (an ELF file as well). The shared cache is only read.
func truncatedLibrary(t *testing.T) (cache, lib string) {
	t.Helper()
	src := os.Args[0]
	if parts, _, _ := locateEach(os.Getenv, workDir()); parts.Library != "" {
		src = parts.Library
	}
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	cache = t.TempDir()
	lib = filepath.Join(cache, cacheLibrary)
	require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
	require.NoError(t, os.WriteFile(lib, b[:len(b)/2], 0o644))
	return cache, lib
}

// A truncated library in the cache is named and refused, never returned
// for loading.
func TestFindRefusesDamagedCachedLibrary(t *testing.T) {
	cache, lib := truncatedLibrary(t)
	writeFile(t, filepath.Join(cache, cacheModel))
	parts, err := find(envOf(map[string]string{CacheEnv: cache}), "")
	require.Error(t, err)
	assert.Empty(t, parts.Library, "a damaged library is not returned")
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ONNX Runtime library", ce.Part)
	assert.Equal(t, lib, ce.Path)
	assert.Equal(t, sha256Library, ce.Want)
	st, _ := os.Stat(lib)
	assert.Equal(t, st.Size(), ce.Size)
	assert.Regexp(t, `^ONNX Runtime library at `+regexp.QuoteMeta(lib)+` is damaged \(\d+ bytes, SHA-256 [0-9a-f]{64}, want `+sha256Library+`\), so it was not loaded: delete it and run `+"`make deps`"+` \(or `+"`bash scripts/fetch-ort.sh`"+`\) to fetch it again$`, ce.Error())
	// The model's stand-in fails its own check, reported beside.
	var all []*CorruptError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var c *CorruptError
		if errors.As(e, &c) {
			all = append(all, c)
		}
	}
	require.Len(t, all, 2)
	assert.Equal(t, "Silero VAD model", all[1].Part)
	assert.Equal(t, sha256Model, all[1].Want)
}

// A library named by ONNXRUNTIME_LIB need not be the pinned build, but it
// must be a whole ELF file.
func TestFindChecksLibraryNamedByEnv(t *testing.T) {
	_, half := truncatedLibrary(t)
	model := filepath.Join(t.TempDir(), "m.onnx")
	writeFile(t, model)
	_, err := find(envOf(map[string]string{LibraryEnv: half, ModelEnv: model}), "")
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, LibraryEnv, ce.Env)
	assert.Contains(t, ce.Error(), "ONNX Runtime library at "+half+" (")
	assert.Contains(t, ce.Error(), "named by ONNXRUNTIME_LIB) is not a whole shared library (")
	assert.Contains(t, ce.Error(), "so it was not loaded: point ONNXRUNTIME_LIB at a complete libonnxruntime.so.1")

	whole := os.Args[0] // an ELF file, whole
	parts, err := find(envOf(map[string]string{LibraryEnv: whole, ModelEnv: model}), "")
	require.NoError(t, err)
	assert.Equal(t, whole, parts.Library)

	notELF := filepath.Join(t.TempDir(), "lib.so")
	require.NoError(t, os.WriteFile(notELF, []byte("not a library at all"), 0o644))
	_, err = find(envOf(map[string]string{LibraryEnv: notELF, ModelEnv: model}), "")
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Error(), "bad magic number")
}

// Init with a truncated library in the cache returns the error instead of
// loading it (which crashes the process with SIGBUS): run in a child, so
// that a crash fails this test instead of ending the test binary.
func TestInitRefusesDamagedLibrary(t *testing.T) {
	if os.Getenv("GAPBENCH_INIT_CHILD") == "1" {
		err := Init("")
		if err == nil {
			t.Fatal("Init loaded a damaged library")
		}
		t.Log("init error: " + err.Error())
		return
	}
	cache, lib := truncatedLibrary(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestInitRefusesDamagedLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), "GAPBENCH_INIT_CHILD=1", CacheEnv+"="+cache, LibraryEnv+"=", ModelEnv+"=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child crashed or failed:\n%s", out)
	assert.Contains(t, string(out), "init error: ONNX Runtime library at "+lib+" is damaged (")
}

// The script and the package pin the same files.
func TestChecksumsMatchFetchScript(t *testing.T) {
	b, err := os.ReadFile("../../scripts/fetch-ort.sh")
	require.NoError(t, err)
	assert.Contains(t, string(b), "\nORT_SHA256="+sha256Library+"\n")
	assert.Contains(t, string(b), "\nVAD_SHA256="+sha256Model+"\n")
}

// fetch-ort.sh shows npm's own error (no --silent hiding it), and leaves no
// damaged file behind when fetching again fails.
func TestFetchScriptShowsNpmErrorAndRemovesBadFile(t *testing.T) {
	bin := t.TempDir()
	// This npm, like the real one, prints nothing with --silent.
	npm := `#!/bin/sh
for a; do [ "$a" = --silent ] && exit 1; done
echo "npm error code ENOTFOUND" >&2
echo "npm error network request to the registry failed, reason: getaddrinfo ENOTFOUND" >&2
exit 1
`
	require.NoError(t, os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o755))
	cache, lib := truncatedLibrary(t)
	script, err := filepath.Abs("../../scripts/fetch-ort.sh")
	require.NoError(t, err)
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), CacheEnv+"="+cache, "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	e := stderr.String()
	assert.Contains(t, e, "fetch-ort.sh: "+lib+" has the wrong SHA-256; removed it, fetching it again\n")
	assert.Contains(t, e, "fetch-ort.sh: 'npm pack onnxruntime-node@1.30.0' failed:\nnpm error code ENOTFOUND\nnpm error network request to the registry failed, reason: getaddrinfo ENOTFOUND\n")
	assert.False(t, strings.Contains(e, "failed:\n\n"), "no blank error")
	assert.NoFileExists(t, lib, "the damaged file is gone, so nothing can load it")
}
