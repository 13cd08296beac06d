package trace_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gapbench/gapbench/internal/trace"
)

// A run of four steps with a 1 ms gap, steady from the third step on.
func ExampleWrite() {
	t := &trace.Trace{
		Header: trace.Header{
			Benchmark: "BenchmarkVAD/gap=1ms",
			Start:     time.Date(2026, 11, 30, 5, 40, 0, 0, time.UTC),
			GoVersion: "go1.26.8",
			Config:    map[string]string{"gap.mean": "1ms", "window": "2"},
			Steady:    trace.Steady{Class: trace.ClassWarmup, Start: 2, End: 4, Changepoints: []int{2}},
		},
		Latency:   []int64{900000, 600000, 250000, 251000},
		Gap:       []int64{0, 1000400, 1000150, 1000100},
		Requested: []int64{1000000, 1000000, 1000000, 1000000},
		Boundaries: []trace.Boundary{
			{Iter: 0, Counters: map[string]float64{trace.CounterThreads: 6}},
			{Iter: 2, TimeNs: 3500000, Counters: map[string]float64{trace.CounterThreads: 6},
				Unavailable: map[string]string{"psi_cpu_some_avg10": "no /proc/pressure/cpu"}},
			{Iter: 4, TimeNs: 5510000, Counters: map[string]float64{trace.CounterThreads: 6},
				Contention: map[string]float64{"foreign_busy_pct": 2.5}},
		},
	}
	if err := trace.Write(os.Stdout, t); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"kind":"header","format":"gapbench-trace/1","benchmark":"BenchmarkVAD/gap=1ms","count":0,"start":"2026-11-30T05:40:00Z","go_version":"go1.26.8","config":{"gap.mean":"1ms","window":"2"},"iterations":4,"stride":1,"steady":{"class":"warm-up","start":2,"end":4,"changepoints":[2]},"samples":4}
	// {"kind":"boundary","iter":0,"time_ns":0,"counters":{"threads":6}}
	// {"kind":"boundary","iter":2,"time_ns":3500000,"counters":{"threads":6},"unavailable":{"psi_cpu_some_avg10":"no /proc/pressure/cpu"}}
	// {"kind":"boundary","iter":4,"time_ns":5510000,"counters":{"threads":6},"contention":{"foreign_busy_pct":2.5}}
	// {"kind":"samples","first":0,"latency_ns":[900000,600000,250000,251000],"gap_ns":[0,1000400,1000150,1000100],"requested_ns":[1000000,1000000,1000000,1000000]}
}

func ExampleRead() {
	const file = `{"kind":"header","format":"gapbench-trace/1","benchmark":"BenchmarkVAD","iterations":3,"stride":1,"samples":3,"steady":{"class":"warm-up","start":1,"end":3}}
{"kind":"samples","first":0,"latency_ns":[900000,250000,251000]}
`
	t, err := trace.Read(strings.NewReader(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	s := t.Header.Steady
	fmt.Println(t.Header.Benchmark, s.Class, t.Latency[s.Start:s.End], t.Gap == nil)
	// Output: BenchmarkVAD warm-up [250000 251000] true
}
