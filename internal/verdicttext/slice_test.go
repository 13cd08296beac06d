package verdicttext

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/levels"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

// A null row with no interval yet (too few rounds for its level) is an
// A/A check that did not run: the line says so, with the rounds used and
// needed, instead of "not found to differ".
func TestWriteRowsAACheckNotRun(t *testing.T) {
	s := synth(3, 4, 0.01, 1.0)
	aa, err := nullband.Judge(nullband.Samples{Base: s.Base, Candidate: s.Null}, nullband.Options{Confidence: 0.9875})
	require.NoError(t, err)
	require.Equal(t, nullband.Undecided, aa.Outcome)
	require.Zero(t, aa.Lo, "4 rounds give a signed-rank test no 98.75% interval")
	rows := []report.Row{
		{Bench: "Step", Arm: "new", Unit: "sec/op", Verdict: judge(t, synth(1, 12, 0.01, 1.5))},
		{Bench: "Step", Arm: "null", Unit: "sec/op", Kind: report.NullCheck, Verdict: aa},
	}
	require.Equal(t, report.CheckNotRun, report.CheckOf(rows))
	var b bytes.Buffer
	require.NoError(t, WriteRows(&b, rows, names))
	out := strings.Join(strings.Fields(b.String()), " ")
	assert.Contains(t, out, "A/A check did not run: null, a second instance of old, has no interval yet (null sec/op: 4 used of ")
	assert.Contains(t, out, "the verdicts above are not calibrated by it; the rounds ended first: raise -rounds.")
	assert.NotContains(t, out, "is not found to differ")
}

func TestSliceLineSaysWhatWasChosenAndWhy(t *testing.T) {
	f := "CompareConfig.Slice"
	for _, tc := range []struct {
		s    levels.Slicing
		want string
	}{
		{levels.ChooseSlice(0, 2*time.Millisecond, false, 5, 300, 5),
			"rounds sliced: the arms take turns of 30 recorded steps, 60ms of gaps (CompareConfig.Slice unset: at a gap of 2ms, 1ms or more, a block spans the host's weather, which turns share; CompareConfig.Slice = decodegap.SliceWhole runs whole blocks)."},
		{levels.ChooseSlice(12, 2*time.Millisecond, false, 5, 300, 5), "rounds sliced: the arms take turns of 12 recorded steps (CompareConfig.Slice = 12)."},
		{levels.ChooseSlice(-1, 2*time.Millisecond, false, 5, 300, 5), "rounds whole: each arm's block of 300 steps runs on its own (CompareConfig.Slice = -1)."},
		// A turn longer than the block: the regression said "turns of
		// 1073741824 recorded steps" of 200-step blocks.
		{levels.ChooseSlice(1<<30, 2*time.Millisecond, false, 5, 200, 4), "rounds sliced in one turn an arm: CompareConfig.Slice = 1073741824 is at least a block's 200 steps, so each arm runs its whole block in one turn of 200 recorded steps, the arms opened side by side; set CompareConfig.Slice below 200 for turns, or to decodegap.SliceWhole for each block on its own. In a turn, cpu-sec/op"},
		{levels.ChooseSlice(0, 100*time.Microsecond, false, 5, 4000, 63), "rounds whole: each arm's block of 4000 steps runs on its own (CompareConfig.Slice unset: the gap 100µs is below 1ms, where turns were not shown to help; set CompareConfig.Slice to slice)."},
		{levels.ChooseSlice(0, 2*time.Millisecond, true, 5, 300, 5), "(CompareConfig.Slice unset: an open loop keeps its arrival schedule)."},
		{levels.ChooseSlice(0, 2*time.Millisecond, false, 1, 300, 5), "rounds whole: one arm, nothing to take turns with (CompareConfig.Slice unset)."},
		{levels.ChooseSlice(0, 2*time.Millisecond, false, 3, 50, 1), "rounds whole: a block of 50 steps holds fewer than two turns of 60ms of gaps at 2ms (CompareConfig.Slice unset; raise -benchtime to slice)."},
	} {
		l := SliceLine(tc.s, f)
		assert.Contains(t, strings.Join(strings.Fields(l), " "), tc.want)
		for _, line := range strings.Split(strings.TrimSuffix(l, "\n"), "\n") {
			assert.LessOrEqual(t, len([]rune(line)), Width, "wrapped")
		}
	}
	assert.Empty(t, SliceLine(levels.Slicing{}, f))
	sliced := strings.Join(strings.Fields(SliceLine(levels.ChooseSlice(0, 2*time.Millisecond, false, 5, 300, 5), f)), " ")
	assert.Contains(t, sliced, "In a turn, cpu-sec/op leaves out the threads the other arms' opens started, but counts the goroutines another arm's open leaves running", "what a turn's CPU figure holds")
	assert.NotContains(t, strings.Join(strings.Fields(SliceLine(levels.ChooseSlice(-1, 2*time.Millisecond, false, 5, 300, 5), f)), " "), "cpu-sec/op", "whole blocks: nothing to say")
}
