package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// decodeFlags are the growing-context decode's flags (-prefill, -decode,
// -buckets, -token-input).
type decodeFlags struct {
	prefill    int
	tokens     int
	buckets    string
	tokenInput string
}

// on reports whether the run is a growing-context decode.
func (d decodeFlags) on() bool { return d.tokens > 0 }

// parseBuckets parses -buckets "32,512,1024" (lower bounds, ascending).
func parseBuckets(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 || (len(out) > 0 && v <= out[len(out)-1]) {
			return nil, fmt.Errorf("-buckets %q: write ascending context depths, the buckets' lower bounds, e.g. 32,512,1024,1536", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// maxDecodeTokens bounds -decode, the tokens of one generation. A block
// holds whole generations and each step reads the whole KV cache, so a
// generation's work grows with the square of its tokens: with the 2-layer
// test model (decoder_merged.onnx) a block of one generation took 0.3 s
// at 2048 tokens, 3 s at 8192 and 50 s at 32768, and at 10^6 no block
// ended in 120 s. A deep context is the prompt's (-prefill, one step).
const maxDecodeTokens = 8192

// maxContextTokens bounds -prefill + -decode, the KV cache's length;
// the cache's bytes at that length are checked against ort's tensor
// limits when the decoder is opened, before any block.
const maxContextTokens = 1 << 20

// check validates the decode flags against each other.
func (d decodeFlags) check(set map[string]bool) error {
	switch {
	case d.tokens < 0 || d.prefill < 0:
		return fmt.Errorf("-decode %d, -prefill %d: neither may be negative", d.tokens, d.prefill)
	case !d.on() && (set["prefill"] || set["buckets"] || set["token-input"]):
		return fmt.Errorf("-prefill, -buckets and -token-input belong to the decode mode: give -decode M (tokens a generation)")
	case d.on() && d.prefill < 1:
		return fmt.Errorf("-decode needs -prefill N ≥ 1, the prompt's tokens (llama-bench's -p, or -d for the depth to decode at)")
	case d.tokens > maxDecodeTokens:
		return fmt.Errorf("-decode %d: at most %d tokens a generation (each step reads the whole KV cache, so a generation's time grows with the square of -decode: 32768 tokens took 50 s a block with a 2-layer test model); for a deep context give -prefill N and a short -decode", d.tokens, maxDecodeTokens)
	case d.prefill+d.tokens > maxContextTokens:
		return fmt.Errorf("-prefill %d + -decode %d: the context may hold at most %d tokens", d.prefill, d.tokens, maxContextTokens)
	}
	_, err := parseBuckets(d.buckets)
	return err
}

// decoderConfig is the ort.DecoderConfig of a child's decode.
func (c *ortChild) decoderConfig(cfg ort.ModelConfig) ort.DecoderConfig {
	return ort.DecoderConfig{Model: cfg, Prefill: c.Prefill, MaxContext: c.Prefill + c.Decode, TokenInput: c.TokenInput}
}

// openDecoder is the child's decodegap.DecoderOpener.
func openDecoder(dc ort.DecoderConfig) decodegap.DecoderOpener {
	return func() (decodegap.Decoder, func() error, error) {
		d, err := ort.OpenDecoder(dc)
		if err != nil {
			return nil, nil, err
		}
		return d, d.Close, nil
	}
}

// checkDecoder opens the base arm's decoder in the parent and runs its
// prompt and one token, so that a model the decode cannot run fails before
// any block is started.
func checkDecoder(cfg ort.ModelConfig, d decodeFlags) error {
	dec, err := ort.OpenDecoder(ort.DecoderConfig{Model: cfg, Prefill: d.prefill, MaxContext: d.prefill + d.tokens, TokenInput: d.tokenInput})
	if err != nil {
		return err
	}
	defer dec.Close()
	if err := dec.Prefill(); err != nil {
		return err
	}
	return dec.Token()
}

// guessedFills returns the default fills of cfg's model that are guesses
// (ort.DefaultFills: rates and other scalars left out), and all defaults.
func guessedFills(cfg ort.ModelConfig) (guessed, all []ort.DefaultFill, err error) {
	sig, err := ort.Inspect(cfg.Path)
	if err != nil {
		return nil, nil, err
	}
	pairs, _, err := ort.StatePairs(sig, cfg.State, !cfg.NoAutoState)
	if err != nil {
		return nil, nil, err
	}
	all = ort.DefaultFills(sig, cfg.Inputs, pairs, len(pairs) > 0)
	for _, d := range all {
		if d.Reason.Guessed() {
			guessed = append(guessed, d)
		}
	}
	return guessed, all, nil
}

// fillWarning is the warning for guessed fills, naming the flag.
func fillWarning(guessed []ort.DefaultFill) string {
	var parts []string
	for _, d := range guessed {
		what := "a scalar"
		if d.Reason == ort.DefaultRate {
			what = "a sample rate"
		}
		parts = append(parts, fmt.Sprintf("%q (%s)", d.Input, what))
	}
	return fmt.Sprintf("warning: %s no -input and run on zeros, which may take another branch of the model than the one meant (Silero VAD's 8 kHz path for sr 0): give each with -input NAME=VALUE (e.g. -input sr=16000), or -strict-fills to refuse",
		strings.Join(parts, ", ")+map[bool]string{true: " has", false: " have"}[len(parts) == 1])
}

// defaultWord describes a default fill in -list.
func defaultWord(d ort.DefaultFill) string {
	switch d.Reason {
	case ort.DefaultMask:
		return "fill ones (a mask: every position attended)"
	case ort.DefaultCacheBranch:
		if d.Fill.Value != 0 {
			return "fill true (the cache branch: state is carried)"
		}
		return "fill false (the cache branch: no state is carried)"
	case ort.DefaultRate:
		return "fill zeros: a sample rate left out, give -input " + d.Input + "=RATE"
	}
	return "fill zeros: a scalar left out, give -input " + d.Input + "=VALUE"
}

// keyName is the benchmark's sub-name of key dims: every -dims and -shape
// as NAME=VALUE, sorted, "/"-joined, with ctx=W first for a windowed KV
// cache of W tokens, so that benchstat never pools two shapes.
func keyName(cfg ort.ModelConfig, window int64) string {
	var parts []string
	for k, v := range cfg.Dims {
		parts = append(parts, nameSafe(k)+"="+strconv.FormatInt(v, 10))
	}
	for k, s := range cfg.Shapes {
		d := make([]string, len(s))
		for i, v := range s {
			d[i] = strconv.FormatInt(v, 10)
		}
		parts = append(parts, nameSafe(k)+"="+strings.Join(d, "x"))
	}
	sort.Strings(parts)
	if window >= 0 {
		parts = append([]string{"ctx=" + strconv.FormatInt(window, 10)}, parts...)
	}
	return strings.Join(parts, "/")
}

// nameSafe makes a dim or input name one benchmark name part.
func nameSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '=' || r == '\t' {
			return '_'
		}
		return r
	}, s)
}

