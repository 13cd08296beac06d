package decodegap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/hostmon"
)

// freeKit returns the pooled kit of this process's default measured set
// (every allowed CPU, no siblings), or nil.
func freeKit(t *testing.T) *samplerKit {
	t.Helper()
	_, topo, err := hostInfo()
	require.NoError(t, err)
	samplers.Lock()
	defer samplers.Unlock()
	return samplers.free[samplerKey(topo.Allowed, nil)]
}

// TestRunReusesSnapshotSlots: the snapshot slots one Run prepared go back
// to the pool with its sampler, all maxSnapshots of them, and the next Run
// on the same set takes them rather than make new ones.
func TestRunReusesSnapshotSlots(t *testing.T) {
	if _, _, err := hostInfo(); err != nil {
		t.Skipf("no host to sample: %v", err)
	}
	run := func() {
		benchmarkN(t, "200x", func(b *testing.B) { Run(b, RunConfig{}, countingOpener()) })
	}
	firstSlots := func(kit *samplerKit) map[*snapshot]bool {
		m := map[*snapshot]bool{}
		for _, l := range kit.lists {
			require.Equal(t, maxSnapshots, len(l))
			for k := range l {
				require.NotNil(t, l[k].host, "slot %d prepared", k)
			}
			m[&l[0]] = true
		}
		return m
	}
	run()
	kit := freeKit(t)
	require.NotNil(t, kit)
	// Earlier tests in this process may have left more than one list (a
	// sessions run lends two at once).
	require.NotEmpty(t, kit.lists, "the last call's list is back")
	before := firstSlots(kit)
	run()
	again := freeKit(t)
	assert.Same(t, kit, again, "the same sampler")
	assert.Equal(t, before, firstSlots(again), "the same lists, no new one")
}

// TestPrepareLendsEachListOnce: two lists prepared from one kit at the same
// time (the sessions' solo block and the run) are distinct, sized as asked
// for the run, and both go back to the kit; a reader without a kit makes
// only what it asked for.
func TestPrepareLendsEachListOnce(t *testing.T) {
	fs, topo, err := hostInfo()
	if err != nil {
		t.Skipf("no host to sample: %v", err)
	}
	s, err := hostmon.NewSamplerOf(fs, topo, topo.Allowed, nil)
	require.NoError(t, err)
	defer s.Close()
	kit := &samplerKit{sampler: s}
	cr := &counterReader{samples: newMetricSamples(), sampler: s, kit: kit, threads: 3,
		user: []Counter{{Name: "n", Read: func() (float64, error) { return 1, nil }}}}
	a := cr.prepare(5)
	b := cr.prepare(200)
	assert.Equal(t, 5, cap(a))
	assert.Equal(t, maxSnapshots, cap(b))
	a = cr.next(a)
	b = cr.next(b)
	assert.NotSame(t, &a[0], &b[0])
	assert.NotSame(t, a[0].host, b[0].host)
	assert.Len(t, a[0].userVals, 1)
	assert.GreaterOrEqual(t, cap(a[0].host.Tasks()), 3+8, "room for the threads")
	assert.Empty(t, kit.lists, "both lent")
	cr.recycle()
	assert.Len(t, kit.lists, 2)
	assert.Empty(t, cr.lent)

	plain := &counterReader{samples: newMetricSamples(), sampler: s}
	c := plain.prepare(5)
	assert.Equal(t, 5, cap(c))
	plain.recycle()
	assert.Len(t, kit.lists, 2, "no kit, nothing given back")
}
