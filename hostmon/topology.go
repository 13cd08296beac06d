package hostmon

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs/sysfs"
)

// Topology is the CPU layout of a host, read from sysfs: which logical CPUs
// are online, which share a physical core (SMT siblings), an L3 cache, a
// NUMA node; and which of them this process may run on.
type Topology struct {
	// Online is the set of online logical CPUs
	// (/sys/devices/system/cpu/online).
	Online CPUSet
	// Allowed is the set of online CPUs this process may run on: its
	// Cpus_allowed_list (/proc/self/status: the cpuset and any taskset)
	// intersected with Online. It equals Online when the status file is
	// unreadable. The status file shows the main thread's mask: read the
	// topology before Confine, or Allowed is the confined set.
	Allowed CPUSet
	// Cores lists the physical cores that have an online CPU, ordered by
	// their lowest CPU number.
	Cores []Core
	// L3 lists the L3 cache domains, ordered by their lowest CPU number;
	// empty when sysfs does not describe the caches.
	L3 []CacheDomain
	// NUMA lists the NUMA nodes that have an online CPU, ordered by their
	// lowest CPU number; empty when sysfs has no node directories.
	NUMA []NUMANode
	// coreOf maps an online CPU to its index in Cores.
	coreOf map[int]int
}

// Core is one physical core: the logical CPUs (SMT threads) that share its
// execution units.
type Core struct {
	// CPUs are the core's online logical CPUs: more than one with SMT.
	CPUs CPUSet
	// Package is the physical package (socket) id.
	Package int
	// ID is the core id within its package (topology/core_id).
	ID int
	// L3 is the index of the core's L3 domain in Topology.L3, −1 when
	// unknown.
	L3 int
	// NUMA is the core's NUMA node id, −1 when unknown.
	NUMA int
}

// CacheDomain is a set of CPUs that share one L3 cache.
type CacheDomain struct {
	// ID is the cache's id (cache/indexN/id), or its position when sysfs
	// gives no id.
	ID int
	// CPUs are the online CPUs sharing the cache.
	CPUs CPUSet
	// Size is the size as sysfs writes it ("32768K"), "" when unknown.
	Size string
}

// NUMANode is one NUMA node's online CPUs.
type NUMANode struct {
	ID   int
	CPUs CPUSet
}

// Topology reads the CPU topology of the host this FS describes. It fails
// when the online CPU list or a CPU's topology directory cannot be read;
// missing cache or NUMA information leaves L3 or NUMA empty.
func (fs FS) Topology() (*Topology, error) {
	onlinePath := fs.sysPath("devices/system/cpu/online")
	b, err := os.ReadFile(onlinePath)
	if err != nil {
		return nil, fmt.Errorf("hostmon: online CPUs: %w", err)
	}
	online, err := ParseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("hostmon: %s: %w", onlinePath, err)
	}
	if len(online) == 0 {
		return nil, fmt.Errorf("hostmon: %s lists no online CPU", onlinePath)
	}
	t := &Topology{Online: online, coreOf: map[int]int{}}

	// Physical cores, from each online CPU's topology directory (sysfs).
	cpus, err := fs.sys.CPUs()
	if err != nil {
		return nil, fmt.Errorf("hostmon: list CPUs under %s: %w", fs.sysPath("devices/system/cpu"), err)
	}
	topo := map[int]*sysfs.CPUTopology{}
	for _, c := range cpus {
		n, err := strconv.Atoi(c.Number())
		if err != nil || !online.Contains(n) {
			continue
		}
		ct, err := c.Topology()
		if err != nil {
			return nil, fmt.Errorf("hostmon: topology of CPU %d: %w", n, err)
		}
		topo[n] = ct
	}
	for _, cpu := range online {
		if _, seen := t.coreOf[cpu]; seen {
			continue
		}
		ct, ok := topo[cpu]
		if !ok {
			return nil, fmt.Errorf("hostmon: CPU %d is online but %s has no topology for it", cpu, fs.sysPath("devices/system/cpu", "cpu"+strconv.Itoa(cpu)))
		}
		sib, err := ParseCPUList(ct.ThreadSiblingsList)
		if err != nil {
			return nil, fmt.Errorf("hostmon: SMT siblings of CPU %d: %w", cpu, err)
		}
		sib = sib.Intersect(online)
		if !sib.Contains(cpu) {
			return nil, fmt.Errorf("hostmon: thread_siblings_list of CPU %d (%q) does not contain the CPU itself", cpu, ct.ThreadSiblingsList)
		}
		pkg, err1 := strconv.Atoi(ct.PhysicalPackageID)
		id, err2 := strconv.Atoi(ct.CoreID)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("hostmon: topology of CPU %d: %w", cpu, err)
		}
		for _, c := range sib {
			t.coreOf[c] = len(t.Cores)
		}
		t.Cores = append(t.Cores, Core{CPUs: sib, Package: pkg, ID: id, L3: -1, NUMA: -1})
	}

	t.readL3(fs)
	t.readNUMA(fs)
	t.Allowed = online
	if pid, err := fs.SelfPID(); err == nil {
		if p, err := fs.proc.Proc(pid); err == nil {
			if st, err := p.NewStatus(); err == nil && len(st.CpusAllowedList) > 0 {
				var a []int
				for _, c := range st.CpusAllowedList {
					a = append(a, int(c))
				}
				t.Allowed = NewCPUSet(a...).Intersect(online)
			}
		}
	}
	return t, nil
}

