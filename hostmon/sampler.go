package hostmon

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Figure is one contention figure: a value, or the reason it is unavailable
// (its source is missing, unreadable, or the span is empty). An unavailable
// Figure is never a zero: check Available, or print it with String.
type Figure struct {
	// Value is the figure in Unit; meaningless when Reason is set.
	Value float64
	// Unit is "%", "ns", "n" (a count) or "" (a plain number).
	Unit string
	// Reason says why the figure is unavailable; "" when it is available.
	Reason string
}

func avail(v float64, unit string) Figure { return Figure{Value: v, Unit: unit} }
func unavail(unit, reason string) Figure  { return Figure{Unit: unit, Reason: reason} }

// Available reports whether the figure has a value.
func (f Figure) Available() bool { return f.Reason == "" }

// String returns the value with its unit ("22.0%", "1.5ms", "3.21"), or
// "unavailable (reason)".
func (f Figure) String() string {
	if !f.Available() {
		return "unavailable (" + f.Reason + ")"
	}
	switch f.Unit {
	case "%":
		return strconv.FormatFloat(f.Value, 'f', 1, 64) + "%"
	case "ns":
		return time.Duration(math.Round(f.Value)).String()
	case "n":
		return strconv.FormatFloat(f.Value, 'f', 0, 64)
	}
	return strconv.FormatFloat(f.Value, 'f', 2, 64)
}

// userHZ is the unit of /proc/stat and /proc/<pid>/stat times: USER_HZ,
// 100 on every Linux architecture procfs supports (procfs assumes it too).
const userHZ = 100

// Sampler takes snapshots of the host's contention counters at the
// caller's window boundaries; Between turns two snapshots into the figures
// for the span between them. Nothing polls: the cost is paid only when
// Snapshot is called (see BenchmarkSnapshot). A Sampler is safe for use by
// one goroutine at a time.
type Sampler struct {
	fs  FS
	pid int
	// cpus is the measured (confined) set; siblings their SMT siblings
	// outside it.
	cpus, siblings CPUSet
	online         int
	// cgroupStat is the cgroup cpu.stat path, or "" with cgroupWhy.
	cgroupStat, cgroupWhy string
	// now is the clock; tests replace it.
	now func() time.Time
	// tasks reads the process's threads, keeping their files open;
	// nil with tasksWhy when it could not be made. taskBuf is reused
	// between snapshots.
	tasks    *TaskReader
	tasksWhy string
	taskBuf  []Task
	// files are the /proc and cgroup files a snapshot reads, kept open
	// between snapshots (see procFiles); buf is the buffer they are read
	// into, grown to the largest of them.
	files procFiles
	buf   []byte
}

// NewSampler returns a Sampler for this process (<proc>/self) on the host fs
// describes, measuring the confined set cpus and the sibling set siblings
// (from a Budget). An empty cpus means "unconfined": the CPUs the process
// may run on (Topology.Allowed), with siblings as given.
//
// Foreign busy is the busy time on cpus minus this process's own CPU time,
// which the kernel reports only as a whole. The subtraction assumes that all
// of the process's CPU time was spent on cpus: true when the process is
// confined to cpus (Confine), and when unconfined with cpus empty (the set
// is then every CPU the process may use). When the process also runs
// outside cpus, foreign busy reads low by that time.
func NewSampler(fs FS, cpus, siblings CPUSet) (*Sampler, error) {
	topo, err := fs.Topology()
	if err != nil {
		return nil, err
	}
	return NewSamplerOf(fs, topo, cpus, siblings)
}

// NewSamplerOf is NewSampler with the host's topology already read (fs's),
// for a caller that keeps it: reading it takes about a millisecond. An
// empty cpus means topo.Allowed, as read then.
func NewSamplerOf(fs FS, topo *Topology, cpus, siblings CPUSet) (*Sampler, error) {
	if len(cpus) == 0 {
		cpus = topo.Allowed
	}
	for _, c := range cpus.Union(siblings) {
		if !topo.Online.Contains(c) {
			return nil, fmt.Errorf("hostmon: cannot sample CPU %d: it is not online (online CPUs: %s)", c, topo.Online)
		}
	}
	pid, err := fs.SelfPID()
	if err != nil {
		return nil, err
	}
	s := &Sampler{fs: fs, pid: pid, cpus: cpus, siblings: siblings.Minus(cpus), online: len(topo.Online), now: time.Now}
	s.cgroupStat, s.cgroupWhy = fs.cgroupCPUStatPath(pid)
	if s.tasks, err = fs.NewTaskReader(pid); err != nil {
		s.tasksWhy = err.Error()
	}
	return s, nil
}

