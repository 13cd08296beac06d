package hostmon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// TaskReader reads one process's threads again and again, like FS.Tasks,
// but keeps each thread's schedstat and comm files open between calls and
// re-reads them with pread: about 5 times cheaper per thread than opening
// them each time (BenchmarkTaskReader against BenchmarkSelfTasks). It holds
// two descriptors per thread until the thread exits or Close is called. A
// TaskReader is for one goroutine at a time.
type TaskReader struct {
	dir string
	pid int
	// open maps a TID to its open files; threads gone from the task
	// directory are closed at the next Read.
	open map[int]taskFiles
	sc   taskScratch
	// seen marks the TIDs of the current Read.
	seen map[int]bool
}

type taskFiles struct{ schedstat, comm int }

func (f *taskFiles) close() {
	unix.Close(f.schedstat)
	unix.Close(f.comm)
}

// NewTaskReader returns a reader of process pid's threads. It fails when the
// process's task directory does not exist.
func (fs FS) NewTaskReader(pid int) (*TaskReader, error) {
	dir := fs.procPath(strconv.Itoa(pid), "task")
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("hostmon: threads of pid %d: %w", pid, err)
	}
	// Room for 64 threads: a thread that starts later allocates nothing
	// but its name (and that only when its name is new to the process).
	return &TaskReader{dir: dir, pid: pid, open: make(map[int]taskFiles, 64), seen: make(map[int]bool, 64),
		sc: taskScratch{tids: make([]int, 0, 256), path: make([]byte, 0, 128)}}, nil
}

// Read returns the process's threads, sorted by TID, appended to buf[:0],
// with the same meaning and the same reuse of buf and names as FS.Tasks.
func (r *TaskReader) Read(buf []Task) ([]Task, error) {
	prev := buf
	out := buf[:0]
	// Open through the scratch path, which does not allocate (unix.Open
	// copies the path to the heap).
	r.sc.path = append(r.sc.path[:0], r.dir...)
	dirfd, err := r.sc.openat(unix.AT_FDCWD, "")
	if err != nil {
		return out, fmt.Errorf("hostmon: threads of pid %d: %w", r.pid, &os.PathError{Op: "open", Path: r.dir, Err: err})
	}
	defer unix.Close(dirfd)
	if err := r.sc.readTIDs(dirfd); err != nil {
		return out, fmt.Errorf("hostmon: threads of pid %d: %w", r.pid, &os.PathError{Op: "getdents", Path: r.dir, Err: err})
	}
	clear(r.seen)
	for _, tid := range r.sc.tids {
		r.seen[tid] = true
		t, err := r.readTask(dirfd, tid)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			continue // exited since the directory was read
		}
		if err != nil {
			return out, err
		}
		t.Name = reuseName(prev, tid, t.comm)
		t.comm = nil
		out = append(out, t.Task)
	}
	for tid, f := range r.open {
		if !r.seen[tid] {
			f.close()
			delete(r.open, tid)
		}
	}
	return out, nil
}

type taskRead struct {
	Task
	comm []byte
}

// readTask reads one thread through its open files, opening them first
// when needed; a read that fails on files opened earlier (the TID was
// reused by a new thread) reopens them once.
func (r *TaskReader) readTask(dirfd, tid int) (taskRead, error) {
	for attempt := 0; ; attempt++ {
		f, ok := r.open[tid]
		if !ok {
			var err error
			if f, err = r.openTask(dirfd, tid); err != nil {
				return taskRead{}, err
			}
			r.open[tid] = f
		}
		n, err1 := unix.Pread(f.schedstat, r.sc.file[:256], 0)
		m, err2 := unix.Pread(f.comm, r.sc.file[256:], 0)
		if err := errors.Join(err1, err2); err != nil || n == 0 {
			f.close()
			delete(r.open, tid)
			if attempt == 0 && ok {
				continue
			}
			if err == nil {
				err = unix.ESRCH
			}
			return taskRead{}, err
		}
		t, err := parseTaskSchedstat(r.sc.file[:n])
		if err != nil {
			return taskRead{}, fmt.Errorf("hostmon: %s/%d/schedstat: %w", r.dir, tid, err)
		}
		t.TID = tid
		return taskRead{Task: t, comm: bytes.TrimSuffix(r.sc.file[256:256+m], []byte("\n"))}, nil
	}
}

func (r *TaskReader) openTask(dirfd, tid int) (taskFiles, error) {
	r.sc.path = strconv.AppendInt(r.sc.path[:0], int64(tid), 10)
	n := len(r.sc.path)
	s, err := r.sc.openat(dirfd, "/schedstat")
	if err != nil {
		return taskFiles{}, err
	}
	r.sc.path = r.sc.path[:n]
	c, err := r.sc.openat(dirfd, "/comm")
	if err != nil {
		unix.Close(s)
		return taskFiles{}, err
	}
	return taskFiles{schedstat: s, comm: c}, nil
}

// Close closes every open file. The reader must not be used afterwards.
func (r *TaskReader) Close() error {
	for tid, f := range r.open {
		f.close()
		delete(r.open, tid)
	}
	return nil
}
