package decodegap

import (
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
	"github.com/gapbench/gapbench/hostmon"
)

// snapshot is the process's counters at one window boundary.
type snapshot struct {
	// iter is the number of recorded iterations completed at the boundary.
	iter int
	// wallNs is gap.Now() at the boundary.
	wallNs int64
	// cpuNs is CLOCK_PROCESS_CPUTIME_ID: every thread, living or exited.
	cpuNs int64
	// threadNs is CLOCK_THREAD_CPUTIME_ID of the thread that took the
	// snapshot, and tid that thread's id (0 when it could not be read):
	// the loop's thread, locked to its goroutine.
	threadNs int64
	tid      int
	// harnessNs is the harness's own CPU time up to the reading of cpuNs:
	// the gaps' (Waiter.CPU) and the snapshots taken before this one;
	// harnessUserNs is its part in user code (the spins). cpu-ns/op
	// leaves it out (internal/cpucost).
	harnessNs, harnessUserNs int64
	// userNs and sysNs come from getrusage(RUSAGE_SELF) (µs precision).
	userNs, sysNs int64
	// nvcsw and nivcsw are voluntary and involuntary context switches.
	nvcsw, nivcsw int64
	// maxRSSBytes is the peak resident set size of the process so far.
	maxRSSBytes int64
	// gcCycles counts completed GC cycles; gcPauseNs estimates their total
	// stop-the-world time from the runtime's pause histogram.
	gcCycles  uint64
	gcPauseNs float64
	// host is the host's contention counters and this process's threads;
	// nil when the host cannot be read. It is refilled in place (see
	// counterReader.next), so a snapshot slot keeps it for the run.
	host *hostmon.Snapshot
	// userVals and userErrs are Config.Counters' values at the boundary;
	// like host, allocated once per slot.
	userVals []float64
	userErrs []error
	// foreign marks the interval from the previous snapshot to this one
	// as other arms' (a sliced round, CompareConfig.Slice): the counter
	// span leaves it out.
	foreign bool
	// costNs is how long taking this snapshot took.
	costNs int64
	// err is why the kernel counters could not be read, or nil.
	err error
}

// counterReader takes snapshots without allocating: it holds the
// runtime/metrics samples, and the snapshot slots it hands out (next) keep
// their host snapshot and user-counter buffers from one use to the next.
type counterReader struct {
	samples []metrics.Sample
	// sampler snapshots the host; nil when it cannot be read.
	sampler *hostmon.Sampler
	// user is Config.Counters.
	user []Counter
	// spacing multiplies the interval the counter budget sets between two
	// snapshots: it doubles each time next thins a full list (see next).
	spacing int64
	// taken counts the snapshots taken, kept or thinned; costNs sums their
	// cost and maxCostNs is the largest (the counter budget's evidence).
	taken             int
	costNs, maxCostNs int64
	// meanCostNs is a running mean of the snapshots' cost (weight 1/4).
	meanCostNs float64
	// threads is the number of threads the slots that prepare hands out
	// have room for (and 8 more); 0 leaves the room they have.
	threads int
	// kit, when set, lends prepare its free snapshot lists, and recycle
	// gives back the lists prepare handed out (lent).
	kit  *samplerKit
	lent [][]snapshot
	// waiters are the gap waiters whose CPU time is the harness's (the
	// loop's; each stream's in an open loop of sessions): take adds their
	// Waiter.CPU to harnessNs. They must not be waiting while take runs.
	waiters []*gap.Waiter
	// harnessNs sums the CPU time of the snapshots taken so far (the loop
	// thread's clock around each, all of it counted as system time:
	// reading /proc and the clocks is system calls).
	harnessNs int64
}

// maxSnapshots is the most counter snapshots a loop keeps: next thins a
// full list to every other one (the first and the last kept) and doubles
// the spacing, so any run keeps between maxSnapshots/2 and maxSnapshots
// snapshots spread over it, in memory allocated before the timed loop.
const maxSnapshots = 128

// snapSlots is the number of snapshot slots a loop of n recorded
// iterations in windows of w can use: one per window boundary, and at most
// maxSnapshots (next thins beyond).
func snapSlots(n, w int) int {
	return min(maxSnapshots, n/max(w, 1)+2)
}

