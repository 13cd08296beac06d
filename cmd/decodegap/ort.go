package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"golang.org/x/perf/benchfmt"
)

func init() {
	commands["ort"] = command{
		summary: "benchmark any ONNX model at decode-like gaps: arms of session options, interleaved with a null arm, judged",
		run:     runORT,
	}
}

const ortUsage = `usage: decodegap ort [flags] MODEL.onnx

Benchmarks one ONNX model as a decode-shaped step (inputs fed, the model run,
state carried from outputs to inputs) at an idle gap, comparing session
options (-arm) in interleaved rounds with a null arm, and judges each arm
against the first. No Go to write.

  decodegap ort -list MODEL.onnx          the signature, dynamic axes and state pairs
  decodegap ort -shape input=1x512 -shape state=2x1x128 -input sr=16000 \
      -input input=file:clip.f32 -gap 2ms \
      -arm 'intra=1' -arm 'intra=2,spin=on' -arm 'intra=2,spin=off' silero_vad_v5.onnx

Each arm is a comma-separated list of session options, optionally named
(NAME:intra=2,spin=off; the default name is the list itself):
  intra=N inter=N           intra- and inter-op threads (0: ONNX Runtime's default)
  spin=on|off               spinning of the pools (both, unless interspin is set)
  interspin=on|off          spinning of the inter-op pool alone
  mode=sequential|parallel  execution mode
  opt=disable|basic|extended|all   graph optimisation level
  arena=on|off              the CPU memory arena
Before timing, every arm's outputs are checked against the first arm's over
-parity steps (-tol, -tol-output). Then each round runs every arm and the null
arm (a second process of the first arm) once, in a fresh random order, each
block a separate process of this command running -benchtime steps under
decodegap.Run (gap, warm-up, steady state, counters, thread census).

Serving: -open makes -gap the mean time between arrivals scheduled in advance
(per session): an overrun queues the steps behind it, and response times
(resp-p99-ns/op, ...) are reported. -slo p99=5ms judges every block's tail on
its confidence bound (RunConfig.SLO; response time with -open, step latency
otherwise) and counts, per arm, the blocks that met it. With -search, instead
of rounds, each arm in turn searches its highest arrival rate per session
meeting -slo (decodegap.SearchRate: open loop from 1/-gap, up to -max-rate),
every probe -benchtime steps (p99 needs ≥ 299 for a 95% bound):
  decodegap ort -slo p99=32ms -search -gap 32ms -sessions 2 -arm intra=1 ... MODEL.onnx

Results go to -o as Go benchmark format (arm:, round:, screen: lines), the
child processes' logs (steady state, thread census) to -o's name + .log; the
verdict table and the benchstat command lines are printed at the end.
The mapping of onnxruntime_perf_test's and llama-bench's flags is in docs/ort.md.

Exit status: 0 when every round ran, 1 when a run or parity failed, 2 for bad
usage, 130 when interrupted.

flags:
`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }

// ortFlags are the command's settings.
type ortFlags struct {
	list       bool
	dims       repeated
	shapes     repeated
	inputs     repeated
	state      repeated
	noAuto     bool
	seed       uint64
	arms       repeated
	gap        time.Duration
	gapKind    string
	gapShape   string
	jitter     float64
	warmup     int
	sessions   int
	cores      int
	cpus       string
	benchtime  string
	rounds     int
	until      bool
	maxRounds  int
	parity     int
	tol        string
	tolOutputs repeated
	out        string
	units      string
	delta      float64
	lock       bool
	lockPath   string
	screen     bool
	slo        string
	open       bool
	search     bool
	maxRate    float64
	child      string
}

// ortChild is what a child process runs: one arm's block. The parent
// passes it as JSON in the hidden -child flag.
type ortChild struct {
	Model     string
	Arm       string
	Options   string
	Dims      map[string]int64
	Shapes    map[string][]int64
	Inputs    map[string]string
	State     map[string]string
	NoAuto    bool
	Seed      uint64
	Gap       time.Duration
	GapKind   string
	GapShape  string
	Jitter    float64
	Warmup    int
	Sessions  int
	Cores     int
	CPUs      []int
	Benchtime string
	// SLO is -slo in decodegap.ParseSLO's syntax; "" judges nothing.
	SLO string
	// Open makes -gap the mean time between scheduled arrivals.
	Open bool
	// Search runs decodegap.SearchRate from 1/Gap up to MaxRate (0: no
	// cap) instead of one decodegap.Run.
	Search  bool
	MaxRate float64
	// gap is the parsed gap, in the child.
	gap decodegap.Gap
}

