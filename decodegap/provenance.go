package decodegap

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// configLines remembers the last value written for each configuration key,
// so that a line is written only when its value changes.
var configLines struct {
	mu   sync.Mutex
	last map[string]string
	// out is where the lines go: standard output, as testing writes its
	// own configuration lines (goos:, pkg:, cpu:); tests replace it.
	out *os.File
}

// ConfigLine writes "key: value" to standard output as a benchfmt
// configuration line, which benchstat and every reader of the results
// attach to the results after it, unless value is the one last written for
// key. Call it at the top of a benchmark function, before Run or Compare
// (testing's first call of it prints no result line yet): with
// ort.Model.Provenance, the model's identity and settings:
//
//	for _, kv := range m.Provenance() {
//		decodegap.ConfigLine(kv.Key, kv.Value)
//	}
//
// key must be one word (no space or colon); value one line.
func ConfigLine(key, value string) { configLine(key, value) }

// configLine writes "key: value", a benchfmt configuration line that applies
// to every result after it, unless it is the value last written for key.
// Call it on a benchmark function's first call (testing's N=1 probe, before
// the result line's name is printed); a repeated value is not written
// again, so the calls testing makes after printing the name stay silent as
// long as the value holds.
func configLine(key, value string) {
	configLines.mu.Lock()
	defer configLines.mu.Unlock()
	if configLines.last == nil {
		configLines.last = map[string]string{}
	}
	if v, ok := configLines.last[key]; ok && v == value {
		return
	}
	configLines.last[key] = value
	out := configLines.out
	if out == nil {
		out = os.Stdout
	}
	fmt.Fprintf(out, "%s: %s\n", key, value)
}

// GapSpec returns g as the value of the gap: configuration line Run,
// Compare and RunDecode write: "mean=2ms kind=hybrid shape=constant",
// with jitter=, spin=, maxcpu=, burstiness=, trace=N and open when set.
func GapSpec(g Gap) string {
	s := []string{"mean=" + g.Mean.String(), "kind=" + g.Kind.String(), "shape=" + g.Shape.String()}
	if g.Jitter != 0 {
		s = append(s, fmt.Sprintf("jitter=%g", g.Jitter))
	}
	if g.Spin != 0 {
		s = append(s, "spin="+g.Spin.String())
	}
	if g.MaxCPU != 0 {
		s = append(s, fmt.Sprintf("maxcpu=%g", g.MaxCPU))
	}
	if g.Burstiness != 0 {
		s = append(s, fmt.Sprintf("burstiness=%g", g.Burstiness))
	}
	if len(g.Trace) > 0 {
		s = append(s, fmt.Sprintf("trace=%d", len(g.Trace)))
	}
	if g.Open {
		s = append(s, "open")
	}
	return strings.Join(s, " ")
}

// writeGapConfig writes the gap: configuration line of g, and the
// cpu-scope: line, what cpu-ns/op counts in every block of the file
// (cpuScopeLine: the one definition, internal/cpucost).
func writeGapConfig(g Gap) {
	configLine("gap", GapSpec(g))
	configLine("cpu-scope", cpuScopeLine)
}
