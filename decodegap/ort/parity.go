package ort

import (
	"fmt"
	"math"
)

// Tolerance is how far a candidate's output may be from the reference's: a
// pair (ref, cand) matches when |cand − ref| ≤ Abs + Rel×|ref|. The zero
// Tolerance demands equal values. NaN never matches, not even NaN.
type Tolerance struct {
	// Abs is the absolute part, in the output's own units (probability,
	// state value); ≥ 0.
	Abs float64
	// Rel is the part relative to |ref|, as a fraction (1e-4 is 0.01%); ≥ 0.
	Rel float64
}

// DefaultTolerance is the tolerance for float32 outputs whose reductions
// may be summed in another order by another thread count: 1e-5 absolute
// plus 1e-4 relative. (On the Silero VAD model, 1 and 2 intra-op threads and
// spinning on or off give identical bits on this project's machines.)
var DefaultTolerance = Tolerance{Abs: 1e-5, Rel: 1e-4}

// Match reports whether cand is within t of ref.
func (t Tolerance) Match(ref, cand float32) bool {
	r, c := float64(ref), float64(cand)
	if math.IsNaN(r) || math.IsNaN(c) {
		return false
	}
	return math.Abs(c-r) <= t.Abs+t.Rel*math.Abs(r)
}

// String returns the tolerance as "abs 1e-05 + rel 0.0001×|ref|".
func (t Tolerance) String() string {
	return fmt.Sprintf("abs %g + rel %g×|ref|", t.Abs, t.Rel)
}

// ParityError is the first output value where a candidate configuration
// differs from the reference by more than the tolerance.
type ParityError struct {
	// Output is the model output's name ("output" or "stateN" for Silero
	// VAD).
	Output string
	// Frame is the 0-based step at which the outputs first differed.
	Frame int
	// Index is the flat (row-major) element index within Output.
	Index int
	// Reference and Candidate are the two values.
	Reference, Candidate float32
	// ReferenceOptions and CandidateOptions are the two configurations.
	ReferenceOptions, CandidateOptions Options
	// Tolerance is the tolerance that was exceeded.
	Tolerance Tolerance
}

// Error names the output, the frame, the index and both values.
func (e *ParityError) Error() string {
	return fmt.Sprintf("parity: output %q[%d] at frame %d differs: reference (%v) %.9g, candidate (%v) %.9g, |diff| %.3g exceeds tolerance %v",
		e.Output, e.Index, e.Frame, e.ReferenceOptions, e.Reference, e.CandidateOptions, e.Candidate,
		math.Abs(float64(e.Candidate)-float64(e.Reference)), e.Tolerance)
}

// Parity checks that v's configuration gives the same outputs as a reference
// session opened with options ref, over the first frames frames of v's clip
// fed to both from a fresh state: after every step it compares "output" and
// then every element of "stateN", and returns a *ParityError for the first
// value outside tol. The reference session is opened, used and closed inside
// the call. v is Reset before and after, so the steps Parity runs do not
// count. Call it once before timing (decodegap's cfg.Parity): with 64 frames
// it takes about 60 ms here, most of it opening the reference session.
// frames ≤ 0 or a negative tolerance is an error.
func (v *VAD) Parity(ref Options, frames int, tol Tolerance) error {
	refCfg := v.cfg
	refCfg.Options = ref
	return v.parity(refCfg, frames, tol)
}

// parity is Parity against an arbitrary reference configuration, so a test
// can feed the reference other audio.
func (v *VAD) parity(refCfg VADConfig, frames int, tol Tolerance) error {
	if frames <= 0 {
		return fmt.Errorf("parity needs at least one frame, got %d", frames)
	}
	if tol.Abs < 0 || tol.Rel < 0 || math.IsNaN(tol.Abs) || math.IsNaN(tol.Rel) {
		return fmt.Errorf("parity tolerance %v: Abs and Rel must be ≥ 0", tol)
	}
	r, err := OpenVAD(refCfg)
	if err != nil {
		return fmt.Errorf("parity: opening the reference session (%v): %w", refCfg.Options, err)
	}
	defer r.Close()
	v.Reset()
	defer v.Reset()
	for f := range frames {
		if _, err := r.Next(); err != nil {
			return fmt.Errorf("parity: reference (%v): %w", refCfg.Options, err)
		}
		if _, err := v.Next(); err != nil {
			return fmt.Errorf("parity: candidate (%v): %w", v.cfg.Options, err)
		}
		for _, out := range []struct {
			name      string
			ref, cand []float32
		}{{"output", r.prob, v.prob}, {"stateN", r.stateN, v.stateN}} {
			for i := range out.ref {
				if !tol.Match(out.ref[i], out.cand[i]) {
					return &ParityError{
						Output: out.name, Frame: f, Index: i,
						Reference: out.ref[i], Candidate: out.cand[i],
						ReferenceOptions: refCfg.Options, CandidateOptions: v.cfg.Options,
						Tolerance: tol,
					}
				}
			}
		}
	}
	return nil
}
