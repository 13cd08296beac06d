// Command gen writes the synthetic fixture trees under hostmon/testdata:
// epyc32 (one package, 16 cores / 32 threads, siblings n and n+16, two L3
// domains, cgroup v2) and socket2 (two packages of 8 cores / 16 threads,
// siblings numbered adjacently (0,1), an L3 and a NUMA node per package,
// cgroup v1); two 4-CPU hosts without SMT: hybrid4 (a kernel without PSI,
// and a hybrid cgroup layout: v1 cpu,cpuacct beside an empty v2 unified
// hierarchy) and nested4 (cgroup v2, the process in bench.slice/run.scope,
// the CPU quota set on bench.slice). Each host has a "before" and one "after" /proc tree per
// scenario, one second of CPU time apart (100 ticks per CPU), with the
// numbers the tests in hostmon assert. Run from the module root:
//
//	go run ./hostmon/testdata/gen
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const root = "hostmon/testdata"

func write(path, content string) {
	path = filepath.Join(root, path)
	must(os.MkdirAll(filepath.Dir(path), 0o755))
	must(os.WriteFile(path, []byte(content), 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func list(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, fmt.Sprint(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",") + "\n"
}

func seq(a, b int) []int {
	var s []int
	for i := a; i <= b; i++ {
		s = append(s, i)
	}
	return s
}

// host describes a layout.
type host struct {
	name     string
	ncpu     int
	core     func(cpu int) (pkg, coreID int, siblings []int)
	l3       func(cpu int) (id int, shared []int)
	nodes    [][]int
	cgroupV1 bool
	// layout, when set, is "hybrid" or "nested" (see the package doc).
	layout string
	// noPSI leaves out /proc/pressure, as a kernel without PSI does.
	noPSI bool
}

func (h host) sys() {
	all := seq(0, h.ncpu-1)
	for _, f := range []string{"online", "possible", "present"} {
		write(h.name+"/sys/devices/system/cpu/"+f, list(all))
	}
	write(h.name+"/sys/devices/system/cpu/offline", "\n")
	for cpu := range h.ncpu {
		d := fmt.Sprintf("%s/sys/devices/system/cpu/cpu%d/", h.name, cpu)
		pkg, id, sib := h.core(cpu)
		var pkgCPUs []int
		for c := range h.ncpu {
			if p, _, _ := h.core(c); p == pkg {
				pkgCPUs = append(pkgCPUs, c)
			}
		}
		write(d+"topology/physical_package_id", fmt.Sprintln(pkg))
		write(d+"topology/core_id", fmt.Sprintln(id))
		write(d+"topology/thread_siblings_list", list(sib))
		write(d+"topology/core_cpus_list", list(sib))
		write(d+"topology/core_siblings_list", list(pkgCPUs))
		write(d+"topology/package_cpus_list", list(pkgCPUs))
		write(d+"topology/die_id", fmt.Sprintln(pkg))
		for i, c := range []struct{ level, typ, size string }{{"1", "Data", "32K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "512K"}} {
			ci := fmt.Sprintf("%scache/index%d/", d, i)
			write(ci+"level", c.level+"\n")
			write(ci+"type", c.typ+"\n")
			write(ci+"size", c.size+"\n")
			write(ci+"id", fmt.Sprintln(id+16*pkg))
			write(ci+"shared_cpu_list", list(sib))
		}
		l3id, shared := h.l3(cpu)
		ci := d + "cache/index3/"
		write(ci+"level", "3\n")
		write(ci+"type", "Unified\n")
		write(ci+"size", "32768K\n")
		write(ci+"id", fmt.Sprintln(l3id))
		write(ci+"shared_cpu_list", list(shared))
	}
	for i, n := range h.nodes {
		write(fmt.Sprintf("%s/sys/devices/system/node/node%d/cpulist", h.name, i), list(n))
	}
}

// state is the cumulative counters of one /proc tree.
type state struct {
	// per CPU: user, system, idle, steal ticks; run_delay ns
	user, system, idle, steal []uint64
	runDelay                  []uint64
	procsRunning              int
	load1                     string
	psiSomeUS                 uint64
	ownUser, ownSystem        uint64 // ticks
	tasks                     [][3]uint64
	// cgroup: periods, throttled, throttled ns
	cgPeriods, cgThrottled, cgThrottledNs uint64
}

func (h host) baseState() state {
	s := state{load1: "0.50", procsRunning: 2, psiSomeUS: 5_000_000, ownUser: 500, ownSystem: 100,
		tasks: [][3]uint64{{4_000_000_000, 10_000_000, 500}, {1_000_000_000, 2_000_000, 100}}, cgPeriods: 1000, cgThrottled: 3, cgThrottledNs: 40_000_000}
	for c := range h.ncpu {
		s.user = append(s.user, 10000+uint64(c)*7)
		s.system = append(s.system, 2000+uint64(c)*3)
		s.idle = append(s.idle, 90000+uint64(c)*11)
		s.steal = append(s.steal, 5)
		s.runDelay = append(s.runDelay, 1_000_000_000+uint64(c)*1000)
	}
	return s
}

// advance returns s one second later: CPU busy[c] ticks of user on each
// listed CPU (the rest idle), steal where given.
func (s state) advance(busy map[int]uint64, steal map[int]uint64, runDelay map[int]uint64) state {
	n := s
	n.user = append([]uint64(nil), s.user...)
	n.idle = append([]uint64(nil), s.idle...)
	n.steal = append([]uint64(nil), s.steal...)
	n.runDelay = append([]uint64(nil), s.runDelay...)
	n.tasks = append([][3]uint64(nil), s.tasks...)
	for c := range n.user {
		b := busy[c]
		st := steal[c]
		n.user[c] += b
		n.steal[c] += st
		n.idle[c] += 100 - b - st
		n.runDelay[c] += runDelay[c]
	}
	return n
}

func (h host) proc(dir string, s state) {
	var b strings.Builder
	var tot [4]uint64
	for c := range h.ncpu {
		tot[0] += s.user[c]
		tot[1] += s.system[c]
		tot[2] += s.idle[c]
		tot[3] += s.steal[c]
	}
	fmt.Fprintf(&b, "cpu  %d 0 %d %d 0 0 0 %d 0 0\n", tot[0], tot[1], tot[2], tot[3])
	for c := range h.ncpu {
		fmt.Fprintf(&b, "cpu%d %d 0 %d %d 0 0 0 %d 0 0\n", c, s.user[c], s.system[c], s.idle[c], s.steal[c])
	}
	fmt.Fprintf(&b, "intr 0\nctxt 1000000\nbtime 1796000000\nprocesses 20000\nprocs_running %d\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n", s.procsRunning)
	p := h.name + "/" + dir + "/"
	write(p+"stat", b.String())

	b.Reset()
	b.WriteString("version 15\ntimestamp 4295000000\n")
	for c := range h.ncpu {
		fmt.Fprintf(&b, "cpu%d 0 0 0 0 0 0 %d %d 1000\n", c, 100_000_000_000+uint64(c), s.runDelay[c])
		fmt.Fprintf(&b, "domain0 %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", strings.TrimSpace(list([]int{c})))
	}
	write(p+"schedstat", b.String())
	if !h.noPSI {
		write(p+"pressure/cpu", fmt.Sprintf("some avg10=1.00 avg60=1.00 avg300=1.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", s.psiSomeUS))
	}
	write(p+"loadavg", s.load1+" 0.40 0.30 2/500 4243\n")
	must(os.MkdirAll(filepath.Join(root, p), 0o755))
	os.Remove(filepath.Join(root, p, "self"))
	must(os.Symlink("4242", filepath.Join(root, p, "self")))
	write(p+"4242/stat", fmt.Sprintf("4242 (bench.test) S 1 4242 4242 0 -1 4194304 2899 0 0 0 %d %d 0 0 20 0 2 0 52237 243519488 3340 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", s.ownUser, s.ownSystem))
	write(p+"4242/comm", "bench.test\n")
	write(p+"4242/status", "Name:\tbench.test\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t1\nThreads:\t2\nCpus_allowed_list:\t"+list(seq(0, h.ncpu-1)))
	switch {
	case h.layout == "hybrid":
		write(p+"4242/cgroup", "5:cpu,cpuacct:/bench\n3:cpuset:/\n1:name=systemd:/bench.service\n0::/bench.service\n")
	case h.layout == "nested":
		write(p+"4242/cgroup", "0::/bench.slice/run.scope\n")
	case h.cgroupV1:
		write(p+"4242/cgroup", "4:cpu,cpuacct:/bench\n3:cpuset:/\n0::/\n")
	default:
		write(p+"4242/cgroup", "0::/bench.slice\n")
	}
	for i, t := range s.tasks {
		tid := 4242 + i
		write(fmt.Sprintf("%s4242/task/%d/schedstat", p, tid), fmt.Sprintf("%d %d %d\n", t[0], t[1], t[2]))
		write(fmt.Sprintf("%s4242/task/%d/comm", p, tid), []string{"bench.test\n", "worker\n"}[i])
	}
	// The cgroup's cpu.stat lives in sys; each proc tree has its own sys
	// tree for it (sys-<dir>), the topology only in sys.
	sys := h.name + "/sys/"
	if dir != "proc" {
		sys = h.name + "/sys-" + strings.TrimPrefix(dir, "proc-") + "/"
	}
	v2stat := func(periods, throttled, ns uint64) string {
		return fmt.Sprintf("usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\nnr_bursts 0\nburst_usec 0\n", periods, throttled, ns/1000)
	}
	switch h.layout {
	case "hybrid":
		// The cpu controller is on v1; the unified hierarchy has none, so
		// its cpu.stat holds only the usage lines.
		write(sys+"fs/cgroup/cpu,cpuacct/bench/cpu.stat", fmt.Sprintf("nr_periods %d\nnr_throttled %d\nthrottled_time %d\n", s.cgPeriods, s.cgThrottled, s.cgThrottledNs))
		write(sys+"fs/cgroup/cpu,cpuacct/bench/cpu.cfs_quota_us", "200000\n")
		write(sys+"fs/cgroup/cpu,cpuacct/bench/cpu.cfs_period_us", "100000\n")
		write(sys+"fs/cgroup/unified/cgroup.controllers", "\n")
		write(sys+"fs/cgroup/unified/bench.service/cpu.stat", "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n")
		return
	case "nested":
		// The quota (half a CPU) is on the parent: the parent's cpu.stat
		// counts the throttling, the child's stays at its base.
		write(sys+"fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
		write(sys+"fs/cgroup/bench.slice/cpu.max", "50000 100000\n")
		write(sys+"fs/cgroup/bench.slice/cpu.stat", v2stat(s.cgPeriods, s.cgThrottled, s.cgThrottledNs))
		write(sys+"fs/cgroup/bench.slice/run.scope/cpu.max", "max 100000\n")
		write(sys+"fs/cgroup/bench.slice/run.scope/cpu.stat", v2stat(1000, 0, 0))
		return
	}
	if h.cgroupV1 {
		write(sys+"fs/cgroup/cpu,cpuacct/bench/cpu.stat", fmt.Sprintf("nr_periods %d\nnr_throttled %d\nthrottled_time %d\nnr_bursts 0\nburst_time 0\n", s.cgPeriods, s.cgThrottled, s.cgThrottledNs))
	} else {
		write(sys+"fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
		write(sys+"fs/cgroup/bench.slice/cpu.stat", v2stat(s.cgPeriods, s.cgThrottled, s.cgThrottledNs))
	}
}

func main() {
	epyc := host{
		name: "epyc32", ncpu: 32,
		core: func(cpu int) (int, int, []int) { c := cpu % 16; return 0, c, []int{c, c + 16} },
		l3: func(cpu int) (int, []int) {
			if cpu%16 < 8 {
				return 0, append(seq(0, 7), seq(16, 23)...)
			}
			return 1, append(seq(8, 15), seq(24, 31)...)
		},
		nodes: [][]int{seq(0, 31)},
	}
	sock := host{
		name: "socket2", ncpu: 32, cgroupV1: true,
		core: func(cpu int) (int, int, []int) { c := cpu / 2; return c / 8, c % 8, []int{2 * c, 2*c + 1} },
		l3: func(cpu int) (int, []int) {
			if cpu < 16 {
				return 0, seq(0, 15)
			}
			return 1, seq(16, 31)
		},
		nodes: [][]int{seq(0, 15), seq(16, 31)},
	}
	small := func(name, layout string, noPSI bool) host {
		return host{name: name, ncpu: 4, layout: layout, noPSI: noPSI,
			core:  func(cpu int) (int, int, []int) { return 0, cpu, []int{cpu} },
			l3:    func(int) (int, []int) { return 0, seq(0, 3) },
			nodes: [][]int{seq(0, 3)}}
	}
	hybrid, nested := small("hybrid4", "hybrid", true), small("nested4", "nested", false)
	for _, h := range []host{epyc, sock, hybrid, nested} {
		must(os.RemoveAll(filepath.Join(root, h.name)))
		h.sys()
	}

	// epyc32 "sibling": budget 0-3 runs our 4 threads flat out (395 of 400
	// ticks ours), CPU 17 (sibling of 1) 68% busy with a co-tenant.
	b := epyc.baseState()
	epyc.proc("proc", b)
	a := b.advance(map[int]uint64{0: 100, 1: 100, 2: 100, 3: 100, 16: 2, 17: 68, 18: 1, 19: 0}, nil,
		map[int]uint64{0: 10_000_000, 1: 10_000_000, 2: 10_000_000, 3: 10_000_000})
	a.ownUser += 390
	a.ownSystem += 5
	a.psiSomeUS += 50_000 // 5%
	a.load1 = "4.50"
	a.procsRunning = 5
	a.tasks[0][0] += 900_000_000
	a.tasks[0][1] += 3_000_000
	a.tasks[1][1] += 1_000_000
	epyc.proc("proc-sibling", a)

	// epyc32 "cotenant": explicit budget 0,2,4,6, our threads get 300 ticks,
	// co-tenants 22–34 ticks on each CPU (88 of 400 = 22%), steal on 6,
	// queueing on all four (80 ms each), host pressure 25%.
	a = b.advance(map[int]uint64{0: 97, 2: 97, 4: 97, 6: 96}, map[int]uint64{6: 1},
		map[int]uint64{0: 80_000_000, 2: 80_000_000, 4: 80_000_000, 6: 80_000_000})
	a.ownUser += 280
	a.ownSystem += 20
	a.psiSomeUS += 250_000
	a.load1 = "6.00"
	a.procsRunning = 9
	a.cgThrottled += 0
	epyc.proc("proc-cotenant", a)

	// socket2 "handpicked": "idle" CPUs 11,17,31 chosen by hand, our
	// process uses half of each; their siblings 10,16,30 are 90% busy.
	// Load 40 on 32 CPUs; the cgroup was throttled 30 ms in 5 periods.
	b = sock.baseState()
	sock.proc("proc", b)
	a = b.advance(map[int]uint64{11: 50, 17: 50, 31: 50, 10: 90, 16: 90, 30: 90}, nil, nil)
	a.ownUser += 150
	a.load1 = "40.00"
	a.procsRunning = 41
	a.cgPeriods += 10
	a.cgThrottled += 5
	a.cgThrottledNs += 30_000_000
	sock.proc("proc-handpicked", a)

	// hybrid4 and nested4 "busy": our process uses half of CPUs 0 and 1;
	// the group with the quota was throttled in 4 of 10 periods, 200 ms of
	// the second (20%).
	for _, h := range []host{hybrid, nested} {
		b = h.baseState()
		h.proc("proc", b)
		a = b.advance(map[int]uint64{0: 50, 1: 50}, nil, nil)
		a.ownUser += 100
		a.psiSomeUS += 20_000
		a.cgPeriods += 10
		a.cgThrottled += 4
		a.cgThrottledNs += 200_000_000
		h.proc("proc-busy", a)
	}
}
