package openloop

import (
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap"
)

// spin busy-waits d on the monotonic clock: a step of known service time.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// stallingStep returns a step of about 50 µs that sleeps 50 ms at its
// 1000th call.
func stallingStep() decodegap.Step {
	calls := 0
	return func() error {
		calls++
		if calls == 1000 {
			time.Sleep(50 * time.Millisecond)
			return nil
		}
		spin(50 * time.Microsecond)
		return nil
	}
}

func BenchmarkStall(b *testing.B) {
	for _, open := range []bool{false, true} {
		name := "loop=closed"
		if open {
			name = "loop=open"
		}
		b.Run(name, func(b *testing.B) {
			cfg := decodegap.RunConfig{Gap: decodegap.Gap{Mean: time.Millisecond, Open: open}}
			decodegap.Run(b, cfg, decodegap.Func(stallingStep()))
		})
	}
}

func BenchmarkCapacity(b *testing.B) {
	cfg := decodegap.RunConfig{SLO: decodegap.SLO{Percentile: 99, Limit: 2 * time.Millisecond}}
	step := func() error { spin(200 * time.Microsecond); return nil }
	decodegap.SearchRate(b, cfg, decodegap.Func(step), decodegap.Rates{Start: 500, Tolerance: 0.05})
}
