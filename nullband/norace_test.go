//go:build !race

package nullband

// raceOn reports whether the race detector is on; see race_test.go.
const raceOn = false
