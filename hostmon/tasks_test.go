package hostmon

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func fixtureFS(t testing.TB, host string) FS {
	t.Helper()
	fs, err := NewFS("testdata/"+host+"/proc", "testdata/"+host+"/sys")
	require.NoError(t, err)
	return fs
}

func TestTasksFixture(t *testing.T) {
	fs := fixtureFS(t, "vm2")
	pid, err := fs.SelfPID()
	require.NoError(t, err)
	assert.Equal(t, 14923, pid)
	tasks, err := fs.SelfTasks(nil)
	require.NoError(t, err)
	require.Len(t, tasks, 4)
	// Values copied from the fixture's task/<tid>/schedstat and comm files.
	assert.Equal(t, Task{TID: 14923, Name: "python3", OnCPUNanoseconds: 48051380, RunQueueWaitNanoseconds: 5881816, Timeslices: 37}, tasks[0])
	assert.Equal(t, Task{TID: 14969, Name: "python3", OnCPUNanoseconds: 70397889, RunQueueWaitNanoseconds: 27920069, Timeslices: 78}, tasks[3])
	for i := 1; i < len(tasks); i++ {
		assert.Less(t, tasks[i-1].TID, tasks[i].TID, "sorted by TID")
	}

	// The buffer is reused.
	buf := make([]Task, 0, 8)
	again, err := fs.Tasks(pid, buf)
	require.NoError(t, err)
	assert.Equal(t, tasks, again)
	assert.Same(t, &buf[:1][0], &again[0])

	_, err = fs.Tasks(999999, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pid 999999")
}

func TestTasksBetween(t *testing.T) {
	before := []Task{
		{TID: 1, OnCPUNanoseconds: 100, RunQueueWaitNanoseconds: 10, Timeslices: 1},
		{TID: 2, OnCPUNanoseconds: 200, RunQueueWaitNanoseconds: 20, Timeslices: 2},
		{TID: 4, OnCPUNanoseconds: 400, RunQueueWaitNanoseconds: 40, Timeslices: 4},
	}
	after := []Task{
		{TID: 1, OnCPUNanoseconds: 150, RunQueueWaitNanoseconds: 15, Timeslices: 3},
		{TID: 3, OnCPUNanoseconds: 30, RunQueueWaitNanoseconds: 3, Timeslices: 1},
		{TID: 4, OnCPUNanoseconds: 500, RunQueueWaitNanoseconds: 41, Timeslices: 5},
		{TID: 5, OnCPUNanoseconds: 7, RunQueueWaitNanoseconds: 1, Timeslices: 1},
	}
	got := TasksBetween(before, after)
	assert.Equal(t, TaskTotals{
		OnCPUNanoseconds:        50 + 30 + 100 + 7,
		RunQueueWaitNanoseconds: 5 + 3 + 1 + 1,
		Timeslices:              2 + 1 + 1 + 1,
		Started:                 2,
		Exited:                  1,
	}, got)
	// A thread whose counters went backwards (TID reused) adds nothing.
	assert.Equal(t, TaskTotals{}, TasksBetween(after[:1], before[:1]))
	assert.Equal(t, TaskTotals{Exited: 3}, TasksBetween(before, nil))
}

func TestSelfTasksLive(t *testing.T) {
	fs, err := DefaultFS()
	require.NoError(t, err)
	before, err := fs.SelfTasks(nil)
	require.NoError(t, err)
	require.NotEmpty(t, before)

	// Burn CPU on a thread that exists in both readings (the main thread
	// may not be the one running this test, so lock a goroutine).
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		x := 0
		for i := 0; i < 50_000_000; i++ {
			x += i
		}
		_ = x
	}()
	wg.Wait()
	after, err := fs.SelfTasks(nil)
	require.NoError(t, err)
	d := TasksBetween(before, after)
	t.Logf("live: %d threads, +%d ns on CPU, +%d ns run-queue wait", len(after), d.OnCPUNanoseconds, d.RunQueueWaitNanoseconds)
	assert.Greater(t, d.OnCPUNanoseconds, uint64(1_000_000), "50M additions took more than 1 ms of CPU")
}

// BenchmarkSelfTasks reports the cost of one reading of this process's
// threads with about 10 threads running (decodegap calls it at window
// boundaries).
// parkThreads keeps n goroutines locked to their own OS threads, parked,
// until the returned function is called: a process with that many threads
// for the reader benchmarks.
func parkThreads(n int) (release func()) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			<-stop
		}()
	}
	return func() { close(stop); wg.Wait() }
}

func BenchmarkSelfTasks(b *testing.B) {
	fs, err := DefaultFS()
	require.NoError(b, err)
	defer parkThreads(10)()
	var buf []Task
	b.ResetTimer()
	for b.Loop() {
		buf, err = fs.SelfTasks(buf)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf)), "threads")
}

// TestTasksAgreesWithProcfs cross-checks the hand-written reader against
// procfs's parser of the same files.
func TestTasksAgreesWithProcfs(t *testing.T) {
	for _, root := range []string{"testdata/vm2/proc", "testdata/vm2/proc-after"} {
		fs, err := NewFS(root, "testdata/vm2/sys")
		require.NoError(t, err)
		tasks, err := fs.SelfTasks(nil)
		require.NoError(t, err)
		p, err := procfs.NewFS(root)
		require.NoError(t, err)
		threads, err := p.AllThreads(14923)
		require.NoError(t, err)
		require.Len(t, tasks, len(threads))
		for _, th := range threads {
			ss, err := th.Schedstat()
			require.NoError(t, err)
			comm, err := th.Comm()
			require.NoError(t, err)
			assert.Contains(t, tasks, Task{TID: th.PID, Name: comm, OnCPUNanoseconds: ss.RunningNanoseconds,
				RunQueueWaitNanoseconds: ss.WaitingNanoseconds, Timeslices: ss.RunTimeslices})
		}
	}
}