func runORT(args []string, stdout, stderr io.Writer) int {
	var f ortFlags
	fs := flag.NewFlagSet("ort", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, ortUsage)
		fs.PrintDefaults()
	}
	fs.BoolVar(&f.list, "list", false, "print the model's signature, dynamic axes and the state pairs it will carry, and exit")
	fs.Var(&f.dims, "dims", "dynamic axes, `NAME=SIZE[,...]`: a symbolic name (batch=1) or INPUT@AXIS=SIZE for an unnamed one; repeatable")
	fs.Var(&f.shapes, "shape", "an input's whole shape, `INPUT=DxDx...` (input=1x512); repeatable")
	fs.Var(&f.inputs, "input", "an input's fill, `INPUT=SPEC`: zeros (the default), a number, rand, rand:LO,HI, or file:PATH (raw little-endian elements, one tensor per step, cycled); repeatable")
	fs.Var(&f.state, "state", "carry an output into an input after each step, `OUTPUT=INPUT`; repeatable, beside the automatic rule")
	fs.BoolVar(&f.noAuto, "no-auto-state", false, "carry only the -state pairs, not those of the automatic rule (see -list)")
	fs.Uint64Var(&f.seed, "seed", 0, "`seed` of the round order, the rand fills and random gaps; 0 draws one (it is printed)")
	fs.Var(&f.arms, "arm", "an arm's session options, `[NAME:]KEY=VALUE,...` (see above); the first is the base; repeatable")
	fs.DurationVar(&f.gap, "gap", 0, "mean idle `gap` before each step (0: back to back)")
	fs.StringVar(&f.gapKind, "gap-kind", "hybrid", "how the gap is spent: hybrid, sleep or busy")
	fs.StringVar(&f.gapShape, "gap-shape", "constant", "how the gap varies: constant, uniform (±-jitter) or exponential")
	fs.Float64Var(&f.jitter, "jitter", 0, "half-width of a uniform gap as a `fraction` of -gap")
	fs.IntVar(&f.warmup, "warmup", 32, "`steps` run and discarded at the start of each block")
	fs.IntVar(&f.sessions, "sessions", 0, "run `N` independent instances at once, released together each step (decodegap's RunConfig.Sessions); 0 and 1 mean one")
	fs.IntVar(&f.cores, "cores", 0, "confine each block to `N` physical cores, one logical CPU each (RunConfig.Budget.Cores); 0 does not confine")
	fs.StringVar(&f.cpus, "cpus", "", "confine each block to these logical CPUs, `LIST` like 0,2-3 (RunConfig.Budget.CPUs); wins over -cores")
	fs.StringVar(&f.benchtime, "benchtime", "600x", "steps per block (`Nx`), or a duration (2s) as go test reads it")
	fs.IntVar(&f.rounds, "rounds", 10, "number of `rounds`")
	fs.BoolVar(&f.until, "until-decided", false, "run rounds until every judged metric is decided (faster, slower or equivalent), at most -max-rounds; the test accounts for the repeated looks")
	fs.IntVar(&f.maxRounds, "max-rounds", 0, "with -until-decided, the most `rounds` to run")
	fs.IntVar(&f.parity, "parity", 32, "`steps` of the parity check of every arm against the first (0: none)")
	fs.StringVar(&f.tol, "tol", "1e-5,1e-4", "parity tolerance `ABS,REL`: |cand−ref| ≤ ABS + REL×|ref|")
	fs.Var(&f.tolOutputs, "tol-output", "one output's parity tolerance, `OUTPUT=ABS,REL`; repeatable")
	fs.StringVar(&f.out, "o", "", "output `file` (Go benchmark format); must not exist; default ort-YYYYMMDD-HHMMSS.txt")
	fs.StringVar(&f.units, "unit", judge.DefaultUnitList, "comma-separated `units` to judge, those present")
	f.delta = 0.02
	fs.Var((*judge.Delta)(&f.delta), "delta", "equivalence `margin`, a percentage (2%) or a fraction (0.02): B/A within ±margin is equivalent")
	fs.BoolVar(&f.lock, "lock", true, "hold the host lock while running (see 'decodegap lock')")
	fs.StringVar(&f.lockPath, "lock-path", hostmon.DefaultLockPath(), "host lock `file`")
	fs.BoolVar(&f.screen, "screen", true, "screen the host for contention over each block (screen: line)")
	fs.StringVar(&f.slo, "slo", "", "latency objective `pN=LIMIT[@CONF]` (p99=5ms, p99.9=20ms@90%; RunConfig.SLO): every block is judged on its bound (response time with -open, step latency otherwise) and each arm's blocks that met it are counted")
	fs.BoolVar(&f.open, "open", false, "open loop: -gap is the mean time between arrivals scheduled in advance (per session), steps queue behind an overrun, and response times are reported (resp-p99-ns/op, ...)")
	fs.BoolVar(&f.search, "search", false, "with -slo: instead of rounds, search each arm's highest arrival rate per session that meets the objective (open loop, from 1/-gap, bracketing then bisecting; one process per arm, every probe -benchtime steps, all into -o)")
	fs.Float64Var(&f.maxRate, "max-rate", 0, "with -search, the highest arrival `rate` per second probed (0: no cap)")
	fs.StringVar(&f.child, "child", "", "internal: run one arm's block as a benchmark process (`JSON`)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if f.child != "" {
		return runORTChild(f.child, fs.Args(), stdout, stderr)
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap ort: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'decodegap ort -h' for usage")
		return 2
	}
	if fs.NArg() != 1 {
		return usageErr("give one model file after the flags: decodegap ort [flags] MODEL.onnx")
	}
	model := fs.Arg(0)
	cfg, err := f.modelConfig(model)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.list {
		return listModel(cfg, stdout, stderr)
	}
	if len(f.arms) == 0 {
		return usageErr("give at least one -arm (the base), e.g. -arm intra=1 -arm intra=2,spin=off; with one arm the run is an A/A check against the null arm")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if f.slo != "" {
		if _, err := decodegap.ParseSLO(f.slo); err != nil {
			return usageErr("-slo: %v", err)
		}
	}
	switch {
	case f.search && f.slo == "":
		return usageErr("-search needs -slo, the objective to search for, e.g. -slo p99=32ms")
	case f.search && (set["rounds"] || f.until || set["max-rounds"]):
		return usageErr("-search runs one search per arm, not rounds: drop -rounds, -until-decided and -max-rounds")
	case f.search && f.gap <= 0:
		return usageErr("-search starts at the arrival rate 1/-gap: give -gap > 0 (e.g. -gap 32ms starts at 31.25/s)")
	case set["max-rate"] && !f.search:
		return usageErr("-max-rate without -search: it caps the rates the search probes")
	case f.maxRate < 0 || (f.maxRate > 0 && f.gap > 0 && f.maxRate < float64(time.Second)/float64(f.gap)):
		return usageErr("-max-rate %v: need 0 (no cap) or at least the first rate probed, 1/-gap = %.4g/s", f.maxRate, float64(time.Second)/float64(f.gap))
	case f.open && f.gap <= 0:
		return usageErr("-open needs -gap > 0, the mean time between arrivals (e.g. -gap 32ms: 31.25 arrivals/s per session)")
	}
	if f.search {
		f.open = true
	}
	switch {
	case f.until && set["rounds"]:
		return usageErr("-rounds with -until-decided: give the most rounds with -max-rounds")
	case f.until && (f.maxRounds < fewestRounds || f.maxRounds > maxRounds):
		return usageErr("-max-rounds %d: need %d to %d with -until-decided (%d rounds give the first 95%% CI, %d for 2–3 units under Holm)", f.maxRounds, fewestRounds, maxRounds, fewestRounds, fewestHolm)
	case !f.until && set["max-rounds"]:
		return usageErr("-max-rounds %d without -until-decided: use -rounds for a fixed number of rounds", f.maxRounds)
	case f.rounds < 1 || f.rounds > maxRounds:
		return usageErr("-rounds %d: need 1 to %d (%d or more for a verdict)", f.rounds, maxRounds, fewestRounds)
	}
	if f.until {
		f.rounds = f.maxRounds
	}
	if _, err := gapKind(f.gapKind); err != nil {
		return usageErr("%v", err)
	}
	if !(f.delta > 0 && f.delta < 1) {
		return usageErr("-delta %v: need a fraction between 0 and 1, e.g. 0.02 (±2%%)", f.delta)
	}
	if f.sessions < 0 || f.cores < 0 {
		return usageErr("-sessions %d, -cores %d: neither may be negative", f.sessions, f.cores)
	}
	cpus, err := parseCPUList(f.cpus)
	if err != nil {
		return usageErr("%v", err)
	}
	if _, err := gapShape(f.gapShape); err != nil {
		return usageErr("%v", err)
	}
	arms, err := parseORTArms(f.arms)
	if err != nil {
		return usageErr("%v", err)
	}
	tol, err := f.tolerances()
	if err != nil {
		return usageErr("%v", err)
	}
	if f.seed == 0 {
		f.seed = rand.Uint64()
	}
	cfg.Seed = f.seed
	if f.out == "" {
		f.out = "ort-" + time.Now().Format("20060102-150405") + ".txt"
	}

	// Parity, in this process, before anything is timed.
	if f.parity > 0 {
		if err := armParity(cfg, arms, f.parity, tol, stderr); err != nil {
			var de *ort.DimsError
			if errors.As(err, &de) {
				return usageErr("%s: dynamic dimensions not set: %s; set them with -dims NAME=SIZE (INPUT@AXIS=SIZE for an unnamed one) or -shape INPUT=DxD (see -list)",
					model, strings.Join(de.Missing, ", "))
			}
			fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
			return 1
		}
	}

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort: finding this program to run its blocks: %v\n", err)
		return 1
	}
	abs, err := filepath.Abs(model)
	if err != nil {
		abs = model
	}
	names := make([]string, 0, len(arms)+1)
	var iarms []interleave.Arm
	for _, a := range append(arms, ortArm{name: "null", opts: arms[0].opts, spec: arms[0].spec}) {
		spec := f.childSpec(abs, cfg, a)
		spec.CPUs = cpus
		js, err := json.Marshal(spec)
		if err != nil {
			fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
			return 1
		}
		iarms = append(iarms, interleave.Arm{Name: a.name, Args: []string{self, "ort", "-child", string(js), "--",
			"-test.run=^$", "-test.bench=.", "-test.count=1", "-test.benchtime=" + f.benchtime}})
		names = append(names, a.name)
	}
	plan, err := interleave.NewPlan(iarms, f.rounds, f.seed)
	if err != nil {
		return usageErr("%v", err)
	}
	file, code := createOutput("ort", f.out, usageErr, 1, stderr)
	if code != 0 {
		return code
	}
	defer file.Close()
	logPath := f.out + ".log"

	ctx, stop := interruptible(0)
	defer stop()
	if f.lock {
		unlock, code := holdHostLock(ctx, "ort", f.lockPath, file, 1, stderr)
		if code != 0 {
			return code
		}
		defer unlock()
	}

	var hdr bytes.Buffer
	loop := ""
	if f.open {
		loop = ", open loop"
	}
	if f.slo != "" {
		loop += ", -slo " + f.slo
	}
	if f.search {
		fmt.Fprintf(&hdr, "# decodegap ort %s -search: seed %d, from %.4g/s per session (gap %v, %s, %s)%s, -benchtime %s\n",
			model, f.seed, float64(time.Second)/float64(f.gap), f.gap, f.gapKind, f.gapShape, loop, f.benchtime)
	} else {
		fmt.Fprintf(&hdr, "# decodegap ort %s: %d rounds, seed %d, gap %v (%s, %s%s), -benchtime %s, base %s, null = a second process of %s\n",
			model, f.rounds, f.seed, f.gap, f.gapKind, f.gapShape, loop, f.benchtime, arms[0].name, arms[0].name)
	}
	for _, a := range arms {
		fmt.Fprintf(&hdr, "# arm %s: %v\n", a.name, a.opts)
	}
	hdr.WriteByte('\n')
	if _, err := file.Write(hdr.Bytes()); err != nil {
		fmt.Fprintf(stderr, "decodegap ort: writing %s: %v\n", f.out, err)
		return 1
	}
	if f.search {
		return searchArms(ctx, f, iarms[:len(arms)], file, logPath, stdout, stderr)
	}
	fmt.Fprintf(stderr, "decodegap ort: %d blocks (%d arms + null × %d rounds, seed %d) into %s; block logs in %s\n",
		plan.Runs(), len(arms), f.rounds, f.seed, f.out, logPath)

	jf := interleaveFlags{out: f.out, units: f.units, null: "null", delta: f.delta, untilDecided: f.until, maxRounds: f.maxRounds}
	var written []*benchfmt.Result // every result written, for -until-decided
	decidedAt := 0
	runner := &interleave.Runner{Plan: plan, Out: file, Progress: stderr,
		Env: append(os.Environ(), ortLogEnv+"="+logPath),
		OnRun: func(r interleave.Run) bool {
			written = append(written, r.Results...)
			if !f.until || r.Pos < len(iarms) {
				return false
			}
			// The end of a round: stop when every verdict is decided.
			if !allDecided(jf, names, written) {
				return false
			}
			decidedAt = r.Round
			return true
		}}
	if f.screen {
		if sc, why := newScreener(); sc != nil {
			runner.Screener = sc
		} else {
			runner.NoScreen = why
			fmt.Fprintf(stderr, "decodegap ort: screen: unavailable: %s\n", why)
		}
	} else {
		runner.NoScreen = "screening turned off (-screen=false)"
	}
	runs, runErr := runner.Run(ctx)
	status := 0
	if runErr != nil {
		var re *interleave.RunError
		switch {
		case errors.As(runErr, &re):
			fmt.Fprintf(stderr, "decodegap ort: a block failed, so the rest were not run: %v\n", runErr)
			fmt.Fprintf(stderr, "decodegap ort: the %d finished blocks are in %s\n", len(runs), f.out)
			return 1
		case ctx.Err() != nil:
			fmt.Fprintf(stderr, "decodegap ort: %v; the %d finished blocks are in %s\n", runErr, len(runs), f.out)
			status = 130
		default:
			fmt.Fprintf(stderr, "decodegap ort: %v\n", runErr)
			return 1
		}
	}
	if len(runs) == 0 {
		return status
	}
	if f.until && status == 0 {
		if decidedAt > 0 {
			fmt.Fprintf(stderr, "decodegap ort: every verdict decided after %d of at most %d rounds (-max-rounds)\n", decidedAt, f.maxRounds)
		} else {
			fmt.Fprintf(stderr, "decodegap ort: not every verdict decided within -max-rounds %d\n", f.maxRounds)
		}
	}
	printCensus(stdout, logPath, names)
	if f.slo != "" {
		printSLOTally(stdout, f, logPath, names, written)
	}
	if err := judgeFile(jf, names, stdout); err != nil {
		fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
		if status == 0 {
			status = 1
		}
	}
	return status
}

