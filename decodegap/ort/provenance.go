package ort

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// KeyValue is one benchfmt configuration line: "Key: Value".
type KeyValue struct{ Key, Value string }

// Provenance returns what the Model measures, as benchfmt configuration
// lines, in this order: model (the file name without .onnx), model-sha256
// (the graph file), weights-sha256 (the external data files, see
// WeightsSHA256; "none (inside the model file)" without them), ort-version, ort-ep (cpu: the providers Options.Custom adds are not
// seen), ort-options (Options.String: threads, spinning, mode, ...), dims
// (every Dims and Shapes entry), fills (every input's, defaults marked
// "(default:REASON)"), state (OUTPUT->INPUT pairs), context ("window=W
// ..." for a KV cache kept at W tokens, "carried state, no window", or
// "stateless") and batch (the size the step runs at: "N" as set, "1
// (default)" for a decoder's unset batch, "fixed by the graph" when no
// input has a dynamic axis named batch). A figure that cannot be had reads
// "unavailable (why)". Values hold no newline; write them before the
// results (decodegap.ConfigLine).
func (m *Model) Provenance() []KeyValue {
	context := "stateless"
	if w := m.Window(); w >= 0 {
		context = fmt.Sprintf("window=%d (sliding: the newest %d tokens of the cache are kept)", w, w)
	} else if len(m.pairs) > 0 {
		context = "carried state, no window"
	}
	return provenance(m.cfg, m.sig.Meta.ExternalData, m.pairs, m.defaults, context, modelBatch(m.sig))
}

// modelBatch returns the batch line of a Model: the resolved size of the
// first input axis named batch or batch_size, or "fixed by the graph"
// when no input has such a dynamic axis.
func modelBatch(sig Signature) string {
	for _, p := range sig.Inputs {
		for a, d := range p.Dims {
			if n := strings.ToLower(d); (n == "batch" || n == "batch_size") && a < len(p.Shape) && p.Shape[a] >= 0 {
				return strconv.FormatInt(p.Shape[a], 10)
			}
		}
	}
	return "fixed by the graph"
}

// Provenance returns what the Decoder measures, as Model.Provenance does,
// with context "decode prefill=P max=N".
func (d *Decoder) Provenance() []KeyValue {
	batch := strconv.FormatInt(d.batch, 10)
	if _, set := d.cfg.Model.Dims["batch"]; !set {
		if _, set = d.cfg.Model.Dims["batch_size"]; !set {
			batch += " (default)"
		}
	}
	return provenance(d.cfg.Model, d.sig.Meta.ExternalData, d.pairs, d.defs, fmt.Sprintf("decode prefill=%d max=%d", d.cfg.Prefill, d.cfg.MaxContext), batch)
}

// Window returns the window of a KV cache the Model keeps at a constant
// context (a state input's size along its window axis), or -1 when none.
func (m *Model) Window() int64 {
	for _, p := range m.pairs {
		if p.Axis >= 0 {
			if in := m.Input(p.Input); in != nil {
				return in.Port.Shape[p.Axis]
			}
		}
	}
	return -1
}

func provenance(cfg ModelConfig, external []string, pairs []Pair, defaults []DefaultFill, context, batch string) []KeyValue {
	sum, err := FileSHA256(cfg.Path)
	if err != nil {
		sum = "unavailable (" + oneLine(err.Error()) + ")"
	}
	weights := "none (inside the model file)"
	if len(external) > 0 {
		if weights, err = WeightsSHA256(filepath.Dir(cfg.Path), external); err != nil {
			weights = "unavailable (" + oneLine(err.Error()) + ")"
		}
	}
	version, err := Version()
	if err != nil {
		version = "unavailable (" + oneLine(err.Error()) + ")"
	}
	dims := map[string]string{}
	for k, v := range cfg.Dims {
		dims[k] = strconv.FormatInt(v, 10)
	}
	for k, s := range cfg.Shapes {
		d := make([]string, len(s))
		for i, v := range s {
			d[i] = strconv.FormatInt(v, 10)
		}
		dims[k] = strings.Join(d, "x")
	}
	fills := map[string]string{}
	for k, v := range cfg.Inputs {
		fills[k] = v.String()
	}
	for _, d := range defaults {
		fills[d.Input] = d.Fill.String() + "(default:" + d.Reason.String() + ")"
	}
	var st []string
	for _, p := range pairs {
		st = append(st, p.Output+"->"+p.Input)
	}
	return []KeyValue{
		{"model", oneLine(strings.TrimSuffix(filepath.Base(cfg.Path), ".onnx"))},
		{"model-sha256", sum},
		{"weights-sha256", weights},
		{"ort-version", version},
		{"ort-ep", "cpu"},
		{"ort-options", cfg.Options.String()},
		{"dims", joinSorted(dims)},
		{"fills", joinSorted(fills)},
		{"state", orNone(strings.Join(st, ","))},
		{"context", context},
		{"batch", batch},
	}
}

func joinSorted(m map[string]string) string {
	s := make([]string, 0, len(m))
	for k, v := range m {
		s = append(s, oneLine(k)+"="+oneLine(v))
	}
	sort.Strings(s)
	return orNone(strings.Join(s, ","))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// oneLine makes s one benchfmt word run: spaces become underscores, control
// characters '?'.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '\t':
			return '_'
		case r < 0x20 || r == 0x7f:
			return '?'
		}
		return r
	}, s)
}

// WeightsSHA256 returns the hex SHA-256 of the external data files
// locations (Metadata.ExternalData: relative to dir, sorted) as
// sha256sum lists them, each file whole: of the lines "HEX  LOCATION\n",
// so that `sha256sum LOCATION... | sha256sum` in dir gives the same. A
// location that is absolute, leaves dir, or is not a regular file is an
// error naming it: the weights measured would be unknown.
func WeightsSHA256(dir string, locations []string) (string, error) {
	list := sha256.New()
	for _, loc := range locations {
		if !filepath.IsLocal(loc) {
			return "", fmt.Errorf("external data %q: not a path inside the model's folder", loc)
		}
		f, err := os.Open(filepath.Join(dir, loc))
		if err != nil {
			return "", fmt.Errorf("external data: %w", err)
		}
		st, err := f.Stat()
		if err == nil && !st.Mode().IsRegular() {
			err = fmt.Errorf("%s: %w", loc, ErrNotRegular)
		}
		h := sha256.New()
		if err == nil {
			_, err = io.Copy(h, f)
		}
		f.Close()
		if err != nil {
			return "", fmt.Errorf("external data: %w", err)
		}
		fmt.Fprintf(list, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), loc)
	}
	return hex.EncodeToString(list.Sum(nil)), nil
}

// FileSHA256 returns the hex SHA-256 of a regular file of at most
// MaxFileBytes (the model's identity in Provenance).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, MaxFileBytes)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
