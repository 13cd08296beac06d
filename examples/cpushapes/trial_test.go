package cpushapes

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap"
)

var (
	trialShape = flag.String("shape", "inline", "BenchmarkTrial's shape (cpushapes.TrialShapes)")
	trialW     = flag.Float64("w", 1, "BenchmarkTrial's work of arm a, in units of about 100 µs")
	trialBWork = flag.Float64("b-work", 1.1, "BenchmarkTrial's work of arm b over arm a's")
	trialGap   = flag.Duration("gap", 500*time.Microsecond, "BenchmarkTrial's hybrid gap between steps")
)

// BenchmarkTrial is one trial of scripts/cpu-trials.sh: decodegap.Compare
// of arm b against arm a of -shape, with the null arm, at -gap:
//
//	go test -run '^$' -bench '^BenchmarkTrial$' -benchtime 300x -count 20 ./examples/cpushapes -args -shape fanout2
//
// With GAPBENCH_JSON=DIR the verdicts are written to DIR as JSON
// (docs/guide/json.md); cmd/cputrials reads the cpu-sec/op row.
func BenchmarkTrial(b *testing.B) {
	a, bb, err := TrialArms(*trialShape, *trialW, *trialBWork)
	if err != nil {
		b.Fatal(err)
	}
	decodegap.Compare(b, decodegap.CompareConfig{Gap: decodegap.Gap{Mean: *trialGap}}, a, bb)
}

func TestTrialArms(t *testing.T) {
	for _, s := range TrialShapes {
		a, b, err := TrialArms(s, 0.01, 1.1)
		require.NoError(t, err, s)
		assert.Equal(t, "a", a.Name)
		assert.Equal(t, "b", b.Name)
		for _, arm := range []decodegap.Arm{a, b} {
			step, closeFn, err := arm.Open()
			require.NoError(t, err, s)
			require.NoError(t, step(), s)
			if closeFn != nil {
				require.NoError(t, closeFn(), s)
			}
		}
	}
	_, _, err := TrialArms("zstd", 1, 1.1)
	assert.ErrorContains(t, err, `unknown trial shape "zstd"`)
}
