package ort

import (
	ort "github.com/yalue/onnxruntime_go"

	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// applyShapes sets whole input shapes.
func applyShapes(sig *Signature, shapes map[string][]int64) error {
	for name, shape := range shapes {
		i := -1
		for j, p := range sig.Inputs {
			if p.Name == name {
				i = j
			}
		}
		if i < 0 {
			return fmt.Errorf("a shape names input %q, which the model does not have (inputs: %s)", name, portNames(sig.Inputs))
		}
		p := &sig.Inputs[i]
		if len(shape) != len(p.Shape) {
			return fmt.Errorf("shape %v for input %q: the model declares %s, rank %d", shape, name, p.ShapeString(), len(p.Shape))
		}
		for a, d := range shape {
			if d < 0 || (p.Shape[a] >= 0 && p.Shape[a] != d) {
				return fmt.Errorf("shape %v for input %q: axis %d must be %s", shape, name, a, sizeWord(p.Shape[a]))
			}
		}
		p.Shape = append([]int64(nil), shape...)
	}
	return nil
}

func sizeWord(d int64) string {
	if d < 0 {
		return "≥ 0"
	}
	return fmt.Sprint(d)
}

// resolve sets the dynamic axes of sig's ports from dims. Inputs must end
// fully sized; outputs may keep -1 (sized by a run).
func resolve(sig *Signature, dims map[string]int64) error {
	used := map[string]bool{}
	var missing []string
	for side, ports := range [][]Port{sig.Inputs, sig.Outputs} {
		for i := range ports {
			p := &ports[i]
			p.Shape = append([]int64(nil), p.Shape...)
			for a, d := range p.Shape {
				if d >= 0 {
					continue
				}
				key := fmt.Sprintf("%s@%d", p.Name, a)
				v, ok := dims[key]
				if ok {
					used[key] = true
				} else if v, ok = dims[p.Dims[a]]; ok && p.Dims[a] != "" {
					used[p.Dims[a]] = true
				}
				switch {
				case ok && v < 0:
					return fmt.Errorf("dimension %s is %d: sizes must be ≥ 0", firstOf(key, p.Dims[a]), v)
				case ok:
					p.Shape[a] = v
				case side == 0 && p.Dims[a] != "":
					missing = append(missing, fmt.Sprintf("%q (input %q axis %d)", p.Dims[a], p.Name, a))
				case side == 0:
					missing = append(missing, fmt.Sprintf("%q (input %q axis %d, unnamed)", key, p.Name, a))
				}
			}
		}
	}
	if len(missing) > 0 {
		return &DimsError{Missing: missing}
	}
	var unused []string
	for k := range dims {
		if !used[k] {
			unused = append(unused, fmt.Sprintf("%q", k))
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		known := sig.DimNames()
		return fmt.Errorf("dimensions %s: no dynamic axis of the model has that name (its named dynamic axes: %s; an unnamed one is NAME@AXIS)",
			strings.Join(unused, ", "), strings.Join(quoteAll(known), ", "))
	}
	return nil
}

func firstOf(a, b string) string {
	if b != "" {
		return b
	}
	return a
}

func quoteAll(ss []string) []string {
	if len(ss) == 0 {
		return []string{"none"}
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

// newScalar makes a rank-0 tensor of type dt holding b's value, and the
// copy of its value back into b. (onnxruntime_go v1.27.0's Scalar.Set
// replaces the Go slice ONNX Runtime does not read, so a scalar input is
// made with its value and never changed.)
func newScalar(dt DType, b []byte) (ort.Value, func(), error) {
	switch dt {
	case Float32:
		return scalarOf[float32](b)
	case Float64:
		return scalarOf[float64](b)
	case Int8:
		return scalarOf[int8](b)
	case Uint8:
		return scalarOf[uint8](b)
	case Int16:
		return scalarOf[int16](b)
	case Uint16:
		return scalarOf[uint16](b)
	case Int32:
		return scalarOf[int32](b)
	case Uint32:
		return scalarOf[uint32](b)
	case Int64:
		return scalarOf[int64](b)
	case Uint64:
		return scalarOf[uint64](b)
	case Bool:
		return scalarOf[bool](b)
	}
	return nil, nil, fmt.Errorf("is a scalar (rank 0) of %s: the generic step cannot allocate %s scalars", dt, dt)
}

func scalarOf[T ort.TensorData](b []byte) (ort.Value, func(), error) {
	p := (*T)(unsafe.Pointer(&b[0]))
	s, err := ort.NewScalar(*p)
	if err != nil {
		return nil, nil, err
	}
	return s, func() { *p = s.GetData() }, nil
}

// emptyTensor makes a tensor with no elements (a 0 in its shape).
func emptyTensor(dt DType, shape ort.Shape) (ort.Value, error) {
	switch dt {
	case Float32:
		return ort.NewEmptyTensor[float32](shape)
	case Float64:
		return ort.NewEmptyTensor[float64](shape)
	case Int8:
		return ort.NewEmptyTensor[int8](shape)
	case Uint8:
		return ort.NewEmptyTensor[uint8](shape)
	case Int16:
		return ort.NewEmptyTensor[int16](shape)
	case Uint16:
		return ort.NewEmptyTensor[uint16](shape)
	case Int32:
		return ort.NewEmptyTensor[int32](shape)
	case Uint32:
		return ort.NewEmptyTensor[uint32](shape)
	case Int64:
		return ort.NewEmptyTensor[int64](shape)
	case Uint64:
		return ort.NewEmptyTensor[uint64](shape)
	case Bool:
		return ort.NewEmptyTensor[bool](shape)
	}
	return nil, fmt.Errorf("has shape %v with no elements and type %s: the generic step cannot allocate an empty %s tensor", shape, dt, dt)
}

// checkDimNames refuses a key of dims that names no dynamic axis of sig:
// neither a symbolic dimension name nor NAME@AXIS of an axis whose size
// is not fixed. OpenModel finds the same through resolve (a key no axis
// used); OpenDecoder, which sizes its axes per step, checks here, so that
// a misspelled name is an error rather than a setting that does nothing.
func checkDimNames(sig Signature, dims map[string]int64) error {
	names := map[string]bool{}
	for _, n := range sig.DimNames() {
		names[n] = true
	}
	for _, ps := range [][]Port{sig.Inputs, sig.Outputs} {
		for _, p := range ps {
			for a, d := range p.Shape {
				if d < 0 {
					names[fmt.Sprintf("%s@%d", p.Name, a)] = true
				}
			}
		}
	}
	var unknown []string
	for k := range dims {
		if !names[k] {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("dimensions %s: no dynamic axis of the model has that name (its named dynamic axes: %s; an unnamed one is NAME@AXIS)",
		strings.Join(unknown, ", "), strings.Join(quoteAll(sig.DimNames()), ", "))
}
