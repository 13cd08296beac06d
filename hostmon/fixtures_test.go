package hostmon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A full tree from a kernel without PSI: PSI is unavailable and says why;
// everything else is read. The cgroup layout is hybrid: the cpu controller
// on v1 (cpu,cpuacct) beside an empty v2 unified hierarchy; throttling is
// read from the v1 group.
func TestFixtureHybridWithoutPSI(t *testing.T) {
	topo := fixtureTopology(t, "hybrid4")
	assert.Equal(t, NewCPUSet(0, 1, 2, 3), topo.Online)
	fs := fixtureFS(t, "hybrid4")
	path, why := fs.cgroupCPUStatPath(4242)
	require.Empty(t, why)
	assert.Equal(t, filepath.Join("testdata", "hybrid4", "sys", "fs", "cgroup", "cpu,cpuacct", "bench", "cpu.stat"), path)

	sp := fixtureSpan(t, "hybrid4", "busy", NewCPUSet(0, 1), nil, time.Second)
	assert.InDelta(t, 50, sp.BusyPct.Value, 1e-9)
	assert.InDelta(t, 50, sp.OwnPct.Value, 1e-9)
	assert.InDelta(t, 0, sp.ForeignBusyPct.Value, 1e-9)
	assert.True(t, sp.Load1.Available())
	assert.True(t, sp.RunQueueWaitPct.Available())
	assert.False(t, sp.PSISomePct.Available(), "no /proc/pressure: unavailable, not 0")
	assert.Contains(t, sp.PSISomePct.Reason, "pressure")
	assert.Equal(t, Figure{Value: 4, Unit: "n"}, sp.ThrottledPeriods)
	assert.InDelta(t, 20, sp.ThrottledPct.Value, 1e-9)

	v := sp.Screen(Thresholds{})
	assert.Contains(t, v.Unscreened, Unscreened{Check: PSISome, Figure: sp.PSISomePct})
}

// A CPU quota set on a parent cgroup throttles the parent: its cpu.stat
// counts the throttling, the process's own group's does not. Throttling is
// read from the group with the quota.
func TestFixtureQuotaOnParentCgroup(t *testing.T) {
	fs := fixtureFS(t, "nested4")
	path, why := fs.cgroupCPUStatPath(4242)
	require.Empty(t, why)
	assert.Equal(t, filepath.Join("testdata", "nested4", "sys", "fs", "cgroup", "bench.slice", "cpu.stat"), path)

	sp := fixtureSpan(t, "nested4", "busy", NewCPUSet(0, 1), nil, time.Second)
	assert.Equal(t, Figure{Value: 4, Unit: "n"}, sp.ThrottledPeriods)
	assert.InDelta(t, 20, sp.ThrottledPct.Value, 1e-9, "the parent's quota throttled the process 20% of the span")
	assert.True(t, sp.PSISomePct.Available())

	v := sp.Screen(Thresholds{})
	assert.True(t, v.Contended, "%v", v)
}

func TestCPUQuota(t *testing.T) {
	for _, c := range []struct {
		files map[string]string
		cpus  float64
		ok    bool
	}{
		{map[string]string{"cpu.max": "50000 100000\n"}, 0.5, true},
		{map[string]string{"cpu.max": "max 100000\n"}, 0, false},
		{map[string]string{"cpu.cfs_quota_us": "200000\n", "cpu.cfs_period_us": "100000\n"}, 2, true},
		{map[string]string{"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"}, 0, false},
		{map[string]string{}, 0, false},
	} {
		d := t.TempDir()
		for name, body := range c.files {
			require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(body), 0o644))
		}
		cpus, ok := cpuQuota(d)
		assert.Equal(t, c.ok, ok, "%v", c.files)
		assert.InDelta(t, c.cpus, cpus, 1e-9, "%v", c.files)
	}
}
