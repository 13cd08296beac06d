package hostmon

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Budget is a set of logical CPUs a benchmark is confined to, with the SMT
// siblings of those CPUs that lie outside it. The siblings are not used by
// the benchmark, but load on them slows it (they share the cores' execution
// units), so the contention screen measures them too.
type Budget struct {
	// CPUs is the confined set.
	CPUs CPUSet
	// Siblings is every online CPU that shares a physical core with CPUs
	// and is not in CPUs; empty without SMT.
	Siblings CPUSet
}

// String returns "CPUs 0-3 (siblings 16-19)" or "CPU 1 (no SMT siblings)".
func (b Budget) String() string {
	if len(b.Siblings) == 0 {
		return b.CPUs.Words() + " (no SMT siblings)"
	}
	return b.CPUs.Words() + " (siblings " + b.Siblings.String() + ")"
}

// BudgetOption changes how SelectBudget chooses cores.
type BudgetOption func(*budgetConfig)

type budgetConfig struct {
	// busy is the busy % of each CPU from a short sample; nil keeps the
	// deterministic order.
	busy map[int]float64
}

// PreferIdle makes SelectBudget prefer the least-busy cores, given each
// CPU's busy percentage from a short sample (SampleCPUBusy). A core's
// busyness is the sum over its SMT threads, since load on any of them slows
// the one chosen. Cores are taken least busy first (compared in 5% steps,
// about the resolution of a short sample), so a busy core is never chosen
// while an idle one is allowed; among equally busy cores, the L3 domain
// whose best cores are least busy fills first, and ties keep the
// deterministic order.
func PreferIdle(busy map[int]float64) BudgetOption {
	return func(c *budgetConfig) { c.busy = busy }
}

// SelectBudget returns n logical CPUs on n distinct physical cores (never
// two SMT siblings of one core) among the CPUs this process is allowed to
// run on, and their sibling set. It fills one L3 domain before the next so
// that the budget shares as few caches as it can; by default the choice is
// deterministic: L3 domains in order of their lowest CPU, cores in order of
// their lowest CPU, and on each core its lowest allowed CPU. PreferIdle
// changes the order.
//
// It fails when n < 1, or when fewer than n cores have an allowed online
// CPU; the error says how many there are.
func (t *Topology) SelectBudget(n int, opts ...BudgetOption) (Budget, error) {
	var cfg budgetConfig
	for _, o := range opts {
		o(&cfg)
	}
	if n < 1 {
		return Budget{}, fmt.Errorf("hostmon: a budget of %d cores: need at least 1", n)
	}
	// Usable cores: those with an allowed CPU; pick its lowest allowed CPU.
	type cand struct {
		core int // index in t.Cores
		cpu  int
		busy float64
		l3   int
	}
	var cands []cand
	for i, c := range t.Cores {
		allowed := c.CPUs.Intersect(t.Allowed)
		if len(allowed) == 0 {
			continue
		}
		var busy float64
		for _, cpu := range c.CPUs {
			busy += cfg.busy[cpu]
		}
		cands = append(cands, cand{core: i, cpu: allowed[0], busy: busy, l3: c.L3})
	}
	if len(cands) < n {
		return Budget{}, fmt.Errorf("hostmon: a budget of %d physical cores, but only %d cores have a CPU this process may use (allowed CPUs %s of online %s): lower the budget or widen the cpuset/taskset",
			n, len(cands), t.Allowed, t.Online)
	}
	// Group by L3 domain (−1, unknown, is one group), keeping core order.
	groups := map[int][]cand{}
	var order []int
	for _, c := range cands {
		if _, ok := groups[c.l3]; !ok {
			order = append(order, c.l3)
		}
		groups[c.l3] = append(groups[c.l3], c)
	}
	if cfg.busy != nil {
		// Domains in order of the mean busyness of the cores they would
		// give; then every core by busyness (in 5% steps, the resolution
		// of a short sample), domain rank and core order. A busy core is
		// thus never taken while an idle one exists in another domain,
		// and among idle cores one domain still fills first.
		cost := func(l3 int) float64 {
			g := slices.Clone(groups[l3])
			slices.SortStableFunc(g, func(a, b cand) int { return cmp.Compare(a.busy, b.busy) })
			var s float64
			for _, c := range g[:min(n, len(g))] {
				s += c.busy
			}
			return s / float64(min(n, len(g)))
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost(a), cost(b)) })
		rank := map[int]int{}
		for i, l3 := range order {
			rank[l3] = i
		}
		step := func(b float64) int { return int(b / 5) }
		slices.SortStableFunc(cands, func(a, b cand) int {
			if r := cmp.Compare(step(a.busy), step(b.busy)); r != 0 {
				return r
			}
			return cmp.Compare(rank[a.l3], rank[b.l3])
		})
		var cpus []int
		for _, c := range cands[:n] {
			cpus = append(cpus, c.cpu)
		}
		set := NewCPUSet(cpus...)
		return Budget{CPUs: set, Siblings: t.Siblings(set)}, nil
	}
	var cpus []int
	for _, l3 := range order {
		for _, c := range groups[l3] {
			if len(cpus) == n {
				break
			}
			cpus = append(cpus, c.cpu)
		}
	}
	set := NewCPUSet(cpus...)
	return Budget{CPUs: set, Siblings: t.Siblings(set)}, nil
}

// BudgetOf checks an explicit set of CPUs and returns it as a Budget with
// its sibling set. It fails, naming the CPU, when one is offline or not
// allowed for this process. Two SMT siblings in the set are allowed (the
// caller asked for them) and are not each other's siblings in the Budget.
func (t *Topology) BudgetOf(cpus CPUSet) (Budget, error) {
	if len(cpus) == 0 {
		return Budget{}, fmt.Errorf("hostmon: an empty CPU set is not a budget")
	}
	for _, c := range cpus {
		if !t.Online.Contains(c) {
			return Budget{}, fmt.Errorf("hostmon: CPU %d is not online (online CPUs: %s)", c, t.Online)
		}
		if !t.Allowed.Contains(c) {
			return Budget{}, fmt.Errorf("hostmon: CPU %d is not in this process's allowed cpuset %s (cgroup cpuset or taskset)", c, t.Allowed)
		}
	}
	return Budget{CPUs: cpus, Siblings: t.Siblings(cpus)}, nil
}

// SampleCPUBusy reads /proc/stat twice, d apart, and returns each CPU's busy
// percentage over that span (user+nice+system+irq+softirq over all time,
// 0–100), for PreferIdle. The resolution is one clock tick (10 ms at the
// usual USER_HZ of 100): 5% on a 200 ms sample. It returns early with ctx's
// error when ctx is done.
func (fs FS) SampleCPUBusy(ctx context.Context, d time.Duration) (map[int]float64, error) {
	a, err := fs.proc.Stat()
	if err != nil {
		return nil, fmt.Errorf("hostmon: %w", err)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(d):
	}
	b, err := fs.proc.Stat()
	if err != nil {
		return nil, fmt.Errorf("hostmon: %w", err)
	}
	out := map[int]float64{}
	for cpu, sb := range b.CPU {
		sa, ok := a.CPU[cpu]
		if !ok {
			continue
		}
		busy, total := busyTotal(sb)
		busy0, total0 := busyTotal(sa)
		if total-total0 > 0 {
			out[int(cpu)] = 100 * (busy - busy0) / (total - total0)
		}
	}
	return out, nil
}
