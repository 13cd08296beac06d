package hostmon

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fixtureTopology(t *testing.T, host string) *Topology {
	t.Helper()
	topo, err := fixtureFS(t, host).Topology()
	require.NoError(t, err)
	return topo
}

func TestTopologyVM2(t *testing.T) {
	topo := fixtureTopology(t, "vm2")
	assert.Equal(t, NewCPUSet(0, 1), topo.Online)
	assert.Equal(t, NewCPUSet(0, 1), topo.Allowed)
	assert.False(t, topo.SMT())
	require.Len(t, topo.Cores, 2)
	assert.Equal(t, Core{CPUs: NewCPUSet(1), Package: 0, ID: 1, L3: 0, NUMA: 0}, topo.Cores[1])
	require.Len(t, topo.L3, 1)
	assert.Equal(t, CacheDomain{ID: 0, CPUs: NewCPUSet(0, 1), Size: "32768K"}, topo.L3[0])
	assert.Equal(t, []NUMANode{{ID: 0, CPUs: NewCPUSet(0, 1)}}, topo.NUMA)
	assert.Empty(t, topo.Siblings(NewCPUSet(1)))
	assert.Equal(t, "2 CPUs online (0,1), 2 physical cores in 1 package(s), no SMT (1 thread a core)\n"+
		"allowed: 0,1\n"+
		"L3 0: CPUs 0,1 (32768K)\n"+
		"NUMA node 0: CPUs 0,1\n"+
		"cores: 0 1\n", topo.String())
}

func TestTopologyEPYC32(t *testing.T) {
	topo := fixtureTopology(t, "epyc32")
	assert.Len(t, topo.Online, 32)
	assert.True(t, topo.SMT())
	require.Len(t, topo.Cores, 16)
	for i, c := range topo.Cores {
		assert.Equal(t, NewCPUSet(i, i+16), c.CPUs, "core %d: siblings n and n+16", i)
		assert.Equal(t, i/8, c.L3, "core %d", i)
	}
	require.Len(t, topo.L3, 2)
	assert.Equal(t, "0-7,16-23", topo.L3[0].CPUs.String())
	assert.Equal(t, "8-15,24-31", topo.L3[1].CPUs.String())
	assert.Equal(t, NewCPUSet(16, 17, 18, 19), topo.Siblings(NewCPUSet(0, 1, 2, 3)))
	assert.Equal(t, NewCPUSet(5), topo.Siblings(NewCPUSet(21)))
	c, ok := topo.CoreOf(27)
	assert.True(t, ok)
	assert.Equal(t, NewCPUSet(11, 27), c.CPUs)
	_, ok = topo.CoreOf(32)
	assert.False(t, ok)
	s := topo.String()
	assert.Contains(t, s, "32 CPUs online (0-31), 16 physical cores in 1 package(s), SMT (2 threads a core)\n")
	assert.Contains(t, s, "L3 0: CPUs 0-7,16-23 (32768K)\nL3 1: CPUs 8-15,24-31 (32768K)\n")
	assert.Contains(t, s, "cores (CPUs of one core joined by +): 0+16 1+17 2+18")
	assert.Contains(t, s, " 15+31\n")
}

func TestTopologySocket2(t *testing.T) {
	topo := fixtureTopology(t, "socket2")
	require.Len(t, topo.Cores, 16)
	assert.Equal(t, NewCPUSet(10, 11), topo.Cores[5].CPUs, "adjacent siblings")
	assert.Equal(t, 1, topo.Cores[8].Package)
	assert.Equal(t, 0, topo.Cores[8].ID)
	assert.Equal(t, 1, topo.Cores[8].NUMA)
	assert.Equal(t, 1, topo.Cores[8].L3)
	require.Len(t, topo.NUMA, 2)
	assert.Equal(t, "16-31", topo.NUMA[1].CPUs.String())
	// The "Why" case: hand-picked idle CPUs are siblings of busy ones.
	assert.Equal(t, NewCPUSet(10, 16, 30), topo.Siblings(NewCPUSet(11, 17, 31)))
	assert.Contains(t, topo.String(), "32 CPUs online (0-31), 16 physical cores in 2 package(s), SMT (2 threads a core)\n")
	assert.Contains(t, topo.String(), "cores (CPUs of one core joined by +): 0+1 2+3")
	assert.Contains(t, topo.String(), "NUMA node 1: CPUs 16-31\n")
}

