package mem

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// minorFaults returns the calling thread's minor page faults so far.
func minorFaults(t *testing.T) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// TestPopulateMapsThePages: after Populate, writing to every page of a
// new allocation takes (almost) no page fault, and the contents are kept.
func TestPopulateMapsThePages(t *testing.T) {
	runtime.LockOSThread() // the faults counted are this thread's
	defer runtime.UnlockOSThread()
	const n = 1 << 20 // 8 MiB of int64, 2048 pages
	s := make([]int64, n)
	s[n/2+1] = 42
	Populate(s)
	before := minorFaults(t)
	for i := 0; i < n; i += 512 {
		s[i]++
	}
	faults := minorFaults(t) - before
	assert.Less(t, faults, int64(64), "faults writing %d pages after Populate", n/512)
	assert.Equal(t, int64(42), s[n/2+1], "contents kept")
}

// TestPopulateSmallAndEmpty: memory on less than a whole page, and no
// memory at all, are left alone.
func TestPopulateSmallAndEmpty(t *testing.T) {
	Populate([]byte(nil))
	Populate(make([]struct{}, 10))
	b := []byte{1, 2, 3}
	Populate(b)
	assert.Equal(t, []byte{1, 2, 3}, b)
}
