// Package atomicfile writes a file the way a report or a picture must be
// written when its path may be read, or planted, by someone else: into a
// new file beside the path, renamed over it once complete.
package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// NotRegularError is a target path that exists and is not a regular file:
// a symlink, a device, a fifo, a socket or a directory. Write refuses it
// rather than rename over it (as root, over /dev/full) or write through
// it.
type NotRegularError struct {
	Path string
	// Mode is the type of what is at Path (os.Lstat's, so a symlink is
	// fs.ModeSymlink, never its target's type).
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: refusing to replace it (remove it, or give another path)", e.Path, Kind(e.Mode))
}

// Kind names a file type for a message: "a symlink", "a fifo", "a
// character device" …; "a regular file" for one.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a fifo"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// Check returns a *NotRegularError when path exists and is not a regular
// file (a symlink is refused whatever it points at: the policy is refuse,
// not resolve); nil when path is a regular file or does not exist.
func Check(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil // missing (or unreadable: the rename reports it)
	case !fi.Mode().IsRegular():
		return &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	return nil
}

// Write writes path with write: into a new file in path's folder, made
// mode 0644 and renamed over path, so that a reader never sees half a file.
// path must be missing or a regular file: a symlink (whatever its target),
// a device, a fifo, a socket or a directory at path is refused with a
// *NotRegularError before anything is written, so nothing is written
// through a planted link and no device is replaced. On any error path is
// untouched and the new file removed.
func Write(path string, write func(io.Writer) error) error {
	if err := Check(path); err != nil {
		return err
	}
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
		// Checked again just before the rename: a link planted while
		// write ran is refused too (a race narrowed, not closed).
		err = Check(path)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
