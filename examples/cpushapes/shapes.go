package cpushapes

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/gapbench/gapbench/decodegap"
)

// Inline returns an Opener whose step does w units of work on the calling
// goroutine: the shape every CPU instrument gets right.
func Inline(w float64) decodegap.Opener {
	r := Rounds(w)
	return func() (decodegap.Step, func() error, error) {
		return func() error { work(r); return nil }, nil, nil
	}
}

// FanOut returns an Opener whose step splits w units of work over k new
// goroutines and waits for them (a sync.WaitGroup): the same CPU as
// Inline(w) plus the cost of starting and waking k goroutines, spent on
// whatever threads the Go scheduler picks. Its Opener fails for k < 1.
func FanOut(k int, w float64) decodegap.Opener {
	parts := split(Rounds(w), k)
	return func() (decodegap.Step, func() error, error) {
		if k < 1 {
			return nil, nil, fmt.Errorf("cpushapes.FanOut: k = %d: want >= 1 goroutines", k)
		}
		var wg sync.WaitGroup
		return func() error {
			wg.Add(len(parts))
			for _, r := range parts {
				go func() { defer wg.Done(); work(r) }()
			}
			wg.Wait()
			return nil
		}, nil, nil
	}
}

// split divides rounds into k parts that differ by at most one; nil for
// k < 1.
func split(rounds, k int) []int {
	if k < 1 {
		return nil
	}
	parts := make([]int, k)
	for i := range parts {
		parts[i] = rounds / k
		if i < rounds%k {
			parts[i]++
		}
	}
	return parts
}

// ExitingThread returns an Opener whose step starts a goroutine that locks
// itself to its OS thread (runtime.LockOSThread), does w units of work and
// returns without unlocking, so that the runtime ends its thread; the step
// waits for the work. Every step therefore costs the work plus the creation
// and exit of a thread, on threads that are gone by the time anyone could
// list them: only the process's totals (getrusage, CLOCK_PROCESS_CPUTIME_ID)
// still hold their CPU.
func ExitingThread(w float64) decodegap.Opener {
	r := Rounds(w)
	return func() (decodegap.Step, func() error, error) {
		done := make(chan struct{})
		return func() error {
			go func() {
				runtime.LockOSThread()
				work(r)
				done <- struct{}{}
				// Returning while locked ends the thread.
			}()
			<-done
			return nil
		}, nil, nil
	}
}

// AllocUnit is the number of nodes Alloc's step allocates for one unit of
// work, and AllocLive the nodes each instance keeps live for as long as it
// is open (32 bytes each: about 4 MiB), so that every collection has a
// heap to mark. At w = 1 a step costs about 100 µs of CPU on the hosts this
// was written on, of which the collector's share (mark workers on other
// threads, assists on the step's) is measured by the tests, not assumed.
const (
	AllocUnit = 2500
	AllocLive = 1 << 17
)

// node is Alloc's small object: a pointer, so the collector must trace it,
// and payload.
type node struct {
	next *node
	v    [3]uint64
}

// Alloc returns an Opener whose step allocates w units of small linked
// objects (AllocUnit nodes a unit) and drops the previous step's, so that
// the garbage collector runs often, its marking largely on threads other
// than the step's. Each instance keeps AllocLive nodes live until its close.
func Alloc(w float64) decodegap.Opener {
	m := int(w * AllocUnit)
	return func() (decodegap.Step, func() error, error) {
		in := &allocInstance{live: chain(AllocLive, nil)}
		return func() error {
			in.last = chain(m, nil)
			return nil
		}, func() error { in.live, in.last = nil, nil; return nil }, nil
	}
}

// allocInstance is one open Alloc: live is the graph kept for the
// instance's life, last the previous step's list (garbage once replaced).
type allocInstance struct{ live, last *node }

// chain allocates a linked list of m nodes ending in tail.
func chain(m int, tail *node) *node {
	for i := range m {
		tail = &node{next: tail, v: [3]uint64{uint64(i)}}
	}
	return tail
}
