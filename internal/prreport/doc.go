// Package prreport compares every benchmark of a module between two
// revisions, as a pull-request check does, and writes the report: the
// logic behind `decodegap pr`.
//
// # Steps
//
//  1. Prepare adds a git worktree for each revision (or takes the work tree
//     as the head), resolves the package patterns with `go list`, builds
//     each package's test binary at both sides with `go test -c` and lists
//     its benchmarks with -test.list. Benchmarks present at one side only
//     are listed, not judged.
//  2. A Scheduler runs each benchmark (a Job) in rounds: base, head and a
//     null arm (a second process of base), each its own process, in an
//     order drawn afresh every round (ProcessRunner, on the interleave
//     package's Runner). The first runs calibrate the iterations N of
//     each leaf benchmark (the benchmark, or each sub-benchmark, run
//     alone), so every run of a leaf does the same N ops
//     (-test.benchtime=Nx), about -benchtime of CPU time. Results are
//     appended as benchfmt with arm: base/head/null and round: as they
//     come.
//  3. After each round a job is looked at (internal/judge's Look): every
//     row (the benchmark, or a sub-benchmark, in one unit) is judged by
//     nullband in sequential mode at the first level of weighted Holm over
//     the family of every job's rows (α·w/W, a p50 row weighing 2). A job
//     whose rows are all decided stops. The wall-clock budget is shared:
//     each job gets its first round, then passes of one round each go to
//     the undecided jobs nearest to deciding (see Scheduler).
//  4. JudgeJobs judges all rows together with internal/judge, the judge of
//     every gapbench route (weighted Holm's step-down on the decisions), so
//     the chance of any false faster or slower call across the report is
//     at most α; the null arm's rows against the base are judged as a
//     family of their own and shown as the A/A check.
//  5. WriteMarkdown and WriteText write the report; FailOn gates CI on
//     decided slowdowns only.
//
// # Metrics
//
// Every unit a benchmark reports can be judged (sec/op, B/op, …); the
// command judges internal/judge's default units (sec/op, p50-sec/op and
// UnitCPU, cpu-sec/op). A decodegap benchmark reports its own cpu-ns/op
// (the steady window's CPU time per step), which is kept; for any other
// benchmark UnitCPU is the run's process CPU time per op, added by
// ProcessRunner: on a shared
// host most of the noise of sec/op is time spent waiting for a CPU, which
// CPU time leaves out. It includes the process's start and the one probe
// iteration testing runs before the N, the same in both arms, so it reads
// a change low by the start's share of a run's CPU time (which -benchtime
// keeps small), never high. On a crowded host CPU time also grows with
// the switching and cache refills others cause, so it is steadier than
// sec/op, not immune.
//
// # Words
//
// The report's words are in render.go: WriteMarkdown and WriteText share
// every phrase. The per-row reasons, when a row has any, are written by
// internal/verdicttext, the one renderer of nullband verdicts.
package prreport
