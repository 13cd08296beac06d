package hostmon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// DefaultLockPath returns the host lock's default path:
// gapbench-host.lock in os.TempDir() (usually /tmp/gapbench-host.lock), a
// directory every user of the host shares.
func DefaultLockPath() string {
	return filepath.Join(os.TempDir(), "gapbench-host.lock")
}

// lockPoll is how often a blocked Lock retries; flock itself cannot be
// interrupted by a context, so Lock polls with LOCK_NB.
const lockPoll = 50 * time.Millisecond

// HostLock is a held host lock: an exclusive flock(2) on a file that names
// the holder. The kernel releases it when the holder's process exits, however
// it exits, so a lock is never left stale by a crash.
type HostLock struct {
	// f is the open lock file; the flock lives as long as this descriptor.
	f    *os.File
	path string
}

// Holder is the process named in a lock file: the last process that took
// the lock.
type Holder struct {
	// PID is the holder's process id; 0 when the file names nobody.
	PID int
	// CmdLine is the holder's command line, arguments separated by spaces.
	CmdLine string
}

// String returns "pid 123 (go test -bench .)" or "an unknown process" when
// the file names nobody (a holder that has not written its name yet).
func (h Holder) String() string {
	if h.PID == 0 {
		return "an unknown process"
	}
	if h.CmdLine == "" {
		return "pid " + strconv.Itoa(h.PID)
	}
	return fmt.Sprintf("pid %d (%s)", h.PID, h.CmdLine)
}

// alive reports whether the holder's process still exists and has not
// exited: a zombie (exited, not yet reaped by its parent) counts as dead.
func (h Holder) alive() bool {
	if h.PID <= 0 {
		return false
	}
	if err := unix.Kill(h.PID, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	p, err := procfs.NewProc(h.PID)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	if err != nil {
		return false
	}
	return st.State != "Z" && st.State != "X"
}

// Lock takes the exclusive host lock at path (DefaultLockPath() when path is
// ""), so that benchmark runs on one host serialize. While another process
// holds it, Lock writes one line to msg naming the holder's pid and command
// line (again whenever the holder changes) and waits, polling every 50 ms,
// until the lock is free or ctx is done. A holder that died released the lock
// with its last descriptor; Lock then takes it over and says so on msg. When
// it has the lock, Lock writes this process's pid and command line into the
// file for the next waiter to read. msg may be nil.
//
// The lock file is created world-writable (0666) so that every user of a
// shared host can take it; it is never deleted (deleting a flock file races
// with a waiter that already opened it).
func Lock(ctx context.Context, path string, msg io.Writer) (*HostLock, error) {
	if path == "" {
		path = DefaultLockPath()
	}
	if msg == nil {
		msg = io.Discard
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("hostmon: open host lock %s: %w (pass another path, e.g. decodegap lock -path)", path, err)
	}
	// Umask may have removed write permission for others; restore it so
	// other users can open the file read-write. Failure only matters to them.
	_ = f.Chmod(0o666)
	var last Holder
	waited := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("hostmon: flock %s: %w", path, err)
		}
		h := readHolder(f)
		if !waited || h != last {
			fmt.Fprintf(msg, "hostmon: waiting for host lock %s, held by %s\n", path, h)
			last, waited = h, true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("hostmon: host lock %s still held by %s: %w", path, h, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
	// We hold the lock. The file names the previous holder, if any.
	if prev := readHolder(f); prev.PID != 0 && prev.PID != os.Getpid() && !prev.alive() {
		fmt.Fprintf(msg, "hostmon: took over host lock %s from %s, which has exited\n", path, prev)
	} else if waited {
		fmt.Fprintf(msg, "hostmon: got host lock %s\n", path)
	}
	if err := writeHolder(f, Holder{PID: os.Getpid(), CmdLine: strings.Join(os.Args, " ")}); err != nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		return nil, fmt.Errorf("hostmon: write holder into host lock %s: %w", path, err)
	}
	return &HostLock{f: f, path: path}, nil
}

// Path returns the lock file's path.
func (l *HostLock) Path() string { return l.path }

// Unlock releases the lock: it clears the holder from the file and closes it.
// Unlock on an already released lock returns an error.
func (l *HostLock) Unlock() error {
	if l == nil || l.f == nil {
		return errors.New("hostmon: Unlock of a host lock that is not held")
	}
	f := l.f
	l.f = nil
	terr := f.Truncate(0)
	uerr := unix.Flock(int(f.Fd()), unix.LOCK_UN)
	cerr := f.Close()
	if err := errors.Join(terr, uerr, cerr); err != nil {
		return fmt.Errorf("hostmon: release host lock %s: %w", l.path, err)
	}
	return nil
}

// ReadHolder returns the process named in the lock file at path (the current
// holder while the lock is held; the last one otherwise; the zero Holder when
// the file is empty or missing).
func ReadHolder(path string) Holder {
	f, err := os.Open(path)
	if err != nil {
		return Holder{}
	}
	defer f.Close()
	return readHolder(f)
}

// readHolder parses "pid\ncmdline\n" from the start of f.
func readHolder(f *os.File) Holder {
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	return parseHolder(buf[:n])
}

// parseHolder parses the lock file's content: the pid on the first line, the
// command line on the second. Anything else gives the zero Holder.
func parseHolder(b []byte) Holder {
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil || pid <= 0 {
		return Holder{}
	}
	cmd, _, _ := bytes.Cut(rest, []byte("\n"))
	return Holder{PID: pid, CmdLine: string(bytes.TrimSpace(cmd))}
}

func writeHolder(f *os.File, h Holder) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	cmd := strings.ReplaceAll(h.CmdLine, "\n", " ")
	_, err := f.WriteAt([]byte(strconv.Itoa(h.PID)+"\n"+cmd+"\n"), 0)
	return err
}
