package ort

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

// ModelConfig describes a generic step on any ONNX model. Only Path is
// required: inputs are zeros (masks ones, a cache-branch boolean whether
// state is carried: DefaultFills), state is carried by the automatic rule
// (StatePairs), and the options are ONNX Runtime's defaults.
type ModelConfig struct {
	// Path is the .onnx file. It is read once per process.
	Path string
	// Options are the session options.
	Options Options
	// Dims sets dynamic axes: by symbolic name ("batch": 1), or by input
	// or output and axis as "NAME@AXIS" for an unnamed one. Every dynamic
	// axis of every input must be set; an output axis left unset is sized
	// by one run at open. A key no port uses is an error.
	Dims map[string]int64
	// Shapes sets inputs' whole shapes by name ("input": {1, 512}), an
	// alternative to Dims for unnamed axes; a fixed axis must keep its size.
	Shapes map[string][]int64
	// Inputs fills inputs by name; an input not listed is zeros but for
	// those DefaultFills names (masks: ones; a cache-branch boolean: whether
	// state is carried), and an input fed by state starts from its fill.
	Inputs map[string]Fill
	// State carries outputs into inputs by name (output → input), beside
	// the automatic rule.
	State map[string]string
	// NoAutoState turns the automatic state rule off: only State is carried.
	NoAutoState bool
	// Seed seeds the Random fills: input i draws from PCG(Seed, i).
	Seed uint64
	// StrictFills refuses to open (a *FillsError) when a rate or another
	// scalar or one-element input has no fill in Inputs (DefaultFills):
	// zeros there may pick another branch of the model than the one meant.
	StrictFills bool
}

// Buffer is one input or output tensor of a Model, in memory the Model
// owns: Bytes holds its elements, little-endian, row-major.
type Buffer struct {
	// Port is the input or output, with Shape resolved (no -1).
	Port Port
	// Bytes is the tensor's memory; valid until the Model is closed. A
	// caller may write an input's bytes between steps.
	Bytes []byte
	value ort.Value
	// store copies a scalar output's value into Bytes after a run
	// (onnxruntime_go keeps a rank-0 tensor's memory private); nil for
	// tensors of rank ≥ 1, whose memory is Bytes itself.
	store func()
}

// Len returns the number of elements.
func (b *Buffer) Len() int { return len(b.Bytes) / b.Port.DType.Size() }

// At returns element i as a float64 (exact for every type but 64-bit
// integers beyond ±2⁵³; bool is 0 or 1).
func (b *Buffer) At(i int) float64 { return get(b.Port.DType, b.Bytes, i) }

// Set stores v as element i, converted to the element type.
func (b *Buffer) Set(i int, v float64) { put(b.Port.DType, b.Bytes, i, v) }

// feed streams a file into an input, one tensor per step.
type feed struct {
	dst, src []byte
	// pos is the offset of the next tensor in src.
	pos int
}

// carry copies an output into an input after each step: whole when axis
// is -1, else the last rows along the window axis.
type carry struct {
	dst, src []byte
	// outer is the product of the axes before the window axis; dstRow and
	// srcRow the bytes of one outer slice of dst and src.
	outer, dstRow, srcRow int
}

func (c *carry) do() {
	if c.outer == 0 {
		copy(c.dst, c.src)
		return
	}
	skip := c.srcRow - c.dstRow
	for o := 0; o < c.outer; o++ {
		copy(c.dst[o*c.dstRow:(o+1)*c.dstRow], c.src[o*c.srcRow+skip:(o+1)*c.srcRow])
	}
}

// Model is a generic step on one ONNX Runtime session: each Step feeds the
// inputs (constants, or the next tensor of a file), runs the model, and
// copies the carried outputs into their inputs. It owns its session and
// buffers; Close releases them. One goroutine at a time.
type Model struct {
	cfg   ModelConfig
	sig   Signature
	sess  *ort.AdvancedSession
	ins   []*Buffer
	outs  []*Buffer
	pairs []Pair
	feeds []feed
	carry []carry
	// initial holds each state input's bytes at open, for Reset.
	initial [][]byte
	// stateIn are the state inputs' buffers, in the order of initial.
	stateIn []*Buffer
	// stores are the scalar outputs (Buffer.store), copied after each run.
	stores []*Buffer
	steps  int64
	// defaults are the fills DefaultFills gave inputs cfg.Inputs left out.
	defaults []DefaultFill
}

