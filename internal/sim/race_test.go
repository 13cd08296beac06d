//go:build race

package sim

// raceOn reports whether the race detector is on: it makes nullband.Judge
// 5–10 times slower, so the sequential tests judge fewer trials.
const raceOn = true
