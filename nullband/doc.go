// Package nullband does the statistics across runs: the null band from A/A
// pairs, the verdict of an A/B ratio against it, round rejection, the minimal
// detectable effect, regime (bimodality) detection, and the process-level
// interleaving plan and runner with its benchfmt output.
//
// It touches neither the host nor testing.B.
package nullband
