package trials

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/decodegap"
)

var (
	work     = flag.Int("work", 100, "percent of BaseOps each step of BenchmarkStep does")
	candWork = flag.Int("cand-work", 100, "percent of BaseOps each step of BenchmarkCompare's cand arm does (base does 100)")
	// A candidate slow in some sessions only (scripts/mixture-trials.sh).
	slowShare = flag.Float64("cand-slow-share", 0, "share of BenchmarkCompare's cand blocks (drawn per block) whose steps do -cand-slow-work instead of -cand-work")
	slowWork  = flag.Int("cand-slow-work", 110, "percent of BaseOps each step of a slow cand block does (-cand-slow-share)")
	gapFlag   = flag.Duration("gap", 100*time.Microsecond, "BenchmarkCompare's hybrid gap between steps")
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
	cand := open(*candWork)
	if *slowShare > 0 {
		// Each block (each Open) is slow with the given share.
		r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 33))
		cand = func() (decodegap.Step, func() error, error) {
			if r.Float64() < *slowShare {
				return open(*slowWork)()
			}
			return open(*candWork)()
		}
	}
	decodegap.Compare(b, decodegap.CompareConfig{Gap: decodegap.Gap{Mean: *gapFlag}},
		decodegap.Arm{Name: "base", Open: open(100)},
		decodegap.Arm{Name: "cand", Open: cand})
}

func TestStepScalesWithWork(t *testing.T) {
	assert.Equal(t, Step(100), Step(100), "deterministic")
	assert.NotEqual(t, Step(100), Step(105), "105 does more rounds")
	assert.Equal(t, uint64(0x9e3779b97f4a7c15), Step(0), "work 0 does nothing")
	assert.Equal(t, uint64(0x9e3779b97f4a7c15), Step(-3))
}
