package ort

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// DType is a tensor element type, numbered as ONNX's TensorProto.DataType
// (and ONNX Runtime's ONNXTensorElementDataType, which uses the same numbers).
type DType int

// The element types. The generic step (OpenModel) runs those Supported
// reports: float32/64, float16, bfloat16, int8…int64, uint8…uint64 and bool.
const (
	Undefined  DType = 0
	Float32    DType = 1
	Uint8      DType = 2
	Int8       DType = 3
	Uint16     DType = 4
	Int16      DType = 5
	Int32      DType = 6
	Int64      DType = 7
	String     DType = 8
	Bool       DType = 9
	Float16    DType = 10
	Float64    DType = 11
	Uint32     DType = 12
	Uint64     DType = 13
	Complex64  DType = 14
	Complex128 DType = 15
	BFloat16   DType = 16
)

var dtypeNames = map[DType]string{
	Undefined: "undefined", Float32: "float32", Uint8: "uint8", Int8: "int8",
	Uint16: "uint16", Int16: "int16", Int32: "int32", Int64: "int64",
	String: "string", Bool: "bool", Float16: "float16", Float64: "float64",
	Uint32: "uint32", Uint64: "uint64", Complex64: "complex64",
	Complex128: "complex128", BFloat16: "bfloat16",
	17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
	21: "uint4", 22: "int4", 23: "float4e2m1",
}

// String returns the type's name: "float32", "bfloat16", "int64", ...
func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// Size returns the bytes per element, or 0 for a type the generic step does
// not run.
func (d DType) Size() int {
	switch d {
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16, Float16, BFloat16:
		return 2
	case Float32, Int32, Uint32:
		return 4
	case Float64, Int64, Uint64:
		return 8
	}
	return 0
}

// Supported reports whether the generic step can allocate and fill tensors
// of this type.
func (d DType) Supported() bool { return d.Size() > 0 }

// Kind is the kind of value an input or output holds.
type Kind int

// The kinds of ONNX values. Only Tensor is run by the generic step.
const (
	KindUnknown Kind = iota
	Tensor
	Sequence
	Map
	Optional
	SparseTensor
)

// String returns "tensor", "sequence", "map", "optional", "sparse tensor"
// or "unknown".
func (k Kind) String() string {
	switch k {
	case Tensor:
		return "tensor"
	case Sequence:
		return "sequence"
	case Map:
		return "map"
	case Optional:
		return "optional"
	case SparseTensor:
		return "sparse tensor"
	}
	return "unknown"
}

// Port is one input or output of a model.
type Port struct {
	// Name is the model's name for it.
	Name string
	// Kind is what it holds; DType and Shape are meaningful for Tensor only.
	Kind Kind
	// Type describes the whole type in ONNX's notation, such as
	// "tensor(float)" or "seq(map(int64,tensor(float)))".
	Type string
	// DType is the element type of a tensor.
	DType DType
	// Shape holds one entry per axis: the size, or -1 for a dynamic axis.
	// nil when the model declares no shape (any rank).
	Shape []int64
	// Dims holds, per axis, the symbolic name of a dynamic axis ("batch"),
	// or "" for a fixed or unnamed one.
	Dims []string
	// Doc is the model's doc string for it, if any.
	Doc string
}

