package hostmon

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/procfs"
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
// descriptor it keeps open, with pread from offset 0 (the kernel regenerates
// a /proc or cgroup file for each read from its start).
type procFile struct {
	path string
	// fd is the open descriptor, or -1 with why saying why the file is
	// unavailable.
	fd  int
	why string
}

// procFiles are the files of a snapshot. root and cgroupPath are the proc
// root and cgroup cpu.stat path they were opened for: when the Sampler's
// differ (a test switched trees), they are opened again.
type procFiles struct {
	opened               bool
	root, cgroupPath     string
	stat, own, schedstat procFile
	psi, loadavg, cgroup procFile
}

// reopen opens the files for s's current tree unless they are open already.
func (f *procFiles) reopen(s *Sampler) {
	if f.opened && f.root == s.fs.procRoot && f.cgroupPath == s.cgroupStat {
		return
	}
	f.close()
	f.opened, f.root, f.cgroupPath = true, s.fs.procRoot, s.cgroupStat
	fs := s.fs
	f.stat = openProcFile(fs.procPath("stat"), "")
	f.own = openProcFile(fs.procPath(strconv.Itoa(s.pid), "stat"), "")
	f.schedstat = openProcFile(fs.procPath("schedstat"), ": kernel built without CONFIG_SCHEDSTATS")
	f.psi = openProcFile(fs.procPath("pressure/cpu"), ": kernel without PSI, or booted with psi=0")
	f.loadavg = openProcFile(fs.procPath("loadavg"), "")
	if s.cgroupStat == "" {
		f.cgroup = procFile{fd: -1, why: s.cgroupWhy}
	} else {
		f.cgroup = openProcFile(s.cgroupStat, "")
	}
}

// openProcFile opens path read-only; when it does not exist, the reason is
// "no <path>" followed by missing.
func openProcFile(path, missing string) procFile {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		w := why(&os.PathError{Op: "open", Path: path, Err: err}, path)
		if errors.Is(err, os.ErrNotExist) {
			w += missing
		}
		return procFile{path: path, fd: -1, why: w}
	}
	return procFile{path: path, fd: fd}
}

// close closes the open files.
func (f *procFiles) close() {
	for _, p := range []*procFile{&f.stat, &f.own, &f.schedstat, &f.psi, &f.loadavg, &f.cgroup} {
		if p.fd >= 0 && f.opened {
			unix.Close(p.fd)
		}
		p.fd = -1
	}
	f.opened = false
}

