package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/decodegap/ort"
)

// ortLogEnv names the file a child appends its whole output to (the
// parent's -o + ".log"): the log lines of decodegap.Run, with the steady
// state and the thread census, which the interleave runner does not keep.
const ortLogEnv = "GAPBENCH_ORT_LOG"

// runORTChild runs one arm's block: this process becomes a benchmark binary
// with one benchmark, BenchmarkModel, driven by the -test.* flags in args,
// so that its output is exactly go test's and the interleave runner reads it
// as it reads a test binary's.
func runORTChild(js string, args []string, stdout, stderr io.Writer) int {
	var c ortChild
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		fmt.Fprintf(stderr, "decodegap ort -child: %v\n", err)
		return 2
	}
	opts, err := parseOptions(c.Options)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort -child: %v\n", err)
		return 2
	}
	kind, err := gapKind(c.GapKind)
	if err == nil {
		var shape decodegap.GapShape
		shape, err = gapShape(c.GapShape)
		if err == nil {
			c.gap = decodegap.Gap{Kind: kind, Shape: shape, Mean: c.Gap, Jitter: c.Jitter, Open: c.Open}
		}
	}
	var slo decodegap.SLO
	if err == nil && c.SLO != "" {
		slo, err = decodegap.ParseSLO(c.SLO)
	}
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort -child: %v\n", err)
		return 2
	}
	cfg := ort.ModelConfig{Path: c.Model, Options: opts, Dims: c.Dims, Shapes: c.Shapes, State: c.State,
		NoAutoState: c.NoAuto, Seed: c.Seed, StrictFills: c.StrictFills}
	for k, v := range c.Inputs {
		fill, err := ort.ParseFill(v)
		if err != nil {
			fmt.Fprintf(stderr, "decodegap ort -child: %v\n", err)
			return 2
		}
		if cfg.Inputs == nil {
			cfg.Inputs = map[string]ort.Fill{}
		}
		cfg.Inputs[k] = fill
	}
	testing.Init()
	if err := flag.CommandLine.Parse(args); err != nil {
		return 2
	}
	prov, key, err := c.describe(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort -child: %v\n", err)
		return 1
	}
	open := func() (decodegap.Step, func() error, error) {
		m, err := ort.OpenModel(cfg)
		if err != nil {
			return nil, nil, err
		}
		return m.Step, m.Close, nil
	}
	measure := func(b *testing.B) {
		rc := decodegap.RunConfig{Gap: c.gap, Warmup: c.Warmup, Seed: c.Seed, Sessions: c.Sessions,
			Budget: decodegap.Budget{Cores: c.Cores, CPUs: c.CPUs}, SLO: slo}
		if c.Decode > 0 {
			decodegap.RunDecode(b, rc, decodegap.Decode{Open: openDecoder(c.decoderConfig(cfg)), Tokens: c.Decode, Buckets: c.Buckets})
			return
		}
		if c.Search {
			decodegap.SearchRate(b, rc, open, decodegap.Rates{Start: float64(time.Second) / float64(c.Gap), Max: c.MaxRate})
			return
		}
		decodegap.Run(b, rc, open)
	}
	bench := measure
	if key != "" { // the key dims in the name: Model/ctx=511/batch=1
		bench = func(b *testing.B) { b.Run(key, measure) }
	}
	restore, err := teeStdout(os.Getenv(ortLogEnv), fmt.Sprintf("=== arm %s (%v), pid %d", c.Arm, opts, os.Getpid()))
	if err != nil {
		fmt.Fprintf(stderr, "decodegap ort -child: %s: %v\n", ortLogEnv, err)
		return 1
	}
	// File configuration lines: benchfmt attaches them to the results
	// (decodegap.Run writes gap: itself).
	for _, kv := range prov {
		fmt.Fprintf(os.Stdout, "%s: %s\n", kv[0], kv[1])
	}
	m := testing.MainStart(ortTestDeps{}, nil, []testing.InternalBenchmark{{Name: "BenchmarkModel", F: bench}}, nil, nil)
	code := m.Run()
	restore()
	return code
}

