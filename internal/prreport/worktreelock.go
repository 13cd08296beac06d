package prreport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// worktreeLock holds an exclusive flock on the repository's git common
// directory while a `git worktree add`, `remove` or `prune` runs. git
// itself does not serialize them: an add reads every registered
// worktree's admin folder, and one that another add is still creating
// fails it ("failed to read .git/worktrees/NAME/commondir", seen in CI
// with several pr runs in one repository). The lock is advisory and on
// the directory itself, so nothing is written into .git; it covers pr
// runs of this process and of others, not git commands run by hand.
//
// common is the git common directory (gitCommonDir). It polls with
// LOCK_NB so that ctx can end the wait; unlock releases it (and closing
// the descriptor would too, were the process to die).
func worktreeLock(ctx context.Context, common string) (unlock func(), err error) {
	fd, err := unix.Open(common, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: common, Err: err}
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			unix.Close(fd)
			return nil, fmt.Errorf("locking %s for git worktree: %w", common, err)
		}
		select {
		case <-ctx.Done():
			unix.Close(fd)
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	return func() {
		unix.Flock(fd, unix.LOCK_UN)
		unix.Close(fd)
	}, nil
}

// gitCommonDir returns the absolute git common directory of the work
// tree at top (its .git, or the main repository's for a linked worktree).
func gitCommonDir(ctx context.Context, top string) (string, error) {
	common, err := gitOut(ctx, top, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(top, common)
	}
	return common, nil
}

// gitWorktree runs `git worktree args...` in b.repo under worktreeLock.
func (b *Build) gitWorktree(ctx context.Context, args ...string) (string, error) {
	unlock, err := worktreeLock(ctx, b.gitCommon)
	if err != nil {
		return "", err
	}
	defer unlock()
	return gitOut(ctx, b.repo, append([]string{"worktree"}, args...)...)
}
