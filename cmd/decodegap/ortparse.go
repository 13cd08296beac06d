package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/hostmon"
	"golang.org/x/sys/unix"
)

// parseORTArms parses the -arm flags.
func parseORTArms(specs []string) ([]ortArm, error) {
	var arms []ortArm
	seen := map[string]bool{"null": true}
	for _, s := range specs {
		name, spec := "", s
		if n, rest, ok := strings.Cut(s, ":"); ok && !strings.Contains(n, "=") {
			name, spec = n, rest
		}
		opts, err := parseOptions(spec)
		if err == nil {
			err = opts.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("-arm %q: %v", s, err)
		}
		if name == "" {
			name = strings.NewReplacer("=", "", ",", "-").Replace(spec)
			if name == "" {
				name = "default"
			}
		}
		if strings.ContainsAny(name, " \t/") {
			return nil, fmt.Errorf("-arm %q: the name %q holds a space or '/'; name it NAME:%s", s, name, spec)
		}
		if seen[name] {
			if name == "null" {
				return nil, fmt.Errorf("-arm %q: \"null\" is the null arm's name; name it otherwise", s)
			}
			return nil, fmt.Errorf("-arm %q: two arms are named %q; name one NAME:%s", s, name, spec)
		}
		seen[name] = true
		arms = append(arms, ortArm{name: name, spec: spec, opts: opts})
	}
	return arms, nil
}

// parseOptions parses an arm's KEY=VALUE list; "" is ONNX Runtime's
// defaults.
func parseOptions(spec string) (ort.Options, error) {
	var o ort.Options
	if strings.TrimSpace(spec) == "" {
		return o, nil
	}
	toggle := func(v string) (ort.Toggle, bool) {
		switch v {
		case "on":
			return ort.On, true
		case "off":
			return ort.Off, true
		case "default":
			return ort.Default, true
		}
		return 0, false
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return o, fmt.Errorf("%q: write KEY=VALUE (keys: intra, inter, spin, interspin, mode, opt, arena)", kv)
		}
		bad := fmt.Errorf("%s=%s: ", k, v)
		switch k {
		case "intra", "inter":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return o, fmt.Errorf("%vgive a thread count ≥ 0 (0: ONNX Runtime's default)", bad)
			}
			if k == "intra" {
				o.IntraOpThreads = n
			} else {
				o.InterOpThreads = n
			}
		case "spin":
			switch v {
			case "on":
				o.Spinning = ort.SpinOn
			case "off":
				o.Spinning = ort.SpinOff
			default:
				return o, fmt.Errorf("%vuse on or off", bad)
			}
		case "interspin", "arena":
			t, ok := toggle(v)
			if !ok {
				return o, fmt.Errorf("%vuse on, off or default", bad)
			}
			if k == "arena" {
				o.Arena = t
			} else {
				o.InterSpinning = t
			}
		case "mode":
			switch v {
			case "sequential":
				o.Mode = ort.Sequential
			case "parallel":
				o.Mode = ort.Parallel
			default:
				return o, fmt.Errorf("%vuse sequential or parallel", bad)
			}
		case "opt":
			found := false
			for g := ort.OptDefault; g <= ort.OptAll; g++ {
				if g.String() == v {
					o.GraphOpt, found = g, true
				}
			}
			if !found {
				return o, fmt.Errorf("%vuse disable, basic, extended or all", bad)
			}
		default:
			return o, fmt.Errorf("unknown key %q (keys: intra, inter, spin, interspin, mode, opt, arena)", k)
		}
	}
	return o, nil
}

// parseCPUList parses -cpus ("0,2-3" into [0 2 3]; "" is nil) with
// hostmon's parser of the kernel's list format.
func parseCPUList(s string) ([]int, error) {
	set, err := hostmon.ParseCPUList(s)
	if err != nil {
		return nil, fmt.Errorf("-cpus %q: write a list of CPUs and ranges, e.g. 0,2-3", s)
	}
	if len(set) == 0 {
		return nil, nil
	}
	return []int(set), nil
}

// usableCPUs returns an error naming -cpus when a CPU of cpus is not one
// this process may run on (its affinity mask).
func usableCPUs(cpus []int) error {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return nil // the block's own confinement reports it
	}
	for _, c := range cpus {
		if !allowed.IsSet(c) {
			return fmt.Errorf("-cpus: CPU %d is not one this process may run on", c)
		}
	}
	return nil
}

func gapKind(s string) (decodegap.GapKind, error) {
	for k := decodegap.GapHybrid; k <= decodegap.GapBusy; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("-gap-kind %q: use hybrid, sleep or busy", s)
}

func gapShape(s string) (decodegap.GapShape, error) {
	for g := decodegap.GapConstant; g <= decodegap.GapExponential; g++ {
		if g.String() == s {
			return g, nil
		}
	}
	return 0, fmt.Errorf("-gap-shape %q: use constant, uniform or exponential", s)
}

