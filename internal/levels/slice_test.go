package levels

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestChooseSlice(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name              string
		given             int
		gap               time.Duration
		open              bool
		arms, steps, less int
		turn              int
		why               SliceReason
	}{
		{"2ms: the trials' turn of 30", 0, 2 * ms, false, 5, 300, 5, 30, SliceLongGap},
		{"1ms: 60 steps", 0, ms, false, 3, 300, 5, 60, SliceLongGap},
		{"32ms: at least 10 steps", 0, 32 * ms, false, 3, 100, 2, 10, SliceLongGap},
		{"at least n/64", 0, 2 * ms, false, 3, 4000, 63, 63, SliceLongGap},
		{"just below 1ms", 0, 999 * time.Microsecond, false, 3, 300, 5, 0, WholeShortGap},
		{"gap 0", 0, 0, false, 3, 4000, 63, 0, WholeShortGap},
		{"open loop", 0, 2 * ms, true, 3, 300, 5, 0, WholeOpenLoop},
		{"one arm", 0, 2 * ms, false, 1, 300, 5, 0, WholeOneArm},
		{"59 steps: fewer than two turns", 0, 2 * ms, false, 3, 59, 1, 0, WholeShortBlock},
		{"60 steps: two turns", 0, 2 * ms, false, 3, 60, 1, 30, SliceLongGap},
		{"given", 7, 100 * time.Microsecond, false, 1, 300, 5, 7, SliceGiven},
		{"whole given", -1, 2 * ms, false, 5, 300, 5, 0, WholeGiven},
	} {
		s := ChooseSlice(tc.given, tc.gap, tc.open, tc.arms, tc.steps, tc.less)
		assert.Equal(t, tc.turn, s.Turn, tc.name)
		assert.Equal(t, tc.why, s.Reason, tc.name)
		assert.Equal(t, tc.turn > 0, s.Sliced(), tc.name)
	}
	assert.Equal(t, "turn=30 reason=long-gap", ChooseSlice(0, 2*ms, false, 5, 300, 5).Config())
	assert.Equal(t, "turn=0 reason=short-gap", ChooseSlice(0, 0, false, 5, 300, 5).Config())
}
