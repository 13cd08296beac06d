package decodegap

import (
	"fmt"
	"math"
)

// StallPhase says where in a run its longest step fell.
type StallPhase int

const (
	// StallNone: no step ran (the zero value).
	StallNone StallPhase = iota
	// StallWarmup: in the discarded warm-up (RunConfig.Warmup).
	StallWarmup
	// StallBeforeSteady: among the recorded steps, before the steady
	// window (in the transient the figures leave out).
	StallBeforeSteady
	// StallSteady: inside the window the figures describe.
	StallSteady
)

// String returns "none", "warm-up", "before-steady" or "steady".
func (p StallPhase) String() string {
	switch p {
	case StallNone:
		return "none"
	case StallWarmup:
		return "warm-up"
	case StallBeforeSteady:
		return "before-steady"
	case StallSteady:
		return "steady"
	}
	return fmt.Sprintf("StallPhase(%d)", int(p))
}

// stallInfo is the longest step of a whole run, warm-up included, beside the
// median the run reports.
type stallInfo struct {
	// maxNs is the longest step (ns); iter its iteration, counted from the
	// first warm-up step (warm-up) or the first recorded one (otherwise);
	// phase where it fell; ratio maxNs over the reported p50 (NaN when the
	// p50 is not > 0).
	maxNs float64
	iter  int
	phase StallPhase
	ratio float64
}

// stalled reports whether the longest step is a stall: at least
// outlierFactor (10) times the reported median, wherever it fell.
func (s stallInfo) stalled() bool { return s.phase != StallNone && s.ratio >= outlierFactor }

// hidden reports whether the stall falls outside the window the figures
// describe, so that no other figure shows it.
func (s stallInfo) hidden() bool { return s.stalled() && s.phase != StallSteady }

// findStall finds the longest step of recs (every record of the run) and
// where it fell: before or after from, the steady start, in each record's
// own numbering. p50 is the median the run reports.
func findStall(recs []*record, from int, p50 float64) stallInfo {
	var s stallInfo
	for _, rec := range recs {
		if rec.warmMax > 0 && (s.phase == StallNone || float64(rec.warmMax) > s.maxNs) {
			s.maxNs, s.iter, s.phase = float64(rec.warmMax), rec.warmMaxAt, StallWarmup
		}
		if rec.count > 0 && (s.phase == StallNone || float64(rec.maxLat) > s.maxNs) {
			s.maxNs, s.iter, s.phase = float64(rec.maxLat), rec.maxAt, StallSteady
			if rec.maxAt < from {
				s.phase = StallBeforeSteady
			}
		}
	}
	s.ratio = math.NaN()
	if p50 > 0 {
		s.ratio = s.maxNs / p50
	}
	return s
}

// stallNote reports, for the step line, a stall that the figures leave out
// (one in the steady window is in the outlier note), naming where it fell.
func (res *result) stallNote(typ string) string {
	s := res.stall
	if !s.hidden() {
		return ""
	}
	where := fmt.Sprintf("in warm-up iteration %d (%s.Warmup)", s.iter+1, typ)
	if s.phase == StallBeforeSteady {
		where = fmt.Sprintf("at recorded iteration %d, before the steady window (from %d)", s.iter, res.from)
	}
	return fmt.Sprintf("; STALL: the longest step, %s %s, is %.3g× the median (%d× or more): these figures leave it out, max-ns/op reports it",
		fmtNs(s.maxNs), where, s.ratio, outlierFactor)
}
