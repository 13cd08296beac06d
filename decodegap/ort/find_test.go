package ort

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile creates path (and its folders) holding a few bytes.
func writeFile(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
}

// locateAll is find without the checks of the files found: these tests
// place stand-in files.
func locateAll(getenv func(string) string, dir string) (Parts, error) {
	p, errLib, errModel := locateEach(getenv, dir)
	return p, errors.Join(errLib, errModel)
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestFindUsesCacheAtModuleRoot(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"))
	writeFile(t, filepath.Join(root, ".cache", cacheLibrary))
	writeFile(t, filepath.Join(root, ".cache", cacheModel))
	deep := filepath.Join(root, "examples", "vad")
	require.NoError(t, os.MkdirAll(deep, 0o755))

	parts, err := locateAll(envOf(nil), deep)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, ".cache", cacheLibrary), parts.Library)
	assert.Equal(t, filepath.Join(root, ".cache", cacheModel), parts.Model)
}

func TestFindCacheEnvOverridesModuleRoot(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"))
	writeFile(t, filepath.Join(cache, cacheLibrary))
	writeFile(t, filepath.Join(cache, cacheModel))

	parts, err := locateAll(envOf(map[string]string{CacheEnv: cache}), root)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, cacheLibrary), parts.Library)
	assert.Equal(t, filepath.Join(cache, cacheModel), parts.Model)
}

func TestFindEnvNamesFiles(t *testing.T) {
	dir := t.TempDir()
	lib, model := filepath.Join(dir, "lib.so"), filepath.Join(dir, "m.onnx")
	writeFile(t, lib)
	writeFile(t, model)

	parts, err := locateAll(envOf(map[string]string{LibraryEnv: lib, ModelEnv: model}), "")
	require.NoError(t, err)
	assert.Equal(t, Parts{Library: lib, Model: model}, parts)
}

func TestFindEnvNamingMissingFileDoesNotFallBack(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"))
	writeFile(t, filepath.Join(root, ".cache", cacheLibrary))
	writeFile(t, filepath.Join(root, ".cache", cacheModel))
	gone := filepath.Join(root, "nope.so")

	parts, err := locateAll(envOf(map[string]string{LibraryEnv: gone}), root)
	var me *MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, LibraryEnv, me.Env)
	assert.Empty(t, parts.Library)
	assert.Equal(t, filepath.Join(root, ".cache", cacheModel), parts.Model, "the model still comes from the cache")
	assert.Equal(t, fmt.Sprintf("ONNX Runtime library not found: ONNXRUNTIME_LIB=%s names no file; point it at the file, or unset it to use the cache that `make deps` fills", gone), err.Error())
}

func TestFindMissingCacheSaysWhatToRun(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"))

	_, err := locateAll(envOf(nil), root)
	require.Error(t, err)
	want := fmt.Sprintf("ONNX Runtime library not found at %s: run `make deps` (or `bash scripts/fetch-ort.sh`) at the repository root, or set ONNXRUNTIME_LIB\n"+
		"Silero VAD model not found at %s: run `make deps` (or `bash scripts/fetch-ort.sh`) at the repository root, or set GAPBENCH_VAD_MODEL",
		filepath.Join(root, ".cache", cacheLibrary), filepath.Join(root, ".cache", cacheModel))
	assert.Equal(t, want, err.Error())
}

func TestFindWithoutModuleOrEnv(t *testing.T) {
	_, err := locateAll(envOf(nil), "")
	var me *MissingError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, err.Error(), "ONNX Runtime library not found: ONNXRUNTIME_LIB is unset and there is no go.mod above the working directory to find the cache; set ONNXRUNTIME_LIB (or GAPBENCH_CACHE to the folder `bash scripts/fetch-ort.sh` filled)")
	assert.Contains(t, err.Error(), "Silero VAD model not found: GAPBENCH_VAD_MODEL is unset")
}

func TestFindIgnoresEmptyFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.so")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err := locateAll(envOf(map[string]string{LibraryEnv: empty, ModelEnv: dir}), "")
	assert.ErrorContains(t, err, "ONNXRUNTIME_LIB="+empty+" names no file")
	assert.ErrorContains(t, err, "GAPBENCH_VAD_MODEL="+dir+" names no file", "a directory is not a model")
}

func TestIsCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, " ": false, "true": true, "1": true, "yes": true} {
		assert.Equal(t, want, isCI(v), "CI=%q", v)
	}
}

// recordingTB records Skipf and Fatalf instead of stopping the test.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestMissingSkipsOutsideCI(t *testing.T) {
	var tb recordingTB
	missing(&tb, errors.Join(&MissingError{Part: "ONNX Runtime library", Path: "/x/lib.so", Var: LibraryEnv},
		&MissingError{Part: "Silero VAD model", Path: "/x/m.onnx", Var: ModelEnv}), false)
	assert.Empty(t, tb.failed)
	assert.Equal(t, "skipping ONNX Runtime test (set CI=true to make this a failure): "+
		"ONNX Runtime library not found at /x/lib.so: run `make deps` (or `bash scripts/fetch-ort.sh`) at the repository root, or set ONNXRUNTIME_LIB; "+
		"Silero VAD model not found at /x/m.onnx: run `make deps` (or `bash scripts/fetch-ort.sh`) at the repository root, or set GAPBENCH_VAD_MODEL", tb.skipped)
}

func TestMissingFailsInCI(t *testing.T) {
	var tb recordingTB
	missing(&tb, &MissingError{Part: "ONNX Runtime library", Path: "/x/lib.so", Var: LibraryEnv}, true)
	assert.Empty(t, tb.skipped)
	assert.Equal(t, "CI is set, so ONNX Runtime tests must run, but: ONNX Runtime library not found at /x/lib.so: run `make deps` (or `bash scripts/fetch-ort.sh`) at the repository root, or set ONNXRUNTIME_LIB", tb.failed)
}

func TestRequireReadsEnvironment(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "missing.so")
	t.Setenv(LibraryEnv, gone)

	t.Setenv("CI", "")
	var local recordingTB
	Require(&local)
	assert.Contains(t, local.skipped, "ONNXRUNTIME_LIB="+gone+" names no file")
	assert.Empty(t, local.failed)

	t.Setenv("CI", "true")
	var ci recordingTB
	Require(&ci)
	assert.Contains(t, ci.failed, "ONNXRUNTIME_LIB="+gone+" names no file")
	assert.Empty(t, ci.skipped)
}
