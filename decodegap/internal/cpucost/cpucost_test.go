package cpucost

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWholeBlocksLeaveTheHarnessOut(t *testing.T) {
	ivs := []Interval{
		{Process: 1000, User: 800, Sys: 200, Loop: 700, LoopOK: true, Harness: 200, HarnessUser: 100, Steps: 4},
		{Process: 1200, User: 900, Sys: 300, Loop: 800, LoopOK: true, Harness: 200, HarnessUser: 100, Steps: 4},
	}
	c := Sum(ivs, 10, false)
	require.Equal(t, Available, c.Why)
	assert.Equal(t, 8, c.Steps)
	// 2200 − 400 harness − 8×10 bookkeeping.
	assert.InDelta(t, 1720, c.Ns, 1e-9)
	v, ok := c.PerStep()
	assert.True(t, ok)
	assert.InDelta(t, 215, v, 1e-9)
	// user 1700 − 200 − 80 = 1420, sys 500 − 200 = 300: the split of 1720.
	assert.InDelta(t, 1720*1420.0/1720, c.User, 1e-9)
	assert.InDelta(t, c.Ns, c.User+c.Sys, 1e-9)
	assert.InDelta(t, 1020, c.Loop, 1e-9, "the loop thread's part: its clock less the harness and the bookkeeping")
	assert.InDelta(t, 480, c.Harness, 1e-9)
	assert.InDelta(t, 2200, c.Process, 1e-9)

	ivs[1].LoopOK = false
	assert.True(t, math.IsNaN(Sum(ivs, 10, false).Loop), "one boundary on another thread: no loop share")
	ivs[1].Foreign = true
	c = Sum(ivs, 10, false)
	assert.Equal(t, 4, c.Steps, "whole blocks hold no foreign interval; one is left out")
}

func TestTurnsLeaveTheOtherArmsThreadsOut(t *testing.T) {
	ivs := []Interval{
		{Process: 1000, User: 1000, Harness: 100, Steps: 5, Others: 300, Own: 50, ThreadsOK: true},
		{Process: 5000, User: 5000, Foreign: true, Others: 4000, Own: 120, ThreadsOK: true},
		{Process: 900, User: 900, Harness: 100, Steps: 5, Others: 200, ThreadsOK: true},
	}
	c := Sum(ivs, 0, true)
	require.Equal(t, Available, c.Why)
	// (1000−100−300) + 120 (own threads in the others' turns) + (900−100−200).
	assert.InDelta(t, 1320, c.Ns, 1e-9)
	assert.Equal(t, 10, c.Steps)
	assert.InDelta(t, 1900, c.Process, 1e-9, "the arm's own turns")

	ivs[1].ThreadsOK = false
	c = Sum(ivs, 0, true)
	assert.Equal(t, NoThreadList, c.Why)
	_, ok := c.PerStep()
	assert.False(t, ok, "never partial: unavailable")
	assert.Equal(t, 10, c.Steps)
}

func TestUnavailableSaysWhy(t *testing.T) {
	c := Sum([]Interval{{Process: 100, Foreign: true}}, 0, false)
	assert.Equal(t, NoSteps, c.Why)
	c = Sum(nil, 0, false)
	assert.Equal(t, NoSteps, c.Why)
	_, ok := c.PerStep()
	assert.False(t, ok)

	// The harness read more than the process spent, beyond a rounding.
	c = Sum([]Interval{{Process: 1000, Harness: 1500, Steps: 10}}, 0, false)
	assert.Equal(t, Negative, c.Why)
	// Within the rounding: a step that does nothing reads a true 0.
	c = Sum([]Interval{{Process: 1000, Harness: 1010, Steps: 10}}, 0, false)
	require.Equal(t, Available, c.Why)
	assert.Equal(t, 0.0, c.Ns)

	for r, want := range map[Reason]string{Available: "available", NoSteps: "no-steps", NoThreadList: "no-thread-list", Negative: "harness-exceeds-process", Reason(99): "unknown"} {
		assert.Equal(t, want, r.String())
	}
}

func TestSumDoesNotAllocate(t *testing.T) {
	ivs := make([]Interval, 64)
	for i := range ivs {
		ivs[i] = Interval{Process: 1000, User: 900, Sys: 100, Harness: 10, Steps: 3, ThreadsOK: true, Foreign: i%2 == 1}
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { Sum(ivs, 5, true) }))
}
