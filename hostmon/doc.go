// Package hostmon describes and screens the host a benchmark runs on: CPU
// topology (SMT siblings, cores, L3 domains), SMT-aware CPU budgets and
// whole-process affinity, contention screening over a span between two
// snapshots, a pinned deterministic spinner and a host lock.
//
// Every reader takes the root of the /proc and /sys trees it reads, so tests
// run on fixture trees under testdata/. hostmon knows nothing of benchmarks.
package hostmon
