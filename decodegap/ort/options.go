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

// Toggle is an on/off switch whose zero value leaves ONNX Runtime's default.
type Toggle int

const (
	// Default leaves the setting as ONNX Runtime (or, for
	// Options.InterSpinning, Options.Spinning) has it.
	Default Toggle = iota
	// On turns the setting on.
	On
	// Off turns the setting off.
	Off
)

// String returns "default", "on" or "off".
func (t Toggle) String() string {
	switch t {
	case Default:
		return "default"
	case On:
		return "on"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Toggle(%d)", int(t))
}

// GraphOpt is ONNX Runtime's graph optimisation level.
type GraphOpt int

const (
	// OptDefault leaves ONNX Runtime's default (all optimisations).
	OptDefault GraphOpt = iota
	// OptDisable turns graph optimisation off (ORT_DISABLE_ALL).
	OptDisable
	// OptBasic applies the basic, provider-independent rewrites.
	OptBasic
	// OptExtended adds the extended fusions.
	OptExtended
	// OptAll adds the layout optimisations (ORT_ENABLE_ALL).
	OptAll
)

var graphOptNames = []string{"default", "disable", "basic", "extended", "all"}

// String returns "default", "disable", "basic", "extended" or "all".
func (g GraphOpt) String() string {
	if g >= 0 && int(g) < len(graphOptNames) {
		return graphOptNames[g]
	}
	return fmt.Sprintf("GraphOpt(%d)", int(g))
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
	// Spinning sets session.intra_op.allow_spinning, and also
	// session.inter_op.allow_spinning unless InterSpinning says otherwise.
	Spinning Spinning
	// InterSpinning sets session.inter_op.allow_spinning on its own;
	// Default follows Spinning.
	InterSpinning Toggle
	// Mode is the execution mode.
	Mode Mode
	// GraphOpt is the graph optimisation level; OptDefault is ONNX
	// Runtime's (all).
	GraphOpt GraphOpt
	// Arena turns the CPU memory arena on or off; Default is ONNX
	// Runtime's (on).
	Arena Toggle
	// Custom, when set, is called last with the session options built from
	// the fields above, to set anything else onnxruntime_go offers
	// (execution providers, profiling, config entries). It must not keep
	// or destroy so. Options holding a Custom are named with ",custom".
	Custom func(so *ort.SessionOptions) error
}

// String returns the options in a form fit for a benchmark name, such as
// "intra=1,inter=0,spin=off,sequential" (0 is ONNX Runtime's default).
//
// The fields added since (InterSpinning, GraphOpt, Arena, Custom) are
// appended only when set: ",interspin=off,opt=basic,arena=off,custom".
func (o Options) String() string {
	s := fmt.Sprintf("intra=%d,inter=%d,spin=%s,%s", o.IntraOpThreads, o.InterOpThreads, o.Spinning, o.Mode)
	if o.InterSpinning != Default {
		s += ",interspin=" + o.InterSpinning.String()
	}
	if o.GraphOpt != OptDefault {
		s += ",opt=" + o.GraphOpt.String()
	}
	if o.Arena != Default {
		s += ",arena=" + o.Arena.String()
	}
	if o.Custom != nil {
		s += ",custom"
	}
	return s
}

// Validate returns an error naming the first field out of range.
func (o Options) Validate() error {
	switch {
	case o.IntraOpThreads < 0:
		return fmt.Errorf("Options.IntraOpThreads is %d: use 0 for ONNX Runtime's default or a positive thread count", o.IntraOpThreads)
	case o.InterOpThreads < 0:
		return fmt.Errorf("Options.InterOpThreads is %d: use 0 for ONNX Runtime's default or a positive thread count", o.InterOpThreads)
	case o.IntraOpThreads > MaxThreads:
		return &LimitError{What: "Options.IntraOpThreads", Size: int64(o.IntraOpThreads), Limit: MaxThreads, Unit: "threads"}
	case o.InterOpThreads > MaxThreads:
		return &LimitError{What: "Options.InterOpThreads", Size: int64(o.InterOpThreads), Limit: MaxThreads, Unit: "threads"}
	case o.Spinning != SpinOn && o.Spinning != SpinOff:
		return fmt.Errorf("Options.Spinning is %d: use ort.SpinOn or ort.SpinOff", int(o.Spinning))
	case o.Mode != Sequential && o.Mode != Parallel:
		return fmt.Errorf("Options.Mode is %d: use ort.Sequential or ort.Parallel", int(o.Mode))
	case o.InterSpinning < Default || o.InterSpinning > Off:
		return fmt.Errorf("Options.InterSpinning is %d: use ort.Default, ort.On or ort.Off", int(o.InterSpinning))
	case o.GraphOpt < OptDefault || o.GraphOpt > OptAll:
		return fmt.Errorf("Options.GraphOpt is %d: use one of ort.OptDefault, OptDisable, OptBasic, OptExtended, OptAll", int(o.GraphOpt))
	case o.Arena < Default || o.Arena > Off:
		return fmt.Errorf("Options.Arena is %d: use ort.Default, ort.On or ort.Off", int(o.Arena))
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
	interSpin := spin
	switch o.InterSpinning {
	case On:
		interSpin = "1"
	case Off:
		interSpin = "0"
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
		{keyInterSpin, func() error { return so.AddSessionConfigEntry(keyInterSpin, interSpin) }},
		{"Options.Mode", func() error { return so.SetExecutionMode(mode) }},
	}
	if o.GraphOpt != OptDefault {
		level := []ort.GraphOptimizationLevel{OptDisable: ort.GraphOptimizationLevelDisableAll,
			OptBasic: ort.GraphOptimizationLevelEnableBasic, OptExtended: ort.GraphOptimizationLevelEnableExtended,
			OptAll: ort.GraphOptimizationLevelEnableAll}[o.GraphOpt]
		steps = append(steps, struct {
			what string
			do   func() error
		}{"Options.GraphOpt", func() error { return so.SetGraphOptimizationLevel(level) }})
	}
	if o.Arena != Default {
		steps = append(steps, struct {
			what string
			do   func() error
		}{"Options.Arena", func() error { return so.SetCpuMemArena(o.Arena == On) }})
	}
	if o.Custom != nil {
		steps = append(steps, struct {
			what string
			do   func() error
		}{"Options.Custom", func() error { return o.Custom(so) }})
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			so.Destroy()
			return nil, fmt.Errorf("setting %s for %v: %w", s.what, o, err)
		}
	}
	return so, nil
}