// provenance returns the configuration lines of a child's results: the
// step's own (ort's Provenance) with its context in the command's words,
// and every arm's options (ort-arms:) in place of this arm's alone, so that
// the lines are the same in every block.
func provenance(c *ortChild, kv []ort.KeyValue) [][2]string {
	var out [][2]string
	for _, l := range kv {
		switch l.Key {
		case "ort-options":
			out = append(out, [2]string{"ort-arms", c.ArmsSpec})
			continue
		case "context":
			if c.Decode > 0 {
				l.Value = fmt.Sprintf("decode prefill=%d tokens=%d range=%d..%d", c.Prefill, c.Decode, c.Prefill, c.Prefill+c.Decode-1)
			}
		}
		out = append(out, [2]string{l.Key, l.Value})
	}
	return out
}

// windowWarning returns a warning when the windowed step's KV cache keeps
// no token (a past length of 0: every step at a context of 1), else "".
func windowWarning(cfg ort.ModelConfig) string {
	m, err := ort.OpenModel(cfg)
	if err != nil {
		return "" // the parity check or the block reports it
	}
	defer m.Close()
	if m.Window() == 0 {
		return "warning: the KV cache keeps 0 tokens (its past length is 0 in -dims), so every step runs at a context of 1 token; set the past length (-dims past_sequence_length=N) for a window of N, or -prefill P -decode M for a growing context"
	}
	return ""
}

// armsSpec is the ort-arms: line: every arm as NAME=OPTIONS with the
// options in full (ort.Options.String: threads, spinning, mode, ...),
// space-separated, the same in every block.
func armsSpec(specs []string) string {
	arms, err := parseORTArms(specs)
	if err != nil {
		return "unavailable"
	}
	s := make([]string, len(arms))
	for i, a := range arms {
		s[i] = a.name + "=" + a.opts.String()
	}
	return strings.Join(s, " ")
}