// readL3 fills t.L3 and each core's L3 from cpuN/cache/index*/ where level
// is 3.
func (t *Topology) readL3(fs FS) {
	byList := map[string]int{}
	for _, cpu := range t.Online {
		dirs, _ := filepath.Glob(fs.sysPath("devices/system/cpu", "cpu"+strconv.Itoa(cpu), "cache", "index*"))
		for _, d := range dirs {
			if lvl, err := readInt(filepath.Join(d, "level")); err != nil || lvl != 3 {
				continue
			}
			shared, err := readCPUList(filepath.Join(d, "shared_cpu_list"))
			if err != nil {
				continue
			}
			shared = shared.Intersect(t.Online)
			key := shared.String()
			i, ok := byList[key]
			if !ok {
				id, err := readInt(filepath.Join(d, "id"))
				if err != nil {
					id = len(t.L3)
				}
				size, _ := os.ReadFile(filepath.Join(d, "size"))
				i = len(t.L3)
				byList[key] = i
				t.L3 = append(t.L3, CacheDomain{ID: id, CPUs: shared, Size: strings.TrimSpace(string(size))})
			}
			t.Cores[t.coreOf[cpu]].L3 = i
		}
	}
	// Order domains by their lowest CPU and renumber the cores' indexes.
	order := make([]int, len(t.L3))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(t.L3[a].CPUs[0], t.L3[b].CPUs[0]) })
	newIndex := make([]int, len(t.L3))
	sorted := make([]CacheDomain, len(t.L3))
	for to, from := range order {
		newIndex[from] = to
		sorted[to] = t.L3[from]
	}
	t.L3 = sorted
	for i := range t.Cores {
		if t.Cores[i].L3 >= 0 {
			t.Cores[i].L3 = newIndex[t.Cores[i].L3]
		}
	}
}

// readNUMA fills t.NUMA and each core's node from
// /sys/devices/system/node/node*/cpulist.
func (t *Topology) readNUMA(fs FS) {
	dirs, _ := filepath.Glob(fs.sysPath("devices/system/node", "node[0-9]*"))
	for _, d := range dirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "node"))
		if err != nil {
			continue
		}
		cpus, err := readCPUList(filepath.Join(d, "cpulist"))
		if err != nil {
			continue
		}
		cpus = cpus.Intersect(t.Online)
		if len(cpus) == 0 {
			continue
		}
		t.NUMA = append(t.NUMA, NUMANode{ID: id, CPUs: cpus})
		for _, c := range cpus {
			t.Cores[t.coreOf[c]].NUMA = id
		}
	}
	slices.SortFunc(t.NUMA, func(a, b NUMANode) int { return cmp.Compare(a.CPUs[0], b.CPUs[0]) })
}

