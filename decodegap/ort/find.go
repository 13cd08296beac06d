package ort

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

// The SHA-256 of the pinned files; scripts/fetch-ort.sh checks the same.
const (
	sha256Library = "ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"
	sha256Model   = "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
)

// Part names, as MissingError.Part and CorruptError.Part give them.
const (
	partLibrary = "ONNX Runtime library"
	partModel   = "Silero VAD model"
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

// CorruptError says that a part was found but is not whole, so it was not
// loaded (a truncated shared library crashes the process that maps it).
type CorruptError struct {
	// Part is "ONNX Runtime library" or "Silero VAD model"; Path is the
	// file.
	Part, Path string
	// Env is the environment variable that named Path, or "" when Path is
	// in the cache or was given to Init.
	Env string
	// Size is the file's size in bytes.
	Size int64
	// Got and Want are the file's SHA-256 and the pinned one (hex), for a
	// file in the cache; empty for a library named by Env or given to Init.
	Got, Want string
	// Err is what the check of such a library found; nil for a file in
	// the cache.
	Err error
}

// Error names the file, what is wrong with it, and what to do.
func (e *CorruptError) Error() string {
	if e.Want != "" {
		return fmt.Sprintf("%s at %s is damaged (%d bytes, SHA-256 %s, want %s), so it was not loaded: delete it and run `%s` (or `bash scripts/fetch-ort.sh`) to fetch it again",
			e.Part, e.Path, e.Size, e.Got, e.Want, InstallCommand)
	}
	if e.Env == "" {
		return fmt.Sprintf("%s at %s (%d bytes) is not a whole shared library (%v), so it was not loaded (it must be libonnxruntime.so.1 from ONNX Runtime 1.30.0 for linux/x64: run `%s`, or set %s)",
			e.Part, e.Path, e.Size, e.Err, InstallCommand, LibraryEnv)
	}
	return fmt.Sprintf("%s at %s (%d bytes, named by %s) is not a whole shared library (%v), so it was not loaded: point %s at a complete libonnxruntime.so.1, or unset it to use the cache that `%s` fills",
		e.Part, e.Path, e.Size, e.Env, e.Err, e.Env, InstallCommand)
}

// Find returns the paths of the ONNX Runtime library and the Silero VAD
// model, looked up as the package documentation describes, and checked
// before anything loads them: a file in the cache must have the pinned
// SHA-256, and a library named by LibraryEnv must be a whole ELF file (its
// sections and segments inside the file). When a part is missing the error
// is a *MissingError, when it fails its check a *CorruptError (errors.Join
// of two when both parts fail), saying what to run or set.
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

// findEach is find with one error per part: the parts located and checked.
func findEach(getenv func(string) string, dir string) (parts Parts, errLib, errModel error) {
	parts, errLib, errModel = locateEach(getenv, dir)
	if errLib == nil {
		errLib = checkPart(parts.Library, partLibrary, getenv(LibraryEnv) == "", namedBy(getenv, LibraryEnv))
	}
	if errModel == nil {
		errModel = checkPart(parts.Model, partModel, getenv(ModelEnv) == "", namedBy(getenv, ModelEnv))
	}
	if errLib != nil {
		parts.Library = ""
	}
	if errModel != nil {
		parts.Model = ""
	}
	return parts, errLib, errModel
}

// locateEach finds where the parts are, without checking them.
func locateEach(getenv func(string) string, dir string) (parts Parts, errLib, errModel error) {
	cache := getenv(CacheEnv)
	if cache == "" && dir != "" {
		if root, ok := moduleRoot(dir); ok {
			cache = filepath.Join(root, ".cache")
		}
	}
	parts.Library, errLib = locate(getenv, LibraryEnv, cache, cacheLibrary, partLibrary)
	parts.Model, errModel = locate(getenv, ModelEnv, cache, cacheModel, partModel)
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

// namedBy returns env when that variable is set, else "".
func namedBy(getenv func(string) string, env string) string {
	if getenv(env) != "" {
		return env
	}
	return ""
}

// checked remembers each file's check by path, size and modification time,
// so that a process hashes a file once.
var checked sync.Map // checkKey → error

type checkKey struct {
	path   string
	env    string
	pinned bool
	size   int64
	mtime  time.Time
}

// checkPart checks the part at path: against its pinned SHA-256 when it
// came from the cache (pinned), else, for the library, that it is a whole
// ELF file. env is the variable that named path, for the message. It
// returns nil or a *CorruptError.
func checkPart(path, part string, pinned bool, env string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	key := checkKey{path, env, pinned, st.Size(), st.ModTime()}
	if v, ok := checked.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	err = checkFile(path, part, pinned, env, st.Size())
	checked.Store(key, err)
	return err
}

func checkFile(path, part string, pinned bool, env string, size int64) error {
	if !pinned {
		if part != partLibrary {
			return nil // ONNX Runtime checks a model it reads
		}
		if err := wholeELF(path, size); err != nil {
			return &CorruptError{Part: part, Path: path, Env: env, Size: size, Err: err}
		}
		return nil
	}
	want := sha256Library
	if part == partModel {
		want = sha256Model
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return &CorruptError{Part: part, Path: path, Size: size, Got: got, Want: want}
	}
	return nil
}

// wholeELF checks that path is an ELF file whose headers, sections and
// loadable segments all lie inside its size bytes: what a truncated copy of
// a shared library fails.
func wholeELF(path string, size int64) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off+p.Filesz > uint64(size) {
			return fmt.Errorf("a loadable segment ends at byte %d, past the end of the file", p.Off+p.Filesz)
		}
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NULL && s.Offset+s.FileSize > uint64(size) {
			return fmt.Errorf("section %s ends at byte %d, past the end of the file", s.Name, s.Offset+s.FileSize)
		}
	}
	return nil
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
