package hostmon

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// Confinement is an applied CPU affinity: every thread of this process is
// restricted to a CPU set. Threads created later inherit it from the thread
// that creates them.
type Confinement struct {
	// CPUs is the set the threads were confined to.
	CPUs CPUSet
	// orig is each confined thread's affinity before Confine; process is
	// the main thread's, given to threads Confine did not see.
	orig    map[int]unix.CPUSet
	process unix.CPUSet
	mu      sync.Mutex
	done    bool
}

// Confine restricts every thread of this process (all of /proc/self/task)
// to the CPUs of set with sched_setaffinity, so that threads created later
// inherit the set; Release restores each thread's original mask. It checks
// the set against t first and fails, naming the CPU, when a CPU is offline
// or outside this process's allowed cpuset; a refusal by the kernel names
// the thread and the reason (EPERM: no permission; EINVAL: none of the CPUs
// is allowed). On failure no thread is left confined.
//
// t must be this host's topology (from DefaultFS).
func (t *Topology) Confine(set CPUSet) (*Confinement, error) {
	if _, err := t.BudgetOf(set); err != nil {
		return nil, err
	}
	var mask unix.CPUSet
	for _, c := range set {
		mask.Set(c)
	}
	c := &Confinement{CPUs: set, orig: map[int]unix.CPUSet{}}
	pid := unix.Getpid()
	if err := unix.SchedGetaffinity(pid, &c.process); err != nil {
		return nil, fmt.Errorf("hostmon: read the affinity of pid %d: %w", pid, err)
	}
	sc := taskScratchPool.Get().(*taskScratch)
	defer taskScratchPool.Put(sc)
	// Repeat until a pass finds no new thread: a thread created during a
	// pass by an unconfined thread would otherwise escape.
	for pass := 0; ; pass++ {
		tids, err := selfTIDs(sc)
		if err != nil {
			c.release()
			return nil, err
		}
		fresh := 0
		for _, tid := range tids {
			if _, ok := c.orig[tid]; ok {
				continue
			}
			var o unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &o); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // exited
				}
				c.release()
				return nil, fmt.Errorf("hostmon: read the affinity of thread %d: %w", tid, err)
			}
			if err := unix.SchedSetaffinity(tid, &mask); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue
				}
				c.release()
				return nil, fmt.Errorf("hostmon: confine thread %d to %s: %w", tid, set.Words(), explainAffinityErr(err))
			}
			c.orig[tid] = o
			fresh++
		}
		if fresh == 0 || pass > 100 {
			return c, nil
		}
	}
}

// explainAffinityErr adds the reason to a sched_setaffinity error.
func explainAffinityErr(err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w (no permission: the thread belongs to another user, or CAP_SYS_NICE is missing)", err)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%w (none of the CPUs is in the cgroup cpuset, or all are offline)", err)
	}
	return err
}

// selfTIDs lists /proc/self/task into sc.tids.
func selfTIDs(sc *taskScratch) ([]int, error) {
	const dir = "/proc/self/task"
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("hostmon: list threads in %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := sc.readTIDs(fd); err != nil {
		return nil, fmt.Errorf("hostmon: list threads in %s: %w", dir, err)
	}
	return sc.tids, nil
}

// Release restores every thread's affinity from before Confine; a thread
// created since gets the main thread's original mask. It is safe to call
// more than once; calls after the first do nothing. The error names the
// first thread that could not be restored.
func (c *Confinement) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	c.done = true
	return c.release()
}

func (c *Confinement) release() error {
	sc := taskScratchPool.Get().(*taskScratch)
	defer taskScratchPool.Put(sc)
	tids, err := selfTIDs(sc)
	if err != nil {
		return err
	}
	var first error
	for _, tid := range tids {
		m, ok := c.orig[tid]
		if !ok {
			m = c.process
		}
		if err := unix.SchedSetaffinity(tid, &m); err != nil && !errors.Is(err, unix.ESRCH) && first == nil {
			first = fmt.Errorf("hostmon: restore the affinity of thread %d: %w", tid, explainAffinityErr(err))
		}
	}
	return first
}
