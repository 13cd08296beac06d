package ort

import (
	"fmt"
	"sort"
	"strings"
)

// Pair is one piece of state carried between steps: after each step the
// contents of Output are copied into Input, which the next step reads.
type Pair struct {
	Output, Input string
	// Rule is "explicit" (ModelConfig.State) or the automatic rule that
	// matched, such as "suffix N" or "present→past_key_values".
	Rule string
	// Axis is -1 when the two have the same shape (the whole tensor is
	// copied), else the one axis along which Output is longer than Input:
	// the last Input-length entries along it are kept, a sliding window (a
	// decoder's key/value cache at a constant context length).
	Axis int
}

// String returns "Output → Input (Rule)", with the window axis if any.
func (p Pair) String() string {
	s := fmt.Sprintf("%s → %s (%s)", p.Output, p.Input, p.Rule)
	if p.Axis >= 0 {
		s += fmt.Sprintf(", sliding window on axis %d", p.Axis)
	}
	return s
}

// StateSuffixes are the automatic rule's suffixes: an output named the
// input's name plus one of them carries into that input (Silero's stateN →
// state, an LSTM's hn → h and cn → c).
var StateSuffixes = []string{"N", "n", "_out", "_new", "_next"}

// StatePrefixes are the automatic rule's prefix swaps, as output prefix →
// input prefix: present.0.key → past_key_values.0.key, present_0 → past_0.
var StatePrefixes = [][2]string{{"present", "past_key_values"}, {"present", "past"}}

// StatePairs returns the state pairs a model opened with these settings
// carries: explicit (output → input; it overrides the rule for its input),
// then, when auto is true, every output that the automatic rule matches to
// an input not yet fed: an output named input+suffix (StateSuffixes), or
// one whose prefix swaps into the input's name (StatePrefixes). A pair must
// join two tensors of the same element type and rank whose axes agree but
// for at most one (where the output may be longer: a sliding window). An
// explicit pair that breaks this is an error; a candidate of the rule that
// breaks it is returned in refused, with the reason in Rule, and so are the
// rule's pairs when they would feed every input of the model (a stateless
// x → x_out: no data would enter a step). Sizes are
// checked again once dynamic axes are set (OpenModel).
func StatePairs(sig Signature, explicit map[string]string, auto bool) (pairs, refused []Pair, err error) {
	fed := map[string]bool{}
	outs := make([]string, 0, len(explicit))
	for o := range explicit {
		outs = append(outs, o)
	}
	sort.Strings(outs)
	for _, o := range outs {
		in := explicit[o]
		op, ok := sig.Output(o)
		if !ok {
			return nil, nil, fmt.Errorf("state %s→%s: the model has no output %q (outputs: %s)", o, in, o, portNames(sig.Outputs))
		}
		ip, ok := sig.Input(in)
		if !ok {
			return nil, nil, fmt.Errorf("state %s→%s: the model has no input %q (inputs: %s)", o, in, in, portNames(sig.Inputs))
		}
		if fed[in] {
			return nil, nil, fmt.Errorf("state %s→%s: input %q is already fed by another output", o, in, in)
		}
		axis, why := pairAxis(op, ip)
		if why != "" {
			return nil, nil, fmt.Errorf("state %s→%s: %s", o, in, why)
		}
		fed[in] = true
		pairs = append(pairs, Pair{Output: o, Input: in, Rule: "explicit", Axis: axis})
	}
	if !auto {
		return pairs, nil, nil
	}
	for _, op := range sig.Outputs {
		if _, ok := explicit[op.Name]; ok {
			continue
		}
		for _, c := range ruleCandidates(op.Name) {
			ip, ok := sig.Input(c.input)
			if !ok || fed[ip.Name] {
				continue
			}
			axis, why := pairAxis(op, ip)
			if why != "" {
				refused = append(refused, Pair{Output: op.Name, Input: ip.Name, Rule: why, Axis: -1})
				continue
			}
			fed[ip.Name] = true
			pairs = append(pairs, Pair{Output: op.Name, Input: ip.Name, Rule: c.rule, Axis: axis})
			break
		}
	}
	if len(fed) == len(sig.Inputs) && len(pairs) > len(explicit) {
		// Every input would be fed from an output: nothing new enters a
		// step, so the names matched a stateless model (x → x_out), not
		// state beside a data input.
		auto := pairs[len(explicit):]
		pairs = pairs[:len(explicit)]
		for _, p := range auto {
			refused = append(refused, Pair{Output: p.Output, Input: p.Input, Axis: -1,
				Rule: fmt.Sprintf("the names match (%s), but then every input of the model would be fed from its outputs and no new data would enter a step: the automatic rule carries state only beside a data input (if %q is state, give -state %s=%s, ModelConfig.State)",
					p.Rule, p.Input, p.Output, p.Input)})
		}
	}
	return pairs, refused, nil
}

type candidate struct{ input, rule string }

// ruleCandidates lists the inputs the automatic rule would feed from an
// output named out, in the rule's order.
func ruleCandidates(out string) []candidate {
	var cs []candidate
	for _, s := range StateSuffixes {
		if in, ok := strings.CutSuffix(out, s); ok && in != "" {
			cs = append(cs, candidate{in, "suffix " + s})
		}
	}
	for _, p := range StatePrefixes {
		if rest, ok := strings.CutPrefix(out, p[0]); ok {
			cs = append(cs, candidate{p[1] + rest, p[0] + "→" + p[1]})
		}
	}
	return cs
}

// pairAxis checks that output o can feed input in: both supported tensors
// of one element type and rank, agreeing on every axis but at most one. It
// returns the differing axis (-1 for none) or why they cannot pair.
func pairAxis(o, in Port) (int, string) {
	switch {
	case o.Kind != Tensor || in.Kind != Tensor:
		return -1, fmt.Sprintf("output %q is %s and input %q is %s: only tensors carry state", o.Name, o.Type, in.Name, in.Type)
	case o.DType != in.DType:
		return -1, fmt.Sprintf("output %q is %s but input %q is %s", o.Name, o.DType, in.Name, in.DType)
	case o.Shape == nil || in.Shape == nil:
		return -1, ""
	case len(o.Shape) != len(in.Shape):
		return -1, fmt.Sprintf("output %q has shape %s but input %q has %s: the ranks differ", o.Name, o.ShapeString(), in.Name, in.ShapeString())
	}
	axis, uncertain, named := -1, 0, -1
	for i := range o.Shape {
		a, b := o.Shape[i], in.Shape[i]
		switch {
		case sameDim(a, o.Dims[i], b, in.Dims[i]):
		case a >= 0 && b >= 0:
			if axis >= 0 || a < b {
				return -1, fmt.Sprintf("output %q has shape %s but input %q has %s: they may differ on one axis only, where the output is longer",
					o.Name, o.ShapeString(), in.Name, in.ShapeString())
			}
			axis = i
		default:
			// A dynamic axis not known to match: sized at open.
			uncertain++
			if o.Dims[i] != "" && in.Dims[i] != "" {
				named = i
			}
		}
	}
	if axis < 0 && uncertain == 1 && named >= 0 {
		axis = named
	}
	return axis, ""
}

// sameDim reports whether two axes surely have the same size: equal sizes,
// or the same symbolic name.
func sameDim(a int64, an string, b int64, bn string) bool {
	if a >= 0 && b >= 0 {
		return a == b
	}
	return a < 0 && b < 0 && an != "" && an == bn
}

func portNames(ps []Port) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = fmt.Sprintf("%q", p.Name)
	}
	return strings.Join(names, ", ")
}
