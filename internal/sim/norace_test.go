//go:build !race

package sim

// raceOn reports whether the race detector is on; see race_test.go.
const raceOn = false
