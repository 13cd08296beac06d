package main

import (
	"encoding/json"
	"fmt"

	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/interleave"
)

// childArms returns the interleave arms that run each arm's blocks as a
// child of this program (self), the null arm last, and their names.
func (f *ortFlags) childArms(self, model string, cfg ort.ModelConfig, arms []ortArm, cpus []int) ([]interleave.Arm, []string, error) {
	names := make([]string, 0, len(arms)+1)
	var iarms []interleave.Arm
	for _, a := range append(arms, ortArm{name: "null", opts: arms[0].opts, spec: arms[0].spec}) {
		spec := f.childSpec(model, cfg, a)
		spec.CPUs = cpus
		js, err := json.Marshal(spec)
		if err != nil {
			return nil, nil, err
		}
		iarms = append(iarms, interleave.Arm{Name: a.name, Args: []string{self, "ort", "-child", string(js), "--",
			"-test.run=^$", "-test.bench=.", "-test.count=1", "-test.benchtime=" + f.benchtime}})
		names = append(names, a.name)
	}
	return iarms, names, nil
}

// checkRun returns a usage error, naming the flag, for a gap, a limit or
// a confinement out of range, and the -cpus list.
func (f *ortFlags) checkRun() ([]int, error) {
	if _, err := gapKind(f.gapKind); err != nil {
		return nil, err
	}
	if err := f.run.check(); err != nil {
		return nil, err
	}
	switch {
	case !(f.delta > 0 && f.delta < 1):
		return nil, fmt.Errorf("-delta %v: need a fraction between 0 and 1, e.g. 0.02 (±2%%)", f.delta)
	case f.sessions < 0 || f.cores < 0:
		return nil, fmt.Errorf("-sessions %d, -cores %d: neither may be negative", f.sessions, f.cores)
	case f.sessions > maxORTSessions:
		return nil, fmt.Errorf("-sessions %d: at most %d (each session is a locked OS thread and a whole ONNX Runtime session)", f.sessions, maxORTSessions)
	}
	cpus, err := parseCPUList(f.cpus)
	if err == nil {
		err = usableCPUs(cpus)
	}
	if err != nil {
		return nil, err
	}
	if _, err := gapShape(f.gapShape); err != nil {
		return nil, err
	}
	return cpus, nil
}
