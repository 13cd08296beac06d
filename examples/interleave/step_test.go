package interleave

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/decodegap"
)

// work is the percentage of BaseOps each step does; an arm sets it on the
// test binary's command line: ./interleave.test -work=110.
var work = flag.Int("work", 100, "percent of BaseOps each step does (the candidate arm passes 110)")

var sink uint64

// BenchmarkStep is the benchmark both arms run; only -work differs. It is
// decode-shaped: one step every 100 µs gap, measured by decodegap.Run, which
// reports the mean (ns/op) and the median (p50-ns/op) step time among others.
func BenchmarkStep(b *testing.B) {
	decodegap.Run(b, decodegap.RunConfig{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}}, decodegap.Func(func() error {
		x, _ := Step(*work)
		sink += x // keep the result, or the compiler drops the xorshift work
		return nil
	}))
}

func TestStepWorkIsProportional(t *testing.T) {
	x100, n100 := Step(100)
	x110, n110 := Step(110)
	assert.Equal(t, BaseOps, n100)
	assert.Equal(t, BaseOps*110/100, n110, "-work=110 does 10% more rounds")
	assert.NotEqual(t, x100, x110)
	x, n := Step(100)
	assert.Equal(t, x100, x, "deterministic")
	assert.Equal(t, n100, n)
	_, n = Step(-5)
	assert.Zero(t, n)
}
