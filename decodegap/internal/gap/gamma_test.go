package gap

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Gamma gaps have the requested mean and coefficient of variation, are
// reproducible from the seed, and CV 1 matches the exponential's spread.
func TestGammaSequence(t *testing.T) {
	for _, cv := range []float64{0.5, 1, 2, 4} {
		q := NewSequence(Spec{Shape: Gamma, Mean: time.Millisecond, Burstiness: cv, Seed: 7})
		const n = 200000
		var sum, sq float64
		for range n {
			g := float64(q.Next())
			assert.GreaterOrEqual(t, g, 0.0)
			sum += g
			sq += g * g
		}
		mean := sum / n
		sd := math.Sqrt(sq/n - mean*mean)
		// The sample CV of a gamma converges slowly for heavy shapes: a
		// relative tolerance that grows with cv.
		assert.InEpsilon(t, 1e6, mean, 0.02*cv, "cv %v: mean", cv)
		assert.InEpsilon(t, cv, sd/mean, 0.05*cv, "cv %v: coefficient of variation", cv)
	}
	a := NewSequence(Spec{Shape: Gamma, Mean: time.Millisecond, Burstiness: 2, Seed: 3})
	b := NewSequence(Spec{Shape: Gamma, Mean: time.Millisecond, Burstiness: 2, Seed: 3})
	for range 100 {
		assert.Equal(t, a.Next(), b.Next(), "the same seed, the same gaps")
	}
	z := NewSequence(Spec{Shape: Gamma, Mean: time.Millisecond, Seed: 3})
	assert.Equal(t, 1.0, z.cv, "Burstiness 0 means 1: Poisson")
}

func BenchmarkGammaNext(b *testing.B) {
	q := NewSequence(Spec{Shape: Gamma, Mean: time.Millisecond, Burstiness: 2})
	b.ReportAllocs()
	for b.Loop() {
		q.Next()
	}
}
