// Package interleave runs A/B benchmark comparisons across processes: it
// plans rounds in which every arm (a test binary and its flags) runs once,
// in an order drawn afresh each round, runs each arm of each round as its
// own process, and writes what the processes print as Go benchmark format
// (benchfmt) with the arm and round added. Collect reads such a file back
// into per-round samples for nullband.Judge. It does no statistics itself.
//
// # Why interleave
//
// `go test -count N` runs A N times and then B N times, so an A/B comparison
// made from it compares this minute's weather with the next. NewPlan draws,
// from a seed, a fresh random order of all arms for every round (and never
// starts a round with the arm that ended the last); a Runner runs each arm of
// each round as its own process and appends its Go benchmark output to Out
// as soon as it exits, adding three file configuration lines:
//
//	arm: NAME       the arm (go tool benchstat -col arm)
//	round: N        the round, from 1 (benchstat needs -ignore round to pool rounds)
//	screen: WORD    clean, contended or unavailable over that run (-filter screen:clean)
//
// Comment lines that benchfmt readers skip record each round's order
// ("# round N order a null b") and a screen's detail
// ("# round N arm NAME screen WORD: …").
//
// # Failures
//
// Each run is started by internal/runner: its process leads its own
// process group and dies with this one (a parent-death signal). A run still
// going after Runner.Timeout (10 minutes unless set) is sent SIGINT, then
// SIGKILL after Runner.Grace, as a group; whatever a run leaves in its group
// when it exits is killed. Output
// is read line by line whatever the lines' length; what is not text is
// quoted and shortened before a person sees it. A run that fails (Cause:
// it could not start, exited non-zero, timed out, printed no result, a
// malformed or non-finite one, or two of one benchmark) is reported at that
// run, with the line at fault, as a comment in Out and a Run with Err set;
// the Runner goes on up to Runner.MaxFailed failures, keeping every good run.
//
// # Stopping early
//
// The orders are drawn one round at a time, so a plan's cost does not grow
// with its number of rounds, and Runner.OnRun sees every run as it finishes:
// a caller that judges as it goes stops the Runner when it has its answer.
package interleave
