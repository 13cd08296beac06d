package ort

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// Spinning is whether ONNX Runtime's thread pools busy-wait for work.
type Spinning int

const (
	// SpinOn lets pool threads spin (busy-wait) between tasks and the
	// caller spin while waiting for them: lower latency, CPU burnt in every
	// gap. It is ONNX Runtime's default and the zero value.
	SpinOn Spinning = iota
	// SpinOff makes pool threads block as soon as they run out of work.
	SpinOff
)

// String returns "on" or "off".
func (s Spinning) String() string {
	switch s {
	case SpinOn:
		return "on"
	case SpinOff:
		return "off"
	}
	return fmt.Sprintf("Spinning(%d)", int(s))
}

// Mode is ONNX Runtime's execution mode.
type Mode int

const (
	// Sequential runs graph nodes one after another, each possibly split
	// across the intra-op pool. It is ONNX Runtime's default and the zero
	// value.
	Sequential Mode = iota
	// Parallel also runs independent graph nodes at once on the inter-op
	// pool.
	Parallel
)

// String returns "sequential" or "parallel".
func (m Mode) String() string {
	switch m {
	case Sequential:
		return "sequential"
	case Parallel:
		return "parallel"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Options are the session options compared by benchmarks. The zero Options
// are ONNX Runtime's defaults.
type Options struct {
	// IntraOpThreads is the number of threads that split one operator's
	// work, counting the thread that calls Run. 0 means ONNX Runtime's
	// default (one per physical core); 1 runs everything on the calling
	// thread and starts no intra-op pool threads. Negative is an error.
	IntraOpThreads int
	// InterOpThreads is the number of threads that run independent graph
	// nodes at once; used only when Mode is Parallel. 0 means ONNX
	// Runtime's default. Negative is an error.
	InterOpThreads int
	// Spinning sets both session.intra_op.allow_spinning and
	// session.inter_op.allow_spinning.
	Spinning Spinning
	// Mode is the execution mode.
	Mode Mode
}

// String returns the options in a form fit for a benchmark name, such as
// "intra=1,inter=0,spin=off,sequential" (0 is ONNX Runtime's default).
func (o Options) String() string {
	return fmt.Sprintf("intra=%d,inter=%d,spin=%s,%s", o.IntraOpThreads, o.InterOpThreads, o.Spinning, o.Mode)
}

// Validate returns an error naming the first field out of range.
func (o Options) Validate() error {
	switch {
	case o.IntraOpThreads < 0:
		return fmt.Errorf("Options.IntraOpThreads is %d: use 0 for ONNX Runtime's default or a positive thread count", o.IntraOpThreads)
	case o.InterOpThreads < 0:
		return fmt.Errorf("Options.InterOpThreads is %d: use 0 for ONNX Runtime's default or a positive thread count", o.InterOpThreads)
	case o.Spinning != SpinOn && o.Spinning != SpinOff:
		return fmt.Errorf("Options.Spinning is %d: use ort.SpinOn or ort.SpinOff", int(o.Spinning))
	case o.Mode != Sequential && o.Mode != Parallel:
		return fmt.Errorf("Options.Mode is %d: use ort.Sequential or ort.Parallel", int(o.Mode))
	}
	return nil
}

// Config keys set by sessionOptions, from ONNX Runtime's
// onnxruntime_session_options_config_keys.h.
const (
	keyIntraSpin = "session.intra_op.allow_spinning"
	keyInterSpin = "session.inter_op.allow_spinning"
)

// sessionOptions builds ONNX Runtime session options from o; the caller
// destroys them. The environment must be initialized.
func (o Options) sessionOptions() (*ort.SessionOptions, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("creating ONNX Runtime session options: %w", err)
	}
	spin := "1"
	if o.Spinning == SpinOff {
		spin = "0"
	}
	mode := ort.ExecutionMode(ort.ExecutionModeSequential)
	if o.Mode == Parallel {
		mode = ort.ExecutionModeParallel
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"Options.IntraOpThreads", func() error { return so.SetIntraOpNumThreads(o.IntraOpThreads) }},
		{"Options.InterOpThreads", func() error { return so.SetInterOpNumThreads(o.InterOpThreads) }},
		{keyIntraSpin, func() error { return so.AddSessionConfigEntry(keyIntraSpin, spin) }},
		{keyInterSpin, func() error { return so.AddSessionConfigEntry(keyInterSpin, spin) }},
		{"Options.Mode", func() error { return so.SetExecutionMode(mode) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			so.Destroy()
			return nil, fmt.Errorf("setting %s for %v: %w", s.what, o, err)
		}
	}
	return so, nil
}
