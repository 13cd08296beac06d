package ort

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

// DecoderConfig describes a growing-context decode of an ONNX decoder with a
// key/value cache: a prompt (Prefill tokens), then one token a step, each
// step's present.* outputs fed back as the next past_key_values.* inputs
// with no window, so that the context grows by one token a step.
type DecoderConfig struct {
	// Model is the model and its settings: Path, Options, Dims (the batch
	// and any axis that is not the sequence, past or total length), Inputs
	// (the token ids' fill, and any other input's), State and NoAutoState
	// (the cache pairs; a pair must grow along one axis), StrictFills.
	Model ModelConfig
	// Prefill is the prompt's length in tokens, ≥ 1: one step of that
	// sequence length when the token input's sequence axis is dynamic,
	// else Prefill steps of one token.
	Prefill int
	// MaxContext is the longest context the decoder holds (prompt and
	// generated tokens); the cache buffers are allocated for it at open.
	// Token fails past it.
	MaxContext int
	// TokenInput names the token ids input; "" is "input_ids", or the
	// model's only integer input of rank 2 that is not a mask or
	// positions.
	TokenInput string
}

// Decoder runs a decoder at a growing context. Prefill (re)starts a
// generation; each Token adds one token to the context. It implements the
// interface decodegap.RunDecode drives (Prefill, Token, Depth, Reset) and
// knows nothing of gaps or timing. One goroutine at a time; Close releases
// it.
//
// Roles are found by name: the token ids (TokenInput), an attention mask
// (a name holding "mask": ones over the context), positions (a name holding
// "position": the token's depth), a cache-branch boolean (DefaultFills:
// true once the cache holds a token), and the state pairs of StatePairs.
// Every other input keeps its fill.
type Decoder struct {
	cfg  DecoderConfig
	sig  Signature
	sess *ort.DynamicAdvancedSession
	// ins and outs are the run's values, rebuilt each step over the
	// buffers below (wrappers only: no tensor memory is allocated a step).
	ins, outs []ort.Value
	roles     []role
	outRoles  []role
	// bufs[i] is input i's memory at its largest; cache pairs have two,
	// swapped each step (the present written becomes the next past).
	bufs    [][]byte
	outBufs [][]byte
	// pairOf[i] is the output index feeding input i, or -1.
	pairOf []int
	pairs  []Pair
	// fixed are the values of inputs whose shape never changes.
	fixed []ort.Value
	// depth is the number of tokens in the cache.
	depth  int
	seqDyn bool
	batch  int64
	defs   []DefaultFill
	// branch is the cache-branch input's index, or -1.
	branch int
	// static holds each port's axes the step does not change (staticDims).
	static map[string][]int64
}

// role is how a port's shape and contents follow the step.
type role int

const (
	roleFixed role = iota
	roleTokens
	roleMask
	rolePositions
	roleCache // the growing axis holds the context
	roleOther // an output sized by the step's dims, or left to ONNX Runtime
)

// OpenDecoder opens a decoder for a growing-context decode, loading ONNX
// Runtime first if needed. It refuses a model with no cache pair that grows
// along one axis, and one whose token input it cannot find. The caller
// must Close it.
func OpenDecoder(cfg DecoderConfig) (*Decoder, error) {
	mc := cfg.Model
	sig, err := Inspect(mc.Path)
	if err != nil {
		return nil, err
	}
	if err := Runnable(sig); err != nil {
		return nil, err
	}
	if err := checkDimNames(sig, mc.Dims); err != nil {
		return nil, fmt.Errorf("%s: %w", mc.Path, err)
	}
	if cfg.Prefill < 1 || cfg.MaxContext < cfg.Prefill {
		return nil, fmt.Errorf("DecoderConfig.Prefill %d and MaxContext %d: want 1 ≤ Prefill ≤ MaxContext", cfg.Prefill, cfg.MaxContext)
	}
	pairs, _, err := StatePairs(sig, mc.State, !mc.NoAutoState)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mc.Path, err)
	}
	fills, defs, err := applyDefaults(sig, mc, pairs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mc.Path, err)
	}
	d := &Decoder{cfg: cfg, sig: sig, pairs: pairs, defs: defs, branch: -1, batch: 1, static: map[string][]int64{}}
	if err := d.plan(fills); err != nil {
		return nil, fmt.Errorf("%s: %w", mc.Path, err)
	}
	if err := Init(""); err != nil {
		return nil, err
	}
	so, err := mc.Options.sessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	d.sess, err = ort.NewDynamicAdvancedSession(mc.Path, portList(sig.Inputs), portList(sig.Outputs), so)
	if err != nil {
		return nil, fmt.Errorf("opening %s with %v: %w", mc.Path, mc.Options, err)
	}
	if err := d.makeFixed(); err != nil {
		d.Close()
		return nil, fmt.Errorf("%s: %w", mc.Path, err)
	}
	return d, nil
}

