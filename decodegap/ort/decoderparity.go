package ort

import "fmt"

// DecoderParity runs ref and cand side by side from an empty context: the
// prefill, then tokens tokens, and reports for every output (the caches as
// they grow, the logits) the element farthest from agreeing within tol, as
// ModelParity does for the windowed step. Step counts the prefill as 0.
// Both must be the same model at the same settings but for their options;
// both are Reset after.
func DecoderParity(ref, cand *Decoder, tokens int, tol Tolerances) (ParityReport, error) {
	r := ParityReport{Steps: tokens + 1, Reference: ref.cfg.Model.Options, Candidate: cand.cfg.Model.Options}
	if len(ref.sig.Outputs) != len(cand.sig.Outputs) || ref.cfg.Prefill != cand.cfg.Prefill {
		return r, fmt.Errorf("parity: the reference and the candidate are not the same decode (outputs %d and %d, prefill %d and %d)",
			len(ref.sig.Outputs), len(cand.sig.Outputs), ref.cfg.Prefill, cand.cfg.Prefill)
	}
	r.Worst = make([]Worst, len(cand.sig.Outputs))
	for i, o := range cand.sig.Outputs {
		r.Worst[i] = Worst{Output: o.Name, Index: -1, Tolerance: tol.For(o.Name)}
	}
	defer ref.Reset()
	defer cand.Reset()
	for s := 0; s <= tokens; s++ {
		seq := 1
		var errR, errC error
		if s == 0 {
			errR, errC = ref.Prefill(), cand.Prefill()
			if cand.seqDyn {
				seq = cand.cfg.Prefill
			}
		} else {
			errR, errC = ref.Token(), cand.Token()
		}
		switch {
		case errR != nil:
			return r, fmt.Errorf("parity: reference (%v): %w", r.Reference, errR)
		case errC != nil:
			return r, fmt.Errorf("parity: candidate (%v): %w", r.Candidate, errC)
		}
		for i, o := range cand.sig.Outputs {
			rb, cb, shape := ref.outputBytes(i, seq), cand.outputBytes(i, seq), cand.outputShape(i, seq)
			if cb == nil || rb == nil {
				continue // left to ONNX Runtime: not kept
			}
			w := &r.Worst[i]
			rv, cv := &Buffer{Port: o, Bytes: rb}, &Buffer{Port: o, Bytes: cb}
			for j := range cv.Len() {
				a, b := rv.At(j), cv.At(j)
				if x := excess(a, b, w.Tolerance); x > w.Excess || w.Index < 0 {
					w.Step, w.Index, w.Reference, w.Candidate, w.Excess = s, j, a, b, x
					w.At = unflatten(j, shape)
				}
			}
		}
	}
	return r, nil
}

// outputShape is output i's shape after a step of seq tokens.
func (d *Decoder) outputShape(i, seq int) []int64 {
	p := d.sig.Outputs[i]
	shape := make([]int64, len(p.Shape))
	for a := range p.Shape {
		v := d.dimOf(p, roleOutput(d.outRoles[i]), a, d.depth, seq)
		if d.outRoles[i] == roleCache && v < 0 {
			v = int64(d.depth)
		}
		shape[a] = v
	}
	return shape
}

// outputBytes is output i's memory after a step of seq tokens: a cache's
// present is the input buffer it was swapped into; nil for an output
// ONNX Runtime allocated.
func (d *Decoder) outputBytes(i, seq int) []byte {
	buf := d.outBufs[i]
	if d.outRoles[i] == roleCache {
		for in, o := range d.pairOf {
			if o == i {
				buf = d.bufs[in]
			}
		}
	}
	if buf == nil {
		return nil
	}
	n := int64(d.sig.Outputs[i].DType.Size())
	for _, v := range d.outputShape(i, seq) {
		n *= v
	}
	return buf[:n]
}
