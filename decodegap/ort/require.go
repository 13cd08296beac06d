package ort

import (
	"fmt"
	"os"
	"testing"
)

// RequireLibrary returns the ONNX Runtime library Find reports, needing
// nothing else (no Silero model). When it is missing it skips tb with the
// command that installs it, or, when InCI, fails tb. Call it first in a test
// or benchmark that opens models of its own (OpenModel loads the library
// itself).
func RequireLibrary(tb testing.TB) string {
	tb.Helper()
	parts, errLib, _ := findEach(os.Getenv, workDir())
	if errLib != nil {
		missing(tb, errLib, InCI())
	}
	return parts.Library
}

// RequireModel is RequireLibrary plus the model file at path: when the file
// is missing it skips tb saying so, or, when InCI, fails tb. It returns
// path.
func RequireModel(tb testing.TB, path string) string {
	tb.Helper()
	RequireLibrary(tb)
	if !isFile(path) {
		missing(tb, fmt.Errorf("ONNX model not found at %s", path), InCI())
	}
	return path
}
