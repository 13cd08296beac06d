package nullband

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func threeArms() []Arm {
	return []Arm{{Name: "old", Args: []string{"x"}}, {Name: "new", Args: []string{"y"}}, {Name: "null", Args: []string{"x"}}}
}

func TestPlanIsSeededPermutations(t *testing.T) {
	p, err := NewPlan(threeArms(), 3000, 9)
	require.NoError(t, err)
	assert.Equal(t, 9000, p.Runs())
	again, err := NewPlan(threeArms(), 3000, 9)
	require.NoError(t, err)
	assert.Equal(t, p.Order, again.Order, "same seed, same plan")
	other, err := NewPlan(threeArms(), 3000, 10)
	require.NoError(t, err)
	assert.NotEqual(t, p.Order, other.Order, "another seed, another plan")

	var pos [3][3]int // pos[arm][place]
	distinct := map[string]bool{}
	for i, o := range p.Order {
		s := slices.Clone(o)
		slices.Sort(s)
		require.Equal(t, []int{0, 1, 2}, s, "round %d is a permutation", i+1)
		for place, a := range o {
			pos[a][place]++
		}
		distinct[p.Arms[o[0]].Name+p.Arms[o[1]].Name+p.Arms[o[2]].Name] = true
		if i > 0 {
			prev := p.Order[i-1]
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

func TestPlanString(t *testing.T) {
	p, err := NewPlan(threeArms(), 2, 1)
	require.NoError(t, err)
	want := ""
	for i, o := range p.Order {
		want += "round " + string(rune('1'+i)) + ":"
		for _, a := range o {
			want += " " + p.Arms[a].Name
		}
		want += "\n"
	}
	assert.Equal(t, want, p.String())
	assert.Contains(t, p.String(), "round 2: ")
}

func TestPlanSingleArm(t *testing.T) {
	p, err := NewPlan([]Arm{{Name: "a", Args: []string{"x"}}}, 3, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0}, {0}, {0}}, p.Order)
}

func TestPlanErrors(t *testing.T) {
	_, err := NewPlan(nil, 3, 1)
	assert.EqualError(t, err, "nullband: NewPlan needs at least one arm")
	_, err = NewPlan(threeArms(), 0, 1)
	assert.EqualError(t, err, "nullband: NewPlan needs at least 1 round, got 0")
	_, err = NewPlan([]Arm{{Name: "a b", Args: []string{"x"}}}, 1, 1)
	assert.EqualError(t, err, `nullband: arm 1 has name "a b": a name must be non-empty and contain no white space (it becomes the benchfmt value arm: NAME)`)
	_, err = NewPlan([]Arm{{Name: "a", Args: []string{"x"}}, {Name: "a", Args: []string{"y"}}}, 1, 1)
	assert.EqualError(t, err, `nullband: two arms are named "a": give each arm its own name`)
	_, err = NewPlan([]Arm{{Name: "a"}}, 1, 1)
	assert.EqualError(t, err, `nullband: arm "a" has no command: Arm.Args[0] must name the program to run`)
}