// ShapeString returns the shape as "[batch,512]": sizes, dynamic axes by
// name, "?" for an unnamed dynamic axis; "[*]" when the rank is unknown.
func (p Port) ShapeString() string {
	if p.Shape == nil {
		return "[*]"
	}
	parts := make([]string, len(p.Shape))
	for i, d := range p.Shape {
		switch {
		case d >= 0:
			parts[i] = fmt.Sprint(d)
		case p.Dims[i] != "":
			parts[i] = p.Dims[i]
		default:
			parts[i] = "?"
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Metadata is the model's descriptive fields, as the file states them.
type Metadata struct {
	// IRVersion is the ONNX file format version (ir_version).
	IRVersion int64
	// Producer is producer_name and producer_version ("pytorch 2.1.0").
	Producer string
	// Domain and ModelVersion are the model's own domain and version.
	Domain       string
	ModelVersion int64
	// Description is the model's doc_string; Graph the graph's name.
	Description, Graph string
	// Opsets are the operator sets it imports, as "ai.onnx v17".
	Opsets []string
	// Custom holds metadata_props, key → value.
	Custom map[string]string
	// Initializers counts the stored weight tensors; InitializerSize is
	// their raw bytes in the file (external data not counted).
	Initializers    int
	InitializerSize int64
	// ExternalData are the files the initializers keep their bytes in
	// (external_data's location, relative to the model's folder), each
	// once, sorted; nil when every weight is inside the model file.
	ExternalData []string
}

// Signature is what a model takes and gives.
type Signature struct {
	// Path is the file it was read from.
	Path string
	// Inputs are the graph's inputs that are not initializers (weights),
	// in the model's order; Outputs its outputs.
	Inputs, Outputs []Port
	Meta            Metadata
}

// Input returns the input named name.
func (s Signature) Input(name string) (Port, bool) { return find1(s.Inputs, name) }

// Output returns the output named name.
func (s Signature) Output(name string) (Port, bool) { return find1(s.Outputs, name) }

func find1(ps []Port, name string) (Port, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Port{}, false
}

// DimNames returns the symbolic dimension names used by any input or
// output, sorted.
func (s Signature) DimNames() []string {
	seen := map[string]bool{}
	for _, ps := range [][]Port{s.Inputs, s.Outputs} {
		for _, p := range ps {
			for _, d := range p.Dims {
				if d != "" {
					seen[d] = true
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Inspect reads the model file at path and returns its signature. It parses
// the ONNX file itself and needs no ONNX Runtime, so it works where the
// library is missing. The file is read once per process (OpenModel reuses
// it).
func Inspect(path string) (Signature, error) {
	data, err := loadModel(path)
	if err != nil {
		return Signature{}, err
	}
	sig, err := parseSignature(data)
	if err != nil {
		return Signature{}, fmt.Errorf("reading %s: %w", path, err)
	}
	sig.Path = path
	return sig, nil
}

// loadModel reads a model file once per process.
func loadModel(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if b, ok := modelCache.Load(abs); ok {
		return b.([]byte), nil
	}
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the ONNX model: %w", err)
	}
	v, _ := modelCache.LoadOrStore(abs, b)
	return v.([]byte), nil
}

// errNotONNX is returned for data that is not an ONNX ModelProto.
var errNotONNX = errors.New("not an ONNX model (no graph found in the protobuf)")

// Field numbers of onnx.proto (ONNX's ModelProto and the messages in it).
const (
	modelIRVersion       = 1
	modelProducerName    = 2
	modelProducerVersion = 3
	modelDomain          = 4
	modelVersion         = 5
	modelDoc             = 6
	modelGraph           = 7
	modelOpset           = 8
	modelMetadataProps   = 14

	graphName        = 2
	graphInitializer = 5
	graphInput       = 11
	graphOutput      = 12

	tensorProtoName         = 8
	tensorProtoRawData      = 9
	tensorProtoExternalData = 13
	stringEntryKey          = 1
	stringEntryValue        = 2

	valueInfoName = 1
	valueInfoType = 2
	valueInfoDoc  = 3

	typeTensor       = 1
	typeSequence     = 4
	typeMap          = 5
	typeSparseTensor = 8
	typeOptional     = 9

	tensorTypeElem  = 1
	tensorTypeShape = 2
	shapeDim        = 1
	dimValue        = 1
	dimParam        = 2
)

// fields walks the top-level fields of one protobuf message.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func parseSignature(data []byte) (Signature, error) {
	var sig Signature
	var graph []byte
	var producer, producerVersion string
	err := fields(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == modelIRVersion && typ == protowire.VarintType:
			sig.Meta.IRVersion = int64(x)
		case num == modelProducerName && typ == protowire.BytesType:
			producer = string(v)
		case num == modelProducerVersion && typ == protowire.BytesType:
			producerVersion = string(v)
		case num == modelDomain && typ == protowire.BytesType:
			sig.Meta.Domain = string(v)
		case num == modelVersion && typ == protowire.VarintType:
			sig.Meta.ModelVersion = int64(x)
		case num == modelDoc && typ == protowire.BytesType:
			sig.Meta.Description = string(v)
		case num == modelGraph && typ == protowire.BytesType:
			graph = v
		case num == modelOpset && typ == protowire.BytesType:
			var domain string
			var version int64
			_ = fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				if n == 1 && t == protowire.BytesType {
					domain = string(v)
				} else if n == 2 && t == protowire.VarintType {
					version = int64(x)
				}
				return nil
			})
			if domain == "" {
				domain = "ai.onnx"
			}
			sig.Meta.Opsets = append(sig.Meta.Opsets, fmt.Sprintf("%s v%d", domain, version))
		case num == modelMetadataProps && typ == protowire.BytesType:
			var k, val string
			_ = fields(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
				if n == 1 && t == protowire.BytesType {
					k = string(v)
				} else if n == 2 && t == protowire.BytesType {
					val = string(v)
				}
				return nil
			})
			if sig.Meta.Custom == nil {
				sig.Meta.Custom = map[string]string{}
			}
			sig.Meta.Custom[k] = val
		}
		return nil
	})
	if err != nil {
		return sig, fmt.Errorf("not an ONNX model: %w", err)
	}
	if graph == nil {
		return sig, errNotONNX
	}
	sig.Meta.Producer = strings.TrimSpace(producer + " " + producerVersion)
	var inputs []Port
	inits := map[string]bool{}
	err = fields(graph, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case graphName:
			sig.Meta.Graph = string(v)
		case graphInitializer:
			sig.Meta.Initializers++
			return fields(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
				switch {
				case t != protowire.BytesType:
				case n == tensorProtoName:
					inits[string(v)] = true
				case n == tensorProtoRawData:
					sig.Meta.InitializerSize += int64(len(v))
				case n == tensorProtoExternalData:
					var key, value string
					_ = fields(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
						if t == protowire.BytesType && n == stringEntryKey {
							key = string(v)
						} else if t == protowire.BytesType && n == stringEntryValue {
							value = string(v)
						}
						return nil
					})
					if key == "location" && !slices.Contains(sig.Meta.ExternalData, value) {
						sig.Meta.ExternalData = append(sig.Meta.ExternalData, value)
					}
				}
				return nil
			})
		case graphInput, graphOutput:
			p, err := parseValueInfo(v)
			if err != nil {
				return err
			}
			if num == graphInput {
				inputs = append(inputs, p)
			} else {
				sig.Outputs = append(sig.Outputs, p)
			}
		}
		return nil
	})
	if err != nil {
		return sig, fmt.Errorf("not an ONNX model: %w", err)
	}
	sort.Strings(sig.Meta.ExternalData)
	for _, p := range inputs {
		if !inits[p.Name] {
			sig.Inputs = append(sig.Inputs, p)
		}
	}
	return sig, nil
}

