package hostmon

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strconv"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

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
