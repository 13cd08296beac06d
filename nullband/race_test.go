//go:build race

package nullband

// raceOn reports whether the race detector is on: it makes Judge several
// times slower, so the trial-counting tests count fewer trials.
const raceOn = true
