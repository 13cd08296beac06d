package ort

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Environment variables read by Find.
const (
	// LibraryEnv names the ONNX Runtime shared library file
	// (libonnxruntime.so.1 from ONNX Runtime 1.30.0).
	LibraryEnv = "ONNXRUNTIME_LIB"
	// ModelEnv names the Silero VAD v5 model file (silero_vad_v5.onnx).
	ModelEnv = "GAPBENCH_VAD_MODEL"
	// CacheEnv names the cache folder that scripts/fetch-ort.sh fills; the
	// default is .cache/ at the repository root.
	CacheEnv = "GAPBENCH_CACHE"
)

// InstallCommand is the command, run at the repository root, that installs
// ONNX Runtime and the model into the cache.
const InstallCommand = "make deps"

// Paths of the parts inside the cache folder; scripts/fetch-ort.sh writes
// the same paths.
const (
	cacheLibrary = "onnxruntime-1.30.0/libonnxruntime.so.1"
	cacheModel   = "silero-vad-web-0.0.31/silero_vad_v5.onnx"
)

// Parts are the absolute or working-directory-relative paths of the two
// files the ONNX Runtime benchmarks need.
type Parts struct {
	// Library is the ONNX Runtime shared library.
	Library string
	// Model is the Silero VAD v5 model.
	Model string
}

// MissingError says that a part was not found, where it was looked for, and
// what to do.
type MissingError struct {
	// Part is "ONNX Runtime library" or "Silero VAD model".
	Part string
	// Path is where the part was looked for; "" when no place was known
	// (no environment variable and no go.mod above the working directory).
	Path string
	// Env is the environment variable that named Path, or "" when Path is
	// in the cache.
	Env string
	// Var is the environment variable that names this part directly.
	Var string
}

// Error says what is missing and names the command or variable that fixes it.
func (e *MissingError) Error() string {
	switch {
	case e.Env != "":
		return fmt.Sprintf("%s not found: %s=%s names no file; point it at the file, or unset it to use the cache that `%s` fills",
			e.Part, e.Env, e.Path, InstallCommand)
	case e.Path == "":
		return fmt.Sprintf("%s not found: %s is unset and there is no go.mod above the working directory to find the cache; set %s (or %s to the folder `bash scripts/fetch-ort.sh` filled)",
			e.Part, e.Var, e.Var, CacheEnv)
	default:
		return fmt.Sprintf("%s not found at %s: run `%s` (or `bash scripts/fetch-ort.sh`) at the repository root, or set %s",
			e.Part, e.Path, InstallCommand, e.Var)
	}
}

// Find returns the paths of the ONNX Runtime library and the Silero VAD
// model, looked up as the package documentation describes. When a part is
// missing the error is a *MissingError (errors.Join of two when both are)
// saying what to run or set.
func Find() (Parts, error) {
	return find(os.Getenv, workDir())
}

// workDir is the working directory, or "" when it cannot be read.
func workDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

// find is Find with its inputs made explicit: getenv reads a variable and
// dir is where the search for go.mod starts ("" for nowhere).
func find(getenv func(string) string, dir string) (Parts, error) {
	parts, errLib, errModel := findEach(getenv, dir)
	return parts, errors.Join(errLib, errModel)
}

// findEach is find with one error per part.
func findEach(getenv func(string) string, dir string) (parts Parts, errLib, errModel error) {
	cache := getenv(CacheEnv)
	if cache == "" && dir != "" {
		if root, ok := moduleRoot(dir); ok {
			cache = filepath.Join(root, ".cache")
		}
	}
	parts.Library, errLib = locate(getenv, LibraryEnv, cache, cacheLibrary, "ONNX Runtime library")
	parts.Model, errModel = locate(getenv, ModelEnv, cache, cacheModel, "Silero VAD model")
	return parts, errLib, errModel
}

// locate returns the file named by the variable env, else the file rel
// inside cache.
func locate(getenv func(string) string, env, cache, rel, part string) (string, error) {
	if p := getenv(env); p != "" {
		if !isFile(p) {
			return "", &MissingError{Part: part, Path: p, Env: env, Var: env}
		}
		return p, nil
	}
	if cache == "" {
		return "", &MissingError{Part: part, Var: env}
	}
	p := filepath.Join(cache, rel)
	if !isFile(p) {
		return "", &MissingError{Part: part, Path: p, Var: env}
	}
	return p, nil
}

// moduleRoot walks up from dir to the first directory holding a go.mod.
func moduleRoot(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}

// InCI reports whether the CI environment variable is set to anything but
// "", "0" or "false" (any case): whether a missing part must fail a test
// rather than skip it.
func InCI() bool { return isCI(os.Getenv("CI")) }

func isCI(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false":
		return false
	}
	return true
}

// Require returns the paths Find reports. When a part is missing it skips
// tb with the command that installs it, or, when InCI, fails tb: CI must run
// the ONNX Runtime tests for real. Call it first in every test or benchmark
// that needs ONNX Runtime.
func Require(tb testing.TB) Parts {
	tb.Helper()
	parts, err := Find()
	if err != nil {
		missing(tb, err, InCI())
	}
	return parts
}

// missing skips or fails tb for the missing-part error err.
func missing(tb testing.TB, err error, ci bool) {
	tb.Helper()
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	if ci {
		tb.Fatalf("CI is set, so ONNX Runtime tests must run, but: %s", msg)
		return
	}
	tb.Skipf("skipping ONNX Runtime test (set CI=true to make this a failure): %s", msg)
}
