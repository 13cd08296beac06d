package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gapbench/gapbench/decodegap/ort"
)

// armParity checks every arm's outputs against the first arm's, one arm
// open at a time beside the base.
func armParity(cfg ort.ModelConfig, arms []ortArm, steps int, tol ort.Tolerances, stderr io.Writer) error {
	cfg.Options = arms[0].opts
	base, err := ort.OpenModel(cfg)
	if err != nil {
		return err
	}
	defer base.Close()
	for _, a := range arms[1:] {
		c := cfg
		c.Options = a.opts
		m, err := ort.OpenModel(c)
		if err != nil {
			return fmt.Errorf("arm %s: %w", a.name, err)
		}
		rep, err := ort.ModelParity(base, m, steps, tol)
		m.Close()
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			return fmt.Errorf("arm %s against %s: %w (loosen with -tol or -tol-output, or skip with -parity 0)", a.name, arms[0].name, err)
		}
		worst := ""
		for _, w := range rep.Worst {
			if w.Excess > 0 {
				worst += fmt.Sprintf(", %s%s off by %.3g× its tolerance", w.Output, indexOf(w.At), w.Excess)
			}
		}
		if worst == "" {
			worst = ", every output identical"
		}
		fmt.Fprintf(stderr, "decodegap ort: parity: arm %s agrees with %s over %d steps%s\n", a.name, arms[0].name, steps, worst)
	}
	if len(arms) == 1 {
		if err := base.Step(); err != nil {
			return err
		}
	}
	return nil
}

func indexOf(at []int64) string {
	s := make([]string, len(at))
	for i, a := range at {
		s[i] = strconv.FormatInt(a, 10)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// listModel prints the model's signature and what the step would do with
// it.
func listModel(cfg ort.ModelConfig, stdout, stderr io.Writer) int {
	sig, err := ort.Inspect(cfg.Path)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
		return 1
	}
	w := stdout
	m := sig.Meta
	fmt.Fprintf(w, "model %s\n", sig.Path)
	fmt.Fprintf(w, "  producer %q, graph %q, IR %d, opsets %s", m.Producer, m.Graph, m.IRVersion, strings.Join(m.Opsets, ", "))
	if m.Domain != "" || m.ModelVersion != 0 {
		fmt.Fprintf(w, ", domain %q, version %d", m.Domain, m.ModelVersion)
	}
	fmt.Fprintln(w)
	if m.Description != "" {
		fmt.Fprintf(w, "  description: %s\n", m.Description)
	}
	keys := make([]string, 0, len(m.Custom))
	for k := range m.Custom {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  metadata %q = %q\n", k, m.Custom[k])
	}
	pairs, refused, perr := ort.StatePairs(sig, cfg.State, !cfg.NoAutoState)
	feeds, fedBy := map[string]string{}, map[string]string{}
	for _, p := range pairs {
		feeds[p.Output], fedBy[p.Input] = p.Input, p.Output
	}
	nameW := 4
	for _, p := range append(append([]ort.Port{}, sig.Inputs...), sig.Outputs...) {
		nameW = max(nameW, len(strconv.Quote(p.Name)))
	}
	row := func(p ort.Port, extra string) {
		typ := p.Type
		if p.Kind == ort.Tensor {
			typ = p.DType.String()
		}
		fmt.Fprintf(w, "  %-*s %-9s %-16s %s\n", nameW, strconv.Quote(p.Name), typ, p.ShapeString(), extra)
	}
	defaults := map[string]ort.DefaultFill{}
	if perr == nil {
		for _, d := range ort.DefaultFills(sig, cfg.Inputs, pairs, len(pairs) > 0) {
			defaults[d.Input] = d
		}
	}
	fmt.Fprintf(w, "inputs (%d)\n", len(sig.Inputs))
	for _, p := range sig.Inputs {
		fill := cfg.Inputs[p.Name]
		extra := "fill " + fill.String()
		if d, ok := defaults[p.Name]; ok {
			extra = defaultWord(d)
		}
		if o, ok := fedBy[p.Name]; ok {
			extra += fmt.Sprintf(", then carried from %q", o)
		}
		row(p, extra)
	}
	fmt.Fprintf(w, "outputs (%d)\n", len(sig.Outputs))
	for _, p := range sig.Outputs {
		extra := ""
		if in, ok := feeds[p.Name]; ok {
			extra = fmt.Sprintf("carried into %q", in)
		}
		row(p, extra)
	}
	var named, unnamed []string
	named = sig.DimNames()
	for _, p := range sig.Inputs {
		for a, d := range p.Shape {
			if d < 0 && p.Dims[a] == "" {
				unnamed = append(unnamed, fmt.Sprintf("%s@%d", p.Name, a))
			}
		}
	}
	if len(named)+len(unnamed) > 0 {
		fmt.Fprintln(w, "dynamic axes (set inputs' with -dims NAME=SIZE or -shape INPUT=DxD; outputs' are sized by one run)")
		if len(named) > 0 {
			fmt.Fprintf(w, "  named: %s\n", strings.Join(named, ", "))
		}
		if len(unnamed) > 0 {
			fmt.Fprintf(w, "  unnamed inputs' axes: %s\n", strings.Join(unnamed, ", "))
		}
	}
	fmt.Fprintf(w, "state carried after each step (automatic rule: output = input + %s, or %s)\n",
		strings.Join(ort.StateSuffixes, "|"), prefixRule())
	switch {
	case perr != nil:
		fmt.Fprintf(w, "  error: %v\n", perr)
	case len(pairs) == 0:
		fmt.Fprintln(w, "  none: every step starts from the fills (set pairs with -state OUTPUT=INPUT)")
	}
	for _, p := range pairs {
		fmt.Fprintf(w, "  %v: %s\n", p, pairWhy(sig, p))
	}
	for _, p := range refused {
		fmt.Fprintf(w, "  not carried: %s → %s: %s\n", p.Output, p.Input, p.Rule)
	}
	if err := ort.Runnable(sig); err != nil {
		fmt.Fprintf(w, "cannot run: %v\n", err)
		return 1
	}
	if perr != nil {
		return 1
	}
	return 0
}

func prefixRule() string {
	var s []string
	for _, p := range ort.StatePrefixes {
		s = append(s, p[0]+"* → "+p[1]+"*")
	}
	return strings.Join(s, ", ")
}
