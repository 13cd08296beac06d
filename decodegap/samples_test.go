package decodegap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordKeepsEveryIterationUpToTheCap(t *testing.T) {
	r := newRecord(100)
	for i := 0; i < 100; i++ {
		r.add(i, int64(i), int64(2*i))
	}
	require.Len(t, r.lat, 100)
	assert.Equal(t, 1, r.stride)
	assert.Equal(t, int64(99), r.lat[99])
	assert.Equal(t, int64(198), r.gap[99])
	assert.Equal(t, int64(99*100/2), r.sumLat)
}

func TestRecordThinsBeyondTheCapAndStaysBounded(t *testing.T) {
	const n = 3*maxSamples + 5
	r := newRecord(n)
	require.Equal(t, maxSamples, cap(r.lat))
	for i := 0; i < n; i++ {
		r.add(i, int64(i), 1)
	}
	assert.Equal(t, maxSamples, cap(r.lat), "buffers never grow")
	assert.Equal(t, 4, r.stride)
	// A systematic sample, in order: entry k is iteration k*stride.
	for _, k := range []int{0, 1, 1000, len(r.lat) - 1} {
		assert.Equal(t, int64(k*r.stride), r.lat[k])
	}
	assert.Equal(t, (n+r.stride-1)/r.stride, len(r.lat))
	// The sums still cover every iteration.
	assert.Equal(t, int64(n), r.sumGap)
	assert.Equal(t, int64(n)*int64(n-1)/2, r.sumLat)
}

func TestRecordAddDoesNotAllocate(t *testing.T) {
	r := newRecord(1000)
	i := 0
	allocs := testing.AllocsPerRun(500, func() {
		r.add(i, 5, 7)
		i++
	})
	assert.Zero(t, allocs)
}
