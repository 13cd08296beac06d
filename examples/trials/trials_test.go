package trials

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/decodegap"
)

var (
	work     = flag.Int("work", 100, "percent of BaseOps each step of BenchmarkStep does")
	candWork = flag.Int("cand-work", 100, "percent of BaseOps each step of BenchmarkCompare's cand arm does (base does 100)")
)

var sink uint64

// gap is the trials' gap: one step every 100 µs, hybrid.
var gap = decodegap.Gap{Mean: 100 * time.Microsecond}

// BenchmarkStep is the arm `decodegap interleave` runs; only -work differs
// between arms.
func BenchmarkStep(b *testing.B) {
	w := *work
	decodegap.Run(b, decodegap.RunConfig{Gap: gap}, decodegap.Func(func() error {
		sink += Step(w)
		return nil
	}))
}

// BenchmarkCompare interleaves base (work 100) and cand (-cand-work) in one
// process, with the null arm, for -count rounds.
func BenchmarkCompare(b *testing.B) {
	open := func(w int) decodegap.Opener {
		return func() (decodegap.Step, func() error, error) {
			return func() error { sink += Step(w); return nil }, func() error { return nil }, nil
		}
	}
	decodegap.Compare(b, decodegap.CompareConfig{Gap: gap},
		decodegap.Arm{Name: "base", Open: open(100)},
		decodegap.Arm{Name: "cand", Open: open(*candWork)})
}

func TestStepScalesWithWork(t *testing.T) {
	assert.Equal(t, Step(100), Step(100), "deterministic")
	assert.NotEqual(t, Step(100), Step(105), "105 does more rounds")
	assert.Equal(t, uint64(0x9e3779b97f4a7c15), Step(0), "work 0 does nothing")
	assert.Equal(t, uint64(0x9e3779b97f4a7c15), Step(-3))
}
