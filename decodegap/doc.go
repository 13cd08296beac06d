// Package decodegap benchmarks decode-shaped work honestly: one step (a
// token, an audio frame, a request) run again and again with idle gaps
// between, as it runs in production, on hosts that other jobs share.
//
// Its use is one line inside a Benchmark function:
//
//	func BenchmarkDecode(b *testing.B) {
//		decodegap.Run(b, decodegap.Config{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}}, step)
//	}
//
// then
//
//	go test -bench . -benchtime=2000x -count 5 | tee out.txt
//	go tool benchstat out.txt
//
// # What Run does
//
// Run runs Config.Warmup discarded iterations and then b.N recorded ones.
// Before every step it injects a gap (Config.Gap: busy, sleep or hybrid;
// constant, uniform jitter, exponential or a trace; seeded). It times each
// step with the monotonic clock into a preallocated buffer (no allocation, no
// per-iteration StopTimer, which would stop the world), finds where the
// series settled, and reports only the steady window.
//
// # Steady state
//
// The recorded latencies are cut into windows of Config.Window steps (32 by
// default). The detector classifies the series as flat, warm-up, slowdown or
// no steady state, after Barrett et al., "Virtual Machine Warmup Blows Hot and
// Cold" (OOPSLA 2017). Its rule, in short:
//
//   - changepoints only at window boundaries, found by binary segmentation
//     with a Mann-Whitney rank test (p < 0.001 after a Bonferroni correction,
//     widened for autocorrelated noise), so outliers, heavy tails and a
//     series that picks one of two levels at random are noise, not changes;
//   - adjacent segments whose medians differ by at most max(2%, the
//     window-to-window noise) are one level, unless joining them would drift;
//   - no steady state when the last segment is shorter than max(4, a fifth
//     of the windows) after a change, or drifts; flat when one level remains;
//     slowdown when an earlier level was faster; warm-up when it was slower.
//
// The steady window is the last segment. With a steady state the figures
// describe the steady window only, from its first iteration to the end.
// Without one, Run logs
//
//	steady state: NOT REACHED (series never settled): ...
//
// with the -benchtime=Nx to try next; every figure then describes the
// transient. Config.RequireSteady turns that into a failure.
//
// # Counters
//
// At window boundaries (never per iteration) Run snapshots the process's own
// totals: CLOCK_PROCESS_CPUTIME_ID, getrusage(RUSAGE_SELF) (user and sys
// time, voluntary and involuntary context switches, peak RSS; these include
// threads that already exited), and the Go runtime's GC cycles and pauses
// (runtime/metrics, which does not stop the world). A snapshot is taken at a
// boundary only when at least 100 times the previous snapshot's cost has
// passed, so that counting costs at most 1% of the run; the first and last
// boundaries are always taken. Per-op figures divide by the iterations
// between the two snapshots used, which may differ from the steady window:
// the log then prints both spans. A counter that cannot be read is reported
// as "unavailable" with the reason, never as 0, and a zero says whether it is
// a true zero.
//
// # Metrics
//
// Every unit parses with golang.org/x/perf/benchunit; benchstat compares
// them. All describe the steady window (or the counter span, see above).
//
//	unit            meaning
//	ns/op           mean step latency (overrides testing's own ns/op, which would include gaps)
//	p50-ns/op       median step latency
//	p90-ns/op       90th percentile step latency
//	p99-ns/op       99th percentile step latency
//	gap-req-ns/op   mean requested gap (Config.Gap)
//	gap-ns/op       mean achieved gap: end of one step to start of the next
//	gap-p50-ns/op   median achieved gap
//	cpu/wall        process CPU seconds per wall second (all threads; 1.0 = one core busy)
//	user-ns/op      user CPU time per step, all threads (getrusage)
//	sys-ns/op       system CPU time per step, all threads (getrusage)
//	vcsw/op         voluntary context switches per step, all threads
//	ivcsw/op        involuntary context switches per step, all threads
//	peak-RSS-B      peak resident set size of the process so far, bytes
//	gc-pause-ns/op  Go GC stop-the-world time per step (histogram estimate)
//	runq-ns/op      time this process's threads waited on a run queue, per step (schedstat)
//	threads         threads of the process at the end
//	foreign-%       others' busy time on the measured CPUs (hostmon; 100 = every CPU busy)
//	sibling-%       busy time on the SMT siblings of the measured CPUs (only with SMT)
//	steal-%         hypervisor steal on the measured CPUs
//	psi-some-%      share of the span in which some task waited for a CPU (/proc/pressure/cpu)
//	load1           1-minute load average at the end of the span
//	null-ratio      Config.Null: the null instance's steady mean / the step's; Compare: the
//	                null arm's mean / the first arm's in the same round (on the null arm's line)
//	steps/s         Config.Sessions: steps of all sessions per second of the region
//	sN-p50-ns/op    Config.Sessions: session N's median step latency (and sN-p90-ns/op)
//	NAME/op         a Config.Counters counter's change per step
//
// A figure that cannot be measured on this host (no PSI, no SMT, no
// /proc) is left out of the line, never reported as 0; the log says why.
// The contention figures let benchstat show when one run had worse weather
// than another; the log states the screen's verdict (Config.Screen).
//
// # Compare
//
// Compare(b, cfg, arms...) measures arms in interleaved rounds inside one
// benchmark and reports them as sub-benchmarks BenchmarkX/arm=NAME, one line
// per round, so that `benchstat -col /arm` compares arms measured in the
// same weather; see Compare. Across processes and builds, use the command
// `decodegap interleave`.
//
// # Threads and sessions
//
// Run reads the process's threads when it starts, after it opens the step
// (Config.Open) and its other instances, and after the warm-up, and logs a
// census: how many threads each phase created and where the CPU of the
// counter span went, by phase and thread name, with the idle threads named.
// Config.Sessions runs several independent instances at once (see there).
//
// # Traces
//
// Config.Trace, or $DECODEGAP_TRACE=DIR, writes every run's full series,
// boundaries and verdict to a JSON-lines file; $DECODEGAP_TRACE_PLOT=1 also
// draws it (`decodegap plot` draws one later).
//
// # Log
//
// Run logs only on the last call testing makes of the benchmark function
// (never on the N=1 probe), in as few lines as it can: testing keeps only
// ten lines of a benchmark's log.
//
// # Implementation
//
// The gap engine (clock_nanosleep with the timer slack lowered, the hybrid
// spin's calibration) and the steady-state detector live in
// decodegap/internal/gap and decodegap/internal/steady, each with its full
// rule in its package doc; the trace format and its pictures in
// internal/trace and internal/traceplot, shared with cmd/decodegap. Process
// and host readings come from hostmon, statistics across rounds from
// nullband: decodegap parses no /proc file itself.
//
// # Memory
//
// Run keeps 16 bytes per recorded iteration (latency and achieved gap, int64
// nanoseconds each). Beyond 1<<22 iterations it keeps a systematic sample
// (every 2nd, then every 4th, ... iteration), so memory stays at most 64 MiB
// for any b.N; means stay exact, percentiles and steady-state detection use
// the sample.
package decodegap