// read reads the whole of p into s.buf (growing it when the file does not
// fit) and returns its contents, or why it is unavailable. A read shorter
// than the room left is taken as the end of the file: /proc and cgroup
// files are generated whole and returned in one read when the buffer holds
// them, and reading again at the end would generate them a second time.
func (s *Sampler) read(p *procFile) ([]byte, string) {
	if p.fd < 0 {
		return nil, p.why
	}
	if len(s.buf) == 0 {
		s.buf = make([]byte, 16<<10)
	}
	n := 0
	for {
		m, err := unix.Pread(p.fd, s.buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, why(&os.PathError{Op: "read", Path: p.path, Err: err}, p.path)
		}
		n += m
		if n < len(s.buf) {
			return s.buf[:n], ""
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
}

// cpuStat is one CPU's line of /proc/stat; ok is false for a CPU without
// one.
type cpuStat struct {
	ok bool
	t  procfs.CPUStat
}

// runqCPU is one CPU's run_delay in /proc/schedstat (ns); ok is false for a
// CPU without a line.
type runqCPU struct {
	ok bool
	ns uint64
}

// fields calls f with each space-separated field of line, stopping when f
// returns false.
func fields(line []byte, f func(i int, field []byte) bool) {
	i := 0
	for len(line) > 0 {
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			line = line[1:]
		}
		if len(line) == 0 {
			return
		}
		j := 0
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if !f(i, line[:j]) {
			return
		}
		line = line[j:]
		i++
	}
}

// nextLine splits b at its first newline.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// parseStat parses the per-CPU lines and procs_running of /proc/stat into
// cpus (indexed by CPU, reused), with the values procfs gives (ticks /
// USER_HZ, in seconds). It returns why when a cpu line is malformed.
func parseStat(b []byte, cpus []cpuStat) ([]cpuStat, uint64, string) {
	for i := range cpus {
		cpus[i].ok = false
	}
	var running uint64
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		switch {
		case bytes.HasPrefix(line, []byte("cpu")) && len(line) > 3 && line[3] >= '0' && line[3] <= '9':
			var id uint64
			var v [8]uint64
			bad, count := false, 0
			fields(line, func(i int, f []byte) bool {
				if i == 0 {
					n, ok := parseDecimal(f[3:])
					id, bad = n, !ok || n > 1<<20
					return ok
				}
				n, ok := parseDecimal(f)
				if !ok {
					bad = true
					return false
				}
				if i <= len(v) {
					v[i-1] = n
				}
				count++
				return i < len(v)
			})
			if bad || count == 0 {
				return cpus, 0, "malformed line " + strconv.Quote(string(line))
			}
			for int(id) >= len(cpus) {
				cpus = append(cpus, cpuStat{})
			}
			cpus[id] = cpuStat{ok: true, t: procfs.CPUStat{
				User: float64(v[0]) / userHZ, Nice: float64(v[1]) / userHZ, System: float64(v[2]) / userHZ,
				Idle: float64(v[3]) / userHZ, Iowait: float64(v[4]) / userHZ, IRQ: float64(v[5]) / userHZ,
				SoftIRQ: float64(v[6]) / userHZ, Steal: float64(v[7]) / userHZ,
			}}
		case bytes.HasPrefix(line, []byte("procs_running ")):
			running, _ = parseDecimal(bytes.TrimSpace(line[len("procs_running "):]))
		}
	}
	return cpus, running, ""
}

// parseOwnTicks returns utime+stime (clock ticks) from /proc/<pid>/stat:
// fields 14 and 15, counted after the command name's closing parenthesis.
func parseOwnTicks(b []byte) (uint64, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	var ut, st uint64
	okU, okS := false, false
	fields(bytes.TrimSpace(b[i+1:]), func(k int, f []byte) bool {
		// Field 3 (the state) is k = 0.
		switch k {
		case 11:
			ut, okU = parseDecimal(f)
		case 12:
			st, okS = parseDecimal(f)
			return false
		}
		return true
	})
	return ut + st, okU && okS
}

// parseSchedstat parses the cpu<N> lines of /proc/schedstat (version 15:
// nine counters, the eighth run_delay in ns) into runq, indexed by CPU and
// reused. Lines that do not match are skipped, as procfs does.
func parseSchedstat(b []byte, runq []runqCPU) []runqCPU {
	for i := range runq {
		runq[i].ok = false
	}
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if !bytes.HasPrefix(line, []byte("cpu")) {
			continue
		}
		var id, wait uint64
		n, bad := 0, false
		fields(line, func(i int, f []byte) bool {
			var ok bool
			switch {
			case i == 0:
				id, ok = parseDecimal(f[3:])
				ok = ok && id <= 1<<20
			case i == 8:
				wait, ok = parseDecimal(f)
			default:
				_, ok = parseDecimal(f)
			}
			bad = bad || !ok
			n = i + 1
			return ok && i < 9
		})
		if bad || n < 10 {
			continue
		}
		for int(id) >= len(runq) {
			runq = append(runq, runqCPU{})
		}
		runq[id] = runqCPU{ok: true, ns: wait}
	}
	return runq
}

// parsePSISomeTotal returns the total= of the "some" line of a PSI file
// (µs).
func parsePSISomeTotal(b []byte) (uint64, bool) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if !bytes.HasPrefix(line, []byte("some ")) {
			continue
		}
		var total uint64
		found := false
		fields(line, func(_ int, f []byte) bool {
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				total, found = parseDecimal(v)
				return false
			}
			return true
		})
		return total, found
	}
	return 0, false
}

