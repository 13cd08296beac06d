package interleave

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/nullband"
)

func threeArms() []Arm {
	return []Arm{{Name: "old", Args: []string{"x"}}, {Name: "new", Args: []string{"y"}}, {Name: "null", Args: []string{"x"}}}
}

func orders(p *Plan) [][]int {
	var out [][]int
	for _, o := range p.Orders() {
		out = append(out, o)
	}
	return out
}

func TestPlanIsSeededPermutations(t *testing.T) {
	p, err := NewPlan(threeArms(), 3000, 9)
	require.NoError(t, err)
	assert.Equal(t, 9000, p.Runs())
	got := orders(p)
	require.Len(t, got, 3000)
	assert.Equal(t, nullband.Orders(3, 3000, 9), got, "the same orders as nullband.Orders")
	again, err := NewPlan(threeArms(), 3000, 9)
	require.NoError(t, err)
	assert.Equal(t, got, orders(again), "same seed, same plan")
	other, err := NewPlan(threeArms(), 3000, 10)
	require.NoError(t, err)
	assert.NotEqual(t, got, orders(other), "another seed, another plan")

	var pos [3][3]int // pos[arm][place]
	distinct := map[string]bool{}
	for i, o := range got {
		s := slices.Clone(o)
		slices.Sort(s)
		require.Equal(t, []int{0, 1, 2}, s, "round %d is a permutation", i+1)
		for place, a := range o {
			pos[a][place]++
		}
		distinct[p.OrderString(o)] = true
		if i > 0 {
			prev := got[i-1]
			assert.NotEqual(t, prev[len(prev)-1], o[0], "round %d starts with the arm that ended round %d", i+1, i)
		}
	}
	assert.Len(t, distinct, 6, "all 6 orders occur")
	// Every arm takes every place about a third of the time; the
	// no-repeat rule skews this only slightly (expected 1000 each).
	for a := range 3 {
		for place := range 3 {
			assert.InDelta(t, 1000, pos[a][place], 150, "arm %d place %d", a, place)
		}
	}
}

// A plan of a huge number of rounds costs nothing until its rounds are
// drawn, and a caller may stop drawing at any round.
func TestPlanIsLazy(t *testing.T) {
	p, err := NewPlan(threeArms(), 1<<40, 1)
	require.NoError(t, err)
	n := 0
	for r := range p.Orders() {
		n++
		if r == 5 {
			break
		}
	}
	assert.Equal(t, 5, n)
	allocs := testing.AllocsPerRun(1, func() { _, _ = NewPlan(threeArms(), 1<<40, 1) })
	assert.Less(t, allocs, 10.0)
}

func TestPlanSingleArm(t *testing.T) {
	p, err := NewPlan([]Arm{{Name: "a", Args: []string{"x"}}}, 3, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0}, {0}, {0}}, orders(p))
	assert.Equal(t, "a", p.OrderString([]int{0}))
}

func TestPlanErrors(t *testing.T) {
	_, err := NewPlan(nil, 3, 1)
	assert.EqualError(t, err, "interleave: NewPlan needs at least one arm")
	_, err = NewPlan(threeArms(), 0, 1)
	assert.EqualError(t, err, "interleave: NewPlan needs at least 1 round, got 0")
	_, err = NewPlan([]Arm{{Name: "a b", Args: []string{"x"}}}, 1, 1)
	assert.EqualError(t, err, `interleave: arm 1 has name "a b": a name must be non-empty and contain no white space (it becomes the benchfmt value arm: NAME)`)
	_, err = NewPlan([]Arm{{Name: "a", Args: []string{"x"}}, {Name: "a", Args: []string{"y"}}}, 1, 1)
	assert.EqualError(t, err, `interleave: two arms are named "a": give each arm its own name`)
	_, err = NewPlan([]Arm{{Name: "a"}}, 1, 1)
	assert.EqualError(t, err, `interleave: arm "a" has no command: Arm.Args[0] must name the program to run`)
}
