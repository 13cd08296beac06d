package ort

import (
	"fmt"
	"math"
	"strings"
)

// Tolerances are per-output tolerances for ModelParity: Outputs[name] when
// present, else Default. The zero Tolerances demand equal values.
type Tolerances struct {
	Default Tolerance
	Outputs map[string]Tolerance
}

// For returns the tolerance of output name.
func (t Tolerances) For(name string) Tolerance {
	if tol, ok := t.Outputs[name]; ok {
		return tol
	}
	return t.Default
}

// Worst is the element of one output farthest outside (or least inside) its
// tolerance over a parity run.
type Worst struct {
	Output string
	// Step is the 0-based step; Index the flat (row-major) element index
	// and At the same index per axis.
	Step, Index int
	At          []int64
	// Reference and Candidate are the two values.
	Reference, Candidate float64
	// Excess is |Candidate − Reference| / (Abs + Rel×|Reference|): ≤ 1
	// passes; +Inf for any difference under a zero tolerance, or a NaN.
	Excess    float64
	Tolerance Tolerance
}

// ParityReport is the result of ModelParity: the worst element of each
// output, in the model's output order.
type ParityReport struct {
	Steps int
	// Reference and Candidate are the two configurations' options.
	Reference, Candidate Options
	Worst                []Worst
}

// Failed returns the outputs whose worst element exceeds its tolerance.
func (r ParityReport) Failed() []Worst {
	var f []Worst
	for _, w := range r.Worst {
		if !(w.Excess <= 1) {
			f = append(f, w)
		}
	}
	return f
}

// Err returns nil when every output agrees within its tolerance, else a
// *ModelParityError holding the worst failing element.
func (r ParityReport) Err() error {
	f := r.Failed()
	if len(f) == 0 {
		return nil
	}
	worst := f[0]
	for _, w := range f[1:] {
		if w.Excess > worst.Excess || math.IsNaN(w.Excess) {
			worst = w
		}
	}
	return &ModelParityError{Worst: worst, Failed: len(f), Steps: r.Steps, Reference: r.Reference, Candidate: r.Candidate}
}

// ModelParityError says where two configurations of a model disagree most.
type ModelParityError struct {
	Worst
	// Failed is the number of outputs outside their tolerance.
	Failed               int
	Steps                int
	Reference, Candidate Options
}

// Error names the output, the step, the element and both values.
func (e *ModelParityError) Error() string {
	return fmt.Sprintf("parity over %d steps: output %q%s (flat %d) at step %d differs most: reference (%v) %.9g, candidate (%v) %.9g, |diff| %.3g is %.3g× tolerance %v (%d output(s) outside tolerance)",
		e.Steps, e.Output, indexString(e.At), e.Index, e.Step, e.Reference, e.Worst.Reference, e.Candidate, e.Worst.Candidate,
		math.Abs(e.Worst.Candidate-e.Worst.Reference), e.Excess, e.Tolerance, e.Failed)
}

func indexString(at []int64) string {
	parts := make([]string, len(at))
	for i, a := range at {
		parts[i] = fmt.Sprint(a)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// excess is |c−r| over the allowance of t at r.
func excess(r, c float64, t Tolerance) float64 {
	if math.IsNaN(r) || math.IsNaN(c) {
		return math.Inf(1)
	}
	d := math.Abs(c - r)
	if d == 0 {
		return 0
	}
	allow := t.Abs + t.Rel*math.Abs(r)
	if allow == 0 {
		return math.Inf(1)
	}
	return d / allow
}

// ModelParity runs ref and cand side by side for steps steps from a fresh
// state (both are Reset before and after) and reports, for every output,
// the element farthest from agreeing within tol. The two must be the same
// model with the same shapes; their options may differ. Both models' inputs
// feed the same way only if opened with the same fills and Seed.
func ModelParity(ref, cand *Model, steps int, tol Tolerances) (ParityReport, error) {
	r := ParityReport{Steps: steps, Reference: ref.Options(), Candidate: cand.Options()}
	if steps <= 0 {
		return r, fmt.Errorf("parity needs at least one step, got %d", steps)
	}
	for name, t := range tol.Outputs {
		if cand.Output(name) == nil {
			return r, fmt.Errorf("parity: a tolerance names output %q, which the model does not have", name)
		}
		if t.Abs < 0 || t.Rel < 0 || math.IsNaN(t.Abs) || math.IsNaN(t.Rel) {
			return r, fmt.Errorf("parity tolerance %v for output %q: Abs and Rel must be ≥ 0", t, name)
		}
	}
	if t := tol.Default; t.Abs < 0 || t.Rel < 0 || math.IsNaN(t.Abs) || math.IsNaN(t.Rel) {
		return r, fmt.Errorf("parity tolerance %v: Abs and Rel must be ≥ 0", t)
	}
	if len(ref.outs) != len(cand.outs) {
		return r, fmt.Errorf("parity: the reference has %d outputs and the candidate %d: they must be the same model", len(ref.outs), len(cand.outs))
	}
	for i, o := range cand.outs {
		ro := ref.outs[i]
		if ro.Port.Name != o.Port.Name || ro.Port.DType != o.Port.DType || len(ro.Bytes) != len(o.Bytes) {
			return r, fmt.Errorf("parity: output %d is %q %s %v in the reference but %q %s %v in the candidate: they must be the same model with the same shapes",
				i, ro.Port.Name, ro.Port.DType, ro.Port.Shape, o.Port.Name, o.Port.DType, o.Port.Shape)
		}
	}
	r.Worst = make([]Worst, len(cand.outs))
	for i, o := range cand.outs {
		r.Worst[i] = Worst{Output: o.Port.Name, Index: -1, Tolerance: tol.For(o.Port.Name), Excess: 0}
	}
	ref.Reset()
	cand.Reset()
	defer ref.Reset()
	defer cand.Reset()
	for s := range steps {
		if err := ref.Step(); err != nil {
			return r, fmt.Errorf("parity: reference (%v): %w", ref.Options(), err)
		}
		if err := cand.Step(); err != nil {
			return r, fmt.Errorf("parity: candidate (%v): %w", cand.Options(), err)
		}
		for i, o := range cand.outs {
			w := &r.Worst[i]
			ro := ref.outs[i]
			for j := range o.Len() {
				rv, cv := ro.At(j), o.At(j)
				if x := excess(rv, cv, w.Tolerance); x > w.Excess || w.Index < 0 {
					w.Step, w.Index, w.Reference, w.Candidate, w.Excess = s, j, rv, cv, x
				}
			}
		}
	}
	for i, o := range cand.outs {
		if r.Worst[i].Index >= 0 {
			r.Worst[i].At = unflatten(r.Worst[i].Index, o.Port.Shape)
		}
	}
	return r, nil
}

// unflatten turns a row-major flat index into one index per axis.
func unflatten(i int, shape []int64) []int64 {
	at := make([]int64, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			at[a] = int64(i) % shape[a]
			i /= int(shape[a])
		}
	}
	return at
}

// Parity opens a reference Model with m's configuration but options ref,
// runs ModelParity for steps steps with tolerances tol, closes the
// reference, and returns the report's Err (or the error that stopped it).
// Call it once before timing (decodegap's Config.Parity).
func (m *Model) Parity(ref Options, steps int, tol Tolerances) error {
	cfg := m.cfg
	cfg.Options = ref
	r, err := OpenModel(cfg)
	if err != nil {
		return fmt.Errorf("parity: opening the reference (%v): %w", ref, err)
	}
	defer r.Close()
	rep, err := ModelParity(r, m, steps, tol)
	if err != nil {
		return err
	}
	return rep.Err()
}
