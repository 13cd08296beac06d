package decodegap

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/hostmon"
)

// TestSpinnerOnTheConfinedCPUIsNamedInTheLog runs a benchmark confined to
// CPU 1 in a child process while this process spins on CPU 1: the child's
// screen must see the foreign load on its CPU and say so in its log.
func TestSpinnerOnTheConfinedCPUIsNamedInTheLog(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs CPU 1")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sp, err := hostmon.Spin(ctx, 1, 100)
	require.NoError(t, err)
	defer sp.Wait()
	defer cancel()

	out, err := runChild(t, "confined", "2000x")
	require.NoError(t, err, out)
	assert.Contains(t, out, "host: contended: foreign")
	assert.Contains(t, out, "over the counter span on CPUs 1:")
	assert.Regexp(t, `[\d.]+ foreign-%`, out)
}

func TestBudgetErrorsNameTheField(t *testing.T) {
	out, err := runChild(t, "badbudget", "10x")
	require.Error(t, err)
	assert.Contains(t, out, "decodegap.Run: RunConfig.Budget.CPUs = [4096]:")
	c := RunConfig{Budget: Budget{Cores: -1}}
	assert.EqualError(t, c.settings().validate(10), "RunConfig.Budget.Cores = -1: want >= 0 (0: no confinement)")
}