// parseLoad1 returns the first field of /proc/loadavg, a decimal fraction
// such as "1.47", as the float64 nearest to it (what strconv.ParseFloat
// gives).
func parseLoad1(b []byte) (float64, bool) {
	var first []byte
	fields(b, func(_ int, f []byte) bool { first = f; return false })
	var n uint64
	digits, dec, seenDot := 0, 0, false
	for _, c := range first {
		switch {
		case c == '.' && !seenDot:
			seenDot = true
		case c >= '0' && c <= '9':
			n = n*10 + uint64(c-'0')
			digits++
			if seenDot {
				dec++
			}
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	// n and 10^dec are exact in float64, so one division rounds once.
	return float64(n) / math.Pow10(dec), true
}

// parseCgroupFast parses cpu.stat as parseCgroupCPUStat does, without
// allocating; ok is false when the file has anything it does not take
// (parseCgroupCPUStat then says what).
func parseCgroupFast(b []byte) (cgroupCPU, bool) {
	var c cgroupCPU
	var seen [3]bool
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		key, val, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			continue
		}
		v, ok := parseDecimal(bytes.TrimSpace(val))
		if !ok {
			return cgroupCPU{}, false
		}
		switch string(key) {
		case "nr_periods":
			c.Periods, seen[0] = v, true
		case "nr_throttled":
			c.Throttled, seen[1] = v, true
		case "throttled_time":
			c.ThrottledNanoseconds, seen[2] = v, true
		case "throttled_usec":
			if v > (1<<64-1)/1000 {
				return cgroupCPU{}, false
			}
			c.ThrottledNanoseconds, seen[2] = v*1000, true
		}
	}
	return c, seen[0] && seen[1] && seen[2]
}

// why turns a read error into an unavailability reason naming the file.
func why(err error, path string) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no " + path
	case errors.Is(err, os.ErrPermission):
		return "no permission to read " + path
	}
	return err.Error()
}

// busyTotal returns a CPU's busy time (user, nice, system, irq, softirq;
// guest time is already inside user) and its total (busy plus idle, iowait
// and steal), in seconds.
func busyTotal(c procfs.CPUStat) (busy, total float64) {
	busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
	return busy, busy + c.Idle + c.Iowait + c.Steal
}

// statDelta sums, over cpus, the busy, total and steal seconds between two
// /proc/stat readings, and gives each CPU's busy percentage (those with a
// tick counted). why names a CPU missing from either reading, or says that no
// clock tick was counted on cpus within the span.
func statDelta(a, b []cpuStat, cpus CPUSet) (busy, total, steal float64, per []CPUBusy, why string) {
	for _, c := range cpus {
		if c >= len(a) || c >= len(b) || !a[c].ok || !b[c].ok {
			return 0, 0, 0, nil, "CPU " + strconv.Itoa(c) + " missing from /proc/stat (offline?)"
		}
		ca, cb := a[c].t, b[c].t
		b0, t0 := busyTotal(ca)
		b1, t1 := busyTotal(cb)
		busy += b1 - b0
		total += t1 - t0
		steal += cb.Steal - ca.Steal
		if t1 > t0 {
			per = append(per, CPUBusy{CPU: c, BusyPct: round6(100 * (b1 - b0) / (t1 - t0))})
		}
	}
	if total <= 0 {
		return 0, 0, 0, nil, "no clock tick counted on " + cpus.Words() + " within the span"
	}
	return busy, total, steal, per, ""
}

// CPUBusy is one CPU's busy percentage over a span.
type CPUBusy struct {
	CPU     int
	BusyPct float64
}

