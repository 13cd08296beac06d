package decodegap

import "github.com/gapbench/gapbench/decodegap/internal/mem"

// maxSamples bounds the per-iteration record: beyond it the record is
// thinned (see record). 1<<22 samples × 16 bytes = 64 MiB at the most.
const maxSamples = 1 << 22

// record holds what Run keeps per recorded iteration: the step latency and
// the achieved gap before it, 16 bytes in all.
//
// For b.N up to maxSamples every iteration is kept. Beyond that the record is
// a systematic sample: when the buffers fill, every other entry is dropped
// and from then on only every stride-th iteration is kept (stride doubles
// each time), so memory stays at most maxSamples×16 bytes for any b.N while
// the series keeps its order for steady-state detection. The means are exact
// whatever the stride: they come from running sums over every iteration.
type record struct {
	// lat[k] and gap[k] are the step latency and achieved gap (ns) of the
	// k-th kept iteration; len(lat) == len(gap) == kept so far.
	lat, gap []int64
	// stride is the number of iterations per kept entry, a power of two.
	stride int
	// mask is stride-1: iteration i is kept when i&mask == 0.
	mask int
	// sumLat and sumGap sum every recorded iteration, kept or not (ns).
	sumLat, sumGap int64
	// count is the number of iterations recorded, kept or not.
	count int
	// maxLat is the longest recorded step (ns), kept or not, and maxAt its
	// index among the recorded ones; warmMax and warmMaxAt the same over
	// the warm-up (index from the first warm-up step). A stall is found
	// wherever it fell, even when thinning or the steady window leaves it
	// out.
	maxLat, warmMax  int64
	maxAt, warmMaxAt int
	// scratch is memory for the analysis, twice as long as lat once
	// steadyWindow made it: the detector's sort, then the summaries'
	// sorted copies (the first half) and their radix sort's other half.
	scratch []int64
}

// newRecord returns a record for n iterations, allocating its buffers once
// and having the kernel map their pages now (mem.Populate) rather than in
// the timed loop, where each page fault would add its cost to the step
// that first reaches the page (docs/harness-cost.md).
func newRecord(n int) *record {
	c := n
	if c > maxSamples {
		c = maxSamples
	}
	if c < 1 {
		c = 1
	}
	r := &record{lat: make([]int64, 0, c), gap: make([]int64, 0, c), stride: 1}
	mem.Populate(r.lat)
	mem.Populate(r.gap)
	return r
}

// add records iteration i (0-based among the recorded ones). It does not
// allocate.
func (r *record) add(i int, lat, gap int64) {
	r.sumLat += lat
	r.sumGap += gap
	r.count++
	if lat > r.maxLat {
		r.maxLat, r.maxAt = lat, i
	}
	if i&r.mask != 0 {
		return
	}
	if len(r.lat) == cap(r.lat) {
		r.thin()
	}
	r.lat = append(r.lat, lat)
	r.gap = append(r.gap, gap)
}

// thin halves the kept entries in place and doubles the stride.
func (r *record) thin() {
	h := (len(r.lat) + 1) / 2
	for k := 0; k < h; k++ {
		r.lat[k] = r.lat[2*k]
		r.gap[k] = r.gap[2*k]
	}
	r.lat = r.lat[:h]
	r.gap = r.gap[:h]
	r.stride *= 2
	r.mask = r.stride - 1
}

// warm notes warm-up step i (0-based from the first warm-up step) of
// latency lat: only the longest is kept. It does not allocate.
func (r *record) warm(i int, lat int64) {
	if lat > r.warmMax {
		r.warmMax, r.warmMaxAt = lat, i
	}
}