// teeStdout copies everything written to standard output (file descriptor
// 1, whoever writes it: testing, decodegap's summaries, ONNX Runtime) into
// the file at path too (appending, after a header line), until restore is
// called. path "" changes nothing.
func teeStdout(path, header string) (restore func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	log, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(log, header)
	r, w, err := os.Pipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	// Redirect the descriptor, not the os.Stdout variable: a writer that
	// kept os.Stdout's *os.File from before (decodegap's summaries) then
	// goes through the pipe too, in order, instead of racing the copy.
	fd := int(os.Stdout.Fd())
	saved, err := unix.Dup(fd)
	if err == nil {
		err = unix.Dup2(int(w.Fd()), fd)
	}
	if err != nil {
		r.Close()
		w.Close()
		log.Close()
		return nil, fmt.Errorf("redirecting standard output: %w", err)
	}
	orig := os.NewFile(uintptr(saved), "stdout")
	var wg sync.WaitGroup
	wg.Go(func() { io.Copy(io.MultiWriter(orig, log), r) })
	return func() {
		unix.Dup2(saved, fd)
		w.Close()
		wg.Wait()
		r.Close()
		orig.Close()
		log.Close()
	}, nil
}

// printCensus prints the log of each arm's first block from the log file:
// decodegap.Run's steady-state verdict and thread census.
func printCensus(w io.Writer, path string, arms []string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	first := map[string][]string{}
	cur, keep := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "=== arm "); ok {
			cur, _, _ = strings.Cut(rest, " ")
			_, seen := first[cur]
			keep = !seen
			if keep {
				first[cur] = nil
			}
			continue
		}
		if keep && strings.HasPrefix(line, "    ") {
			first[cur] = append(first[cur], logPrefix.ReplaceAllString(strings.TrimSpace(line), ""))
		}
	}
	fmt.Fprintf(w, "== the first block of each arm: steady state and thread census (every block's log: %s)\n", path)
	for _, a := range arms {
		for _, l := range first[a] {
			fmt.Fprintf(w, "  %s: %s\n", a, l)
		}
	}
	fmt.Fprintln(w)
}

// logPrefix is the file:line testing puts before a log line.
var logPrefix = regexp.MustCompile(`^[a-z_]+\.go:[0-9]+: `)

// corpusEntry is testing's fuzzing corpus entry, which ortTestDeps must
// name to satisfy testing.MainStart's interface.
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

// ortTestDeps is the little of testing/internal/testdeps that a benchmark
// needs, so that the child can run testing.MainStart: name matching and
// profiles; no fuzzing, no coverage.
type ortTestDeps struct{}

var errNoFuzz = errors.New("decodegap ort runs no fuzz targets")

var matchCache sync.Map // pattern → *regexp.Regexp

func (ortTestDeps) MatchString(pat, str string) (bool, error) {
	if re, ok := matchCache.Load(pat); ok {
		return re.(*regexp.Regexp).MatchString(str), nil
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return false, err
	}
	matchCache.Store(pat, re)
	return re.MatchString(str), nil
}
func (ortTestDeps) ImportPath() string                      { return "decodegap/ort" }
func (ortTestDeps) ModulePath() string                      { return "" }
func (ortTestDeps) SetPanicOnExit0(bool)                    {}
func (ortTestDeps) StartCPUProfile(w io.Writer) error       { return pprof.StartCPUProfile(w) }
func (ortTestDeps) StopCPUProfile()                         { pprof.StopCPUProfile() }
func (ortTestDeps) StartTestLog(io.Writer)                  {}
func (ortTestDeps) StopTestLog() error                      { return nil }
func (ortTestDeps) ResetCoverage()                          {}
func (ortTestDeps) SnapshotCoverage()                       {}
func (ortTestDeps) CheckCorpus([]any, []reflect.Type) error { return nil }
func (ortTestDeps) WriteProfileTo(name string, w io.Writer, debug int) error {
	p := pprof.Lookup(name)
	if p == nil {
		return fmt.Errorf("unknown profile %q", name)
	}
	return p.WriteTo(w, debug)
}
func (ortTestDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errNoFuzz
}
func (ortTestDeps) RunFuzzWorker(func(corpusEntry) error) error { return errNoFuzz }
func (ortTestDeps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, errNoFuzz
}
func (ortTestDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}

// describe opens the model once (the step or the decoder, as the block
// will) for what the results must say: the configuration lines and the
// key dims of the benchmark's name.
func (c *ortChild) describe(cfg ort.ModelConfig) (prov [][2]string, key string, err error) {
	if c.Decode > 0 {
		d, err := ort.OpenDecoder(c.decoderConfig(cfg))
		if err != nil {
			return nil, "", err
		}
		defer d.Close()
		return provenance(c, d.Provenance()), keyName(cfg, -1), nil
	}
	m, err := ort.OpenModel(cfg)
	if err != nil {
		return nil, "", err
	}
	defer m.Close()
	return provenance(c, m.Provenance()), keyName(cfg, m.Window()), nil
}