// onceEach refuses a repeatable flag that names one key twice (two -state
// for one output): a map keeps the last, and the first would be dropped
// without a word. seen maps a key to the value that set it; what names
// the key ("output").
type onceEach struct {
	flag, what string
	seen       map[string]string
}

// set records spec as the value for key, or says which two values both
// set it.
func (o *onceEach) set(key, spec string) error {
	if prev, ok := o.seen[key]; ok {
		return fmt.Errorf("%s %q and %s %q both set %s %q: give one", o.flag, prev, o.flag, spec, o.what, key)
	}
	if o.seen == nil {
		o.seen = map[string]string{}
	}
	o.seen[key] = spec
	return nil
}

// modelConfig builds the model's configuration from the flags. A name
// given twice to -dims, -shape, -input or -state is refused (onceEach).
func (f *ortFlags) modelConfig(model string) (ort.ModelConfig, error) {
	cfg := ort.ModelConfig{Path: model, NoAutoState: f.noAuto, Seed: f.seed}
	dims := onceEach{flag: "-dims", what: "dimension"}
	for _, d := range f.dims {
		for _, kv := range strings.Split(d, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if !ok || k == "" || err != nil || n < 0 {
				return cfg, fmt.Errorf("-dims %q: write NAME=SIZE[,NAME=SIZE...] with sizes ≥ 0, e.g. batch=1,seq=1", d)
			}
			if err := dims.set(strings.TrimSpace(k), strings.TrimSpace(kv)); err != nil {
				return cfg, err
			}
			if cfg.Dims == nil {
				cfg.Dims = map[string]int64{}
			}
			cfg.Dims[strings.TrimSpace(k)] = n
		}
	}
	shapes := onceEach{flag: "-shape", what: "input"}
	for _, s := range f.shapes {
		k, v, ok := strings.Cut(s, "=")
		var shape []int64
		for _, d := range strings.Split(v, "x") {
			n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
			if err != nil || n < 0 {
				ok = false
			}
			shape = append(shape, n)
		}
		if !ok || k == "" || v == "" {
			return cfg, fmt.Errorf("-shape %q: write INPUT=DxDx..., e.g. input=1x512", s)
		}
		if err := shapes.set(k, s); err != nil {
			return cfg, err
		}
		if cfg.Shapes == nil {
			cfg.Shapes = map[string][]int64{}
		}
		cfg.Shapes[k] = shape
	}
	inputs := onceEach{flag: "-input", what: "input"}
	for _, s := range f.inputs {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return cfg, fmt.Errorf("-input %q: write INPUT=SPEC, e.g. sr=16000 or input=file:clip.f32", s)
		}
		if err := inputs.set(k, s); err != nil {
			return cfg, err
		}
		fill, err := ort.ParseFill(v)
		if err != nil {
			return cfg, fmt.Errorf("-input %q: %v", s, err)
		}
		if fill.Kind == ort.File {
			if p, err := filepath.Abs(fill.Path); err == nil {
				fill.Path = p
			}
		}
		if cfg.Inputs == nil {
			cfg.Inputs = map[string]ort.Fill{}
		}
		cfg.Inputs[k] = fill
	}
	state := onceEach{flag: "-state", what: "output"}
	for _, s := range f.state {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" || v == "" {
			return cfg, fmt.Errorf("-state %q: write OUTPUT=INPUT, e.g. stateN=state", s)
		}
		if err := state.set(k, s); err != nil {
			return cfg, err
		}
		if cfg.State == nil {
			cfg.State = map[string]string{}
		}
		cfg.State[k] = v
	}
	return cfg, nil
}

// tolerances parses -tol and -tol-output.
func (f *ortFlags) tolerances() (ort.Tolerances, error) {
	parse := func(flagName, s string) (ort.Tolerance, error) {
		a, r, ok := strings.Cut(s, ",")
		abs, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		rel, err2 := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if !ok || err1 != nil || err2 != nil || abs < 0 || rel < 0 {
			return ort.Tolerance{}, fmt.Errorf("%s %q: write ABS,REL with both ≥ 0, e.g. 1e-5,1e-4", flagName, s)
		}
		return ort.Tolerance{Abs: abs, Rel: rel}, nil
	}
	var t ort.Tolerances
	var err error
	if t.Default, err = parse("-tol", f.tol); err != nil {
		return t, err
	}
	outputs := onceEach{flag: "-tol-output", what: "output"}
	for _, s := range f.tolOutputs {
		name, v, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return t, fmt.Errorf("-tol-output %q: write OUTPUT=ABS,REL", s)
		}
		if err := outputs.set(name, s); err != nil {
			return t, err
		}
		tol, err := parse("-tol-output", v)
		if err != nil {
			return t, err
		}
		if t.Outputs == nil {
			t.Outputs = map[string]ort.Tolerance{}
		}
		t.Outputs[name] = tol
	}
	return t, nil
}
