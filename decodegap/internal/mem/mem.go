// Package mem maps the pages of a new allocation before it is used, so
// that the page faults of its first use do not land in a timed loop (or,
// one trap per page, in the analysis after it): one madvise call maps
// them all, which on a virtual machine costs a fraction of the traps
// (docs/harness-cost.md).
package mem

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pageSize is the unit the kernel maps memory in.
var pageSize = uintptr(unix.Getpagesize())

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault in the
// pages of a range, writable, without changing their contents.
const madvPopulateWrite = 23

// Populate makes the kernel map, writable, every whole page of s's memory
// (up to its capacity) now, leaving the contents as they are; a page that
// s shares with other memory, at either end, is left to be mapped when it
// is used. It asks with madvise(MADV_POPULATE_WRITE); where the kernel
// does not know it, it writes to each page itself (an atomic add of zero
// to the page's first word).
func Populate[T any](s []T) {
	var zero T
	size := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if size == 0 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	start := uintptr(base)
	lo := (start + pageSize - 1) &^ (pageSize - 1)
	hi := (start + size) &^ (pageSize - 1)
	if hi <= lo {
		return
	}
	first := unsafe.Add(base, lo-start)
	if unix.Madvise(unsafe.Slice((*byte)(first), hi-lo), madvPopulateWrite) == nil {
		return
	}
	for off := uintptr(0); off < hi-lo; off += pageSize {
		atomic.AddUint32((*uint32)(unsafe.Add(first, off)), 0)
	}
}
