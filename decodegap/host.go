package decodegap

import (
	"fmt"
	"sync"

	"github.com/gapbench/gapbench/hostmon"
)

// Budget confines a run to a set of CPUs (every thread of the process, so
// that thread pools created later inherit it) and tells the contention
// screen which CPUs, and which SMT siblings of them, to watch. The zero
// Budget does not confine: the screen then watches every CPU the process may
// run on.
type Budget struct {
	// Cores asks for that many physical cores, one logical CPU on each and
	// never two SMT siblings of one core, chosen by
	// hostmon.Topology.SelectBudget. It must be >= 0.
	Cores int
	// CPUs names the logical CPUs to confine to. When set it wins over
	// Cores; each CPU must be online and allowed to this process.
	CPUs []int
}

// Screen configures the contention screen that Run applies to the span its
// counters cover.
type Screen struct {
	// Thresholds are the limits above which the span is called contended;
	// zero fields take hostmon.DefaultThresholds.
	Thresholds hostmon.Thresholds
	// FailContended fails the benchmark when the span was contended, rather
	// than logging the verdict beside the figures.
	FailContended bool
}

// host is this process's view of the host, read once: the topology does not
// change during a benchmark run.
var host struct {
	once sync.Once
	fs   hostmon.FS
	topo *hostmon.Topology
	err  error
}

// hostInfo returns the host's FS and topology, or why they are unavailable.
func hostInfo() (hostmon.FS, *hostmon.Topology, error) {
	host.once.Do(func() {
		host.fs, host.err = hostmon.DefaultFS()
		if host.err == nil {
			host.topo, host.err = host.fs.Topology()
		}
	})
	return host.fs, host.topo, host.err
}

// hostRun is the host side of one Run: the confinement it applied and the
// sampler it snapshots at window boundaries.
type hostRun struct {
	// sampler is nil when the host cannot be read; why says why. kit is
	// the pooled sampler with its snapshot lists.
	sampler *hostmon.Sampler
	kit     *samplerKit
	why     string
	conf    *hostmon.Confinement
	budget  hostmon.Budget
}

// openHost confines the process as s.budget asks and opens the sampler.
// Only a failure to confine is an error: an unreadable host leaves the
// contention figures "unavailable".
func openHost(s *settings) (*hostRun, error) {
	cfg := struct{ Budget Budget }{s.budget}
	t := s.typ
	h := &hostRun{}
	fs, topo, err := hostInfo()
	if err != nil {
		if len(cfg.Budget.CPUs) > 0 || cfg.Budget.Cores > 0 {
			return nil, fmt.Errorf("%s.Budget needs the host's topology: %v", t, err)
		}
		h.why = err.Error()
		return h, nil
	}
	switch {
	case len(cfg.Budget.CPUs) > 0:
		h.budget, err = topo.BudgetOf(hostmon.NewCPUSet(cfg.Budget.CPUs...))
		if err != nil {
			return nil, fmt.Errorf("%s.Budget.CPUs = %v: %v", t, cfg.Budget.CPUs, err)
		}
	case cfg.Budget.Cores > 0:
		h.budget, err = topo.SelectBudget(cfg.Budget.Cores)
		if err != nil {
			return nil, fmt.Errorf("%s.Budget.Cores = %d: %v", t, cfg.Budget.Cores, err)
		}
	}
	if len(h.budget.CPUs) > 0 {
		h.conf, err = topo.Confine(h.budget.CPUs)
		if err != nil {
			return nil, fmt.Errorf("%s.Budget: confining to CPUs %v: %v", t, h.budget.CPUs, err)
		}
	}
	h.kit, err = acquireSampler(fs, topo, h.budget.CPUs, h.budget.Siblings)
	if err != nil {
		h.why = err.Error()
	} else {
		h.sampler = h.kit.sampler
	}
	return h, nil
}

// close releases the sampler (for the next run to reuse) and the
// confinement.
func (h *hostRun) close() error {
	var err error
	if h.kit != nil {
		err = releaseSampler(h.kit)
	}
	if h.conf != nil {
		if rerr := h.conf.Release(); rerr != nil {
			err = rerr
		}
	}
	return err
}

// tids lists the IDs of this process's threads now, sorted, through the
// sampler (which then has read any new thread, see
// hostmon.Sampler.SyncThreads), or as selfTIDs does without one.
func (h *hostRun) tids() []int {
	if h.sampler != nil {
		if ts, err := h.sampler.SyncThreads(nil); err == nil {
			return ts
		}
	}
	return selfTIDs()
}

// selfTIDs reads the IDs of this process's threads now, sorted, or nil.
func selfTIDs() []int {
	fs, _, err := hostInfo()
	if err != nil {
		return nil
	}
	ts, err := fs.SelfTasks(nil)
	if err != nil {
		return nil
	}
	return taskTIDs(ts)
}

// taskTIDs returns the IDs of ts, in order; nil for nil.
func taskTIDs(ts []hostmon.Task) []int {
	if ts == nil {
		return nil
	}
	ids := make([]int, len(ts))
	for i, t := range ts {
		ids[i] = t.TID
	}
	return ids
}