// Span is the contention over the time between two snapshots. Percentages
// are of the CPU time available on the set over the span (100% = every CPU
// of the set busy throughout). Figures from /proc/stat have the resolution
// of one clock tick (10 ms): ResolutionPct says what one tick is worth.
type Span struct {
	// Seconds is the wall time between the snapshots.
	Seconds float64
	// CPUs is the measured (confined) set; Siblings their SMT siblings
	// outside it; OnlineCPUs the number of online CPUs.
	CPUs, Siblings CPUSet
	OnlineCPUs     int

	// ForeignBusyPct is busy time on CPUs not spent by this process:
	// busy on CPUs minus the process's own CPU time, clamped at 0 (see
	// NewSampler for the assumption).
	ForeignBusyPct Figure
	// BusyPct is all busy time on CPUs, ours included; OwnPct ours alone
	// (of the same denominator).
	BusyPct, OwnPct Figure
	// SiblingBusyPct is busy time on the sibling set; unavailable when the
	// set is empty (no SMT, or no siblings outside CPUs). SiblingBusy gives
	// each sibling CPU, busiest first.
	SiblingBusyPct Figure
	SiblingBusy    []CPUBusy
	// StealPct is time the hypervisor ran something else on CPUs' vCPUs.
	StealPct Figure
	// RunQueueWaitNs is the time tasks waited on CPUs' run queues
	// (/proc/schedstat run_delay, summed over CPUs; any task, ours too);
	// RunQueueWaitPct the same as a percentage of CPU time on CPUs.
	RunQueueWaitNs, RunQueueWaitPct Figure
	// ProcessRunQueueWaitNs is the time this process's threads waited for
	// a CPU (their schedstat; threads that exited within the span are
	// missing from it).
	ProcessRunQueueWaitNs Figure
	// PSISomePct is the share of the span in which some task on the host
	// (or in the PSI-reporting cgroup) waited for a CPU: the delta of
	// /proc/pressure/cpu "some" total.
	PSISomePct Figure
	// Load1 is the 1-minute load average at the later snapshot: a slow
	// moving average, the context rather than the span.
	Load1 Figure
	// ProcsRunning is the number of runnable tasks at the later snapshot
	// (procs_running in /proc/stat; includes the reader).
	ProcsRunning Figure
	// ThrottledPeriods is the number of CFS periods in which this
	// process's cgroup hit its CPU quota; ThrottledPct the time throttled
	// as a percentage of the span.
	ThrottledPeriods, ThrottledPct Figure
	// ResolutionPct is what one clock tick is worth in the /proc/stat
	// percentages (100 / ticks of CPU time on CPUs in the span).
	ResolutionPct float64
}

