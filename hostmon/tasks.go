package hostmon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Task is one thread of a process, from /proc/<pid>/task/<tid>/comm and
// /proc/<pid>/task/<tid>/schedstat. The schedstat counters are the
// scheduler's own, in nanoseconds, cumulative since the thread started.
type Task struct {
	// TID is the thread id.
	TID int
	// Name is the thread's comm: at most 15 bytes, set by the program
	// (prctl PR_SET_NAME) or inherited from the executable's name.
	Name string
	// OnCPUNanoseconds is the time the thread has run on a CPU.
	OnCPUNanoseconds uint64
	// RunQueueWaitNanoseconds is the time the thread was runnable but waited
	// on a run queue for a CPU: the cost of contention, in ns.
	RunQueueWaitNanoseconds uint64
	// Timeslices is the number of times the thread was scheduled onto a CPU.
	Timeslices uint64
}

// Tasks returns the threads of process pid, sorted by TID, appended to
// buf[:0]: a caller that passes back the slice of its previous call does not
// allocate (a thread's Name is reused while its comm is unchanged). A thread
// that exits while Tasks reads it is left out. It fails when the process does
// not exist or its task directory cannot be read.
//
// The per-thread counters of threads that already exited are gone; for
// whole-process totals that include them use getrusage or
// CLOCK_PROCESS_CPUTIME_ID. Tasks reads the files with raw system calls
// into a pooled buffer rather than through procfs, whose readers allocate
// several times per file: about 13 µs per thread here (BenchmarkSelfTasks),
// most of it the kernel opening /proc files. To read the same process
// repeatedly, a TaskReader keeps the files open: about 3.5 µs per thread.
func (fs FS) Tasks(pid int, buf []Task) ([]Task, error) {
	prev := buf
	out := buf[:0]
	sc := taskScratchPool.Get().(*taskScratch)
	defer taskScratchPool.Put(sc)
	dir := fs.procPath(strconv.Itoa(pid), "task")
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return out, fmt.Errorf("hostmon: threads of pid %d: %w", pid, &os.PathError{Op: "open", Path: dir, Err: err})
	}
	defer unix.Close(dirfd)
	if err := sc.readTIDs(dirfd); err != nil {
		return out, fmt.Errorf("hostmon: threads of pid %d: %w", pid, &os.PathError{Op: "getdents", Path: dir, Err: err})
	}
	for _, tid := range sc.tids {
		sc.path = strconv.AppendInt(sc.path[:0], int64(tid), 10)
		n := len(sc.path)
		text, err := sc.read(dirfd, "/schedstat")
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			continue // exited since the directory was read
		}
		if err != nil {
			return out, fmt.Errorf("hostmon: schedstat of thread %d of pid %d: %w (kernel without CONFIG_SCHED_INFO?)", tid, pid, err)
		}
		t, err := parseTaskSchedstat(text)
		if err != nil {
			return out, fmt.Errorf("hostmon: %s/%d/schedstat: %w", dir, tid, err)
		}
		sc.path = sc.path[:n]
		comm, err := sc.read(dirfd, "/comm")
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("hostmon: comm of thread %d of pid %d: %w", tid, pid, err)
		}
		t.TID = tid
		t.Name = reuseName(prev, tid, bytes.TrimSuffix(comm, []byte("\n")))
		out = append(out, t)
	}
	return out, nil
}

// taskScratch is the reusable memory of one Tasks call.
type taskScratch struct {
	dirents [8192]byte // getdents buffer
	file    [512]byte  // one schedstat or comm file
	tids    []int      // the numeric entries of the task directory
	path    []byte     // the path being opened
}

var taskScratchPool = sync.Pool{New: func() any { return &taskScratch{path: make([]byte, 0, 128)} }}

// readTIDs lists the numeric entries of the open directory dirfd into
// sc.tids, sorted.
func (sc *taskScratch) readTIDs(dirfd int) error {
	sc.tids = sc.tids[:0]
	for {
		n, err := unix.ReadDirent(dirfd, sc.dirents[:])
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		sc.tids = appendDirentTIDs(sc.tids, sc.dirents[:n])
	}
	slices.Sort(sc.tids)
	return nil
}

// openat opens sc.path+suffix, relative to dirfd, read-only. It passes a
// NUL-terminated byte path to the system call so that it does not allocate.
func (sc *taskScratch) openat(dirfd int, suffix string) (int, error) {
	sc.path = append(append(sc.path, suffix...), 0)
	p := unsafe.Pointer(&sc.path[0])
	r, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(p), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	runtime.KeepAlive(sc)
	sc.path = sc.path[:len(sc.path)-1]
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// read reads the file sc.path+suffix, relative to dirfd, into sc.file; a
// file longer than the buffer is truncated (schedstat and comm are under 100
// bytes).
func (sc *taskScratch) read(dirfd int, suffix string) ([]byte, error) {
	fd, err := sc.openat(dirfd, suffix)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, sc.file[:])
	if err != nil {
		return nil, err
	}
	return sc.file[:n], nil
}

