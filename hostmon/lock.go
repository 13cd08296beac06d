package hostmon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// DefaultLockPath returns the host lock's default path,
// /var/tmp/gapbench-host.lock: a fixed path, independent of $TMPDIR (which
// CI systems set per job), so that every job on the host shares one lock.
// /var/tmp is world-writable and sticky on every Linux system and, unlike
// /run/lock, exists in containers and is writable by every user.
func DefaultLockPath() string { return defaultLockPath }

const defaultLockPath = "/var/tmp/gapbench-host.lock"

// maxCmdLine is the most bytes of a holder's command line written to the
// lock file; holderSize the most bytes read back from it.
const (
	maxCmdLine = 1024
	holderSize = 4096
)

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
// The lock file is opened without following a symbolic link (O_NOFOLLOW)
// and must be a regular file with one link: anything else at path (a
// symlink, a fifo, a device, a hard link to another file) is refused with a
// *LockFileError, and nothing is written to it. A file Lock creates (with
// O_EXCL) is made world-writable (0666) so that every user of a shared host
// can take it; a file that was there already is never chmod-ed or truncated:
// the holder record is written over its first bytes (see Holder). The file
// is never deleted (deleting a flock file races with a waiter that already
// opened it).
func Lock(ctx context.Context, path string, msg io.Writer) (*HostLock, error) {
	if path == "" {
		path = DefaultLockPath()
	}
	if msg == nil {
		msg = io.Discard
	}
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
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
	if err := writeHolder(f, Holder{PID: os.Getpid(), CmdLine: Sanitize(strings.Join(os.Args, " "))}); err != nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		return nil, fmt.Errorf("hostmon: write holder into host lock %s: %w", path, err)
	}
	return &HostLock{f: f, path: path}, nil
}

// File returns the open lock file. The flock belongs to the open file, not
// to the process: a child given it (exec.Cmd.ExtraFiles) holds the lock
// with this process, until both have closed it or exited. The HostLock
// keeps ownership; the caller must not close it.
func (l *HostLock) File() *os.File { return l.f }

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
	terr := writeHolder(f, Holder{})
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
// It reads only a regular file, never through a symbolic link.
func ReadHolder(path string) Holder {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Holder{}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if checkLockFile(f, path) != nil {
		return Holder{}
	}
	return readHolder(f)
}

// readHolder parses "pid\ncmdline\n" from the start of f.
func readHolder(f *os.File) Holder {
	buf := make([]byte, holderSize)
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
	return Holder{PID: pid, CmdLine: Sanitize(string(bytes.TrimSpace(cmd)))}
}

// writeHolder writes h's record over the start of f without truncating it:
// "pid\ncmdline\n", then blanks (newlines) over whatever remains of a
// longer record before it, up to holderSize bytes. The zero Holder is all
// blanks, which parseHolder reads as nobody.
func writeHolder(f *os.File, h Holder) error {
	var rec []byte
	if h.PID > 0 {
		cmd := strings.ReplaceAll(h.CmdLine, "\n", " ")
		if len(cmd) > maxCmdLine {
			cmd = cmd[:maxCmdLine]
		}
		rec = []byte(strconv.Itoa(h.PID) + "\n" + cmd + "\n")
	}
	old := make([]byte, holderSize)
	n, _ := f.ReadAt(old, 0)
	// Blank what is left of an older record: up to its second newline,
	// which is where parseHolder stops reading.
	end := 0
	for i, nl := 0, 0; i < n && nl < 2; i++ {
		end = i + 1
		if old[i] == '\n' {
			nl++
		}
	}
	for len(rec) < end {
		rec = append(rec, '\n')
	}
	_, err := f.WriteAt(rec, 0)
	return err
}

// LockFileError is a lock path that holds something Lock must not use: a
// symbolic link, a file that is not regular, or a file with more than one
// link. Lock neither writes to it nor changes it.
type LockFileError struct {
	// Path is the lock path.
	Path string
	// Kind is what is there: KindSymlink, KindNotRegular or KindLinked.
	Kind LockFileKind
	// Mode is the file's mode (for KindNotRegular) and Links its link
	// count (for KindLinked).
	Mode  os.FileMode
	Links uint64
}

