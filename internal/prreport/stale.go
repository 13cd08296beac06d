package prreport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// tmpPrefix begins the name of every Build's temporary folder (in
// os.TempDir()); ownerName is the file in it that the Build's process
// holds an exclusive flock on while it lives. The kernel drops the lock
// when the process dies, also by SIGKILL, which runs no Close: a folder
// whose owner file nobody holds is what a killed pr or bisect left.
const (
	tmpPrefix = "decodegap-pr-"
	ownerName = "owner.lock"
)

// holdOwner creates tmp's owner file, locked: under another name first,
// renamed once locked, so that an owner file is never seen unlocked while
// its process lives. The lock lasts until the file is closed.
func holdOwner(tmp string) (*os.File, error) {
	pending := filepath.Join(tmp, ownerName+".new")
	f, err := os.OpenFile(pending, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: pending, Err: err}
	}
	if err := os.Rename(pending, filepath.Join(tmp, ownerName)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ownerDead reports whether the folder dir was left by a process that
// died: its owner file exists and nobody holds its lock. A folder with no
// owner file (one being made, or one of a version without them) or one
// this process cannot open (another user's) is not.
func ownerDead(dir string) bool {
	f, err := os.Open(filepath.Join(dir, ownerName))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false
	}
	return true // released with f
}

// staleFolders lists the Build folders in tmpDir whose process died.
func staleFolders(tmpDir string) []string {
	ents, err := os.ReadDir(tmpDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		if dir := filepath.Join(tmpDir, e.Name()); ownerDead(dir) {
			out = append(out, dir)
		}
	}
	return out
}

// pruneStale removes the folders of killed Builds (staleFolders of
// os.TempDir()): their worktrees registered in b.repo with git worktree
// remove, the folders themselves, and then, with git worktree prune, the
// entries of worktrees whose folders are gone. It returns the folders
// removed.
func (b *Build) pruneStale(ctx context.Context) ([]string, error) {
	stale := staleFolders(os.TempDir())
	if len(stale) == 0 {
		return nil, nil
	}
	list, err := b.gitWorktree(ctx, "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, dir := range stale {
		for _, l := range strings.Split(list, "\n") {
			if wt, ok := strings.CutPrefix(l, "worktree "); ok && filepath.Dir(wt) == dir {
				if _, err := b.gitWorktree(ctx, "remove", "--force", wt); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := b.gitWorktree(ctx, "prune"); err != nil {
		errs = append(errs, err)
	}
	return stale, errors.Join(errs...)
}