func TestTopologyErrors(t *testing.T) {
	fs, err := NewFS("testdata/vm2/proc", "testdata/no-such-sys")
	if err == nil {
		_, err = fs.Topology()
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no-such-sys")
}

func TestSelectBudget(t *testing.T) {
	cases := []struct {
		host         string
		n            int
		cpus, sibs   string
		busy         map[int]float64
		allowedSubst string
	}{
		{host: "vm2", n: 1, cpus: "0"},
		{host: "vm2", n: 2, cpus: "0,1"},
		{host: "epyc32", n: 4, cpus: "0-3", sibs: "16-19"},
		// Fills L3 0 (cores 0-7) before L3 1.
		{host: "epyc32", n: 10, cpus: "0-9", sibs: "16-25"},
		{host: "epyc32", n: 16, cpus: "0-15", sibs: "16-31"},
		{host: "socket2", n: 4, cpus: "0,2,4,6", sibs: "1,3,5,7"},
		{host: "socket2", n: 9, cpus: "0,2,4,6,8,10,12,14,16", sibs: "1,3,5,7,9,11,13,15,17"},
		// PreferIdle: CPU 0's sibling 16 is busy, so core 0 is avoided.
		{host: "epyc32", n: 2, cpus: "1,2", sibs: "17,18", busy: map[int]float64{16: 90, 3: 50}},
		// PreferIdle picks the quieter L3 domain as a whole.
		{host: "epyc32", n: 3, cpus: "8-10", sibs: "24-26", busy: map[int]float64{0: 30, 1: 30, 2: 30, 3: 30, 4: 30, 5: 30, 6: 30, 7: 30}},
		// PreferIdle on the adjacent layout: 10,16,30 busy, so their
		// cores (10+11, 16+17, 30+31) are the last picked.
		{host: "socket2", n: 8, cpus: "0,2,4,6,8,12,14,18", sibs: "1,3,5,7,9,13,15,19", busy: map[int]float64{10: 90, 16: 90, 30: 90}},
		// The allowed cpuset limits the choice.
		{host: "epyc32", n: 2, cpus: "5,6", sibs: "21,22", allowedSubst: "5-6,21-22"},
	}
	for _, c := range cases {
		topo := fixtureTopology(t, c.host)
		if c.allowedSubst != "" {
			var err error
			topo.Allowed, err = ParseCPUList(c.allowedSubst)
			require.NoError(t, err)
		}
		var opts []BudgetOption
		if c.busy != nil {
			opts = append(opts, PreferIdle(c.busy))
		}
		b, err := topo.SelectBudget(c.n, opts...)
		require.NoError(t, err, "%s n=%d", c.host, c.n)
		assert.Equal(t, c.cpus, b.CPUs.String(), "%s n=%d busy=%v", c.host, c.n, c.busy)
		assert.Equal(t, c.sibs, b.Siblings.String(), "%s n=%d siblings", c.host, c.n)
		// Never two CPUs of one core.
		cores := map[int]bool{}
		for _, cpu := range b.CPUs {
			core, _ := topo.CoreOf(cpu)
			assert.False(t, cores[core.CPUs[0]], "two CPUs of core %v", core.CPUs)
			cores[core.CPUs[0]] = true
		}
	}
}

func TestSelectBudgetErrors(t *testing.T) {
	topo := fixtureTopology(t, "vm2")
	_, err := topo.SelectBudget(3)
	require.Error(t, err)
	assert.Equal(t, "hostmon: a budget of 3 physical cores, but only 2 cores have a CPU this process may use (allowed CPUs 0,1 of online 0,1): lower the budget or widen the cpuset/taskset", err.Error())
	_, err = topo.SelectBudget(0)
	assert.ErrorContains(t, err, "a budget of 0 cores")

	epyc := fixtureTopology(t, "epyc32")
	_, err = epyc.SelectBudget(17)
	assert.ErrorContains(t, err, "only 16 cores")
}

func TestBudgetOf(t *testing.T) {
	topo := fixtureTopology(t, "epyc32")
	b, err := topo.BudgetOf(NewCPUSet(0, 2, 4, 6))
	require.NoError(t, err)
	assert.Equal(t, "CPUs 0,2,4,6 (siblings 16,18,20,22)", b.String())
	// Two siblings asked for explicitly are not each other's siblings.
	b, err = topo.BudgetOf(NewCPUSet(3, 19))
	require.NoError(t, err)
	assert.Empty(t, b.Siblings)
	_, err = topo.BudgetOf(NewCPUSet(40))
	assert.EqualError(t, err, "hostmon: CPU 40 is not online (online CPUs: 0-31)")
	topo.Allowed = NewCPUSet(0, 1)
	_, err = topo.BudgetOf(NewCPUSet(1, 2))
	assert.EqualError(t, err, "hostmon: CPU 2 is not in this process's allowed cpuset 0,1 (cgroup cpuset or taskset)")
	_, err = topo.BudgetOf(nil)
	assert.Error(t, err)

	vm := fixtureTopology(t, "vm2")
	b, err = vm.BudgetOf(NewCPUSet(1))
	require.NoError(t, err)
	assert.Equal(t, "CPU 1 (no SMT siblings)", b.String())
}