// Close closes the files the Sampler keeps open between snapshots (six,
// and two per thread of the process). A Sampler that lives as long as the
// process need not be closed. Snapshot must not be called after Close.
func (s *Sampler) Close() error {
	s.files.close()
	if s.tasks == nil {
		return nil
	}
	return s.tasks.Close()
}

// ReadTasks returns the process's threads now (see FS.Tasks) through the
// files the Sampler keeps open, in a new slice the caller owns: cheaper
// than FS.Tasks once the Sampler has read them.
func (s *Sampler) ReadTasks() ([]Task, error) {
	if s.tasks == nil {
		return nil, errors.New(s.tasksWhy)
	}
	tasks, err := s.tasks.Read(s.taskBuf)
	if err != nil {
		return nil, err
	}
	s.taskBuf = tasks
	return slices.Clone(tasks), nil
}

// ReadTIDs returns the IDs of the process's threads now, sorted, appended
// to buf[:0]: the listing of the task directory that ReadTasks starts
// with, without reading each thread's files (four system calls, against
// two more per thread). It allocates nothing when buf has room.
func (s *Sampler) ReadTIDs(buf []int) ([]int, error) {
	if s.tasks == nil {
		return buf[:0], errors.New(s.tasksWhy)
	}
	r := s.tasks
	r.sc.path = append(r.sc.path[:0], r.dir...)
	dirfd, err := r.sc.openat(unix.AT_FDCWD, "")
	if err != nil {
		return buf[:0], fmt.Errorf("hostmon: threads of pid %d: %w", r.pid, &os.PathError{Op: "open", Path: r.dir, Err: err})
	}
	defer unix.Close(dirfd)
	if err := r.sc.readTIDs(dirfd); err != nil {
		return buf[:0], fmt.Errorf("hostmon: threads of pid %d: %w", r.pid, &os.PathError{Op: "getdents", Path: r.dir, Err: err})
	}
	return append(buf[:0], r.sc.tids...), nil
}

// SyncThreads lists the process's threads (as ReadTIDs does) and, when
// they are not the ones the Sampler's last reading of threads found, reads
// them, opening the files of new threads and growing its buffers, so that
// the next SnapshotInto allocates nothing for them (given a Snapshot with
// room, see Reserve). It returns the IDs, sorted, appended to buf[:0]: a
// caller can ask for the threads at the end of a phase and prepare the
// snapshots of the next one with a single listing of the task directory
// while the threads stay the same.
func (s *Sampler) SyncThreads(buf []int) ([]int, error) {
	tids, err := s.ReadTIDs(buf)
	if err != nil {
		return tids, err
	}
	if sameTIDs(s.taskBuf, tids) {
		return tids, nil
	}
	tasks, err := s.tasks.Read(s.taskBuf)
	if err != nil {
		return tids, err
	}
	if cap(tasks) < len(tasks)+8 {
		tasks = append(make([]Task, 0, 2*len(tasks)+16), tasks...)
	}
	s.taskBuf = tasks
	return tids, nil
}

// sameTIDs reports whether tasks are the threads tids, in order.
func sameTIDs(tasks []Task, tids []int) bool {
	if len(tasks) != len(tids) {
		return false
	}
	for i, t := range tasks {
		if t.TID != tids[i] {
			return false
		}
	}
	return true
}

// CPUs returns the measured set; Siblings the sibling set.
func (s *Sampler) CPUs() CPUSet     { return s.cpus }
func (s *Sampler) Siblings() CPUSet { return s.siblings }

// Snapshot is the host's cumulative counters at one instant. Only Between
// reads its contents; Tasks exposes the thread reading it took.
type Snapshot struct {
	time           time.Time
	cpus, siblings CPUSet
	online         int

	// cpu[c] is CPU c's line of /proc/stat (times in seconds), when
	// cpu[c].ok; running is procs_running.
	cpu     []cpuStat
	running uint64
	statErr string

	ownSeconds float64 // utime+stime of the process, seconds (ticks/USER_HZ)
	ownErr     string

	runq    []runqCPU // /proc/schedstat run_delay per CPU, indexed by CPU
	runqErr string

	tasks    []Task
	tasksErr string

	psiSomeMicroseconds uint64
	psiErr              string

	load1   float64
	loadErr string

	cgroup    cgroupCPU
	cgroupErr string
}

// Time returns when the snapshot was taken.
func (s *Snapshot) Time() time.Time { return s.time }

// Tasks returns the process's threads at the snapshot (see FS.Tasks), nil
// when they could not be read. The slice belongs to the Snapshot, and
// SnapshotInto overwrites it.
func (s *Snapshot) Tasks() []Task {
	if s.tasksErr != "" {
		return nil
	}
	return s.tasks
}

