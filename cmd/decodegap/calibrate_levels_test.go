package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/levels"
)

// levelRuns returns calibrate's runs of a benchmark whose blocks differ by
// a lognormal σ of between (and share a round's σ of 0.02), 600 steps of
// 170 µs with a 2 ms gap, each run taking 0.2 s beyond its steps.
func levelRuns(rounds int, between float64) []interleave.Run {
	r := rand.New(rand.NewPCG(3, 4))
	var runs []interleave.Run
	for round := 1; round <= rounds; round++ {
		w := 0.02 * r.NormFloat64()
		for pos, arm := range []string{"a", "a2", "null"} {
			p50 := 170e-6 * math.Exp(w+between*r.NormFloat64())
			res := &benchfmt.Result{Name: benchfmt.Name("VAD"), Iters: 600, Values: []benchfmt.Value{
				{Value: p50 * 1.05, Unit: "sec/op"}, {Value: p50, Unit: "p50-sec/op"}, {Value: p50 * 1.6, Unit: "p90-sec/op"}, {Value: 2e-3, Unit: "gap-sec/op"},
			}}
			wall := time.Duration((0.2 + 600*(p50*1.05+2e-3)) * float64(time.Second))
			runs = append(runs, interleave.Run{Round: round, Pos: pos + 1, Arm: arm, Wall: wall, Results: []*benchfmt.Result{res}})
		}
	}
	return runs
}

func testLevelFlags(mde float64, budget time.Duration, planOut string) *levelFlags {
	arms := 5
	return &levelFlags{mde: &mde, budget: &budget, arms: &arms, planOut: &planOut}
}

func TestLevelsFindTheNoiseBetweenBlocksAndShortenThem(t *testing.T) {
	rows := levelRowsOf(levelRuns(20, 0.15), testLevelFlags(0.10, 6*time.Minute, ""))
	require.Len(t, rows, 1)
	r := rows[0]
	require.NoError(t, r.err)
	_, between, _ := r.comp.Shares()
	assert.Greater(t, between, 0.6)
	assert.InDelta(t, 0.2, r.cost.Block, 0.01)
	assert.Equal(t, 600, r.steps)
	require.True(t, r.reached)
	assert.Less(t, r.plan.Steps, 600, "%v", r.plan)
	require.True(t, r.todayOK)
	assert.Less(t, r.cost.Seconds(r.plan), r.cost.Seconds(r.today))
	var out bytes.Buffer
	writeLevels(&out, rows)
	s := out.String()
	assert.Contains(t, s, "noise by level of the median step")
	assert.Contains(t, s, "VAD: plan for a 10% MDE on p50 (-mde 0.1, 5 arms a round): ")
	assert.Contains(t, s, "at this run's 600 steps a block: ")
	assert.Contains(t, s, "within -budget")
}

func TestLevelsSayWhenNoPlanReaches(t *testing.T) {
	rows := levelRowsOf(levelRuns(10, 0.5), testLevelFlags(0.01, 0, ""))
	var out bytes.Buffer
	writeLevels(&out, rows)
	assert.Contains(t, out.String(), "none within 200 rounds; the closest, ")
	assert.NotContains(t, out.String(), "budget")
}

func TestLevelsNeedTwoRounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan")
	lf := testLevelFlags(0.10, 0, path)
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, reportLevels(levelRuns(1, 0.1), nil, lf, &out, &errOut))
	assert.Contains(t, out.String(), "unknown: levels: need at least two rounds")
	assert.Contains(t, errOut.String(), "no benchmark has a plan (VAD: levels: need at least two rounds with two or more blocks each)")
}

func TestPlanOutIsReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, reportLevels(levelRuns(20, 0.15), nil, testLevelFlags(0.10, 0, path), &out, &errOut), errOut.String())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	p, err := levels.ReadPlan(f)
	require.NoError(t, err)
	rows := levelRowsOf(levelRuns(20, 0.15), testLevelFlags(0.10, 0, ""))
	assert.Equal(t, rows[0].plan, p)
}

func TestPlanOutRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	path := filepath.Join(dir, "plan")
	require.NoError(t, os.Symlink(target, path))
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, reportLevels(levelRuns(20, 0.15), nil, testLevelFlags(0.10, 0, path), &out, &errOut))
	assert.Equal(t, "decodegap calibrate: -plan-out "+path+": "+path+" is a symlink, not a regular file: refusing to replace it (remove it, or give another path)\n", errOut.String())
	b, _ := os.ReadFile(target)
	assert.Equal(t, "keep", string(b))
}