// SMT reports whether any core has more than one online logical CPU.
func (t *Topology) SMT() bool {
	for _, c := range t.Cores {
		if len(c.CPUs) > 1 {
			return true
		}
	}
	return false
}

// CoreOf returns the physical core of an online CPU; ok is false for a CPU
// that is not online.
func (t *Topology) CoreOf(cpu int) (c Core, ok bool) {
	i, ok := t.coreOf[cpu]
	if !ok {
		return Core{}, false
	}
	return t.Cores[i], true
}

// Siblings returns the SMT siblings of the CPUs in set that are not in set
// themselves: the CPUs that share a physical core with set and whose load
// therefore slows set down. It is empty without SMT. CPUs of set that are
// not online are ignored.
func (t *Topology) Siblings(set CPUSet) CPUSet {
	var out []int
	for _, cpu := range set {
		if c, ok := t.CoreOf(cpu); ok {
			out = append(out, c.CPUs...)
		}
	}
	return NewCPUSet(out...).Minus(set)
}

// String describes the topology for a person, one fact a line:
//
//	32 CPUs online (0-31), 16 physical cores, SMT (2 threads a core)
//	allowed: 0-31
//	L3 0: CPUs 0-7,16-23 (32768K)
//	L3 1: CPUs 8-15,24-31 (32768K)
//	NUMA node 0: CPUs 0-31
//	cores (CPUs of one core joined by +): 0+16 1+17 …
func (t *Topology) String() string {
	var b strings.Builder
	maxThreads := 0
	for _, c := range t.Cores {
		maxThreads = max(maxThreads, len(c.CPUs))
	}
	smt := "no SMT (1 thread a core)"
	if maxThreads > 1 {
		smt = fmt.Sprintf("SMT (%d threads a core)", maxThreads)
	}
	pkgs := map[int]bool{}
	for _, c := range t.Cores {
		pkgs[c.Package] = true
	}
	fmt.Fprintf(&b, "%d CPUs online (%s), %d physical cores in %d package(s), %s\n",
		len(t.Online), t.Online, len(t.Cores), len(pkgs), smt)
	fmt.Fprintf(&b, "allowed: %s\n", t.Allowed)
	if len(t.L3) == 0 {
		fmt.Fprintf(&b, "L3: unavailable (no cache/index*/level 3 in sysfs)\n")
	}
	for i, d := range t.L3 {
		size := ""
		if d.Size != "" {
			size = " (" + d.Size + ")"
		}
		fmt.Fprintf(&b, "L3 %d: %s%s\n", i, d.CPUs.Words(), size)
	}
	if len(t.NUMA) == 0 {
		fmt.Fprintf(&b, "NUMA: unavailable (no /sys/devices/system/node/node*/cpulist)\n")
	}
	for _, n := range t.NUMA {
		fmt.Fprintf(&b, "NUMA node %d: %s\n", n.ID, n.CPUs.Words())
	}
	b.WriteString("cores")
	if maxThreads > 1 {
		b.WriteString(" (CPUs of one core joined by +)")
	}
	b.WriteString(":")
	for _, c := range t.Cores {
		b.WriteByte(' ')
		for i, cpu := range c.CPUs {
			if i > 0 {
				b.WriteByte('+')
			}
			b.WriteString(strconv.Itoa(cpu))
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// readCPUList reads a sysfs file in the kernel's CPU list format.
func readCPUList(path string) (CPUSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// readInt reads a sysfs file holding one decimal integer.
func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}