func parseValueInfo(b []byte) (Port, error) {
	var p Port
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case valueInfoName:
			p.Name = string(v)
		case valueInfoDoc:
			p.Doc = string(v)
		case valueInfoType:
			return parseType(v, &p)
		}
		return nil
	})
	return p, err
}

// parseType fills p's kind, type description, and for a tensor its element
// type and shape.
func parseType(b []byte, p *Port) error {
	desc, err := typeDesc(b, p)
	p.Type = desc
	return err
}

// typeDesc describes a TypeProto in ONNX's notation; when p is not nil it
// also fills p's Kind, DType, Shape and Dims from it.
func typeDesc(b []byte, p *Port) (string, error) {
	desc := "unknown"
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case typeTensor, typeSparseTensor:
			var dt DType
			var shape []int64
			var dims []string
			hasShape := false
			err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch {
				case n == tensorTypeElem && t == protowire.VarintType:
					dt = DType(x)
				case n == tensorTypeShape && t == protowire.BytesType:
					hasShape = true
					shape, dims = []int64{}, []string{}
					return fields(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
						if n != shapeDim || t != protowire.BytesType {
							return nil
						}
						size, name := int64(-1), ""
						err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
							if n == dimValue && t == protowire.VarintType {
								size = int64(x)
							} else if n == dimParam && t == protowire.BytesType {
								name = string(v)
							}
							return nil
						})
						shape, dims = append(shape, size), append(dims, name)
						return err
					})
				}
				return nil
			})
			kind, word := Tensor, "tensor"
			if num == typeSparseTensor {
				kind, word = SparseTensor, "sparse_tensor"
			}
			desc = fmt.Sprintf("%s(%s)", word, onnxTypeName(dt))
			if p != nil {
				p.Kind, p.DType = kind, dt
				if hasShape {
					p.Shape, p.Dims = shape, dims
				}
			}
			return err
		case typeSequence, typeOptional:
			var inner string
			err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
				if n == 1 && t == protowire.BytesType {
					var err error
					inner, err = typeDesc(v, nil)
					return err
				}
				return nil
			})
			word, kind := "seq", Sequence
			if num == typeOptional {
				word, kind = "optional", Optional
			}
			desc = fmt.Sprintf("%s(%s)", word, inner)
			if p != nil {
				p.Kind = kind
			}
			return err
		case typeMap:
			var key DType
			var val string
			err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				if n == 1 && t == protowire.VarintType {
					key = DType(x)
				} else if n == 2 && t == protowire.BytesType {
					var err error
					val, err = typeDesc(v, nil)
					return err
				}
				return nil
			})
			desc = fmt.Sprintf("map(%s,%s)", onnxTypeName(key), val)
			if p != nil {
				p.Kind = Map
			}
			return err
		}
		return nil
	})
	return desc, err
}

// onnxTypeName is ONNX's own name of an element type, as in "tensor(float)".
func onnxTypeName(d DType) string {
	switch d {
	case Float32:
		return "float"
	case Float64:
		return "double"
	}
	return d.String()
}
