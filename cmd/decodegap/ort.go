package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
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
The mapping of onnxruntime_perf_test's and llama-bench's flags is in docs/guide/ort.md.

Each block is its own process group. A block still going after -run-timeout
is stopped; a block that crashes, times out or prints no or malformed results
is lost (named on stderr and in -o), and the rounds go on; more than
-max-failed lost blocks stop them.

Exit status: 0 when every round ran, 1 when a block was lost or parity
failed, 2 for bad usage, 130 when interrupted.

flags:
`

// maxORTSessions is the most -sessions: each is an OS thread locked for
// the run and a session with its own tensors and thread pools.
const maxORTSessions = 256

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
	plan       string // -plan: a plan file that sets benchtime and the rounds
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
	strict     bool
	decode     decodeFlags
	// run is -run-timeout and -max-failed.
	run runFlags
	// json is -json.
	json string
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
	// StrictFills refuses guessed fills (ort.ModelConfig.StrictFills).
	StrictFills bool
	// Prefill, Decode, Buckets and TokenInput are the growing-context
	// decode's (-prefill, -decode, -buckets, -token-input); Decode 0 runs
	// the windowed step.
	Prefill, Decode int
	Buckets         []int
	TokenInput      string
	// ArmsSpec is every arm's session options, the same line in every
	// child (ort-arms:), so that benchstat's tables are not split by arm.
	ArmsSpec string
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
	f.register(fs)
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
	cfg.StrictFills = f.strict
	if f.list {
		return listModel(cfg, stdout, stderr)
	}
	if len(f.arms) == 0 {
		return usageErr("give at least one -arm (the base), e.g. -arm intra=1 -arm intra=2,spin=off; with one arm the run is an A/A check against the null arm")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if f.decode.on() && !set["unit"] {
		f.units = "sec/op,p50-sec/op" // per line; a depth bucket has no CPU figure of its own
	}
	if err := applyPlan(f.plan, set, f.until, &f.benchtime, &f.rounds, &f.maxRounds); err != nil {
		return usageErr("%v", err)
	}
	if err := f.checkModes(set); err != nil {
		return usageErr("%v", err)
	}
	if f.until {
		f.rounds = f.maxRounds
	}
	cpus, err := f.checkRun()
	if err != nil {
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

	// Fills, the decode or the window, and parity, in this process,
	// before anything is timed.
	if code := f.preflight(cfg, model, arms, tol, usageErr, stderr); code >= 0 {
		return code
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
	iarms, names, err := f.childArms(self, abs, cfg, arms, cpus)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
		return 1
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

	if err := f.writeHeader(file, model, arms); err != nil {
		fmt.Fprintf(stderr, "decodegap ort: writing %s: %v\n", f.out, err)
		return 1
	}
	if f.search {
		return searchArms(ctx, f, iarms[:len(arms)], file, logPath, stdout, stderr)
	}
	return f.runRounds(ctx, plan, iarms, names, file, logPath, stdout, stderr)
}

// register adds the ort command's flags to fs.
func (f *ortFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.list, "list", false, "print the model's signature, dynamic axes and the state pairs it will carry, and exit")
	fs.Var(&f.dims, "dims", "dynamic axes, `NAME=SIZE[,...]`: a symbolic name (batch=1) or INPUT@AXIS=SIZE for an unnamed one; repeatable")
	fs.Var(&f.shapes, "shape", "an input's whole shape, `INPUT=DxDx...` (input=1x512); repeatable")
	fs.Var(&f.inputs, "input", "an input's fill, `INPUT=SPEC`: zeros (the default), a number, rand, rand:LO,HI, or file:PATH (raw little-endian elements, one tensor per step, cycled); repeatable")
	fs.Var(&f.state, "state", "carry an output into an input after each step, `OUTPUT=INPUT`; repeatable, once per output, beside the automatic rule")
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
	fs.StringVar(&f.plan, "plan", "", planUsage)
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
	f.run.register(fs, "block")
	addJSONFlag(fs, &f.json)
	fs.BoolVar(&f.strict, "strict-fills", false, "refuse to run when a sample rate (sr) or another scalar input has no -input and would be zeros (ort.ModelConfig.StrictFills); without it they are warned about")
	fs.IntVar(&f.decode.prefill, "prefill", 0, "with -decode: the prompt's `tokens` (llama-bench's -p; its -d is the prompt of the depth to decode at): one step of that sequence length where the model allows it, else one step a token; its time is the time to first token")
	fs.IntVar(&f.decode.tokens, "decode", 0, "growing-context decode: `M` tokens a generation after the prefill (llama-bench's -n), each step's present.* fed back as past_key_values.* with no window and the gap before each token; a block holds whole generations (-benchtime Nx: ⌈N/M⌉ of them); 0 runs the windowed step (a KV cache of the -dims past length)")
	fs.StringVar(&f.decode.buckets, "buckets", "", "with -decode: the context depth buckets' lower bounds, `LIST` like 32,512,1024,1536; one benchmark line each (Model/prefill=P/ctx=A..B); default four equal buckets")
	fs.StringVar(&f.decode.tokenInput, "token-input", "", "with -decode: the token ids input's `NAME` (default input_ids, or the only integer input of rank 2)")
	fs.StringVar(&f.child, "child", "", "internal: run one arm's block as a benchmark process (`JSON`)")
}

// checkModes returns a usage error, naming the flags, for a combination of
// loop, search and rounds flags that does not go together; set holds the
// flags given.
func (f *ortFlags) checkModes(set map[string]bool) error {
	if err := f.decode.check(set); err != nil {
		return err
	}
	if f.decode.on() && (f.open || f.search || f.slo != "" || f.sessions > 1 || f.cores > 0 || f.cpus != "") {
		return errors.New("-decode runs a closed loop of one session, unconfined: drop -open, -search, -slo, -sessions, -cores and -cpus (run under taskset -c LIST to confine it)")
	}
	switch {
	case f.gap < 0:
		return fmt.Errorf("-gap %v: must be ≥ 0 (0 runs the steps back to back)", f.gap)
	case !(f.jitter >= 0 && f.jitter < 1):
		return fmt.Errorf("-jitter %v: need a fraction of -gap in [0, 1)", f.jitter)
	case f.warmup < 0:
		return fmt.Errorf("-warmup %d: must be ≥ 0", f.warmup)
	case f.parity < 0:
		return fmt.Errorf("-parity %d: must be ≥ 0 (0: no parity check)", f.parity)
	}
	if f.benchtime != "" {
		if err := checkBenchtime(f.benchtime); err != nil {
			return fmt.Errorf("-benchtime %v", err)
		}
	}
	if err := checkUnits(f.units); err != nil {
		return err
	}
	if f.slo != "" {
		if _, err := decodegap.ParseSLO(f.slo); err != nil {
			return fmt.Errorf("-slo: %v", err)
		}
	}
	switch {
	case f.search && f.slo == "":
		return fmt.Errorf("-search needs -slo, the objective to search for, e.g. -slo p99=32ms")
	case f.search && (set["rounds"] || f.until || set["max-rounds"]):
		return fmt.Errorf("-search runs one search per arm, not rounds: drop -rounds, -until-decided and -max-rounds")
	case f.search && f.gap <= 0:
		return fmt.Errorf("-search starts at the arrival rate 1/-gap: give -gap > 0 (e.g. -gap 32ms starts at 31.25/s)")
	case set["max-rate"] && !f.search:
		return fmt.Errorf("-max-rate without -search: it caps the rates the search probes")
	case f.maxRate < 0 || (f.maxRate > 0 && f.gap > 0 && f.maxRate < float64(time.Second)/float64(f.gap)):
		return fmt.Errorf("-max-rate %v: need 0 (no cap) or at least the first rate probed, 1/-gap = %.4g/s", f.maxRate, float64(time.Second)/float64(f.gap))
	case f.open && f.gap <= 0:
		return fmt.Errorf("-open needs -gap > 0, the mean time between arrivals (e.g. -gap 32ms: 31.25 arrivals/s per session)")
	}
	if f.search {
		f.open = true
	}
	switch {
	case f.until && set["rounds"]:
		return fmt.Errorf("-rounds with -until-decided: give the most rounds with -max-rounds")
	case f.until && (f.maxRounds < fewestRounds || f.maxRounds > maxRounds):
		return fmt.Errorf("-max-rounds %d: need %d to %d with -until-decided (%d rounds give the first 95%% CI, %d for 2–3 units under Holm)", f.maxRounds, fewestRounds, maxRounds, fewestRounds, fewestHolm)
	case !f.until && set["max-rounds"]:
		return fmt.Errorf("-max-rounds %d without -until-decided: use -rounds for a fixed number of rounds", f.maxRounds)
	case f.rounds < 1 || f.rounds > maxRounds:
		return fmt.Errorf("-rounds %d: need 1 to %d (%d or more for a verdict)", f.rounds, maxRounds, fewestRounds)
	}
	return nil
}

// writeHeader writes the -o file's header: the model, the rounds or the
// search, the gap, the mode and every arm's options.
func (f *ortFlags) writeHeader(w io.Writer, model string, arms []ortArm) error {
	var hdr bytes.Buffer
	loop := ""
	if f.open {
		loop = ", open loop"
	}
	if f.slo != "" {
		loop += ", -slo " + f.slo
	}
	if f.decode.on() {
		loop += fmt.Sprintf(", decode: prefill %d, %d tokens a generation", f.decode.prefill, f.decode.tokens)
	} else {
		loop += ", windowed step"
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
	_, err := w.Write(hdr.Bytes())
	return err
}

// runRounds runs plan's blocks into file, interleaved, and judges them:
// the census, the SLO tally and the verdict table to stdout. It returns the
// exit status.
func (f *ortFlags) runRounds(ctx context.Context, plan *interleave.Plan, iarms []interleave.Arm, names []string, file io.Writer, logPath string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "decodegap ort: %d blocks (%d arms + null × %d rounds, seed %d) into %s; block logs in %s\n",
		plan.Runs(), len(names)-1, f.rounds, f.seed, f.out, logPath)

	jf := interleaveFlags{out: f.out, units: f.units, null: "null", delta: f.delta, untilDecided: f.until, maxRounds: f.maxRounds,
		json: f.json, command: "ort"}
	var written []*benchfmt.Result // every result written, for -until-decided
	decidedAt := 0
	runner := &interleave.Runner{Plan: plan, Out: file, Progress: stderr,
		Env:     append(os.Environ(), ortLogEnv+"="+logPath),
		Timeout: f.run.runnerTimeout(), MaxFailed: f.run.maxFailed,
		OnRun: func(r interleave.Run) bool {
			if r.Err != nil {
				fmt.Fprintf(stderr, "decodegap ort: lost block %s\n", lostLine(r.Err))
			}
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
	runner.Screener, runner.NoScreen = screenerFor("ort", f.screen, stderr)
	runs, runErr := runner.Run(ctx)
	status := 0
	if n := lostBlocks(runs); n > 0 {
		fmt.Fprintf(stderr, "decodegap ort: %d of %d blocks lost; the verdict is from the rest (block logs in %s)\n", n, len(runs), logPath)
		status = 1
	}
	if runErr != nil {
		var re *interleave.RunError
		switch {
		case errors.As(runErr, &re):
			fmt.Fprintf(stderr, "decodegap ort: more than -max-failed %d blocks lost, so the rest were not run: %v\n", f.run.maxFailed, runErr)
			fmt.Fprintf(stderr, "decodegap ort: %s\n", finishedBlocks(runs, f.out))
			return 1
		case ctx.Err() != nil:
			fmt.Fprintf(stderr, "decodegap ort: %v; %s\n", runErr, finishedBlocks(runs, f.out))
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
		printSLOTally(stdout, *f, logPath, names, written)
	}
	if err := judgeFile(jf, names, stdout); err != nil {
		fmt.Fprintf(stderr, "decodegap ort: %v\n", err)
		if status == 0 {
			status = 1
		}
	}
	return status
}

// finishedBlocks says where the blocks of runs that were not lost are:
// the lost ones are not finished (they said "the 4 finished blocks" after
// "4 of 4 blocks lost").
func finishedBlocks(runs []interleave.Run, out string) string {
	switch n := len(runs) - lostBlocks(runs); n {
	case 0:
		return "no block finished, so " + out + " holds no result"
	case 1:
		return "the 1 finished block is in " + out
	default:
		return fmt.Sprintf("the %d finished blocks are in %s", n, out)
	}
}

// lostBlocks counts the runs that failed.
func lostBlocks(runs []interleave.Run) int {
	n := 0
	for _, r := range runs {
		if r.Err != nil {
			n++
		}
	}
	return n
}

// childSpec is what the child process of arm a runs.
func (f *ortFlags) childSpec(model string, cfg ort.ModelConfig, a ortArm) ortChild {
	c := ortChild{Model: model, Arm: a.name, Options: a.spec, Dims: cfg.Dims, Shapes: cfg.Shapes,
		State: cfg.State, NoAuto: cfg.NoAutoState, Seed: f.seed, Gap: f.gap, GapKind: f.gapKind,
		GapShape: f.gapShape, Jitter: f.jitter, Warmup: f.warmup, Sessions: f.sessions, Cores: f.cores,
		Benchtime: f.benchtime, SLO: f.slo, Open: f.open, Search: f.search, MaxRate: f.maxRate,
		StrictFills: f.strict, Prefill: f.decode.prefill, Decode: f.decode.tokens, TokenInput: f.decode.tokenInput}
	c.Buckets, _ = parseBuckets(f.decode.buckets)
	c.ArmsSpec = armsSpec(f.arms)
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
