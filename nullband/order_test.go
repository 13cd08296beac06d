package nullband

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrdersArePermutationsWithNoRepeatAcrossRounds(t *testing.T) {
	o := Orders(3, 200, 7)
	require.Len(t, o, 200)
	firsts := map[int]int{}
	for i, perm := range o {
		assert.ElementsMatch(t, []int{0, 1, 2}, perm)
		if i > 0 {
			assert.NotEqual(t, o[i-1][2], perm[0], "round %d starts with the arm that ended round %d", i+1, i)
		}
		firsts[perm[0]]++
	}
	// Randomized: every arm leads some rounds.
	assert.Len(t, firsts, 3)
	assert.Equal(t, o, Orders(3, 200, 7), "same seed, same orders")
	assert.NotEqual(t, o, Orders(3, 200, 8))
	assert.Equal(t, [][]int{{0}, {0}}, Orders(1, 2, 1))
}

func TestNewOrderDrawsOrdersOneRoundAtATime(t *testing.T) {
	o := NewOrder(4, 11)
	for i, want := range Orders(4, 50, 11) {
		assert.Equal(t, want, o.Next(), "round %d", i+1)
	}
}
