package hostmon

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// cgroupCPU is the throttling part of a cgroup's cpu.stat.
type cgroupCPU struct {
	// Periods is nr_periods: CFS enforcement periods that had runnable
	// tasks.
	Periods uint64
	// Throttled is nr_throttled: periods in which the group hit its quota.
	Throttled uint64
	// ThrottledNanoseconds is the total time the group's tasks were
	// throttled (v1 throttled_time in ns; v2 throttled_usec×1000).
	ThrottledNanoseconds uint64
}

// parseCgroupCPUStat parses a cgroup cpu.stat file ("key value" lines) of
// either cgroup version: v1 has nr_periods, nr_throttled and throttled_time
// (ns); v2 has nr_periods, nr_throttled and throttled_usec (µs). Unknown
// keys are ignored. It fails when the throttling keys are missing (a v2
// group without the cpu controller enabled has only the usage lines).
func parseCgroupCPUStat(b []byte) (cgroupCPU, error) {
	var c cgroupCPU
	var seen [3]bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
		if err != nil {
			return cgroupCPU{}, fmt.Errorf("cpu.stat line %q: %w", sc.Text(), err)
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
				return cgroupCPU{}, fmt.Errorf("cpu.stat throttled_usec %d overflows ns", v)
			}
			c.ThrottledNanoseconds, seen[2] = v*1000, true
		}
	}
	if err := sc.Err(); err != nil {
		return cgroupCPU{}, err
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return cgroupCPU{}, fmt.Errorf("cpu.stat has no nr_periods/nr_throttled/throttled_* lines (cpu controller not enabled for the group?)")
	}
	return c, nil
}

// cgroupCPUStatPath finds the cpu.stat file of process pid's CPU cgroup:
// cgroup v1's cpu controller (/sys/fs/cgroup/cpu or cpu,cpuacct), else the
// v2 unified hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
// hybrid host). A group path that does not exist under the mount (a
// container whose cgroup namespace hides the host's path) falls back to the
// mount's root. It returns "" and the reason when there is none.
func (fs FS) cgroupCPUStatPath(pid int) (string, string) {
	p, err := fs.proc.Proc(pid)
	if err != nil {
		return "", "cannot read the cgroup of pid " + strconv.Itoa(pid) + ": " + err.Error()
	}
	groups, err := p.Cgroups()
	if err != nil {
		return "", "cannot read " + fs.procPath(strconv.Itoa(pid), "cgroup") + ": " + err.Error()
	}
	try := func(mount, group string) string {
		for _, d := range []string{filepath.Join(mount, group), mount} {
			f := filepath.Join(d, "cpu.stat")
			if _, err := os.Stat(f); err == nil {
				return f
			}
		}
		return ""
	}
	for _, g := range groups {
		if slices.Contains(g.Controllers, "cpu") {
			for _, m := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
				if f := try(fs.sysPath("fs/cgroup", m), g.Path); f != "" {
					return f, ""
				}
			}
		}
	}
	for _, g := range groups {
		if g.HierarchyID == 0 {
			for _, m := range []string{fs.sysPath("fs/cgroup"), fs.sysPath("fs/cgroup/unified")} {
				if _, err := os.Stat(filepath.Join(m, "cgroup.controllers")); err != nil {
					continue
				}
				if f := try(m, g.Path); f != "" {
					return f, ""
				}
			}
		}
	}
	return "", "no cpu.stat for this process's cgroup under " + fs.sysPath("fs/cgroup")
}