// decodeParity checks every arm's decode against the first arm's over the
// prefill and steps tokens (ort.DecoderParity), one arm open at a time
// beside the base, as armParity does for the windowed step.
func decodeParity(cfg ort.ModelConfig, d decodeFlags, arms []ortArm, steps int, tol ort.Tolerances, stderr io.Writer) error {
	tokens := min(steps, d.tokens)
	open := func(o ort.Options) (*ort.Decoder, error) {
		c := cfg
		c.Options = o
		return ort.OpenDecoder(ort.DecoderConfig{Model: c, Prefill: d.prefill, MaxContext: d.prefill + tokens, TokenInput: d.tokenInput})
	}
	base, err := open(arms[0].opts)
	if err != nil {
		return err
	}
	defer base.Close()
	for _, a := range arms[1:] {
		cand, err := open(a.opts)
		if err != nil {
			return fmt.Errorf("arm %s: %w", a.name, err)
		}
		rep, err := ort.DecoderParity(base, cand, tokens, tol)
		cand.Close()
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			return fmt.Errorf("arm %s against %s: %w (loosen with -tol or -tol-output, or skip with -parity 0)", a.name, arms[0].name, err)
		}
		fmt.Fprintf(stderr, "decodegap ort: parity: arm %s agrees with %s over the prefill and %d tokens%s\n", a.name, arms[0].name, tokens, worstWords(rep))
	}
	return nil
}

// worstWords names the outputs that differed at all, with their excess.
func worstWords(rep ort.ParityReport) string {
	s := ""
	for _, w := range rep.Worst {
		if w.Excess > 0 {
			s += fmt.Sprintf(", %s%s off by %.3g× its tolerance", w.Output, indexOf(w.At), w.Excess)
		}
	}
	if s == "" {
		return ", every output identical"
	}
	return s
}

// checkFills warns about guessed fills, or refuses them under
// -strict-fills; it returns -1 to go on, else the exit status.
func (f *ortFlags) checkFills(cfg ort.ModelConfig, usageErr func(string, ...any) int, stderr io.Writer) int {
	guessed, _, err := guessedFills(cfg)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
		return 1
	case len(guessed) > 0 && f.strict:
		return usageErr("-strict-fills: %v", (&ort.FillsError{Guessed: guessed}).Error())
	case len(guessed) > 0:
		fmt.Fprintf(stderr, "decodegap ort: %s\n", fillWarning(guessed))
	}
	return -1
}

// pairWhy says why a pair was formed: its rule and the two shapes.
func pairWhy(sig ort.Signature, p ort.Pair) string {
	o, _ := sig.Output(p.Output)
	in, _ := sig.Input(p.Input)
	how := "the same shape: carried whole"
	if p.Axis >= 0 {
		how = fmt.Sprintf("axis %d grows by the step's tokens (kept at the -dims past length; -decode lets it grow)", p.Axis)
	} else if o.ShapeString() != in.ShapeString() {
		how = "the shapes agree once the dynamic axes are set"
	}
	return fmt.Sprintf("both %s, %s → %s, %s", o.DType, o.ShapeString(), in.ShapeString(), how)
}

// preflight checks what can be checked before any block runs: the fills
// (warned or, under -strict-fills, refused), the decode (the base arm's
// prefill and a token, and every arm's parity) or the windowed step's
// window and parity. It returns -1 to go on, else the exit status.
func (f *ortFlags) preflight(cfg ort.ModelConfig, model string, arms []ortArm, tol ort.Tolerances, usageErr func(string, ...any) int, stderr io.Writer) int {
	if code := f.checkFills(cfg, usageErr, stderr); code >= 0 {
		return code
	}
	if f.decode.on() {
		cfg.Options = arms[0].opts
		if err := checkDecoder(cfg, f.decode); err != nil {
			fmt.Fprintf(stderr, "decodegap ort: -decode: %v\n", err)
			return 1
		}
		if f.parity > 0 {
			if err := decodeParity(cfg, f.decode, arms, f.parity, tol, stderr); err != nil {
				fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
				return 1
			}
		}
	}
	if !f.decode.on() {
		c := cfg
		c.Options = arms[0].opts
		if w := windowWarning(c); w != "" {
			fmt.Fprintf(stderr, "decodegap ort: %s\n", w)
		}
	}
	if f.parity > 0 && !f.decode.on() {
		if err := armParity(cfg, arms, f.parity, tol, stderr); err != nil {
			var de *ort.DimsError
			if errors.As(err, &de) {
				return usageErr("%s: dynamic dimensions not set: %s; set them with -dims NAME=SIZE (INPUT@AXIS=SIZE for an unnamed one) or -shape INPUT=DxD (see -list)",
					model, strings.Join(de.Missing, ", "))
			}
			fmt.Fprintf(stderr, "decodegap ort: %v%s\n", err, f.shapeHint())
			return 1
		}
	}
	return -1
}

// shapeHint names the -shape and -dims a failed first run used, for its
// error: a size the model cannot take fails inside ONNX Runtime, in the
// model's own words.
func (f *ortFlags) shapeHint() string {
	var given []string
	for _, s := range f.shapes {
		given = append(given, "-shape "+s)
	}
	for _, d := range f.dims {
		given = append(given, "-dims "+d)
	}
	if len(given) == 0 {
		return ""
	}
	return " (the model ran with " + strings.Join(given, ", ") + ": check them against -list)"
}
