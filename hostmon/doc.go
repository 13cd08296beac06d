// Package hostmon describes and screens the host a benchmark runs on: CPU
// topology (SMT siblings, cores, L3 domains, NUMA nodes), SMT-aware CPU
// budgets and whole-process affinity, contention screening over the span
// between two snapshots, a pinned deterministic spinner, and a host lock.
// It knows nothing of benchmarks; decodegap and cmd/decodegap call it.
//
// # Reading the host
//
// Every reader hangs off an FS, a pair of mount points (DefaultFS: /proc and
// /sys; NewFS: any, such as the fixture trees under testdata/), so tests run
// on fixture trees. /proc and /sys are read through
// github.com/prometheus/procfs and its sysfs package; hostmon parses by hand
// only what procfs lacks (CPU lists, L3 cache directories, cgroup cpu.stat)
// or reads too slowly for a window boundary (per-thread schedstat: FS.Tasks),
// and fuzzes those parsers.
//
// # Budgets
//
// FS.Topology reads the layout; Topology.SelectBudget(n) picks n logical
// CPUs on n distinct physical cores, filling one L3 domain before the next,
// and returns them with their SMT sibling set; Topology.BudgetOf checks an
// explicit set. Topology.Confine applies the set to every thread of the
// process; Confinement.Release restores the original masks.
//
// # Contention
//
// A Sampler takes a Snapshot at each of the caller's window boundaries
// (nothing polls); Between(a, b) turns two snapshots into a Span, and
// Span.Screen into a Verdict with its reasons in words. Every figure is a
// Figure: a value, or "unavailable (reason)", never a silent 0.
//
//	Span field              unit  source
//	ForeignBusyPct          %     /proc/stat busy on the set − own utime+stime
//	BusyPct, OwnPct         %     /proc/stat, /proc/self/stat
//	SiblingBusyPct          %     /proc/stat busy on the sibling set
//	StealPct                %     /proc/stat steal on the set
//	RunQueueWaitNs/Pct      ns/%  /proc/schedstat run_delay on the set
//	ProcessRunQueueWaitNs   ns    /proc/self/task/*/schedstat
//	PSISomePct              %     /proc/pressure/cpu "some" total, delta
//	Load1                   -     /proc/loadavg at the later snapshot
//	ProcsRunning            n     /proc/stat procs_running, later snapshot
//	ThrottledPeriods/Pct    n/%   cgroup cpu.stat (v1 cpu controller or v2)
//
// Percentages are of the CPU time on the set over the span. /proc/stat
// counts whole clock ticks (USER_HZ, 100 a second), so its percentages have
// a resolution of one tick over the span: Span.ResolutionPct.
//
// Foreign busy subtracts this process's whole CPU time from the busy time on
// the set, because the kernel does not split a process's time by CPU. That
// is exact when the process is confined to the set, and when the Sampler
// measures every CPU the process may use (the unconfined default); a process
// that also runs outside the set makes foreign busy read low by that time.
// Time of child processes is not this process's: a caller that runs children
// on the set subtracts their time itself.
//
// Spin pins a busy loop to one CPU at a duty cycle: the deterministic
// co-tenant for experiments and tests. Lock takes the host lock that
// serializes benchmark runs on one host.
//
// hostmon is Linux-only: it needs /proc, /sys and sched_setaffinity.
package hostmon
