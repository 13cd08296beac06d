package hostmon

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]CPUSet{
		"0-3,8\n":     {0, 1, 2, 3, 8},
		"":            nil,
		"\n":          nil,
		"5":           {5},
		"3,1,2,1":     {1, 2, 3},
		"0-1,16-17\n": {0, 1, 16, 17},
	} {
		got, err := ParseCPUList(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-", "1,,2", "99999999"} {
		_, err := ParseCPUList(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestCPUSetString(t *testing.T) {
	assert.Equal(t, "0-3,8,10,11", NewCPUSet(0, 1, 2, 3, 8, 10, 11).String())
	assert.Equal(t, "", CPUSet(nil).String())
	assert.Equal(t, "CPU 11", NewCPUSet(11).Words())
	assert.Equal(t, "CPUs 0,2", NewCPUSet(0, 2).Words())
	a, b := NewCPUSet(0, 1, 2), NewCPUSet(2, 3)
	assert.Equal(t, NewCPUSet(0, 1, 2, 3), a.Union(b))
	assert.Equal(t, NewCPUSet(2), a.Intersect(b))
	assert.Equal(t, NewCPUSet(0, 1), a.Minus(b))
	assert.True(t, a.Equal(NewCPUSet(2, 1, 0)))
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8", "", "0", "1-1", "0-31\n", "3-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 {
			return // keep ranges small enough to enumerate
		}
		set, err := ParseCPUList(s)
		if err != nil {
			return
		}
		// The printed form parses back to the same set.
		again, err := ParseCPUList(set.String())
		if err != nil || !again.Equal(set) {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, set, set.String(), again, err)
		}
	})
}
