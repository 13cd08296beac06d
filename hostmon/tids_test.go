package hostmon

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestReadTIDs: the thread IDs a Sampler lists are those of ReadTasks, in
// the same order, and listing them again into the same buffer allocates
// nothing.
func TestReadTIDs(t *testing.T) {
	s, err := NewSampler(fixtureFS(t, "vm2"), nil, nil)
	require.NoError(t, err)
	defer s.Close()
	tids, err := s.ReadTIDs(nil)
	require.NoError(t, err)
	assert.Equal(t, []int{14923, 14966, 14967, 14969}, tids)

	fs, err := DefaultFS()
	require.NoError(t, err)
	live, err := NewSampler(fs, nil, nil)
	require.NoError(t, err)
	defer live.Close()
	tasks, err := live.ReadTasks()
	require.NoError(t, err)
	tids, err = live.ReadTIDs(make([]int, 0, len(tasks)+64))
	require.NoError(t, err)
	require.NotEmpty(t, tids)
	assert.IsIncreasing(t, tids)
	assert.Contains(t, tids, tasks[0].TID, "the first thread still runs")
	allocs := testing.AllocsPerRun(50, func() {
		tids, err = live.ReadTIDs(tids)
	})
	require.NoError(t, err)
	assert.Zero(t, allocs)
}

// TestReadTIDsWithoutTaskReader: a Sampler that could not read the
// process's threads says why.
func TestReadTIDsWithoutTaskReader(t *testing.T) {
	s := &Sampler{tasksWhy: "hostmon: threads of pid 7: no such directory"}
	tids, err := s.ReadTIDs([]int{1, 2})
	assert.EqualError(t, err, "hostmon: threads of pid 7: no such directory")
	assert.Empty(t, tids)
}

// TestSyncThreads: a thread started after the Sampler's last reading is
// read by SyncThreads, after which a Snapshot with room for the threads
// (Reserve) is filled without allocating; while the threads stay the same,
// SyncThreads only lists them.
func TestSyncThreads(t *testing.T) {
	fs, err := DefaultFS()
	require.NoError(t, err)
	s, err := NewSampler(fs, nil, nil)
	require.NoError(t, err)
	defer s.Close()
	var sn Snapshot
	s.SnapshotInto(&sn)

	started, stop := make(chan int), make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		started <- unix.Gettid()
		<-stop
	}()
	tid := <-started
	defer close(stop)

	tids, err := s.SyncThreads(nil)
	require.NoError(t, err)
	assert.Contains(t, tids, tid)
	assert.True(t, sameTIDs(s.taskBuf, tids), "the new thread was read")
	sn.Reserve(len(tids))
	assert.GreaterOrEqual(t, cap(sn.tasks), len(tids)+8)
	allocs := testing.AllocsPerRun(20, func() {
		tids, err = s.SyncThreads(tids)
		s.SnapshotInto(&sn)
	})
	require.NoError(t, err)
	assert.Zero(t, allocs)
	seen := false
	for _, task := range sn.Tasks() {
		seen = seen || task.TID == tid
	}
	assert.True(t, seen, "the snapshot holds the new thread")
}

// TestReserve: Reserve grows a Snapshot's thread list only when it has less
// room than asked, and keeps what it holds.
func TestReserve(t *testing.T) {
	sn := &Snapshot{tasks: []Task{{TID: 1}, {TID: 2}}}
	sn.Reserve(10)
	assert.Equal(t, 2*10+16, cap(sn.tasks))
	assert.Equal(t, []Task{{TID: 1}, {TID: 2}}, sn.tasks)
	p := &sn.tasks[0]
	sn.Reserve(20) // 36 >= 20+8: room enough
	assert.Same(t, p, &sn.tasks[0])
	sn.Reserve(29)
	assert.Equal(t, 2*29+16, cap(sn.tasks))
}
