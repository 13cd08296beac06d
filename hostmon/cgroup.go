package hostmon

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// cgroupCPUStatPath finds the cpu.stat file to read throttling from for
// process pid: in the cgroup of its CPU controller (cgroup v1's cpu
// controller at /sys/fs/cgroup/cpu or cpu,cpuacct, else the v2 unified
// hierarchy at /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host),
// that of the group or ancestor with the tightest CPU quota (v1
// cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max): a quota set on a parent
// throttles the parent, whose cpu.stat counts it, not the child's. Without a
// quota anywhere it is the process's own group's. A group path that does not
// exist under the mount (a container whose cgroup namespace hides the host's
// path) is read from its deepest existing ancestor, at worst the mount's
// root. It returns "" and the reason when there is none.
func (fs FS) cgroupCPUStatPath(pid int) (string, string) {
	p, err := fs.proc.Proc(pid)
	if err != nil {
		return "", "cannot read the cgroup of pid " + strconv.Itoa(pid) + ": " + err.Error()
	}
	groups, err := p.Cgroups()
	if err != nil {
		return "", "cannot read " + fs.procPath(strconv.Itoa(pid), "cgroup") + ": " + err.Error()
	}
	for _, g := range groups {
		if slices.Contains(g.Controllers, "cpu") {
			for _, m := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
				if f := statWithQuota(fs.sysPath("fs/cgroup", m), g.Path); f != "" {
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
				if f := statWithQuota(m, g.Path); f != "" {
					return f, ""
				}
			}
		}
	}
	return "", "no cpu.stat for this process's cgroup under " + fs.sysPath("fs/cgroup")
}

// statWithQuota returns the cpu.stat of group (a path inside the hierarchy
// mounted at mount) or of the ancestor with the tightest CPU quota; "" when
// neither the group nor any ancestor has a cpu.stat.
func statWithQuota(mount, group string) string {
	var levels []string // from the deepest existing group up to the mount
	for d := filepath.Join(mount, filepath.Clean("/"+group)); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cpu.stat")); err == nil {
			levels = append(levels, d)
		}
		if d == mount || len(d) <= len(mount) {
			break
		}
	}
	if len(levels) == 0 {
		return ""
	}
	best, bestCPUs := levels[0], math.Inf(1)
	for _, d := range levels {
		if cpus, ok := cpuQuota(d); ok && cpus < bestCPUs {
			best, bestCPUs = d, cpus
		}
	}
	return filepath.Join(best, "cpu.stat")
}

// cpuQuota returns the CPU quota of the cgroup at dir in CPUs (quota over
// period), and false when it has none: v2 cpu.max "max PERIOD" or absent,
// v1 cpu.cfs_quota_us -1 or absent.
func cpuQuota(dir string) (float64, bool) {
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		q, per, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
		if !ok || q == "max" {
			return 0, false
		}
		return ratio(q, per)
	}
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	per, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(per)))
}

func ratio(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || !(q > 0) || !(p > 0) {
		return 0, false
	}
	return q / p, true
}