// LockFileKind is what a LockFileError found at the lock path.
type LockFileKind int

const (
	// KindSymlink: a symbolic link.
	KindSymlink LockFileKind = iota + 1
	// KindNotRegular: a fifo, socket, device or directory.
	KindNotRegular
	// KindLinked: a regular file with more than one hard link.
	KindLinked
)

// Error names the path and what is there.
func (e *LockFileError) Error() string {
	switch e.Kind {
	case KindSymlink:
		return fmt.Sprintf("hostmon: host lock %s is a symbolic link; refusing to follow it (remove it, or pass another path)", e.Path)
	case KindLinked:
		return fmt.Sprintf("hostmon: host lock %s has %d hard links; refusing to write to it (remove it, or pass another path)", e.Path, e.Links)
	}
	return fmt.Sprintf("hostmon: host lock %s is not a regular file (mode %v); refusing to use it (remove it, or pass another path)", e.Path, e.Mode)
}

// openLockFile opens the lock file at path read-write without following a
// symbolic link, creating it (O_EXCL, then 0666) when it does not exist,
// and checks that it is a regular file of one link. O_NONBLOCK keeps a fifo
// planted at path from blocking the open.
func openLockFile(path string) (*os.File, error) {
	const flags = unix.O_RDWR | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	for range 10 {
		fd, err := unix.Open(path, flags, 0)
		created := false
		if errors.Is(err, unix.ENOENT) {
			fd, err = unix.Open(path, flags|unix.O_CREAT|unix.O_EXCL, 0o666)
			if errors.Is(err, unix.EEXIST) {
				continue // created by another process meanwhile: open it
			}
			created = err == nil
		}
		switch {
		case errors.Is(err, unix.ELOOP):
			return nil, &LockFileError{Path: path, Kind: KindSymlink}
		case errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EISDIR):
			// A fifo without a reader, a socket; a directory.
			mode := os.FileMode(0)
			if fi, serr := os.Lstat(path); serr == nil {
				mode = fi.Mode()
			}
			return nil, &LockFileError{Path: path, Kind: KindNotRegular, Mode: mode}
		case err != nil:
			return nil, fmt.Errorf("hostmon: open host lock %s: %w (pass another path, e.g. decodegap lock -path)", path, err)
		}
		f := os.NewFile(uintptr(fd), path)
		if err := checkLockFile(f, path); err != nil {
			f.Close()
			return nil, err
		}
		if created {
			// Umask may have removed write permission for others; this
			// file is ours, so give it to every user of the host.
			// Failure only matters to them.
			_ = f.Chmod(0o666)
		}
		return f, nil
	}
	return nil, fmt.Errorf("hostmon: open host lock %s: it keeps appearing and disappearing", path)
}

// checkLockFile returns a *LockFileError unless f is a regular file with
// one link.
func checkLockFile(f *os.File, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("hostmon: stat host lock %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		fi, _ := f.Stat()
		var mode os.FileMode
		if fi != nil {
			mode = fi.Mode()
		}
		return &LockFileError{Path: path, Kind: KindNotRegular, Mode: mode}
	}
	if st.Nlink != 1 {
		return &LockFileError{Path: path, Kind: KindLinked, Links: uint64(st.Nlink)}
	}
	return nil
}

// Sanitize returns s fit to print on a terminal: every control character,
// escape and invalid byte written as a Go escape (\x1b, \u202e), other
// characters as they are, cut to maxCmdLine bytes. A lock file is writable
// by every user, so what it names is never printed raw.
func Sanitize(s string) string {
	var b strings.Builder
	for i, r := range s {
		if b.Len() >= maxCmdLine {
			b.WriteString("…")
			break
		}
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || unicode.IsGraphic(r) && !unicode.Is(unicode.Bidi_Control, r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
