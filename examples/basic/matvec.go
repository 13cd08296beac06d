// Package basic is a pure-Go decode-shaped workload to copy: a matrix-vector
// product split over a small pool of worker goroutines, called once per
// "token" with idle gaps between calls, as a decoder's step would be.
//
// Between steps the pool's goroutines wait on a channel: with no gap they
// are handed work back to back and rarely park; with a gap they park and the
// next step pays to wake them. That difference is what decodegap.Run's gaps
// make visible and a plain b.N loop hides.
package basic

import (
	"fmt"
	"sync"
)

// MatVec computes y = A·x for a fixed square matrix over a pool of workers.
// Each call of Step is one decode step; the output of one step feeds the
// input of the next, so the steps form a dependent chain like decoding.
type MatVec struct {
	n       int
	a       []float32 // n×n, row-major
	x, y    []float32
	workers int
	work    chan [2]int // row ranges [lo, hi)
	wg      sync.WaitGroup
	done    chan struct{}
}

// NewMatVec returns a MatVec of an n×n matrix (deterministic values) served
// by workers goroutines. Call Close to stop them.
func NewMatVec(n, workers int) (*MatVec, error) {
	if n < 1 || workers < 1 {
		return nil, fmt.Errorf("basic.NewMatVec(n=%d, workers=%d): want n >= 1 and workers >= 1", n, workers)
	}
	m := &MatVec{
		n: n, a: make([]float32, n*n), x: make([]float32, n), y: make([]float32, n),
		workers: workers, work: make(chan [2]int, workers), done: make(chan struct{}),
	}
	for i := range m.a {
		// A contraction, so the chained steps stay bounded.
		m.a[i] = float32((i*7919)%1000)/1000/float32(n) - 0.5/float32(n)
	}
	for i := range m.x {
		m.x[i] = 1
	}
	for w := 0; w < workers; w++ {
		go m.serve()
	}
	return m, nil
}

func (m *MatVec) serve() {
	for {
		select {
		case r := <-m.work:
			for i := r[0]; i < r[1]; i++ {
				row := m.a[i*m.n : (i+1)*m.n]
				var s float32
				for j, v := range row {
					s += v * m.x[j]
				}
				m.y[i] = s + 1
			}
			m.wg.Done()
		case <-m.done:
			return
		}
	}
}

// Step computes one product and makes its output the next step's input. It
// does not allocate.
func (m *MatVec) Step() error {
	chunk := (m.n + m.workers - 1) / m.workers
	for lo := 0; lo < m.n; lo += chunk {
		m.wg.Add(1)
		m.work <- [2]int{lo, min(lo+chunk, m.n)}
	}
	m.wg.Wait()
	m.x, m.y = m.y, m.x
	return nil
}

// Output returns the current state vector (the last step's output).
func (m *MatVec) Output() []float32 { return m.x }

// Close stops the workers.
func (m *MatVec) Close() { close(m.done) }
