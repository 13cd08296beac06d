package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the binaries that buildOnce built into temporary
// folders, so that the tests leave nothing behind in the temp directory.
func TestMain(m *testing.M) {
	code := m.Run()
	built.Range(func(_, v any) bool {
		if bb := v.(*builtBin); bb.path != "" {
			os.RemoveAll(filepath.Dir(bb.path))
		}
		return true
	})
	os.Exit(code)
}
