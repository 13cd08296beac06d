// Package cpushapes holds arms of known CPU cost in the shapes that a CPU
// instrument can get wrong, and the ground truth to hold an instrument to:
// the proof of decodegap's cpu-ns/op ("all the CPU the arm's work costs the
// process"), by its public API only.
//
// Every arm is a decodegap.Opener of a work size w, a deterministic
// CPU-bound kernel (xorshift64 rounds, UnitRounds a unit, about 100 µs):
//
//	Inline(w)           the work on the step's own goroutine
//	FanOut(k, w)        the same work split over k new goroutines, waited for
//	Background(duty, w) inline work, and a goroutine burning duty of a core
//	                    from open to close (its own CPU clock is its record)
//	ExitingThread(w)    the work on a goroutine that locks its thread and
//	                    returns locked, so the thread exits every step
//	Alloc(w)            small objects allocated and dropped: the collector's
//	                    marking runs on other threads
//
// GroundTruth and GroundTruthGap run an arm in a plain loop with no harness
// and read the process's CPU time from the kernel (getrusage(RUSAGE_SELF)
// and CLOCK_PROCESS_CPUTIME_ID, which count every thread, exited ones
// included). The tests compare decodegap.Measure's cpu-ns/op with them,
// shape by shape, back to back and at a 500 µs gap:
//
//	go test ./examples/cpushapes
//	go test ./examples/cpushapes -args -truth-as-instrument   # the tolerances against the truth's own noise
//
// BenchmarkTrial is one real-host trial for scripts/cpu-trials.sh (the
// driver is cmd/cputrials): decodegap.Compare of arm b against arm a of a
// shape, b doing 10% more work.
package cpushapes
