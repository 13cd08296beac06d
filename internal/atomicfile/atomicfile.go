// Package atomicfile writes a file the way a report or a picture must be
// written when its path may be read, or planted, by someone else: into a
// new file beside the path, renamed over it once complete.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write writes path with write: into a new file in path's folder, made
// mode 0644 and renamed over path, so that a reader never sees half a file
// and a symlink planted at path is replaced, never written through. On any
// error path is untouched and the new file removed.
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes the file 0600: a report is for others to read.
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
