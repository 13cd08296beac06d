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

// BenchmarkCompareOpen compares two steps under the same open-loop
// arrivals: "steady" always takes 50 µs, "stalls" takes 40 µs but stalls
// 5 ms once in 500 steps. Compare judges the response times besides the
// service times, so the queue behind the stall is what tells them apart:
//
//	go test -run '^$' -bench CompareOpen -benchtime=1000x -count 10 ./examples/openloop
func BenchmarkCompareOpen(b *testing.B) {
	open := func(service time.Duration, stallEvery int) decodegap.Opener {
		return func() (decodegap.Step, func() error, error) {
			calls := 0
			return func() error {
				calls++
				if stallEvery > 0 && calls%stallEvery == 0 {
					time.Sleep(5 * time.Millisecond)
					return nil
				}
				spin(service)
				return nil
			}, nil, nil
		}
	}
	cfg := decodegap.CompareConfig{Gap: decodegap.Gap{Mean: 500 * time.Microsecond, Shape: decodegap.GapExponential, Open: true}}
	decodegap.Compare(b, cfg,
		decodegap.Arm{Name: "steady", Open: open(50*time.Microsecond, 0)},
		decodegap.Arm{Name: "stalls", Open: open(40*time.Microsecond, 500)})
}
