package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckBench(t *testing.T) {
	assert.NoError(t, checkBench("Step/gap=2ms", ""))
	assert.NoError(t, checkBench(".", "2000x"))
	assert.EqualError(t, checkBench(".", "abc"), `-benchtime "abc": want a duration (100ms) or Nx with N ≥ 1 (2000x)`)
	assert.ErrorContains(t, checkBench("(", ""), `-bench "(": not a regular expression`)
	assert.NoError(t, checkUnits("sec/op,p50-sec/op"))
	assert.ErrorContains(t, checkUnits("sec/op,"), `-unit "sec/op,": an empty unit`)
}

func TestApplyPlanSetsBenchtimeAndRounds(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan")
	require.NoError(t, os.WriteFile(plan, []byte("gapbench-plan v1\nsteps 256\nblocks 2\nrounds 30\n"), 0o644))

	bt, rounds, maxRounds := "", 10, 0
	require.NoError(t, applyPlan(plan, map[string]bool{"plan": true}, false, &bt, &rounds, &maxRounds))
	assert.Equal(t, "256x", bt)
	assert.Equal(t, 60, rounds, "rounds × blocks")
	assert.Equal(t, 0, maxRounds)

	bt, rounds = "", 10
	require.NoError(t, applyPlan(plan, map[string]bool{"plan": true, "until-decided": true}, true, &bt, &rounds, &maxRounds))
	assert.Equal(t, "256x", bt)
	assert.Equal(t, 10, rounds)
	assert.Equal(t, 60, maxRounds, "with -until-decided the plan's rounds are the most")

	assert.NoError(t, applyPlan("", map[string]bool{"rounds": true}, false, &bt, &rounds, &maxRounds), "no -plan: nothing to do")
	for _, flag := range []string{"benchtime", "rounds", "max-rounds"} {
		assert.EqualError(t, applyPlan(plan, map[string]bool{flag: true}, false, &bt, &rounds, &maxRounds),
			"-plan "+plan+" and -"+flag+": the plan sets the steps per block and the rounds; give one or the other")
	}
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("steps 256\n"), 0o644))
	assert.ErrorContains(t, applyPlan(bad, nil, false, &bt, &rounds, &maxRounds), "-plan "+bad+": plan file line 1: ")
	assert.ErrorContains(t, applyPlan(bad, nil, false, &bt, &rounds, &maxRounds), "(write one with decodegap calibrate -plan-out)")
	assert.ErrorContains(t, applyPlan(filepath.Join(dir, "none"), nil, false, &bt, &rounds, &maxRounds), "-plan: open ")
}

func TestInterleaveAndORTTakeAPlan(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan")
	require.NoError(t, os.WriteFile(plan, []byte("gapbench-plan v1\nsteps 256\nblocks 1\nrounds 30\n"), 0o644))
	var out, errb bytes.Buffer
	assert.Equal(t, 2, runInterleave([]string{"-plan", plan, "-rounds", "5", "a=./x.test", "b=./x.test"}, &out, &errb))
	assert.Contains(t, errb.String(), "decodegap interleave: -plan "+plan+" and -rounds: the plan sets the steps per block and the rounds; give one or the other")
	errb.Reset()
	assert.Equal(t, 2, runORT([]string{"-plan", plan, "-benchtime", "100x", "-arm", "intra=1", "model.onnx"}, &out, &errb))
	assert.Contains(t, errb.String(), "-plan "+plan+" and -benchtime: the plan sets the steps per block and the rounds; give one or the other")
}
