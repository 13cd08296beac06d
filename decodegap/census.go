package decodegap

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gapbench/gapbench/hostmon"
)

// Thread phases: when Run first saw a thread.
const (
	phaseBefore   = iota // already there when Run started
	phaseSetup           // created while the instances were opened (the step, the null instance, sessions)
	phaseWarmup          // created during the warm-up iterations
	phaseRecorded        // created during the recorded iterations
	nPhases
)

var phaseNames = [nPhases]string{"from before Run", "created at setup/open", "created in warm-up", "created while recorded"}

// census is the threads of the process by the phase that created them, and
// where the CPU of the counter span went.
type census struct {
	ok bool
	// count[p] is the number of threads alive at the end that phase p created.
	count [nPhases]int
	// groups are the threads with CPU in the span, grouped by phase and
	// name, busiest first.
	groups []threadGroup
	// idle counts the threads alive at the end that used no CPU in the
	// span, by name.
	idle map[string]int
	// total is the CPU of all threads in the span (ns); exited counts the
	// threads that exited within it (their CPU after the first reading is
	// missing from total).
	total  uint64
	exited int
	// harnessNs is the part of the span's CPU that was the harness's own
	// (cpucost: the gaps, the snapshots, the bookkeeping), which cpu-ns/op
	// leaves out; 0 when not known (a sliced round's span holds other
	// arms' turns).
	harnessNs float64
}

// threadGroup is the threads of one name created in one phase.
type threadGroup struct {
	phase   int
	name    string
	threads int
	cpuNs   uint64
}

// phaseReadings are the IDs of the threads alive at the ends of Run's
// phases, each list sorted.
type phaseReadings [nPhases - 1][]int

// takeCensus groups the threads of the span from first to last.
func takeCensus(ph *phaseReadings, first, last []hostmon.Task) census {
	if first == nil || last == nil {
		return census{}
	}
	c := census{ok: true, idle: map[string]int{}}
	phaseOf := func(tid int) int {
		for p, ids := range ph {
			if _, ok := slices.BinarySearch(ids, tid); ok {
				return p
			}
		}
		return phaseRecorded
	}
	before := make(map[int]uint64, len(first))
	for _, t := range first {
		before[t.TID] = t.OnCPUNanoseconds
	}
	groups := map[[2]string]*threadGroup{}
	seen := map[int]bool{}
	for _, t := range last {
		seen[t.TID] = true
		p := phaseOf(t.TID)
		c.count[p]++
		cpu := t.OnCPUNanoseconds
		if b, ok := before[t.TID]; ok {
			cpu -= min(b, cpu)
		}
		c.total += cpu
		if cpu == 0 {
			c.idle[t.Name]++
			continue
		}
		k := [2]string{fmt.Sprint(p), t.Name}
		g := groups[k]
		if g == nil {
			g = &threadGroup{phase: p, name: t.Name}
			groups[k] = g
		}
		g.threads++
		g.cpuNs += cpu
	}
	for tid := range before {
		if !seen[tid] {
			c.exited++
		}
	}
	for _, g := range groups {
		c.groups = append(c.groups, *g)
	}
	sort.Slice(c.groups, func(i, j int) bool {
		if c.groups[i].cpuNs != c.groups[j].cpuNs {
			return c.groups[i].cpuNs > c.groups[j].cpuNs
		}
		return c.groups[i].name < c.groups[j].name
	})
	return c
}

// threads returns the number of threads alive at the end.
func (c *census) threads() int {
	n := 0
	for _, k := range c.count {
		n += k
	}
	return n
}

// lines returns the census for the log, in one line.
func (c *census) lines() []string {
	if !c.ok {
		return []string{"threads: unavailable (the process's /proc/self/task could not be read)"}
	}
	var parts []string
	for p, k := range c.count {
		if k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k, phaseNames[p]))
		}
	}
	head := fmt.Sprintf("threads: %d at the end (%s)", c.threads(), strings.Join(parts, ", "))
	if c.exited > 0 {
		head += fmt.Sprintf("; %d exited during the counter span (their CPU is in cpu-ns/op and cpu/wall but not below)", c.exited)
	}
	if c.total == 0 {
		return []string{head + "; CPU by thread: no thread ran in the counter span (a true zero only if the span held no steps: check cpu/wall)"}
	}
	var where []string
	for i, g := range c.groups {
		if i == 3 {
			where = append(where, fmt.Sprintf("%d more groups", len(c.groups)-3))
			break
		}
		where = append(where, fmt.Sprintf("%.0f%% in %d %s %s (%s)", 100*float64(g.cpuNs)/float64(c.total),
			g.threads, plural(g.threads, "thread", "threads"), phaseNames[g.phase], g.name))
	}
	s := head + "; CPU by thread over the counter span: " + strings.Join(where, "; ")
	if c.harnessNs > 0 {
		s += fmt.Sprintf(" (%.0f%% of it the harness's, on the loop thread: left out of cpu-ns/op)", 100*min(c.harnessNs/float64(c.total), 1))
	}
	if n := sumValues(c.idle); n > 0 {
		s += fmt.Sprintf("; idle (no CPU in the span): %d %s (%s)", n, plural(n, "thread", "threads"), countsByName(c.idle))
	}
	return []string{s}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// countsByName prints {"a": 2, "b": 1} as "a ×2, b".
func countsByName(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		if m[k] > 1 {
			names[i] = fmt.Sprintf("%s ×%d", k, m[k])
		}
	}
	return strings.Join(names, ", ")
}
