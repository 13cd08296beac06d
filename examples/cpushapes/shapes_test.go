package cpushapes

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpinIsDeterministic(t *testing.T) {
	assert.Equal(t, Spin(7, 1000), Spin(7, 1000))
	assert.NotEqual(t, Spin(7, 1000), Spin(7, 1001))
	assert.Equal(t, uint64(7), Spin(7, 0), "no rounds: the seed")
	assert.Equal(t, uint64(1), Spin(0, -1), "a zero seed is made odd, so the state never sticks at 0")
}

func TestRounds(t *testing.T) {
	assert.Equal(t, UnitRounds, Rounds(1))
	assert.Equal(t, UnitRounds*11/10, Rounds(1.1))
	assert.Equal(t, 0, Rounds(0))
	assert.Equal(t, 0, Rounds(-1))
	assert.Equal(t, 0, Rounds(math.NaN()))
}

func TestSplit(t *testing.T) {
	assert.Equal(t, []int{4, 3, 3}, split(10, 3))
	assert.Equal(t, []int{5, 5}, split(10, 2))
	assert.Equal(t, []int{1, 0, 0}, split(1, 3))
	assert.Nil(t, split(10, 0))
}

func TestOpenErrors(t *testing.T) {
	_, _, err := FanOut(0, 1)()
	assert.ErrorContains(t, err, "k = 0")
	for _, a := range []*BackgroundArm{Background(0, 1), Background(1.5, 1), Background(math.NaN(), 1), {Duty: 0.5, Burst: -time.Millisecond}} {
		_, _, err := a.Open()
		assert.Error(t, err, "%+v", a)
	}
}

// TestShapesRun runs every shape a few steps: each returns no error, and
// what it opened it closes (goroutines and the burner stop).
func TestShapesRun(t *testing.T) {
	for name, open := range map[string]func() (func() error, func() error, error){
		"Inline":        func() (func() error, func() error, error) { s, c, err := Inline(0.01)(); return s, c, err },
		"FanOut":        func() (func() error, func() error, error) { s, c, err := FanOut(3, 0.01)(); return s, c, err },
		"ExitingThread": func() (func() error, func() error, error) { s, c, err := ExitingThread(0.01)(); return s, c, err },
		"Alloc":         func() (func() error, func() error, error) { s, c, err := Alloc(0.01)(); return s, c, err },
	} {
		step, closeFn, err := open()
		require.NoError(t, err, name)
		for range 5 {
			require.NoError(t, step(), name)
		}
		if closeFn != nil {
			require.NoError(t, closeFn(), name)
		}
	}
}

func TestBackgroundRecordsItsBurner(t *testing.T) {
	a := Background(0.5, 0.01)
	_, ok := a.Last()
	assert.False(t, ok, "no instance closed yet")
	for range 2 {
		step, closeFn, err := a.Open()
		require.NoError(t, err)
		for range 20 {
			require.NoError(t, step())
		}
		time.Sleep(5 * time.Millisecond) // a burst and a rest at least
		require.NoError(t, closeFn())
		require.NoError(t, closeFn(), "a second close does nothing")
	}
	bs := a.Burners()
	require.Len(t, bs, 2, "one record per closed instance")
	for _, b := range bs {
		assert.Greater(t, b.CPUNs, 0.0)
		assert.Greater(t, b.WallNs, 0.0)
		assert.LessOrEqual(t, b.Duty(), 1.0+1e-3, "one thread cannot use more than its wall time (1e-3 for the two clocks' reads)")
	}
	last, ok := a.Last()
	assert.True(t, ok)
	assert.Equal(t, bs[1], last)
}

func TestGroundTruthCountersAgree(t *testing.T) {
	for _, c := range []struct {
		name string
		gap  time.Duration
	}{{"back to back", 0}, {"500µs gap", 500 * time.Microsecond}} {
		tr, err := GroundTruthGap(ExitingThread(0.2), 200, c.gap)
		require.NoError(t, err, c.name)
		assert.Equal(t, 200, tr.N)
		assert.InEpsilon(t, tr.ClockNs, tr.RusageNs, 0.03, "%s: getrusage and CLOCK_PROCESS_CPUTIME_ID count the same CPU, exited threads included: %+v", c.name, tr)
		assert.Greater(t, tr.ClockNs, 0.0, c.name)
		if c.gap > 0 {
			assert.Greater(t, tr.GapNs, 0.0, "a sleep costs its thread something")
			assert.GreaterOrEqual(t, tr.WallNs, float64(c.gap))
		} else {
			assert.Zero(t, tr.GapNs)
		}
	}
	_, err := GroundTruth(Inline(1), 0)
	assert.ErrorContains(t, err, "n = 0")
	_, err = GroundTruthGap(Inline(1), 1, -1)
	assert.ErrorContains(t, err, "gap = -1ns")
	_, err = GroundTruth(FanOut(0, 1), 1)
	assert.ErrorContains(t, err, "open: cpushapes.FanOut")
}
