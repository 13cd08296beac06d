//go:build !race

package history

const raceOn = false
