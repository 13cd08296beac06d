package decodegap

import (
	"flag"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocReads counts the reads of allocConfigs' user counter: one per
// counter snapshot.
var allocReads int

// allocConfigs are the options that run inside the timed loop: gaps,
// counter snapshots with the host sampler (always on), user counters, the
// null instance and sessions.
func allocConfigs() map[string]RunConfig {
	counters := []Counter{{Name: "reads", Read: func() (float64, error) { allocReads++; return float64(allocReads), nil }}}
	return map[string]RunConfig{
		"hybrid":   {Gap: Gap{Mean: 20 * time.Microsecond}, Counters: counters, Warmup: 100},
		"sleep":    {Gap: Gap{Kind: GapSleep, Mean: 20 * time.Microsecond, Shape: GapExponential}, Counters: counters},
		"busy":     {Gap: Gap{Kind: GapBusy, Mean: 5 * time.Microsecond}, Counters: counters, Window: 4},
		"null":     {Gap: Gap{Kind: GapBusy, Mean: 5 * time.Microsecond}, Null: true, Counters: counters, Window: 4},
		"sessions": {Gap: Gap{Kind: GapBusy, Mean: 5 * time.Microsecond}, Sessions: 2, Warmup: 64, Counters: counters},
	}
}

// countingOpener opens independent steps, each with its own count.
func countingOpener() Opener {
	return func() (Step, func() error, error) {
		var steps int
		return func() error { steps++; return nil }, nil, nil
	}
}

// benchmarkN runs f as a benchmark of exactly n iterations ("2000x").
func benchmarkN(t *testing.T, n string, f func(b *testing.B)) testing.BenchmarkResult {
	t.Helper()
	return benchmarkNT(t, n, f)
}

func benchmarkNT(tb testing.TB, n string, f func(b *testing.B)) testing.BenchmarkResult {
	tb.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	require.NoError(tb, flag.Set("test.benchtime", n))
	defer flag.Set("test.benchtime", old)
	return testing.Benchmark(f)
}

// TestRunLoopAllocs: with every option that runs inside the timed loop, the
// loop allocates nothing, so no GC cycle lands in it. The Go runtime
// allocates on its own account when it starts an OS thread (Run leaves
// idle ones ready, but a process whose earlier tests ended locked threads
// may still need one), so a run that allocated is tried again, up to three
// times: an allocation of the loop's own shows in every try.
func TestRunLoopAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few seconds of benchmark loops")
	}
	for name, cfg := range allocConfigs() {
		t.Run(name, func(t *testing.T) {
			var res testing.BenchmarkResult
			for try := 1; try <= 3; try++ {
				runtime.GC()
				res = benchmarkN(t, "20000x", func(b *testing.B) {
					allocReads = 0
					Run(b, cfg, countingOpener())
				})
				if res.MemAllocs == 0 {
					break
				}
				t.Logf("try %d: %d allocations, %d bytes", try, res.MemAllocs, res.MemBytes)
			}
			assert.Zero(t, res.MemAllocs, "allocations in the timed loop")
			assert.Zero(t, res.MemBytes, "bytes allocated in the timed loop")
			assert.Zero(t, res.Extra["gc/op"], "GC cycles in the counter span")
			t.Logf("%s: %d iterations, %d snapshots", name, res.N, allocReads)
		})
	}
}

// BenchmarkRunAllocs runs Run with each option that runs inside the timed
// loop; B/op and allocs/op are those of the loop (testing measures between
// Run's ResetTimer and StopTimer), and gc-cycles the GC cycles in the
// counter span. Run it with
//
//	go test -run '^$' -bench RunAllocs -benchtime=20000x -benchmem ./decodegap/
func BenchmarkRunAllocs(b *testing.B) {
	cfgs := allocConfigs()
	for _, name := range []string{"hybrid", "sleep", "busy", "null", "sessions"} {
		cfg := cfgs[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			Run(b, cfg, countingOpener())
		})
	}
}

// TestSnapshotsAllocs: taking a thousand counter snapshots, host sampler and
// user counter included, allocates nothing once prepared, and the list
// thins to at most maxSnapshots with the first and the last kept, in order.
func TestSnapshotsAllocs(t *testing.T) {
	h, err := openHost(&settings{})
	require.NoError(t, err)
	defer h.close()
	require.NotNil(t, h.sampler, h.why)
	var reads float64
	cr := &counterReader{samples: newMetricSamples(), sampler: h.sampler,
		user: []Counter{{Name: "reads", Read: func() (float64, error) { reads++; return reads, nil }}}}
	snaps := cr.prepare(maxSnapshots)
	iter := 0
	allocs := testing.AllocsPerRun(1000, func() {
		snaps = cr.next(snaps)
		cr.take(&snaps[len(snaps)-1], iter)
		iter++
	})
	assert.Zero(t, allocs, "allocations per snapshot")
	assert.Equal(t, 1001, cr.taken, "AllocsPerRun runs once more than asked")
	assert.LessOrEqual(t, len(snaps), maxSnapshots)
	assert.Greater(t, len(snaps), maxSnapshots/2)
	assert.Equal(t, 0, snaps[0].iter)
	assert.Equal(t, 1000, snaps[len(snaps)-1].iter)
	for k := 1; k < len(snaps); k++ {
		assert.Less(t, snaps[k-1].iter, snaps[k].iter)
		assert.Equal(t, float64(snaps[k].iter+1), snaps[k].userVals[0], "snapshot %d kept its own values", k)
		assert.NotNil(t, snaps[k].host)
	}
	// The first thinning leaves 65 of 128, each later one 65 of 128 again:
	// 1001 snapshots thin it 1 + (1001−129)/63 = 14 times.
	assert.Equal(t, int64(1)<<14, cr.spacing, "spacing doubles at each thinning")
}