// prepare returns an empty snapshot list with room for slots snapshots
// (2 to maxSnapshots), each slot's buffers allocated, so that next and take
// allocate nothing in the timed loop: the host snapshot has room for
// c.threads threads, and is a clone of a slot made before or, for the
// first, of one reading of the host. With a kit, the list is one the kit
// lends, or a new one of maxSnapshots slots that the kit keeps once
// recycled: the first run of a process (testing's N=1 probe) prepares the
// slots of every later run on the same set.
func (c *counterReader) prepare(slots int) []snapshot {
	n := min(max(slots, 2), maxSnapshots)
	var all []snapshot
	switch {
	case c.kit != nil && len(c.kit.lists) > 0:
		k := len(c.kit.lists) - 1
		all, c.kit.lists = c.kit.lists[k], c.kit.lists[:k]
	case c.kit != nil:
		all = make([]snapshot, maxSnapshots)
	default:
		all = make([]snapshot, n)
	}
	if c.kit != nil {
		c.lent = append(c.lent, all)
	}
	snaps := all[:n:n]
	var like *hostmon.Snapshot
	if c.sampler != nil {
		for k := range all {
			if all[k].host != nil {
				like = all[k].host
				break
			}
		}
		if like == nil {
			like = c.sampler.Snapshot()
		}
	}
	for k := range all {
		s := &all[k]
		if like != nil {
			if s.host == nil {
				s.host = like.Clone()
			}
			s.host.Reserve(c.threads)
		}
		if len(c.user) > 0 && len(s.userVals) != len(c.user) {
			s.userVals, s.userErrs = make([]float64, len(c.user)), make([]error, len(c.user))
		}
	}
	// The first read allocates the pause histogram; later reads reuse it.
	metrics.Read(c.samples)
	c.spacing = 1
	return snaps[:0]
}

// recycle gives the snapshot lists that prepare took from c.kit, or made,
// back to the kit for the next run; the snapshots in them must no longer
// be read.
func (c *counterReader) recycle() {
	if c.kit == nil {
		return
	}
	c.kit.lists = append(c.kit.lists, c.lent...)
	c.lent = nil
}

// next returns snaps extended by one slot for the next snapshot, reusing
// the buffers the slot held. When snaps is full it first thins it: every
// other snapshot is dropped (the first and the last are kept, and the
// dropped slots' buffers move past the end for reuse) and the spacing of
// later snapshots doubles. A list not made by prepare is prepared first.
func (c *counterReader) next(snaps []snapshot) []snapshot {
	if cap(snaps) == 0 {
		snaps = c.prepare(maxSnapshots)
	}
	if len(snaps) == 0 {
		c.spacing = 1
	}
	if len(snaps) == cap(snaps) {
		n := len(snaps)
		k := 1
		for i := 2; i < n-1; i += 2 {
			snaps[k], snaps[i] = snaps[i], snaps[k]
			k++
		}
		snaps[k], snaps[n-1] = snaps[n-1], snaps[k]
		snaps = snaps[:k+1]
		c.spacing *= 2
	}
	return snaps[:len(snaps)+1]
}

// interval returns the time to wait after snapshot s before the next one:
// the counter budget's for the larger of s's cost and the running mean
// cost, times the spacing. The mean matters: snapshot costs vary (one
// preempted on a busy host takes ten times the usual), and spacing by the
// last cost alone would follow a cheap snapshot with an expensive one too
// soon, which on average spends more than the budget.
//
// It aims at 80% of the budget: the margin absorbs the variance of the
// costs (measured at up to 1.14% of the loop with the whole budget, at
// load 27 on 2 CPUs; see BenchmarkCounterBudget).
func (c *counterReader) interval(s *snapshot) int64 {
	cost := max(float64(s.costNs), c.meanCostNs)
	return int64(cost/(0.8*counterBudget)) * max(c.spacing, 1)
}

const (
	metricGCCycles = "/gc/cycles/total:gc-cycles"
	metricGCPauses = "/sched/pauses/total/gc:seconds"
)

// newMetricSamples returns the runtime/metrics samples a snapshot reads.
func newMetricSamples() []metrics.Sample {
	return []metrics.Sample{{Name: metricGCCycles}, {Name: metricGCPauses}}
}

