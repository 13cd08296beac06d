package ort

import (
	"fmt"
	"strings"
)

// DefaultReason is why an input no fill names got the fill it got.
type DefaultReason int

const (
	// DefaultMask: an attention or padding mask (a name holding "mask"),
	// filled with ones: every position attended. Zeros would mask the
	// whole context.
	DefaultMask DefaultReason = iota + 1
	// DefaultCacheBranch: a boolean that selects a merged decoder's
	// cache branch (a name holding "use_cache" or "cache_branch"), set to
	// whether state is carried: true when the model carries a cache.
	DefaultCacheBranch
	// DefaultRate: a sample-rate input (sr, sample_rate, sampling_rate),
	// filled with zeros. A rate picks a model's branch (Silero VAD's 8 or
	// 16 kHz path): it should be given.
	DefaultRate
	// DefaultScalar: any other scalar or one-element input, filled with
	// zeros: it may select a branch or a mode, so it should be given.
	DefaultScalar
)

// String returns "mask", "cache-branch", "rate" or "scalar".
func (r DefaultReason) String() string {
	switch r {
	case DefaultMask:
		return "mask"
	case DefaultCacheBranch:
		return "cache-branch"
	case DefaultRate:
		return "rate"
	case DefaultScalar:
		return "scalar"
	}
	return fmt.Sprintf("DefaultReason(%d)", int(r))
}

// Guessed reports whether the fill is a guess the user should confirm:
// a rate or another scalar filled with zeros.
func (r DefaultReason) Guessed() bool { return r == DefaultRate || r == DefaultScalar }

// DefaultFill is the fill of one input that ModelConfig.Inputs does not
// name and that a zero would not describe honestly.
type DefaultFill struct {
	Input  string
	Fill   Fill
	Reason DefaultReason
}

// DefaultFills returns the fills OpenModel gives the inputs that inputs
// does not name and that are not fed by a state pair, beyond plain zeros
// for data: masks get ones, a cache-branch boolean gets carries (whether
// the model carries state), and rates and other scalars or one-element
// inputs get zeros, listed so that a caller can warn (Guessed) or refuse
// (ModelConfig.StrictFills). sig's shapes may hold dynamic axes.
func DefaultFills(sig Signature, inputs map[string]Fill, pairs []Pair, carries bool) []DefaultFill {
	fed := map[string]bool{}
	for _, p := range pairs {
		fed[p.Input] = true
	}
	var out []DefaultFill
	for _, p := range sig.Inputs {
		if _, ok := inputs[p.Name]; ok || fed[p.Name] || p.Kind != Tensor {
			continue
		}
		lower := strings.ToLower(p.Name)
		switch {
		case strings.Contains(lower, "mask"):
			out = append(out, DefaultFill{p.Name, Fill{Kind: Const, Value: 1}, DefaultMask})
		case p.DType == Bool && (strings.Contains(lower, "use_cache") || strings.Contains(lower, "cache_branch")):
			v := 0.0
			if carries {
				v = 1
			}
			out = append(out, DefaultFill{p.Name, Fill{Kind: Const, Value: v}, DefaultCacheBranch})
		case isRate(lower) && oneElement(p):
			out = append(out, DefaultFill{p.Name, Fill{}, DefaultRate})
		case oneElement(p):
			out = append(out, DefaultFill{p.Name, Fill{}, DefaultScalar})
		}
	}
	return out
}

func isRate(lower string) bool {
	return lower == "sr" || strings.Contains(lower, "sample_rate") || strings.Contains(lower, "sampling_rate") || strings.HasSuffix(lower, "_sr")
}

// oneElement reports whether p is a scalar or has only axes of size 1.
func oneElement(p Port) bool {
	if p.Shape == nil {
		return false
	}
	for _, d := range p.Shape {
		if d != 1 {
			return false
		}
	}
	return true
}

// FillsError refuses guessed fills under ModelConfig.StrictFills.
type FillsError struct {
	// Guessed are the inputs that would have been filled with a guess.
	Guessed []DefaultFill
}

// Error names each input and the flag and field that set it.
func (e *FillsError) Error() string {
	var names []string
	for _, d := range e.Guessed {
		names = append(names, fmt.Sprintf("%q (%s)", d.Input, d.Reason))
	}
	return fmt.Sprintf("inputs %s have no fill and would be zeros, which may select another branch of the model than the one meant; give each (-input NAME=VALUE, ModelConfig.Inputs), or drop -strict-fills (ModelConfig.StrictFills) to run on zeros",
		strings.Join(names, ", "))
}

// applyDefaults returns cfg.Inputs with the default fills added, and the
// defaults; it refuses guessed ones under StrictFills.
func applyDefaults(sig Signature, cfg ModelConfig, pairs []Pair) (map[string]Fill, []DefaultFill, error) {
	defs := DefaultFills(sig, cfg.Inputs, pairs, len(pairs) > 0)
	var guessed []DefaultFill
	for _, d := range defs {
		if d.Reason.Guessed() {
			guessed = append(guessed, d)
		}
	}
	if cfg.StrictFills && len(guessed) > 0 {
		return nil, nil, &FillsError{Guessed: guessed}
	}
	if len(defs) == 0 {
		return cfg.Inputs, nil, nil
	}
	in := make(map[string]Fill, len(cfg.Inputs)+len(defs))
	for k, v := range cfg.Inputs {
		in[k] = v
	}
	for _, d := range defs {
		in[d.Input] = d.Fill
	}
	return in, defs, nil
}