// Clone returns a deep copy of s with room for more threads (twice as many,
// and at least 16 more), so that a caller can make the Snapshots it will
// refill with SnapshotInto before the moment it must not allocate.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.cpu = slices.Clone(s.cpu)
	c.runq = slices.Clone(s.runq)
	c.tasks = append(make([]Task, 0, 2*len(s.tasks)+16), s.tasks...)
	return &c
}

// Reserve makes room in s for threads threads and 8 more, so that
// SnapshotInto fills it without allocating while the process has no more
// than that: when there is less room, it grows the thread list to twice
// threads and 16 more (what Clone leaves), keeping its contents.
func (s *Snapshot) Reserve(threads int) {
	if cap(s.tasks) < threads+8 {
		s.tasks = append(make([]Task, 0, 2*threads+16), s.tasks...)
	}
}

// Snapshot reads the counters now into a new Snapshot. It does not fail: a
// source that cannot be read makes its figures unavailable in Between, with
// the reason.
func (s *Sampler) Snapshot() *Snapshot {
	sn := new(Snapshot)
	s.SnapshotInto(sn)
	return sn
}

// SnapshotInto reads the counters now into sn, replacing what it held and
// reusing its memory: once sn has held a snapshot of this Sampler, it
// allocates nothing while the process's threads and the host's CPUs stay
// the same (BenchmarkSnapshotInto, TestSnapshotIntoAllocs). A caller that
// keeps a few Snapshots and cycles through them reads the host without
// garbage. sn must not be in use by Between while it is being filled.
func (s *Sampler) SnapshotInto(sn *Snapshot) {
	sn.time, sn.cpus, sn.siblings, sn.online = s.now(), s.cpus, s.siblings, s.online
	s.files.reopen(s)
	f := &s.files

	sn.statErr, sn.running = "", 0
	if b, why := s.read(&f.stat); why != "" {
		sn.statErr = why
	} else if sn.cpu, sn.running, why = parseStat(b, sn.cpu); why != "" {
		sn.statErr = f.stat.path + ": " + why
	}

	sn.ownErr, sn.ownSeconds = "", 0
	if b, why := s.read(&f.own); why != "" {
		sn.ownErr = why
	} else if ticks, ok := parseOwnTicks(b); !ok {
		sn.ownErr = f.own.path + ": no utime and stime fields"
	} else {
		sn.ownSeconds = float64(ticks) / userHZ
	}

	sn.runqErr = ""
	if b, why := s.read(&f.schedstat); why != "" {
		sn.runqErr = why
	} else {
		sn.runq = parseSchedstat(b, sn.runq)
	}

	sn.tasksErr = ""
	if s.tasks == nil {
		sn.tasksErr, sn.tasks = s.tasksWhy, sn.tasks[:0]
	} else if tasks, err := s.tasks.Read(s.taskBuf); err != nil {
		sn.tasksErr, sn.tasks = err.Error(), sn.tasks[:0]
	} else {
		sn.tasks = append(sn.tasks[:0], tasks...)
		if cap(tasks) < len(tasks)+8 {
			// Room for new threads, so that they allocate nothing here
			// later (the first reading, or the room is nearly used up).
			tasks = append(make([]Task, 0, 2*len(tasks)+16), tasks...)
		}
		s.taskBuf = tasks
	}

	sn.psiErr, sn.psiSomeMicroseconds = "", 0
	if b, why := s.read(&f.psi); why != "" {
		sn.psiErr = why
	} else if total, ok := parsePSISomeTotal(b); !ok {
		sn.psiErr = "no some line in " + f.psi.path
	} else {
		sn.psiSomeMicroseconds = total
	}

	sn.loadErr, sn.load1 = "", 0
	if b, why := s.read(&f.loadavg); why != "" {
		sn.loadErr = why
	} else if v, ok := parseLoad1(b); !ok {
		sn.loadErr = f.loadavg.path + ": no load average in " + strconv.Quote(string(b))
	} else {
		sn.load1 = v
	}

	sn.cgroupErr, sn.cgroup = "", cgroupCPU{}
	if b, why := s.read(&f.cgroup); why != "" {
		sn.cgroupErr = why
	} else if c, ok := parseCgroupFast(b); ok {
		sn.cgroup = c
	} else if c, err := parseCgroupCPUStat(b); err != nil {
		sn.cgroupErr = f.cgroup.path + ": " + err.Error()
	} else {
		sn.cgroup = c
	}
}

// procFile is one file that a Sampler re-reads at every snapshot through a
