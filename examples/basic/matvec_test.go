package basic

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap"
)

// BenchmarkMatVec runs the same step at three gaps: none (what a plain b.N
// loop measures), 100 µs (a busy decoder) and 2 ms (real-time pace), so the
// cost of waking the parked pool shows as the gap grows.
//
//	go test -run '^$' -bench . -benchtime=2000x -count 5 | tee out.txt
//	go tool benchstat -col /gap out.txt
func BenchmarkMatVec(b *testing.B) {
	for _, g := range []time.Duration{0, 100 * time.Microsecond, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("gap=%v", g), func(b *testing.B) {
			m, err := NewMatVec(256, 2)
			require.NoError(b, err)
			defer m.Close()
			decodegap.Run(b, decodegap.RunConfig{Gap: decodegap.Gap{Mean: g}}, decodegap.Func(m.Step))
		})
	}
}

func TestMatVecMatchesSerialProduct(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 7} {
		m, err := NewMatVec(10, workers)
		require.NoError(t, err)
		want := make([]float32, 10)
		for i := range want {
			var s float32
			for j := 0; j < 10; j++ {
				s += m.a[i*10+j] * 1
			}
			want[i] = s + 1
		}
		require.NoError(t, m.Step())
		assert.InDeltaSlice(t, want, m.Output(), 1e-6, "workers=%d", workers)
		m.Close()
	}
}

func TestNewMatVecRejectsBadSizes(t *testing.T) {
	_, err := NewMatVec(0, 2)
	assert.EqualError(t, err, "basic.NewMatVec(n=0, workers=2): want n >= 1 and workers >= 1")
}

func TestStepDoesNotAllocate(t *testing.T) {
	m, err := NewMatVec(64, 2)
	require.NoError(t, err)
	defer m.Close()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Step() }))
}
