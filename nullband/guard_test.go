package nullband

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 33: B does 10% more work in some of its rounds, and the screen
// marks exactly those (their blocks met "contention"). The marked rounds'
// spread, all three arms', showed B's difference, so they were set aside
// and the rest said "equivalent ±2%". With a null arm the marks set no
// round aside: B is slower.
func TestMarkedSlowRoundsStay(t *testing.T) {
	s := synth(33, 20, 0.10, 0.005, 1.0)
	s.Contended = make([]bool, 20)
	for _, i := range []int{1, 4, 7, 10, 13, 16} {
		s.Candidate[i] *= 1.10
		s.Contended[i] = true
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Slower, v.Outcome, "%v", v.Reasons)
	assert.Equal(t, 20, v.Used)
	assert.Zero(t, v.Quarantined)
	seq, err := Judge(s, Options{MaxRounds: 20})
	require.NoError(t, err)
	assert.NotEqual(t, Equivalent, seq.Outcome, "%v", seq.Reasons)
}

// Equivalence needs EqFloor used rounds: an A/A run of 12 quiet rounds
// whose interval lies well inside ±2% is undecided, says why and how
// many rounds it needs; with the floor lowered it is equivalent.
func TestEquivalenceFloor(t *testing.T) {
	assert.Equal(t, 14, EqFloor(0.95))
	assert.Equal(t, 21, EqFloor(0.99))
	assert.Zero(t, EqFloor(1))
	s := synth(7, 12, 0.10, 0.003, 1.0)
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, Undecided, v.Outcome)
	assert.Equal(t, []Reason{BelowEqFloor}, v.Reasons)
	assert.Equal(t, 14, v.EqFloor)
	assert.Greater(t, v.EqLo, 1/1.02)
	assert.Less(t, v.EqHi, 1.02)
	assert.GreaterOrEqual(t, v.RoundsToDecide, 14)
	low, err := Judge(s, Options{MinEqRounds: 12})
	require.NoError(t, err)
	assert.Equal(t, Equivalent, low.Outcome, "%v", low.Reasons)
	assert.Equal(t, 12, low.EqFloor)
	seq, err := Judge(s, Options{MaxRounds: 20})
	require.NoError(t, err)
	assert.Equal(t, Undecided, seq.Outcome)
	assert.Equal(t, []Reason{BelowEqFloor, Continuing}, seq.Reasons, "sequential: more rounds may decide")
	_, err = Judge(s, Options{MinEqRounds: -1})
	assert.Error(t, err)
}

// Without a null arm the screen reads |ln B − ln A|: B 10% slower in the 5
// marked rounds of 20 sets them aside, and the other 15 say "equivalent".
// Judged on all 20 they do not, so the call is withdrawn.
func TestQuarantineChangesCallWithoutNullArm(t *testing.T) {
	s := synth(34, 20, 0.10, 0.003, 1.0)
	s.Null = nil
	s.Contended = make([]bool, 20)
	for _, i := range []int{2, 6, 10, 14, 18} {
		s.Candidate[i] *= 1.10
		s.Contended[i] = true
	}
	v, err := Judge(s, Options{})
	require.NoError(t, err)
	for _, i := range []int{2, 6, 10, 14, 18} {
		assert.Equal(t, Contended, v.Rounds[i].Cause)
	}
	assert.Equal(t, Undecided, v.Outcome, "%v", v.Reasons)
	assert.True(t, v.Has(QuarantineChangesCall), "%v", v.Reasons)
	assert.True(t, v.UnscreenedChecked)
	assert.NotEqual(t, Equivalent, v.Unscreened)
	all := s
	all.Contended = nil
	u, err := Judge(all, Options{Extreme: math.Inf(1)})
	require.NoError(t, err)
	assert.Equal(t, u.Outcome, v.Unscreened, "the check is the judgement of every complete round")
}
