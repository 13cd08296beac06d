package mem

import (
	"runtime"
	"testing"
	"time"

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
// new allocation takes (almost) no page fault of its own, and the contents
// are kept. The faults are compared with those of writing to another new
// allocation without Populate: under the race detector each first write
// also faults in the detector's shadow memory, in both.
func TestPopulateMapsThePages(t *testing.T) {
	runtime.LockOSThread() // the faults counted are this thread's
	defer runtime.UnlockOSThread()
	const n = 1 << 20 // 8 MiB of int64, 2048 pages
	pages := int64(n / 512)
	touched, populated := make([]int64, n), make([]int64, n)
	write := func(s []int64) int64 {
		before := minorFaults(t)
		for i := 0; i < n; i += 512 {
			s[i]++
		}
		return minorFaults(t) - before
	}
	plain := write(touched)
	populated[n/2+1] = 42
	Populate(populated)
	after := write(populated)
	assert.GreaterOrEqual(t, plain-after, pages*3/4, "faults writing %d pages: %d without Populate, %d after it", pages, plain, after)
	assert.Equal(t, int64(42), populated[n/2+1], "contents kept")
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

// BenchmarkMapPages is the cost of the first use of fresh memory, per 4 KiB
// page (ns/page): "touch" writes to each page (one page fault each),
// "populate" maps them with Populate. Each iteration maps 1 MiB of
// anonymous memory the process has not used. Run it with
//
//	go test -run '^$' -bench MapPages -benchtime=200x ./decodegap/internal/mem/
func BenchmarkMapPages(b *testing.B) {
	const size = 1 << 20
	pages := size / int(pageSize)
	for _, name := range []string{"touch", "populate"} {
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var total time.Duration
			for b.Loop() {
				m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if name == "touch" {
					for p := 0; p < size; p += int(pageSize) {
						m[p] = 1
					}
				} else {
					Populate(m)
				}
				total += time.Since(t0)
				if err := unix.Munmap(m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*pages), "ns/page")
		})
	}
}