// take fills s for a boundary after iter recorded iterations.
func (c *counterReader) take(s *snapshot, iter int) {
	t0 := gap.Now()
	s.iter = iter
	s.wallNs = t0
	s.err = nil
	var err error
	if s.cpuNs, err = readProcessCPU(); err != nil {
		s.err = err
	}
	s.harnessNs, s.harnessUserNs = c.harnessNs, 0
	for _, w := range c.waiters {
		total, user := w.CPU()
		s.harnessNs += total
		s.harnessUserNs += user
	}
	s.tid, s.threadNs = 0, 0
	if ns, err := gap.ThreadCPU(); err == nil {
		s.tid, s.threadNs = unix.Gettid(), ns
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		s.err = err
	}
	s.userNs = ru.Utime.Nano()
	s.sysNs = ru.Stime.Nano()
	s.nvcsw = ru.Nvcsw
	s.nivcsw = ru.Nivcsw
	s.maxRSSBytes = ru.Maxrss * 1024 // Linux reports KiB
	if c.sampler != nil {
		if s.host == nil {
			s.host = new(hostmon.Snapshot)
		}
		c.sampler.SnapshotInto(s.host)
	}
	if len(c.user) > 0 {
		if len(s.userVals) != len(c.user) {
			s.userVals, s.userErrs = make([]float64, len(c.user)), make([]error, len(c.user))
		}
		readCounters(c.user, s.userVals, s.userErrs)
	}
	metrics.Read(c.samples)
	if v := c.samples[0].Value; v.Kind() == metrics.KindUint64 {
		s.gcCycles = v.Uint64()
	}
	if v := c.samples[1].Value; v.Kind() == metrics.KindFloat64Histogram {
		s.gcPauseNs = histogramSumNs(v.Float64Histogram())
	}
	if s.tid != 0 {
		// This snapshot's own CPU time, from just after the process's
		// clock was read: the next span's harness.
		if ns, err := gap.ThreadCPU(); err == nil {
			c.harnessNs += max(ns-s.threadNs, 0)
		}
	}
	s.costNs = gap.Now() - t0
	c.taken++
	c.costNs += s.costNs
	c.maxCostNs = max(c.maxCostNs, s.costNs)
	if c.taken == 1 {
		c.meanCostNs = float64(s.costNs)
	} else {
		c.meanCostNs += (float64(s.costNs) - c.meanCostNs) / 4
	}
}

// histogramSumNs estimates the sum of a seconds histogram in nanoseconds,
// counting each observation at its bucket's midpoint (the lower bound for
// the open top bucket, the upper for the open bottom one).
func histogramSumNs(h *metrics.Float64Histogram) float64 {
	var sum float64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		var mid float64
		switch {
		case lo < -1e300:
			mid = hi
		case hi > 1e300:
			mid = lo
		default:
			mid = (lo + hi) / 2
		}
		sum += float64(n) * mid
	}
	return sum * 1e9
}

// spareOnce leaves Run's two spare threads once per process: idle threads
// stay with the runtime.
var spareOnce sync.Once

