// Package decodegap benchmarks decode-shaped work honestly: one step (a
// token, an audio frame, a request) run again and again with idle gaps
// between, as it runs in production, on hosts that other jobs share.
//
// Its use is one line inside a Benchmark function:
//
//	func BenchmarkDecode(b *testing.B) {
//		decodegap.Run(b, decodegap.RunConfig{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}}, decodegap.Func(step))
//	}
//
// then
//
//	go test -bench . -benchtime=2000x -count 10 | tee out.txt
//	go tool benchstat out.txt
//
// Run times every step into a preallocated buffer (no allocation, no
// per-iteration timer calls), injects the gap of RunConfig.Gap before each,
// finds where the series settled (package internal/steady: flat, warm-up,
// slowdown or no steady state, after Barrett et al., OOPSLA 2017) and
// reports only the steady window. Without a steady state it reports the
// transient, says so, and gives the -benchtime to try next.
//
// Compare measures several arms in interleaved rounds inside one benchmark,
// with a null arm (a second instance of the first arm) that calibrates its
// verdicts; see Compare for how it maps rounds onto -count and -cpu. Across processes and builds, use `decodegap interleave`.
//
// # What is reported
//
// One analysis fills one result record; the metrics (see Metrics), the log
// and the trace read it. Every unit parses with x/perf/benchunit. A figure
// that cannot be measured on the host is left out, never reported as 0,
// and the log says why. Besides latency and gaps: the process's counters at
// window boundaries (CPU time, context switches, peak RSS, GC; rate-limited
// to 1% of the run), the host's contention over the same span (package
// hostmon) with the screen's verdict, a thread census (which phase created
// each thread, where the CPU went), and outliers: steps at least 10× the
// median, with the share of the mean they make. The longest step of the
// whole run, warm-up and transient included, is max-ns/op; one of 10× the
// median or more that the steady window leaves out is named in the log
// (STALL). Run also returns these figures as a *Result: numbers and enums.
//
// # Limits
//
// Sizes over a documented limit fail with an error wrapping ErrLimit:
// RunConfig.Sessions over MaxSessions, a gap over MaxGap, records over
// MaxRecordBytes. An open loop whose arrivals come faster than the loop can
// count them stops counting at MaxQueue and reports overloaded 1 (no
// hang); SearchRate caps each probe at Rates.ProbeTime and stops when the
// service time alone misses the objective.
//
// # Log
//
// Run logs only on the last call testing makes of the benchmark function
// (never on the N=1 probe), in at most nine lines: testing keeps ten.
// Compare writes one progress line to stderr between blocks. Without -v a
// Compare block prints its result line only, and each arm at most one line
// naming the rounds whose blocks were flagged (not steady, contended, a
// stall, overloaded, trace not written); with -v, or when a block fails the
// benchmark, the block's whole log. A trace that cannot be written is a
// warning in the log; the result line stays.
//
// # Traces
//
// RunConfig.Trace, CompareConfig.Trace or $DECODEGAP_TRACE=DIR writes every
// run's series, boundaries and verdict as JSON lines (package
// internal/trace); `decodegap plot DIR` draws them. decodegap itself draws
// nothing, so a user's test binary carries no plotting code.
//
// # Memory
//
// Run keeps 16 bytes per recorded iteration. Beyond 1<<22 iterations it
// keeps a systematic sample (every 2nd, then 4th, ... iteration), so memory
// stays under 64 MiB for any b.N; means stay exact, percentiles and the
// steady-state detection use the sample.
package decodegap