// Between returns the contention over the span from a to b, two snapshots
// of the same Sampler, a taken first. It is a pure function of the two.
func Between(a, b *Snapshot) Span {
	sp := Span{
		Seconds:    b.time.Sub(a.time).Seconds(),
		CPUs:       b.cpus,
		Siblings:   b.siblings,
		OnlineCPUs: b.online,
	}
	if sp.Seconds <= 0 {
		r := "empty span: the second snapshot is not later than the first"
		for _, f := range []struct {
			f    *Figure
			unit string
		}{{&sp.ForeignBusyPct, "%"}, {&sp.BusyPct, "%"}, {&sp.OwnPct, "%"}, {&sp.SiblingBusyPct, "%"}, {&sp.StealPct, "%"},
			{&sp.RunQueueWaitNs, "ns"}, {&sp.RunQueueWaitPct, "%"}, {&sp.ProcessRunQueueWaitNs, "ns"}, {&sp.PSISomePct, "%"},
			{&sp.Load1, ""}, {&sp.ProcsRunning, "n"}, {&sp.ThrottledPeriods, "n"}, {&sp.ThrottledPct, "%"}} {
			*f.f = unavail(f.unit, r)
		}
		return sp
	}
	ns := sp.Seconds * 1e9

	// /proc/stat: busy, own, foreign, steal on the set; siblings.
	statWhy := firstOf(a.statErr, b.statErr)
	var busy, total, steal float64
	if statWhy == "" {
		busy, total, steal, _, statWhy = statDelta(a.cpu, b.cpu, sp.CPUs)
	}
	if statWhy != "" {
		sp.BusyPct, sp.OwnPct, sp.ForeignBusyPct, sp.StealPct = unavail("%", statWhy), unavail("%", statWhy), unavail("%", statWhy), unavail("%", statWhy)
	} else {
		sp.ResolutionPct = 100 / (total * userHZ)
		sp.BusyPct = avail(100*busy/total, "%")
		sp.StealPct = avail(100*steal/total, "%")
		if ownWhy := firstOf(a.ownErr, b.ownErr); ownWhy != "" {
			sp.OwnPct = unavail("%", ownWhy)
			sp.ForeignBusyPct = unavail("%", "own CPU time unknown: "+ownWhy)
		} else {
			own := b.ownSeconds - a.ownSeconds
			sp.OwnPct = avail(100*own/total, "%")
			sp.ForeignBusyPct = avail(100*max(0, busy-own)/total, "%")
		}
	}
	switch {
	case len(sp.Siblings) == 0:
		sp.SiblingBusyPct = unavail("%", "no SMT siblings outside "+sp.CPUs.Words())
	case firstOf(a.statErr, b.statErr) != "":
		sp.SiblingBusyPct = unavail("%", firstOf(a.statErr, b.statErr))
	default:
		sb, st, _, per, why := statDelta(a.cpu, b.cpu, sp.Siblings)
		if why != "" {
			sp.SiblingBusyPct, sp.SiblingBusy = unavail("%", why), nil
		} else {
			sp.SiblingBusyPct, sp.SiblingBusy = avail(100*sb/st, "%"), per
			sortBusiest(sp.SiblingBusy)
		}
	}

	// /proc/schedstat: run-queue wait on the set.
	if why := firstOf(a.runqErr, b.runqErr); why != "" {
		sp.RunQueueWaitNs, sp.RunQueueWaitPct = unavail("ns", why), unavail("%", why)
	} else {
		var w float64
		why := ""
		for _, c := range sp.CPUs {
			if c >= len(a.runq) || c >= len(b.runq) || !a.runq[c].ok || !b.runq[c].ok {
				why = "CPU " + strconv.Itoa(c) + " missing from /proc/schedstat"
				break
			}
			w += float64(sub(b.runq[c].ns, a.runq[c].ns))
		}
		if why != "" {
			sp.RunQueueWaitNs, sp.RunQueueWaitPct = unavail("ns", why), unavail("%", why)
		} else {
			sp.RunQueueWaitNs = avail(w, "ns")
			sp.RunQueueWaitPct = avail(100*w/(ns*float64(len(sp.CPUs))), "%")
		}
	}

	if why := firstOf(a.tasksErr, b.tasksErr); why != "" {
		sp.ProcessRunQueueWaitNs = unavail("ns", why)
	} else {
		sp.ProcessRunQueueWaitNs = avail(float64(TasksBetween(a.tasks, b.tasks).RunQueueWaitNanoseconds), "ns")
	}

	if why := firstOf(a.psiErr, b.psiErr); why != "" {
		sp.PSISomePct = unavail("%", why)
	} else {
		sp.PSISomePct = avail(min(100, 100*float64(sub(b.psiSomeMicroseconds, a.psiSomeMicroseconds))*1e3/ns), "%")
	}

	if b.loadErr != "" {
		sp.Load1 = unavail("", b.loadErr)
	} else {
		sp.Load1 = avail(b.load1, "")
	}
	if b.statErr != "" {
		sp.ProcsRunning = unavail("n", b.statErr)
	} else {
		sp.ProcsRunning = avail(float64(b.running), "n")
	}

	if why := firstOf(a.cgroupErr, b.cgroupErr); why != "" {
		sp.ThrottledPeriods, sp.ThrottledPct = unavail("n", why), unavail("%", why)
	} else {
		sp.ThrottledPeriods = avail(float64(sub(b.cgroup.Throttled, a.cgroup.Throttled)), "n")
		sp.ThrottledPct = avail(min(100, 100*float64(sub(b.cgroup.ThrottledNanoseconds, a.cgroup.ThrottledNanoseconds))/ns), "%")
	}
	return sp
}

// round6 rounds to 6 decimals: tick counts converted to seconds and back
// are not exact, and equal loads must compare equal.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sortBusiest orders CPUs by busy percentage, highest first, then by CPU.
func sortBusiest(c []CPUBusy) {
	slices.SortFunc(c, func(x, y CPUBusy) int {
		if r := cmp.Compare(y.BusyPct, x.BusyPct); r != 0 {
			return r
		}
		return cmp.Compare(x.CPU, y.CPU)
	})
}
