package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

// Eight verdicts over two benchmarks get eight names: the benchmark is in
// the name when there are several, and a remaining clash is numbered.
func TestPlotPathsAreDistinct(t *testing.T) {
	var rows []report.Row
	for _, b := range []string{"A/gap=2ms", "B"} {
		for _, u := range []string{"sec/op", "p50-sec/op"} {
			for _, c := range []string{"on", "off"} {
				rows = append(rows, report.Row{Bench: b, Arm: c, Unit: u})
			}
		}
	}
	paths := plotPaths("out/v.svg", rows)
	seen := map[string]bool{}
	for _, p := range paths {
		assert.False(t, seen[p], "two pictures at %s", p)
		seen[p] = true
	}
	assert.Equal(t, "out/v-A_gap=2ms-on-sec_op.svg", paths[0])
	assert.Equal(t, []string{"v.svg"}, plotPaths("v.svg", rows[:1]))

	clash := []report.Row{{Arm: "a/b", Unit: "x"}, {Arm: "a b", Unit: "x"}}
	assert.Equal(t, []string{"v-a_b-x.svg", "v-a_b-x-2.svg"}, plotPaths("v.svg", clash))
}

func TestVerdictLabel(t *testing.T) {
	assert.Equal(t, "slower", verdictLabel(nullband.Verdict{Outcome: nullband.Slower}))
	assert.Equal(t, "undecided (straddles)", verdictLabel(nullband.Verdict{Reasons: []nullband.Reason{nullband.Straddles}}))
}