func portList(ps []Port) []string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = p.Name
	}
	return n
}

// dimOf returns the size of axis a of p at a step of seq tokens on a
// context of depth, or -1 when the axis is not the step's.
func (d *Decoder) dimOf(p Port, r role, a int, depth, seq int) int64 {
	st, ok := d.static[p.Name]
	if !ok {
		st = d.staticDims(p)
		d.static[p.Name] = st
	}
	if st[a] >= 0 {
		return st[a]
	}
	name := p.Dims[a]
	switch {
	case a == 0 && r != roleOther || isBatch(name):
		return d.batch
	case r == roleTokens || r == rolePositions:
		return int64(seq)
	case r == roleMask:
		return int64(depth + seq)
	}
	return -1
}

// staticDims returns p's axes that the step does not change: its fixed
// sizes and those ModelConfig.Dims sets (by NAME@AXIS or by name); -1 for
// the others. Computed once per port (dimOf keeps them), so that a step
// formats no key.
func (d *Decoder) staticDims(p Port) []int64 {
	st := make([]int64, len(p.Shape))
	for a, v := range p.Shape {
		st[a] = v
		if v >= 0 {
			continue
		}
		if x, ok := d.cfg.Model.Dims[fmt.Sprintf("%s@%d", p.Name, a)]; ok {
			st[a] = x
		} else if x, ok := d.cfg.Model.Dims[p.Dims[a]]; ok && p.Dims[a] != "" {
			st[a] = x
		}
	}
	return st
}

func isBatch(name string) bool {
	n := strings.ToLower(name)
	return n == "batch" || n == "batch_size" || n == "n"
}

// plan finds each input's and output's role and allocates the buffers.
func (d *Decoder) plan(fills map[string]Fill) error {
	if b, ok := d.cfg.Model.Dims["batch"]; ok {
		d.batch = b
	} else if b, ok := d.cfg.Model.Dims["batch_size"]; ok {
		d.batch = b
	}
	tok := d.cfg.TokenInput
	if tok == "" {
		tok = "input_ids"
		if _, ok := d.sig.Input(tok); !ok {
			tok = ""
			for _, p := range d.sig.Inputs {
				l := strings.ToLower(p.Name)
				if (p.DType == Int64 || p.DType == Int32) && len(p.Shape) == 2 && !strings.Contains(l, "mask") && !strings.Contains(l, "position") {
					tok = p.Name
				}
			}
		}
	}
	if _, ok := d.sig.Input(tok); !ok || tok == "" {
		return fmt.Errorf("no token input: name the token ids with -token-input NAME (DecoderConfig.TokenInput); inputs: %s", portNames(d.sig.Inputs))
	}
	outIdx := map[string]int{}
	for i, p := range d.sig.Outputs {
		outIdx[p.Name] = i
	}
	d.outRoles = make([]role, len(d.sig.Outputs))
	for i := range d.outRoles {
		d.outRoles[i] = roleOther
	}
	d.pairOf = make([]int, len(d.sig.Inputs))
	grows := 0
	for i, p := range d.sig.Inputs {
		d.pairOf[i] = -1
		l := strings.ToLower(p.Name)
		r := roleFixed
		switch {
		case p.Name == tok:
			r = roleTokens
			d.seqDyn = len(p.Shape) == 2 && p.Shape[1] < 0
		case strings.Contains(l, "mask"):
			r = roleMask
		case strings.Contains(l, "position"):
			r = rolePositions
		}
		for _, pr := range d.pairs {
			if pr.Input == p.Name {
				if pr.Axis < 0 {
					return fixedStateError(pr)
				}
				r, d.pairOf[i] = roleCache, outIdx[pr.Output]
				d.outRoles[outIdx[pr.Output]] = roleCache
				grows++
			}
		}
		for _, df := range d.defs {
			if df.Input == p.Name && df.Reason == DefaultCacheBranch {
				d.branch = i
			}
		}
		d.roles = append(d.roles, r)
	}
	if grows == 0 {
		return errors.New("no state pair grows along an axis (present.* → past_key_values.*): a growing-context decode needs a KV cache; see -list")
	}
	return d.allocate(fills)
}