// OpenModel opens cfg.Path as a step, loading ONNX Runtime first if needed.
// It refuses, naming the input or output and its type, a model with a
// non-tensor input or output (sequence, map, optional, sparse) or an element
// type the step cannot allocate (string, complex, 8- and 4-bit floats and
// ints). The caller must Close the Model.
func OpenModel(cfg ModelConfig) (*Model, error) {
	sig, err := Inspect(cfg.Path)
	if err != nil {
		return nil, err
	}
	if err := Runnable(sig); err != nil {
		return nil, err
	}
	pairs, _, err := StatePairs(sig, cfg.State, !cfg.NoAutoState)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	// On the declared shapes: a scalar is one, before resolve.
	fills, defaults, err := applyDefaults(sig, cfg, pairs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	if err := applyShapes(&sig, cfg.Shapes); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	if err := resolve(&sig, cfg.Dims); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	if err := checkSizes(sig); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	for name := range cfg.Inputs {
		if _, ok := sig.Input(name); !ok {
			return nil, fmt.Errorf("%s: a fill names input %q, which the model does not have (inputs: %s)", cfg.Path, name, portNames(sig.Inputs))
		}
	}
	if err := Init(""); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, sig: sig, defaults: defaults}
	ok := false
	defer func() {
		if !ok {
			m.Close()
		}
	}()
	for i, p := range sig.Inputs {
		b, err := newBuffer(p, func(b *Buffer) error { return m.fill(i, b, fills[p.Name]) })
		if err != nil {
			return nil, fmt.Errorf("%s: input %q: %w", cfg.Path, p.Name, err)
		}
		m.ins = append(m.ins, b)
	}
	if err := m.sizeOutputs(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	if err := checkSizes(m.sig); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	for _, p := range sig.Outputs {
		b, err := newBuffer(p, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: output %q: %w", cfg.Path, p.Name, err)
		}
		m.outs = append(m.outs, b)
	}
	if m.pairs, err = m.plan(pairs); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	for _, b := range m.outs {
		if b.store != nil {
			m.stores = append(m.stores, b)
		}
	}
	so, err := cfg.Options.sessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	// From the path, so that ONNX Runtime finds a model's external data
	// files beside it.
	m.sess, err = ort.NewAdvancedSession(cfg.Path, names(m.ins), names(m.outs), values(m.ins), values(m.outs), so)
	if err != nil {
		return nil, fmt.Errorf("opening %s with %v: %w", cfg.Path, cfg.Options, err)
	}
	ok = true
	return m, nil
}

// Runnable returns nil when the generic step can run every input and
// output of sig, else an error naming the first it cannot and its type.
func Runnable(sig Signature) error {
	for _, side := range []struct {
		what  string
		ports []Port
	}{{"input", sig.Inputs}, {"output", sig.Outputs}} {
		for _, p := range side.ports {
			switch {
			case p.Kind != Tensor:
				return fmt.Errorf("%s: %s %q is a %s, %s: the generic step runs tensors only, so it cannot open this model",
					sig.Path, side.what, p.Name, p.Kind, p.Type)
			case !p.DType.Supported():
				return fmt.Errorf("%s: %s %q is a tensor of %s: the generic step runs float32/64, float16, bfloat16, int8…int64, uint8…uint64 and bool tensors only, so it cannot open this model",
					sig.Path, side.what, p.Name, p.DType)
			case p.Shape == nil:
				return fmt.Errorf("%s: %s %q declares no shape (%s of any rank): the generic step needs the rank, so it cannot open this model",
					sig.Path, side.what, p.Name, p.Type)
			}
		}
	}
	return nil
}

// DimsError says which dynamic axes of the inputs were left unset.
type DimsError struct {
	// Missing describes each: the name, or NAME@AXIS for an unnamed axis,
	// with the input and axis, as `"batch" (input "x" axis 0)`.
	Missing []string
}

// Error names the axes and the fields that set them.
func (e *DimsError) Error() string {
	return fmt.Sprintf("dynamic dimensions not set: %s; set each in ModelConfig.Dims or the input's whole shape in ModelConfig.Shapes", strings.Join(e.Missing, ", "))
}

// newBuffer allocates a tensor for p (shape resolved), 8-byte aligned,
// calling fill (when not nil) on its bytes before the tensor is made.
func newBuffer(p Port, fill func(*Buffer) error) (*Buffer, error) {
	size, err := tensorBytes(p, "tensor")
	if err != nil {
		return nil, err
	}
	b := &Buffer{Port: p}
	shape := ort.NewShape(p.Shape...)
	if size == 0 {
		if fill != nil {
			if err := fill(b); err != nil {
				return nil, err
			}
		}
		v, err := emptyTensor(p.DType, shape)
		if err != nil {
			return nil, err
		}
		b.value = v
		return b, nil
	}
	words := make([]uint64, (size+7)/8)
	b.Bytes = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	if fill != nil {
		if err := fill(b); err != nil {
			return nil, err
		}
	}
	if len(shape) == 0 {
		b.value, b.store, err = newScalar(p.DType, b.Bytes)
	} else {
		b.value, err = ort.NewCustomDataTensor(shape, b.Bytes, ort.TensorElementDataType(p.DType))
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// fill writes input i's initial contents and, for a file of several
// tensors, registers its feed.
func (m *Model) fill(i int, b *Buffer, f Fill) error {
	switch f.Kind {
	case Zeros:
		clear(b.Bytes)
	case Const:
		for j := range b.Len() {
			b.Set(j, f.Value)
		}
	case Random:
		if !(f.Lo < f.Hi) {
			return fmt.Errorf("fill %v: Lo must be < Hi", f)
		}
		fillRandom(b.Port.DType, b.Bytes, f.Lo, f.Hi, rand.New(rand.NewPCG(m.cfg.Seed, uint64(i))))
	case File:
		src, err := readFile(f.Path)
		if err != nil {
			return fmt.Errorf("fill %v: %w", f, err)
		}
		if len(b.Bytes) == 0 {
			return nil
		}
		if len(src) == 0 || len(src)%len(b.Bytes) != 0 {
			return fmt.Errorf("fill %v: the file has %d bytes, but one %s tensor of shape %s is %d bytes: the file must hold a whole number of tensors (little-endian %s)",
				f, len(src), b.Port.DType, b.Port.ShapeString(), len(b.Bytes), b.Port.DType)
		}
		copy(b.Bytes, src)
		if len(src) > len(b.Bytes) && len(b.Port.Shape) == 0 {
			return fmt.Errorf("fill %v: the file holds %d values, but the input is a scalar (rank 0), which the generic step sets once: give a file of one value", f, len(src)/len(b.Bytes))
		}
		if len(src) > len(b.Bytes) {
			m.feeds = append(m.feeds, feed{dst: b.Bytes, src: src})
		}
	default:
		return fmt.Errorf("fill kind %d: use Zeros, Const, Random or File", int(f.Kind))
	}
	return nil
}

// sizeOutputs sizes outputs whose shape still has a dynamic axis by one run
// of a throwaway session on the inputs' initial contents.
func (m *Model) sizeOutputs() error {
	var todo []int
	for i, p := range m.sig.Outputs {
		for _, d := range p.Shape {
			if d < 0 {
				todo = append(todo, i)
				break
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	outNames := make([]string, len(todo))
	for j, i := range todo {
		outNames[j] = m.sig.Outputs[i].Name
	}
	s, err := ort.NewDynamicAdvancedSession(m.cfg.Path, names(m.ins), outNames, nil)
	if err != nil {
		return fmt.Errorf("sizing outputs %s by one run: %w", strings.Join(outNames, ", "), err)
	}
	defer s.Destroy()
	got := make([]ort.Value, len(todo))
	if err := s.Run(values(m.ins), got); err != nil {
		return fmt.Errorf("sizing outputs %s by one run: %w", strings.Join(outNames, ", "), err)
	}
	for j, i := range todo {
		if got[j] == nil {
			return fmt.Errorf("sizing output %q by one run: ONNX Runtime returned no value", outNames[j])
		}
		m.sig.Outputs[i].Shape = append([]int64(nil), got[j].GetShape()...)
		got[j].Destroy()
	}
	return nil
}

// plan checks the state pairs against the resolved shapes and builds the
// copies Step makes.
func (m *Model) plan(pairs []Pair) ([]Pair, error) {
	for k, p := range pairs {
		out, in := m.Output(p.Output), m.Input(p.Input)
		if len(in.Port.Shape) == 0 {
			return nil, fmt.Errorf("state %s→%s: input %q is a scalar (rank 0), which the generic step sets once and cannot carry state into", p.Output, p.Input, p.Input)
		}
		axis, why := pairAxis(out.Port, in.Port)
		if why != "" {
			return nil, fmt.Errorf("state %s→%s: %s", p.Output, p.Input, why)
		}
		pairs[k].Axis = axis
		c := carry{dst: in.Bytes, src: out.Bytes}
		if axis >= 0 {
			outer, inner := 1, in.Port.DType.Size()
			for a := range axis {
				outer *= int(in.Port.Shape[a])
			}
			for a := axis + 1; a < len(in.Port.Shape); a++ {
				inner *= int(in.Port.Shape[a])
			}
			c.outer = outer
			c.dstRow = int(in.Port.Shape[axis]) * inner
			c.srcRow = int(out.Port.Shape[axis]) * inner
			if outer == 0 {
				c = carry{}
			}
		}
		m.carry = append(m.carry, c)
		m.initial = append(m.initial, append([]byte(nil), in.Bytes...))
		m.stateIn = append(m.stateIn, in)
	}
	return pairs, nil
}

func names(bs []*Buffer) []string {
	n := make([]string, len(bs))
	for i, b := range bs {
		n[i] = b.Port.Name
	}
	return n
}

func values(bs []*Buffer) []ort.Value {
	v := make([]ort.Value, len(bs))
	for i, b := range bs {
		v[i] = b.value
	}
	return v
}

// Step runs one step: it feeds the next tensor of every file input, runs the
// model, and carries the state outputs into their inputs. Its signature
// matches decodegap.Step. It does not allocate (except to build an error).
func (m *Model) Step() error {
	if m.sess == nil {
		return errClosed
	}
	for i := range m.feeds {
		f := &m.feeds[i]
		n := copy(f.dst, f.src[f.pos:])
		f.pos += n
		if f.pos == len(f.src) {
			f.pos = 0
		}
	}
	if err := m.sess.Run(); err != nil {
		return fmt.Errorf("running %s, step %d: %w", m.cfg.Path, m.steps, err)
	}
	for _, b := range m.stores {
		b.store()
	}
	for i := range m.carry {
		m.carry[i].do()
	}
	m.steps++
	return nil
}

// Steps returns the number of steps run since open or Reset.
func (m *Model) Steps() int64 { return m.steps }

// Reset restores the state inputs' initial contents and rewinds file
// inputs: the next step is the first of a new stream.
func (m *Model) Reset() {
	for i, b := range m.stateIn {
		copy(b.Bytes, m.initial[i])
	}
	for i := range m.feeds {
		f := &m.feeds[i]
		copy(f.dst, f.src)
		f.pos = 0
	}
	m.steps = 0
}

// Signature returns the model's signature with the shapes this Model runs.
func (m *Model) Signature() Signature { return m.sig }

// DefaultFills returns the fills given to inputs that ModelConfig.Inputs
// left out and that zeros would not describe honestly (see DefaultFills):
// a caller warns about those whose Reason is Guessed.
func (m *Model) DefaultFills() []DefaultFill { return m.defaults }

// Pairs returns the state carried after each step.
func (m *Model) Pairs() []Pair { return m.pairs }

// Config returns the configuration the Model was opened with.
func (m *Model) Config() ModelConfig { return m.cfg }

// Options returns the session options.
func (m *Model) Options() Options { return m.cfg.Options }

// Inputs returns the input buffers, in the model's order.
func (m *Model) Inputs() []*Buffer { return m.ins }

// Outputs returns the output buffers, in the model's order.
func (m *Model) Outputs() []*Buffer { return m.outs }

// Input returns the input buffer named name, or nil.
func (m *Model) Input(name string) *Buffer { return byName(m.ins, name) }

// Output returns the output buffer named name, or nil.
func (m *Model) Output(name string) *Buffer { return byName(m.outs, name) }

func byName(bs []*Buffer, name string) *Buffer {
	for _, b := range bs {
		if b.Port.Name == name {
			return b
		}
	}
	return nil
}

// Raw returns the underlying onnxruntime_go session, for a direct Run (the
// benchmark that times the step's own cost) or anything the package does
// not wrap. It belongs to the Model: never destroy it.
func (m *Model) Raw() *ort.AdvancedSession { return m.sess }

// Close releases the session and the tensors. It is safe to call more than
// once; a step after Close returns an error.
func (m *Model) Close() error {
	var errs []error
	if m.sess != nil {
		errs = append(errs, m.sess.Destroy())
		m.sess = nil
	}
	for _, b := range append(m.ins, m.outs...) {
		if b.value != nil {
			errs = append(errs, b.value.Destroy())
			b.value = nil
		}
	}
	m.ins, m.outs, m.feeds, m.carry = nil, nil, nil, nil
	return errors.Join(errs...)
}
