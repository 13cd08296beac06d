package radix

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSortAgreesWithSlicesSort on seeded series of the shapes it meets:
// latencies with a long tail, packed keys with their indices, equal
// values, a single byte, negatives (the fallback), and short ones.
func TestSortAgreesWithSlicesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	gen := map[string]func(i int) int64{
		"latency": func(int) int64 {
			if r.IntN(100) == 0 {
				return 1000 + r.Int64N(1<<20) // the tail
			}
			return 1000 + r.Int64N(50)
		},
		"packed":   func(i int) int64 { return r.Int64N(1<<17)<<23 | int64(i) },
		"equal":    func(int) int64 { return 7 },
		"byte":     func(int) int64 { return r.Int64N(256) },
		"wide":     func(int) int64 { return r.Int64N(1 << 62) },
		"negative": func(int) int64 { return r.Int64N(2000) - 1000 },
	}
	for name, g := range gen {
		for _, n := range []int{0, 1, 255, 256, 1000, 100_003} {
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = g(i)
			}
			want := slices.Clone(xs)
			slices.Sort(want)
			Sort(xs, make([]int64, n))
			assert.Equal(t, want, xs, "%s, %d values", name, n)
		}
	}
}

// TestSortShortBuffer: without room in buf the values are still sorted.
func TestSortShortBuffer(t *testing.T) {
	xs := []int64{5, 3, 9, 1}
	for len(xs) < 1000 {
		xs = append(xs, int64(len(xs)*7919%1000))
	}
	want := slices.Sorted(slices.Values(xs))
	Sort(xs, nil)
	assert.Equal(t, want, xs)
}

func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewPCG(16, 2))
	for _, n := range []int{1000, 100_000, 1_000_000} {
		src := make([]int64, n)
		for i := range src {
			src[i] = r.Int64N(1<<17)<<23 | int64(i)
		}
		xs, buf := make([]int64, n), make([]int64, n)
		b.Run("radix/n="+itoa(n), func(b *testing.B) {
			for b.Loop() {
				copy(xs, src)
				Sort(xs, buf)
			}
		})
		b.Run("slices/n="+itoa(n), func(b *testing.B) {
			for b.Loop() {
				copy(xs, src)
				slices.Sort(xs)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 || s == "" {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
