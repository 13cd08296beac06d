package ort

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// FillKind is how an input tensor is filled.
type FillKind int

const (
	// Zeros fills with zero (false for bool). It is the zero Fill.
	Zeros FillKind = iota
	// Const fills every element with Fill.Value.
	Const
	// Random fills with seeded uniform values in [Fill.Lo, Fill.Hi), drawn
	// once when the model opens.
	Random
	// File feeds the raw contents of Fill.Path: little-endian elements of
	// the input's type, one tensor's worth per step in order, cycling back
	// to the start (a file of one tensor is a constant).
	File
)

// Fill says what an input holds. The zero Fill is all zeros.
type Fill struct {
	Kind FillKind
	// Value is the constant of Const, converted to the input's type
	// (truncated toward zero for integers; nonzero is true for bool).
	Value float64
	// Lo and Hi bound Random; Lo < Hi. Integer types get the floor of the
	// draw; bool is true when the draw is ≥ (Lo+Hi)/2.
	Lo, Hi float64
	// Path is the file of File.
	Path string
}

// ParseFill parses a fill as the command writes it: "zeros", a number
// ("16000", "-0.5"), "rand" (uniform in [-1,1)), "rand:LO,HI", or
// "file:PATH".
func ParseFill(s string) (Fill, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "zeros" || s == "zero":
		return Fill{}, nil
	case s == "rand":
		return Fill{Kind: Random, Lo: -1, Hi: 1}, nil
	case strings.HasPrefix(s, "rand:"):
		lo, hi, ok := strings.Cut(strings.TrimPrefix(s, "rand:"), ",")
		l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if !ok || err1 != nil || err2 != nil || !(l < h) {
			return Fill{}, fmt.Errorf("fill %q: write rand:LO,HI with LO < HI, e.g. rand:-1,1", s)
		}
		return Fill{Kind: Random, Lo: l, Hi: h}, nil
	case strings.HasPrefix(s, "file:"):
		p := strings.TrimPrefix(s, "file:")
		if p == "" {
			return Fill{}, fmt.Errorf("fill %q: write file:PATH", s)
		}
		return Fill{Kind: File, Path: p}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Fill{}, fmt.Errorf("fill %q: use zeros, a number, rand, rand:LO,HI or file:PATH", s)
	}
	return Fill{Kind: Const, Value: v}, nil
}

// String returns the fill in ParseFill's form.
func (f Fill) String() string {
	switch f.Kind {
	case Const:
		return strconv.FormatFloat(f.Value, 'g', -1, 64)
	case Random:
		return fmt.Sprintf("rand:%g,%g", f.Lo, f.Hi)
	case File:
		return "file:" + f.Path
	}
	return "zeros"
}

// fillRandom writes n seeded uniform draws in [lo, hi) into b.
func fillRandom(dt DType, b []byte, lo, hi float64, rng *rand.Rand) {
	n := len(b) / dt.Size()
	for i := range n {
		v := lo + (hi-lo)*rng.Float64()
		switch dt {
		case Bool:
			if v >= (lo+hi)/2 {
				v = 1
			} else {
				v = 0
			}
		case Float32, Float64, Float16, BFloat16:
		default:
			v = math.Floor(v)
		}
		put(dt, b, i, v)
	}
}

// put stores v as element i of b, of type dt.
func put(dt DType, b []byte, i int, v float64) {
	le := binary.LittleEndian
	switch dt {
	case Float32:
		le.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case Float64:
		le.PutUint64(b[8*i:], math.Float64bits(v))
	case Float16:
		le.PutUint16(b[2*i:], f32ToF16(float32(v)))
	case BFloat16:
		le.PutUint16(b[2*i:], f32ToBF16(float32(v)))
	case Int8:
		b[i] = byte(int8(v))
	case Uint8:
		b[i] = uint8(v)
	case Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	case Int16:
		le.PutUint16(b[2*i:], uint16(int16(v)))
	case Uint16:
		le.PutUint16(b[2*i:], uint16(v))
	case Int32:
		le.PutUint32(b[4*i:], uint32(int32(v)))
	case Uint32:
		le.PutUint32(b[4*i:], uint32(v))
	case Int64:
		le.PutUint64(b[8*i:], uint64(int64(v)))
	case Uint64:
		le.PutUint64(b[8*i:], uint64(v))
	}
}

// get returns element i of b, of type dt, as a float64 (exact for every
// type but 64-bit integers beyond ±2⁵³).
func get(dt DType, b []byte, i int) float64 {
	le := binary.LittleEndian
	switch dt {
	case Float32:
		return float64(math.Float32frombits(le.Uint32(b[4*i:])))
	case Float64:
		return math.Float64frombits(le.Uint64(b[8*i:]))
	case Float16:
		return float64(f16ToF32(le.Uint16(b[2*i:])))
	case BFloat16:
		return float64(math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16))
	case Int8:
		return float64(int8(b[i]))
	case Uint8, Bool:
		return float64(b[i])
	case Int16:
		return float64(int16(le.Uint16(b[2*i:])))
	case Uint16:
		return float64(le.Uint16(b[2*i:]))
	case Int32:
		return float64(int32(le.Uint32(b[4*i:])))
	case Uint32:
		return float64(le.Uint32(b[4*i:]))
	case Int64:
		return float64(int64(le.Uint64(b[8*i:])))
	case Uint64:
		return float64(le.Uint64(b[8*i:]))
	}
	return math.NaN()
}

// f32ToBF16 rounds to the nearest bfloat16, ties to even; NaN stays NaN.
func f32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if f != f {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// f32ToF16 rounds to the nearest IEEE half, ties to even, with overflow to
// infinity and gradual underflow.
func f32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int((u >> 23) & 0xff)
	mant := u & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15:
		return sign | 0x7c00
	case exp-127 >= -14: // normal half
		e := uint32(exp - 127 + 15)
		m := mant >> 13
		rest := mant & 0x1fff
		h := uint32(sign) | e<<10 | m
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is right
		}
		return uint16(h)
	case exp-127 >= -25: // subnormal half
		m := mant | 0x800000
		shift := uint(-14-(exp-127)) + 13
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	return sign
}

// f16ToF32 widens an IEEE half exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
