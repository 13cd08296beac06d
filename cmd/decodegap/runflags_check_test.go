package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckBench(t *testing.T) {
	assert.NoError(t, checkBench("Step/gap=2ms", ""))
	assert.NoError(t, checkBench(".", "2000x"))
	assert.EqualError(t, checkBench(".", "abc"), `-benchtime "abc": want a duration (100ms) or Nx with N ≥ 1 (2000x)`)
	assert.ErrorContains(t, checkBench("(", ""), `-bench "(": not a regular expression`)
	assert.NoError(t, checkUnits("sec/op,p50-sec/op"))
	assert.ErrorContains(t, checkUnits("sec/op,"), `-unit "sec/op,": an empty unit`)
}
