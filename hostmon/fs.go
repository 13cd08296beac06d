package hostmon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/sysfs"
)

// FS reads one host's /proc and /sys trees. The zero FS is not usable; get
// one from DefaultFS (this host) or NewFS (any mount points, such as the
// fixture trees under testdata/). An FS is a pair of paths: it is cheap to
// copy and safe for concurrent use.
type FS struct {
	proc     procfs.FS
	sys      sysfs.FS
	procRoot string
	sysRoot  string
}

// DefaultFS returns the FS of this host: /proc and /sys.
func DefaultFS() (FS, error) { return NewFS(procfs.DefaultMountPoint, sysfs.DefaultMountPoint) }

// NewFS returns the FS rooted at procRoot (a /proc tree) and sysRoot (a /sys
// tree). It fails when either directory does not exist.
func NewFS(procRoot, sysRoot string) (FS, error) {
	p, err := procfs.NewFS(procRoot)
	if err != nil {
		return FS{}, fmt.Errorf("hostmon: proc tree %s: %w", procRoot, err)
	}
	s, err := sysfs.NewFS(sysRoot)
	if err != nil {
		return FS{}, fmt.Errorf("hostmon: sys tree %s: %w", sysRoot, err)
	}
	return FS{proc: p, sys: s, procRoot: procRoot, sysRoot: sysRoot}, nil
}

// ProcRoot returns the /proc mount point this FS reads.
func (fs FS) ProcRoot() string { return fs.procRoot }

// SysRoot returns the /sys mount point this FS reads.
func (fs FS) SysRoot() string { return fs.sysRoot }

// SelfPID returns the pid that <proc>/self names: this process on the live
// tree, the fixture's process in a fixture tree.
func (fs FS) SelfPID() (int, error) {
	target, err := os.Readlink(filepath.Join(fs.procRoot, "self"))
	if err != nil {
		return 0, fmt.Errorf("hostmon: %w", err)
	}
	pid, err := strconv.Atoi(filepath.Base(target))
	if err != nil {
		return 0, fmt.Errorf("hostmon: %s/self points at %q, not a pid", fs.procRoot, target)
	}
	return pid, nil
}

// sysPath joins elements under the /sys root.
func (fs FS) sysPath(elem ...string) string {
	return filepath.Join(append([]string{fs.sysRoot}, elem...)...)
}

// procPath joins elements under the /proc root.
func (fs FS) procPath(elem ...string) string {
	return filepath.Join(append([]string{fs.procRoot}, elem...)...)
}
