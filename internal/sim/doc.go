// Package sim is the simulation suite that proves nullband's verdict: seeded
// synthetic interleaved runs (Trial: per-round A, B and A' values of one
// metric, and optionally the contention screen's flag per round) from noise
// models that mirror shared hosts (Models), judged by three methods (Method):
// nullband.Judge (Verdict, fixed and sequential), the band rule nullband used
// before it (OldBand, a private copy) and benchstat's Mann–Whitney U-test of
// A against B over all rounds (UTest).
//
// Fixed and Sequential tally each method's calls over a Case's trials;
// CompareSequential finds the fixed number of rounds that matches a
// sequential run's power. Rates are estimates from a finite number of trials:
// Margin gives their binomial 95% half-width.
//
// Every trial is a pure function of (seed, model, rounds, trial index), and
// the effect only scales B, so every method judges the same data and a 2% and
// a 5% effect share their noise. cmd/verdictsim writes the tables to
// docs/verdict-accuracy.md; the tests assert the targets of the verdict
// (false-positive rate ≤ 5% under every model, power, equivalence) with
// trial counts small enough for CI.
package sim