// reuseName returns the Name of tid in prev when it equals comm, else the
// Name of any thread in prev that equals comm (a new Go thread is named like
// the others), so that a steady set of names is read without allocating;
// otherwise a new string.
func reuseName(prev []Task, tid int, comm []byte) string {
	i, ok := slices.BinarySearchFunc(prev, tid, func(t Task, tid int) int { return t.TID - tid })
	if ok && i < len(prev) && prev[i].Name == string(comm) {
		return prev[i].Name
	}
	for _, t := range prev {
		if t.Name == string(comm) {
			return t.Name
		}
	}
	return string(comm)
}

// appendDirentTIDs parses linux_dirent64 records (ino u64, off s64,
// reclen u16 little-endian, type u8, NUL-terminated name) and appends the
// names that are decimal numbers.
func appendDirentTIDs(list []int, b []byte) []int {
	for len(b) >= 19 {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if tid, ok := parseDecimal(name); ok && tid <= 1<<31 {
			list = append(list, int(tid))
		}
		b = b[reclen:]
	}
	return list
}

// parseDecimal parses a non-empty unsigned decimal number of at most 19
// digits (so it cannot overflow).
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// parseTaskSchedstat parses /proc/<pid>/task/<tid>/schedstat: three decimal
// counters, "on-CPU-ns run-queue-wait-ns timeslices", separated by single
// spaces, then a newline.
func parseTaskSchedstat(b []byte) (Task, error) {
	var v [3]uint64
	rest := bytes.TrimRight(b, "\n")
	for i := range v {
		var field []byte
		field, rest, _ = bytes.Cut(rest, []byte(" "))
		n, ok := parseDecimal(field)
		if !ok {
			return Task{}, fmt.Errorf("field %d of %q is not a counter", i+1, b)
		}
		v[i] = n
	}
	if len(rest) != 0 {
		return Task{}, fmt.Errorf("more than 3 fields in %q", b)
	}
	return Task{OnCPUNanoseconds: v[0], RunQueueWaitNanoseconds: v[1], Timeslices: v[2]}, nil
}

// SelfTasks returns the threads of the process <proc>/self names (this
// process on the live tree); see Tasks.
func (fs FS) SelfTasks(buf []Task) ([]Task, error) {
	pid, err := fs.SelfPID()
	if err != nil {
		return buf[:0], err
	}
	return fs.Tasks(pid, buf)
}

// TaskTotals sums the change in the Task counters of one process between
// two readings.
type TaskTotals struct {
	// OnCPUNanoseconds is the CPU time the threads ran between the readings.
	OnCPUNanoseconds uint64
	// RunQueueWaitNanoseconds is the time the threads waited for a CPU
	// between the readings.
	RunQueueWaitNanoseconds uint64
	// Timeslices is the number of times the threads were scheduled.
	Timeslices uint64
	// Started counts threads in the later reading only; their whole
	// counters are counted (they started after the first reading).
	Started int
	// Exited counts threads in the earlier reading only; what they did
	// after the first reading is lost, so the totals undercount when
	// Exited > 0.
	Exited int
}

// TasksBetween returns the change in the counters of the threads between two
// readings of the same process's Tasks (both sorted by TID, as Tasks returns
// them). A thread in both readings contributes its difference; a thread only
// in after contributes all its counters; a thread only in before is counted
// in Exited. It does not allocate.
func TasksBetween(before, after []Task) TaskTotals {
	var t TaskTotals
	i := 0
	for _, a := range after {
		for i < len(before) && before[i].TID < a.TID {
			t.Exited++
			i++
		}
		if i < len(before) && before[i].TID == a.TID {
			b := before[i]
			i++
			t.OnCPUNanoseconds += sub(a.OnCPUNanoseconds, b.OnCPUNanoseconds)
			t.RunQueueWaitNanoseconds += sub(a.RunQueueWaitNanoseconds, b.RunQueueWaitNanoseconds)
			t.Timeslices += sub(a.Timeslices, b.Timeslices)
			continue
		}
		t.Started++
		t.OnCPUNanoseconds += a.OnCPUNanoseconds
		t.RunQueueWaitNanoseconds += a.RunQueueWaitNanoseconds
		t.Timeslices += a.Timeslices
	}
	t.Exited += len(before) - i
	return t
}

// sub returns a−b, or 0 when a counter went backwards (a reused TID).
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