// The MDE table calls p50's MDE unknown: the plan says so and claims
// none, and -plan-out writes nothing.
func TestLevelsPlanNeverClaimsAnUnknownMDE(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan")
	inf := math.Inf(1)
	table := []calibration{
		{benchmark: "VAD", unit: "sec/op", used: 2, mde: []float64{0.2, 0.1, 0.05}},
		{benchmark: "VAD", unit: "p50-sec/op", used: 2, mde: []float64{inf, inf, inf}},
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, reportLevels(levelRuns(20, 0.15), table, testLevelFlags(0.10, 6*time.Minute, path), &out, &errOut))
	assert.Contains(t, out.String(), "VAD        unknown: the MDE table calls p50-sec/op's MDE unknown (2 rounds used): no plan")
	assert.NotContains(t, out.String(), "plan for a")
	assert.NotContains(t, out.String(), "within -budget")
	assert.Equal(t, "decodegap calibrate: -plan-out "+path+": no benchmark has a plan (VAD: the MDE table calls p50-sec/op's MDE unknown (2 rounds used): no plan)\n", errOut.String())
	assert.NoFileExists(t, path)

	// A known p50 MDE: the plan as before.
	table[1].mde = []float64{0.2, 0.1, 0.05}
	out.Reset()
	errOut.Reset()
	assert.Equal(t, 0, reportLevels(levelRuns(20, 0.15), table, testLevelFlags(0.10, 0, path), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "VAD: plan for a 10% MDE on p50")
}

// Blocks with no noise at all (a dead timer) give no plan, not an MDE
// of 0.
func TestLevelsNoNoiseIsUnknown(t *testing.T) {
	runs := levelRuns(20, 0)
	for _, r := range runs {
		for _, res := range r.Results {
			for i := range res.Values {
				if res.Values[i].Unit == "p50-sec/op" || res.Values[i].Unit == "p90-sec/op" {
					res.Values[i].Value = 170e-6
				}
			}
		}
	}
	var out, errOut bytes.Buffer
	reportLevels(runs, nil, testLevelFlags(0.10, 0, ""), &out, &errOut)
	assert.Contains(t, out.String(), "VAD        unknown: no noise measured: every block's p50 is the same and equals its p90 (a dead timer?)")
	assert.NotContains(t, out.String(), "plan for a")
}

func TestCalibrateLevelFlagsChecked(t *testing.T) {
	for args, want := range map[string]string{
		"-mde 0":      "-mde 0: want an effect above 0, a fraction (0.10 for 10%)",
		"-mde NaN":    "-mde NaN: want an effect above 0",
		"-mde -0.1":   "-mde -0.1: want an effect above 0",
		"-mde +Inf":   "-mde +Inf: want an effect above 0",
		"-budget -1m": "-budget -1m0s: want a duration above 0 (e.g. 6m), or 0 for no budget plan",
		"-arms 1":     "-arms 1: want 2 or more arms a round, the null arm included",
	} {
		var out, errOut bytes.Buffer
		code := runCalibrate(append(strings.Fields(args), "./nowhere"), &out, &errOut)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errOut.String(), "decodegap calibrate: "+want, args)
	}
}

// Blocks alike within each round read the between-block part as 0: from
// 4 rounds that is not an estimate (levels.ZeroFromFew), so the plan
// promises no MDE, says why with the flag that gets more rounds, and
// -plan-out writes nothing; from 20 rounds the 0 is an estimate and the
// plan is made. The regression promised MDEs of 2.6% and 0.1% on a part
// read as 0 from 4–6 rounds.
func TestLevelsRefuseAPlanOnAPartNotEstimable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan")
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, reportLevels(levelRuns(4, 0), nil, testLevelFlags(0.02, 6*time.Minute, path), &out, &errOut))
	s := out.String()
	assert.Regexp(t, `\nVAD +±1\.9% \(\d+%\) at 600 steps +not estimable \(0 from 4 rounds\) +±\d\.\d% \(\d+%\) `, s)
	want := "the between-block part read 0 from 4 rounds (8 degrees of freedom, 20 needed), too few to tell it from a part as large as the within-block one: not estimable, so no MDE is promised from it; run calibrate with -rounds 10 or more"
	assert.Contains(t, s, "VAD: no plan for a 2.0% MDE on p50 (-mde 0.02): "+want+"\n")
	assert.NotContains(t, s, "plan for a 2.0% MDE on p50 (-mde 0.02, ")
	assert.NotContains(t, s, "within -budget")
	assert.Equal(t, "decodegap calibrate: -plan-out "+path+": no benchmark has a plan (VAD: "+want+")\n", errOut.String())
	assert.NoFileExists(t, path)

	out.Reset()
	errOut.Reset()
	assert.Equal(t, 0, reportLevels(levelRuns(20, 0), nil, testLevelFlags(0.02, 0, path), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "VAD: plan for a 2.0% MDE on p50 (-mde 0.02, 5 arms a round): ")
	assert.NotContains(t, out.String(), "not estimable")
	assert.FileExists(t, path)
}