func TestParseTaskSchedstat(t *testing.T) {
	got, err := parseTaskSchedstat([]byte("48051380 5881816 37\n"))
	require.NoError(t, err)
	assert.Equal(t, Task{OnCPUNanoseconds: 48051380, RunQueueWaitNanoseconds: 5881816, Timeslices: 37}, got)
	for _, bad := range []string{"", "1 2\n", "1 2 3 4\n", "1 x 3\n", "-1 2 3\n", "99999999999999999999 1 1\n"} {
		_, err := parseTaskSchedstat([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func FuzzParseTaskSchedstat(f *testing.F) {
	f.Add([]byte("48051380 5881816 37\n"))
	f.Add([]byte("0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseTaskSchedstat(b)
		if err != nil {
			return
		}
		// What parsed prints back in the kernel's format and parses again
		// to the same counters.
		again, err := parseTaskSchedstat(fmt.Appendf(nil, "%d %d %d\n", got.OnCPUNanoseconds, got.RunQueueWaitNanoseconds, got.Timeslices))
		if err != nil || again != got {
			t.Fatalf("%q parsed as %+v, which reparses as %+v, %v", b, got, again, err)
		}
	})
}

func FuzzAppendDirentTIDs(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, tid := range appendDirentTIDs(nil, b) {
			if tid < 0 {
				t.Fatalf("negative tid %d", tid)
			}
		}
	})
}

func TestTaskReaderFixture(t *testing.T) {
	fs := fixtureFS(t, "vm2")
	want, err := fs.SelfTasks(nil)
	require.NoError(t, err)
	r, err := fs.NewTaskReader(14923)
	require.NoError(t, err)
	defer r.Close()
	got, err := r.Read(nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	again, err := r.Read(got)
	require.NoError(t, err)
	assert.Equal(t, want, again)
	assert.Len(t, r.open, 4, "two files open per thread")

	_, err = fs.NewTaskReader(999999)
	assert.ErrorContains(t, err, "threads of pid 999999")
}

func TestTaskReaderClosesGoneThreads(t *testing.T) {
	// A copy of the fixture from which a thread then disappears.
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS("testdata/vm2/proc")))
	fs, err := NewFS(root, "testdata/vm2/sys")
	require.NoError(t, err)
	r, err := fs.NewTaskReader(14923)
	require.NoError(t, err)
	defer r.Close()
	got, err := r.Read(nil)
	require.NoError(t, err)
	require.Len(t, got, 4)
	require.NoError(t, os.RemoveAll(filepath.Join(root, "14923", "task", "14967")))
	got, err = r.Read(got)
	require.NoError(t, err)
	assert.Len(t, got, 3)
	assert.NotContains(t, r.open, 14967, "the gone thread's files are closed")
	assert.Len(t, r.open, 3)
	require.NoError(t, r.Close())
	assert.Empty(t, r.open)
}

func TestTaskReaderLive(t *testing.T) {
	fs, err := DefaultFS()
	require.NoError(t, err)
	pid, err := fs.SelfPID()
	require.NoError(t, err)
	r, err := fs.NewTaskReader(pid)
	require.NoError(t, err)
	defer r.Close()
	before, err := r.Read(nil)
	require.NoError(t, err)

	// A thread that starts, burns CPU and exits between two reads, and
	// one that starts and stays.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	started := make(chan int)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		started <- unix.Gettid()
		<-stop
		// Exit locked: the thread is discarded.
	}()
	tid := <-started
	mid, err := r.Read(nil)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(mid, func(t Task) bool { return t.TID == tid }), "new thread %d seen", tid)
	assert.Contains(t, r.open, tid)
	close(stop)
	wg.Wait()
	if tid == pid {
		// Go never ends the main thread; the goroutine ran on it, so
		// nothing exited. The fixture test covers files of gone threads.
		t.Logf("the locked goroutine ran on the main thread %d, which does not exit", tid)
		return
	}
	require.Eventually(t, func() bool {
		after, err := r.Read(nil)
		require.NoError(t, err)
		return !slices.ContainsFunc(after, func(t Task) bool { return t.TID == tid })
	}, 5*time.Second, 10*time.Millisecond, "thread %d still listed after it exited", tid)
	assert.NotContains(t, r.open, tid, "its files are closed")
	after, err := r.Read(nil)
	require.NoError(t, err)
	d := TasksBetween(before, after)
	t.Logf("%d threads then %d: %+v", len(before), len(after), d)
	// The same files re-read give the same answers as opening them anew.
	fresh, err := fs.Tasks(pid, nil)
	require.NoError(t, err)
	require.Equal(t, len(fresh), len(after))
	for i := range fresh {
		assert.Equal(t, fresh[i].TID, after[i].TID)
		assert.GreaterOrEqual(t, fresh[i].OnCPUNanoseconds, after[i].OnCPUNanoseconds, "counters only grow")
	}
}

// BenchmarkTaskReader is BenchmarkSelfTasks through a TaskReader, which
// keeps the files open between reads.
func BenchmarkTaskReader(b *testing.B) {
	fs, err := DefaultFS()
	require.NoError(b, err)
	pid, err := fs.SelfPID()
	require.NoError(b, err)
	defer parkThreads(10)()
	r, err := fs.NewTaskReader(pid)
	require.NoError(b, err)
	defer r.Close()
	var buf []Task
	for b.Loop() {
		buf, err = r.Read(buf)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf)), "threads")
}