// fixedStateError is the error for a carried pair that does not grow. An
// encoder–decoder's cross-attention cache (a name with "encoder" or
// "cross") is fixed by the encoder's length while the decoder's own cache
// grows: the fix is to carry only the decoder's pairs. Any other such
// state (a recurrent model's) is what the windowed mode carries.
func fixedStateError(pr Pair) error {
	if n := strings.ToLower(pr.Input + " " + pr.Output); strings.Contains(n, "encoder") || strings.Contains(n, "cross") {
		return fmt.Errorf("state %s→%s does not grow along one axis: it is an encoder (cross-attention) cache, fixed by the encoder's length, and the decode carries growing pairs only; carry just the decoder's self-attention pairs with -no-auto-state and one -state OUTPUT=INPUT for each present.*.decoder.* pair (ModelConfig.NoAutoState and State), size the encoder's axes with -dims, and fill its cache inputs with -input (see -list)", pr.Output, pr.Input)
	}
	return fmt.Errorf("state %s→%s does not grow along one axis, so it cannot hold a growing context (the windowed mode carries it: drop -decode)", pr.Output, pr.Input)
}

// allocate allocates every input's and output's buffer at its largest (the
// whole context, or the prompt) and fills the inputs.
func (d *Decoder) allocate(fills map[string]Fill) error {
	seqMax := 1
	if d.seqDyn {
		seqMax = d.cfg.Prefill
	}
	size := func(p Port, r role) (int64, error) {
		q := p
		q.Shape = make([]int64, len(p.Shape))
		for a := range p.Shape {
			q.Shape[a] = d.dimOf(p, r, a, d.cfg.MaxContext, seqMax)
			if r == roleCache && q.Shape[a] < 0 {
				q.Shape[a] = int64(d.cfg.MaxContext)
			}
			if q.Shape[a] < 0 {
				return -1, nil
			}
		}
		return tensorBytes(q, "tensor")
	}
	var total int64
	for i, p := range d.sig.Inputs {
		n, err := size(p, d.roles[i])
		if err != nil {
			return err
		}
		if n < 0 {
			return fmt.Errorf("input %q has dynamic axes the decode does not set (%s): set them with -dims", p.Name, p.ShapeString())
		}
		total += n
		d.bufs = append(d.bufs, alignedBytes(n))
		if d.roles[i] == roleFixed {
			b := &Buffer{Port: p, Bytes: d.bufs[i]}
			if err := (&Model{cfg: d.cfg.Model}).fill(i, b, fills[p.Name]); err != nil {
				return fmt.Errorf("input %q: %w", p.Name, err)
			}
		}
		if d.roles[i] == roleTokens {
			b := &Buffer{Port: p, Bytes: d.bufs[i]}
			if err := (&Model{cfg: d.cfg.Model}).fill(i, b, fills[p.Name]); err != nil {
				return fmt.Errorf("input %q: %w", p.Name, err)
			}
		}
		if d.roles[i] == roleMask {
			b := &Buffer{Port: p, Bytes: d.bufs[i]}
			for j := range b.Len() {
				b.Set(j, 1)
			}
		}
	}
	for i, p := range d.sig.Outputs {
		n, err := size(p, roleOutput(d.outRoles[i]))
		if err != nil {
			return err
		}
		if n < 0 {
			d.outBufs = append(d.outBufs, nil) // ONNX Runtime allocates it
			continue
		}
		total += n
		d.outBufs = append(d.outBufs, alignedBytes(n))
	}
	if total > MaxModelBytes {
		return &LimitError{What: fmt.Sprintf("the tensors of a decode of %d tokens", d.cfg.MaxContext), Size: total, Limit: MaxModelBytes, Unit: "bytes"}
	}
	d.ins, d.outs = make([]ort.Value, len(d.sig.Inputs)), make([]ort.Value, len(d.sig.Outputs))
	return nil
}