// spareThreads makes the Go runtime start k OS threads and leave them idle,
// so that when a locked thread blocks or is preempted in the timed loop
// (Run's, the sessions') the handoff of its P finds an idle thread rather
// than start one, which allocates.
func spareThreads(k int) {
	var locked, release sync.WaitGroup
	locked.Add(k)
	release.Add(1)
	for range k {
		go func() {
			runtime.LockOSThread()
			locked.Done()
			release.Wait()
			// Unlocked before it returns, the thread stays with the
			// runtime, idle.
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	release.Done()
}

// samplerKit is a host sampler and the snapshot lists that runs prepared
// with it, which go back to the pool together: a new Sampler opens its
// files (two per thread, and six more) on its first snapshot, which takes
// milliseconds here, against about a tenth of that to refill one; and each
// snapshot slot holds a host snapshot's buffers, which are cheaper to keep
// than to make again at every Run call (testing makes several for one
// benchmark).
type samplerKit struct {
	sampler *hostmon.Sampler
	// lists are free snapshot lists; their slots' host snapshots hold this
	// sampler's buffers (see counterReader.prepare).
	lists [][]snapshot
}

// samplers keeps the kits that runs have released, by measured set, so
// that the next run on the same set reuses one. A kit in use is not in the
// pool, so no two runs share one.
var samplers struct {
	sync.Mutex
	free map[string]*samplerKit
}

// samplerKey names a measured set.
func samplerKey(cpus, siblings hostmon.CPUSet) string {
	return cpus.String() + "/" + siblings.String()
}

// acquireSampler returns a released kit of the set, or one with a new
// sampler.
func acquireSampler(fs hostmon.FS, topo *hostmon.Topology, cpus, siblings hostmon.CPUSet) (*samplerKit, error) {
	if len(cpus) == 0 {
		cpus = topo.Allowed // as NewSamplerOf does, so the key is the sampler's own
	}
	k := samplerKey(cpus, siblings.Minus(cpus))
	samplers.Lock()
	kit := samplers.free[k]
	delete(samplers.free, k)
	samplers.Unlock()
	if kit != nil {
		return kit, nil
	}
	s, err := hostmon.NewSamplerOf(fs, topo, cpus, siblings)
	if err != nil {
		return nil, err
	}
	return &samplerKit{sampler: s}, nil
}

// releaseSampler keeps kit for the next run on its set, or closes its
// sampler when one is kept already.
func releaseSampler(kit *samplerKit) error {
	k := samplerKey(kit.sampler.CPUs(), kit.sampler.Siblings())
	samplers.Lock()
	defer samplers.Unlock()
	if samplers.free == nil {
		samplers.free = map[string]*samplerKit{}
	}
	if samplers.free[k] != nil {
		return kit.sampler.Close()
	}
	samplers.free[k] = kit
	return nil
}

// loopOverheadNs is the CPU time the loop's own bookkeeping costs per
// recorded step (the clock readings around the step, the record, the
// window count), measured once per process on the loop thread by
// measureOverhead; cpu-ns/op leaves it out with the harness.
var loopOverheadNs float64

// overheadOnce measures loopOverheadNs once per process.
var overheadOnce sync.Once

// loopOverhead returns loopOverheadNs, measuring it on the first call
// (about a millisecond, on the calling thread, which must be locked).
func loopOverhead(s *settings) float64 {
	overheadOnce.Do(func() { loopOverheadNs = measureOverhead(s) })
	return loopOverheadNs
}

// measureOverhead runs the recorded-step path of s's loop, without gaps,
// over a step that does nothing, and returns the least of three
// measurements of the loop thread's CPU time per step (the least: a
// preemption or a page fault only adds). The caller has locked its OS
// thread. 0 when the clock cannot be read.
func measureOverhead(s *settings) float64 {
	const n = 4096
	r := newRunner(s, n)
	nop := func() error { return nil }
	best := math.Inf(1)
	for range 3 {
		c0, err := gap.ThreadCPU()
		if err != nil {
			return 0
		}
		prev := gap.Now()
		for j := range n {
			prev, _ = r.recorded(nop, j, prev, true)
		}
		c1, err := gap.ThreadCPU()
		if err != nil {
			return 0
		}
		best = min(best, float64(c1-c0)/n)
	}
	return best
}

// readProcessCPU reads the process's CPU clock (every thread, exited ones
// too), in ns.
func readProcessCPU() (int64, error) {
	var ts unix.Timespec
	err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return ts.Nano(), err
}

// threadsBetween returns the CPU time between the host snapshots a and b
// of the threads in own and in others (each sorted): a thread born within
// the interval counts from zero; one that ended within it takes the time
// it ran after a with it (cpucost's residual). ok is false when either
// snapshot holds no thread list.
func threadsBetween(own, others []int, a, b *hostmon.Snapshot) (ownNs, othersNs int64, ok bool) {
	if a == nil || b == nil {
		return 0, 0, false
	}
	return tasksBetween(own, others, a.Tasks(), b.Tasks())
}

// tasksBetween is threadsBetween on the two task lists (sorted by TID).
func tasksBetween(own, others []int, first, last []hostmon.Task) (ownNs, othersNs int64, ok bool) {
	if first == nil || last == nil {
		return 0, 0, false
	}
	byTID := func(t hostmon.Task, tid int) int { return t.TID - tid }
	for _, t := range last {
		_, mine := slices.BinarySearch(own, t.TID)
		_, theirs := slices.BinarySearch(others, t.TID)
		if !mine && !theirs {
			continue
		}
		cpu := t.OnCPUNanoseconds
		if k, found := slices.BinarySearchFunc(first, t.TID, byTID); found {
			cpu -= min(first[k].OnCPUNanoseconds, cpu)
		}
		if mine {
			ownNs += int64(cpu)
		} else {
			othersNs += int64(cpu)
		}
	}
	return ownNs, othersNs, true
}

// cpuScopeLine is the cpu-scope configuration line: what cpu-ns/op counts,
// the same in every block of every route (internal/cpucost's definition).
const cpuScopeLine = "process-less-harness (turns: less the other arms' open threads)"

// openedTIDs returns the threads in after but not in before (both
// sorted): those an open created. Nil when either list is nil (unread).
func openedTIDs(before, after []int) []int {
	if before == nil || after == nil {
		return nil
	}
	out := []int{}
	for _, t := range after {
		if _, pre := slices.BinarySearch(before, t); !pre {
			out = append(out, t)
		}
	}
	return out
}
