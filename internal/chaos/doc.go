// Package chaos is the hostile-input suite: its test runs the decodegap
// command with about a hundred bad inputs, signals and planted files, each
// bounded in time, and counts crashes, hangs, fabrications, lost
// measurements, orphaned processes and writes through a planted symlink.
// Every count must be zero. CHAOS_REPORT=FILE writes the table of outcomes.
package chaos