// modelConfig builds the model's configuration from the flags.
func (f *ortFlags) modelConfig(model string) (ort.ModelConfig, error) {
	cfg := ort.ModelConfig{Path: model, NoAutoState: f.noAuto, Seed: f.seed}
	for _, d := range f.dims {
		for _, kv := range strings.Split(d, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if !ok || k == "" || err != nil || n < 0 {
				return cfg, fmt.Errorf("-dims %q: write NAME=SIZE[,NAME=SIZE...] with sizes ≥ 0, e.g. batch=1,seq=1", d)
			}
			if cfg.Dims == nil {
				cfg.Dims = map[string]int64{}
			}
			cfg.Dims[strings.TrimSpace(k)] = n
		}
	}
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
		if cfg.Shapes == nil {
			cfg.Shapes = map[string][]int64{}
		}
		cfg.Shapes[k] = shape
	}
	for _, s := range f.inputs {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return cfg, fmt.Errorf("-input %q: write INPUT=SPEC, e.g. sr=16000 or input=file:clip.f32", s)
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
	for _, s := range f.state {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" || v == "" {
			return cfg, fmt.Errorf("-state %q: write OUTPUT=INPUT, e.g. stateN=state", s)
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
	for _, s := range f.tolOutputs {
		name, v, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return t, fmt.Errorf("-tol-output %q: write OUTPUT=ABS,REL", s)
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

// childSpec is what the child process of arm a runs.
func (f *ortFlags) childSpec(model string, cfg ort.ModelConfig, a ortArm) ortChild {
	c := ortChild{Model: model, Arm: a.name, Options: a.spec, Dims: cfg.Dims, Shapes: cfg.Shapes,
		State: cfg.State, NoAuto: cfg.NoAutoState, Seed: f.seed, Gap: f.gap, GapKind: f.gapKind,
		GapShape: f.gapShape, Jitter: f.jitter, Warmup: f.warmup, Sessions: f.sessions, Cores: f.cores,
		Benchtime: f.benchtime, SLO: f.slo, Open: f.open, Search: f.search, MaxRate: f.maxRate}
	if len(cfg.Inputs) > 0 {
		c.Inputs = map[string]string{}
		for k, v := range cfg.Inputs {
			c.Inputs[k] = v.String()
		}
	}
	return c
}

// ortArm is one parsed -arm.
type ortArm struct {
	name, spec string
	opts       ort.Options
}

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

// parseCPUList parses "0,2-3" into [0 2 3]; "" is nil.
func parseCPUList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("-cpus %q: write a list of CPUs and ranges, e.g. 0,2-3", s)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
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
	fmt.Fprintf(w, "inputs (%d)\n", len(sig.Inputs))
	for _, p := range sig.Inputs {
		fill := cfg.Inputs[p.Name]
		extra := "fill " + fill.String()
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
		fmt.Fprintf(w, "  %v\n", p)
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
