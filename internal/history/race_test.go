//go:build race

package history

// raceOn is true under the race detector: the simulation runs only the
// cells with a target (no shift and 5%), which keeps make test's
// instrumented run short.
const raceOn = true
