package hostmon

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnapshotIntoAllocs: once a Snapshot has been filled, refilling it
// from the live host allocates nothing (decodegap takes one per window
// boundary inside the timed loop).
func TestSnapshotIntoAllocs(t *testing.T) {
	fs, err := DefaultFS()
	require.NoError(t, err)
	s, err := NewSampler(fs, nil, nil)
	require.NoError(t, err)
	defer s.Close()
	var a, b Snapshot
	s.SnapshotInto(&a)
	s.SnapshotInto(&b)
	allocs := testing.AllocsPerRun(200, func() {
		s.SnapshotInto(&a)
		a, b = b, a
	})
	assert.Zero(t, allocs, "allocations per SnapshotInto")
	// What this host has was read (the span is too short for /proc/stat's
	// clock ticks to move, so the fields are checked, not Between).
	assert.Empty(t, b.statErr)
	assert.NotEmpty(t, b.cpu)
	assert.Empty(t, b.ownErr)
	assert.Empty(t, b.loadErr)
	assert.Empty(t, b.tasksErr)
	assert.NotEmpty(t, b.tasks)
}

// TestSnapshotIntoReuse: a Snapshot refilled from another tree holds what a
// fresh one would, with nothing left over from the first tree.
func TestSnapshotIntoReuse(t *testing.T) {
	s, err := NewSampler(fixtureFS(t, "epyc32"), nil, nil)
	require.NoError(t, err)
	defer s.Close()
	var reused Snapshot
	s.SnapshotInto(&reused)
	after, err := NewFS("testdata/vm2/proc", "testdata/vm2/sys")
	require.NoError(t, err)
	s2, err := NewSampler(after, nil, nil)
	require.NoError(t, err)
	defer s2.Close()
	fresh := s2.Snapshot()
	s2.SnapshotInto(&reused)
	reused.time = fresh.time
	assert.Equal(t, fresh.statErr, reused.statErr)
	assert.Equal(t, fresh.running, reused.running)
	for c := range reused.cpu {
		if c < len(fresh.cpu) {
			assert.Equal(t, fresh.cpu[c], reused.cpu[c], "CPU %d", c)
		} else {
			assert.False(t, reused.cpu[c].ok, "CPU %d of the first tree left over", c)
		}
	}
	assert.Equal(t, fresh.runqErr, reused.runqErr)
	assert.Equal(t, fresh.psiSomeMicroseconds, reused.psiSomeMicroseconds)
	assert.Equal(t, fresh.load1, reused.load1)
	assert.Equal(t, fresh.ownSeconds, reused.ownSeconds)
	assert.Equal(t, fresh.tasks, reused.tasks)
}

func TestParseLoad1(t *testing.T) {
	for _, in := range []string{"1.47 0.74 0.33 1/95 15042\n", "0.00 0 0", "40.00", "123.45"} {
		v, ok := parseLoad1([]byte(in))
		require.True(t, ok, in)
		var want float64
		_, err := fmtSscan(in, &want)
		require.NoError(t, err)
		assert.Equal(t, want, v, in)
	}
	for _, in := range []string{"", "x", "1.2.3", "-1"} {
		_, ok := parseLoad1([]byte(in))
		assert.False(t, ok, in)
	}
}

func TestParseOwnTicks(t *testing.T) {
	ticks, ok := parseOwnTicks([]byte("4242 (bench) test) S 1 4242 4242 0 -1 4194304 2899 0 0 0 500 100 0 0 20 0 2 0\n"))
	assert.True(t, ok)
	assert.Equal(t, uint64(600), ticks, "utime+stime after the last ')'")
	_, ok = parseOwnTicks([]byte("4242 (bench) S 1 2"))
	assert.False(t, ok)
}

func TestParseSchedstat(t *testing.T) {
	runq := parseSchedstat([]byte("version 15\ntimestamp 1\ncpu0 0 0 0 0 0 0 5 7 9\ndomain0 1 2\ncpu2 0 0 0 0 0 0 5 8 9\ncpu3 1 2\n"), nil)
	assert.Equal(t, []runqCPU{{true, 7}, {}, {true, 8}}, runq, "cpu3's short line is skipped")
}

// BenchmarkSnapshotInto is Snapshot's cost when the Snapshot is reused, as
// decodegap does at window boundaries.
func BenchmarkSnapshotInto(b *testing.B) {
	fs, err := DefaultFS()
	require.NoError(b, err)
	s, err := NewSampler(fs, nil, nil)
	require.NoError(b, err)
	defer s.Close()
	var sn Snapshot
	b.ReportAllocs()
	for b.Loop() {
		s.SnapshotInto(&sn)
	}
}

// fmtSscan parses a float the way procfs does.
func fmtSscan(in string, v *float64) (int, error) { return fmt.Sscan(in, v) }
