package ort

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// Binding is one named input or output of a model and the tensor that holds
// it.
type Binding struct {
	// Name is the model's name for the input or output.
	Name string
	// Value is the tensor; it must have the shape and element type the
	// model declares.
	Value ort.Value
}

// Session is one ONNX Runtime session bound to fixed input and output
// tensors: Run reads the inputs' current contents and overwrites the
// outputs'. A Session owns its tensors; Close destroys them with the
// session. It must be used by one goroutine at a time.
type Session struct {
	// sess is nil once closed.
	sess *ort.AdvancedSession
	// values are the input then output tensors, destroyed by Close.
	values []ort.Value
	// opts are the options the session was opened with.
	opts Options
}

// Open opens the ONNX model file at model with options opts, bound to inputs
// and outputs, loading ONNX Runtime first if needed (Init("")). The tensors
// are onnxruntime_go's, so they must be made after ONNX Runtime is loaded:
// call Init("") before making them, or let OpenModel allocate every tensor.
// Open refuses a binding with a nil value, a name the model lacks, or a
// non-tensor input or output. It takes ownership of every tensor in inputs
// and outputs, also when it fails: the caller never destroys them.
func Open(model string, inputs, outputs []Binding, opts Options) (*Session, error) {
	data, err := readFile(model)
	if err != nil {
		destroyAll(inputs, outputs)
		return nil, fmt.Errorf("reading the ONNX model: %w", err)
	}
	return openData(data, model, inputs, outputs, opts)
}

// openData is Open for a model already in memory; name is its path, for
// error messages.
func openData(data []byte, name string, inputs, outputs []Binding, opts Options) (*Session, error) {
	if err := opts.Validate(); err != nil {
		destroyAll(inputs, outputs)
		return nil, err
	}
	if err := checkBindings(data, name, inputs, outputs); err != nil {
		destroyAll(inputs, outputs)
		return nil, err
	}
	if err := Init(""); err != nil {
		destroyAll(inputs, outputs)
		return nil, err
	}
	so, err := opts.sessionOptions()
	if err != nil {
		destroyAll(inputs, outputs)
		return nil, err
	}
	defer so.Destroy()
	inNames, inValues := split(inputs)
	outNames, outValues := split(outputs)
	sess, err := ort.NewAdvancedSessionWithONNXData(data, inNames, outNames, inValues, outValues, so)
	if err != nil {
		destroyAll(inputs, outputs)
		return nil, fmt.Errorf("opening %s with %v: %w", name, opts, err)
	}
	return &Session{sess: sess, values: append(inValues, outValues...), opts: opts}, nil
}

// checkBindings refuses, before ONNX Runtime sees them, bindings without a
// value, naming no port of the model, or binding a port that is not a
// tensor (ONNX Runtime would fill a preallocated sequence with nothing).
func checkBindings(data []byte, name string, inputs, outputs []Binding) error {
	sig, err := parseSignature(data)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	for _, side := range []struct {
		what  string
		bs    []Binding
		ports []Port
	}{{"input", inputs, sig.Inputs}, {"output", outputs, sig.Outputs}} {
		for _, b := range side.bs {
			p, ok := find1(side.ports, b.Name)
			switch {
			case !ok:
				return fmt.Errorf("%s has no %s %q (its %ss: %s)", name, side.what, b.Name, side.what, portNames(side.ports))
			case b.Value == nil:
				return fmt.Errorf("%s %q of %s has no value (nil): create its tensor first, or let OpenModel allocate every tensor", side.what, b.Name, name)
			case p.Kind != Tensor:
				return fmt.Errorf("%s: %s %q is a %s, %s: Open binds tensors only, so it cannot run this model", name, side.what, b.Name, p.Kind, p.Type)
			}
		}
	}
	return nil
}

func split(bs []Binding) ([]string, []ort.Value) {
	names := make([]string, len(bs))
	values := make([]ort.Value, len(bs))
	for i, b := range bs {
		names[i], values[i] = b.Name, b.Value
	}
	return names, values
}

func destroyAll(lists ...[]Binding) {
	for _, l := range lists {
		for _, b := range l {
			if b.Value != nil {
				b.Value.Destroy()
			}
		}
	}
}

// Run runs the model once on the inputs' current contents, overwriting the
// outputs. It does not allocate (except to build an error), and is a Step:
// its signature matches decodegap.Step. After Close it returns an error.
func (s *Session) Run() error {
	if s.sess == nil {
		return errClosed
	}
	return s.sess.Run()
}

var errClosed = errors.New("ort: the session is closed: open a new one (ort.Open or ort.OpenVAD)")

// Options returns the options the session was opened with.
func (s *Session) Options() Options { return s.opts }

// Close releases the ONNX Runtime session and destroys its tensors. It is
// safe to call more than once; later calls do nothing and return nil.
func (s *Session) Close() error {
	if s.sess == nil {
		return nil
	}
	errs := []error{s.sess.Destroy()}
	s.sess = nil
	for _, v := range s.values {
		errs = append(errs, v.Destroy())
	}
	s.values = nil
	return errors.Join(errs...)
}