func alignedBytes(n int64) []byte {
	if n == 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// makeFixed makes the values of the inputs whose shape never changes.
func (d *Decoder) makeFixed() error {
	d.fixed = make([]ort.Value, len(d.sig.Inputs))
	for i, p := range d.sig.Inputs {
		if d.roles[i] != roleFixed {
			continue
		}
		v, err := d.tensor(p, roleFixed, d.bufs[i], 0, 1)
		if err != nil {
			return fmt.Errorf("input %q: %w", p.Name, err)
		}
		d.fixed[i] = v
	}
	return nil
}

// tensor makes a value over buf with p's shape at this step.
func (d *Decoder) tensor(p Port, r role, buf []byte, depth, seq int) (ort.Value, error) {
	shape := make(ort.Shape, len(p.Shape))
	n := int64(p.DType.Size())
	for a := range p.Shape {
		v := d.dimOf(p, r, a, depth, seq)
		if r == roleCache && v < 0 {
			v = int64(depth)
		}
		shape[a] = v
		n *= v
	}
	if len(shape) == 0 {
		v, _, err := newScalar(p.DType, buf)
		return v, err
	}
	if n == 0 && len(buf) == 0 {
		return emptyTensor(p.DType, shape)
	}
	// No elements: the wrapper needs one byte of memory, which it does not
	// read (float16 has no empty tensor of its own in onnxruntime_go).
	n = max(n, 1)
	return ort.NewCustomDataTensor(shape, buf[:n], ort.TensorElementDataType(p.DType))
}

// run runs one step of seq tokens at the current depth.
func (d *Decoder) run(seq int) error {
	if d.sess == nil {
		return errClosed
	}
	if d.depth+seq > d.cfg.MaxContext {
		return fmt.Errorf("context %d past DecoderConfig.MaxContext %d", d.depth+seq, d.cfg.MaxContext)
	}
	if d.branch >= 0 {
		v := byte(0)
		if d.depth > 0 {
			v = 1
		}
		d.bufs[d.branch][0] = v
	}
	defer d.release()
	for i, p := range d.sig.Inputs {
		var err error
		switch d.roles[i] {
		case roleFixed:
			d.ins[i] = d.fixed[i]
			continue
		case rolePositions:
			for row := range int(d.batch) {
				for j := range seq {
					put(p.DType, d.bufs[i], row*seq+j, float64(d.depth+j))
				}
			}
		}
		d.ins[i], err = d.tensor(p, d.roles[i], d.bufs[i], d.depth, seq)
		if err != nil {
			return fmt.Errorf("input %q at context %d: %w", p.Name, d.depth, err)
		}
	}
	for i, p := range d.sig.Outputs {
		if d.outBufs[i] == nil {
			continue
		}
		r := d.outRoles[i]
		depth := d.depth
		if r == roleCache {
			depth += seq
		}
		var err error
		if d.outs[i], err = d.tensor(p, roleOutput(r), d.outBufs[i], depth, seq); err != nil {
			return fmt.Errorf("output %q at context %d: %w", p.Name, d.depth, err)
		}
	}
	if err := d.sess.Run(d.ins, d.outs); err != nil {
		return fmt.Errorf("running %s at context %d (+%d): %w", d.cfg.Model.Path, d.depth, seq, err)
	}
	// The present written is the next past: swap the buffers.
	for i, o := range d.pairOf {
		if o >= 0 {
			d.bufs[i], d.outBufs[o] = d.outBufs[o], d.bufs[i]
		}
	}
	d.depth += seq
	return nil
}

// roleOutput maps an output's role for sizing: a cache output is sized as
// the cache at the new depth, any other output by the step's tokens.
func roleOutput(r role) role {
	if r == roleCache {
		return roleCache
	}
	return roleTokens
}

// release destroys the step's value wrappers (not the fixed ones).
func (d *Decoder) release() {
	for i, v := range d.ins {
		if v != nil && d.roles[i] != roleFixed {
			v.Destroy()
		}
		d.ins[i] = nil
	}
	for i, v := range d.outs {
		if v != nil {
			v.Destroy()
		}
		d.outs[i] = nil
	}
}

// Prefill starts a generation: it empties the cache and runs the prompt.
func (d *Decoder) Prefill() error {
	d.Reset()
	if d.seqDyn {
		return d.run(d.cfg.Prefill)
	}
	for range d.cfg.Prefill {
		if err := d.run(1); err != nil {
			return err
		}
	}
	return nil
}

// Token runs one token at the current context and adds it to the cache.
func (d *Decoder) Token() error { return d.run(1) }

// Depth returns the number of tokens in the cache: the context the next
// Token runs at.
func (d *Decoder) Depth() int { return d.depth }

// Batch returns the sequences a step runs side by side: ModelConfig.Dims'
// batch (or batch_size), 1 when unset (decodegap.BatchDecoder).
func (d *Decoder) Batch() int { return int(d.batch) }

// Reset empties the cache; the next step starts from an empty context.
func (d *Decoder) Reset() { d.depth = 0 }

// Pairs returns the cache pairs carried.
func (d *Decoder) Pairs() []Pair { return d.pairs }

// DefaultFills returns the fills given to inputs ModelConfig.Inputs left out
// (see Model.DefaultFills).
func (d *Decoder) DefaultFills() []DefaultFill { return d.defs }

// SeqPrefill reports whether the prompt runs as one step (the token input's
// sequence axis is dynamic) rather than one step a token.
func (d *Decoder) SeqPrefill() bool { return d.seqDyn }

// Close releases the session and the fixed tensors; safe to call twice.
func (d *Decoder) Close() error {
	var errs []error
	if d.sess != nil {
		errs = append(errs, d.sess.Destroy())
		d.sess = nil
	}
	for i, v := range d.fixed {
		if v != nil {
			errs = append(errs, v.Destroy())
			d.fixed[i] = nil
		}
	}
	return errors.Join(errs...)
}
