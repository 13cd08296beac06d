package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/testutil"
)

func TestORTParseArms(t *testing.T) {
	arms, err := parseORTArms([]string{"intra=1", "fast:intra=2,spin=off,interspin=on,mode=parallel,inter=2,opt=basic,arena=off", ""})
	require.NoError(t, err)
	require.Len(t, arms, 3)
	assert.Equal(t, "intra1", arms[0].name)
	assert.Equal(t, ort.Options{IntraOpThreads: 1}, arms[0].opts)
	assert.Equal(t, "fast", arms[1].name)
	assert.Equal(t, ort.Options{IntraOpThreads: 2, InterOpThreads: 2, Spinning: ort.SpinOff, InterSpinning: ort.On,
		Mode: ort.Parallel, GraphOpt: ort.OptBasic, Arena: ort.Off}, arms[1].opts)
	assert.Equal(t, "default", arms[2].name)

	for spec, want := range map[string]string{
		"intra=x":         `-arm "intra=x": intra=x: give a thread count ≥ 0 (0: ONNX Runtime's default)`,
		"spin=maybe":      `-arm "spin=maybe": spin=maybe: use on or off`,
		"opt=max":         `-arm "opt=max": opt=max: use disable, basic, extended or all`,
		"threads=2":       `-arm "threads=2": unknown key "threads" (keys: intra, inter, spin, interspin, mode, opt, arena)`,
		"intra":           `-arm "intra": "intra": write KEY=VALUE (keys: intra, inter, spin, interspin, mode, opt, arena)`,
		"null:intra=1":    `-arm "null:intra=1": "null" is the null arm's name; name it otherwise`,
		"a b:intra=1":     `-arm "a b:intra=1": the name "a b" holds a space or '/'; name it NAME:intra=1`,
		"mode=concurrent": `-arm "mode=concurrent": mode=concurrent: use sequential or parallel`,
	} {
		_, err := parseORTArms([]string{spec})
		assert.EqualError(t, err, want)
	}
	_, err = parseORTArms([]string{"intra=1", "intra=1"})
	assert.EqualError(t, err, `-arm "intra=1": two arms are named "intra1"; name one NAME:intra=1`)
}

func TestORTModelConfigFlags(t *testing.T) {
	f := ortFlags{dims: repeated{"batch=1,seq=8", "x@0=2"}, shapes: repeated{"input=1x512"},
		inputs: repeated{"sr=16000", "x=rand:0,1"}, state: repeated{"hn=h"}, noAuto: true}
	cfg, err := f.modelConfig("m.onnx")
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"batch": 1, "seq": 8, "x@0": 2}, cfg.Dims)
	assert.Equal(t, map[string][]int64{"input": {1, 512}}, cfg.Shapes)
	assert.Equal(t, map[string]ort.Fill{"sr": {Kind: ort.Const, Value: 16000}, "x": {Kind: ort.Random, Lo: 0, Hi: 1}}, cfg.Inputs)
	assert.Equal(t, map[string]string{"hn": "h"}, cfg.State)
	assert.True(t, cfg.NoAutoState)

	for _, c := range []struct {
		f    ortFlags
		want string
	}{
		{ortFlags{dims: repeated{"batch"}}, `-dims "batch": write NAME=SIZE[,NAME=SIZE...] with sizes ≥ 0, e.g. batch=1,seq=1`},
		{ortFlags{dims: repeated{"batch=-1"}}, `-dims "batch=-1": write NAME=SIZE[,NAME=SIZE...] with sizes ≥ 0, e.g. batch=1,seq=1`},
		{ortFlags{shapes: repeated{"input=1xN"}}, `-shape "input=1xN": write INPUT=DxDx..., e.g. input=1x512`},
		{ortFlags{inputs: repeated{"sr"}}, `-input "sr": write INPUT=SPEC, e.g. sr=16000 or input=file:clip.f32`},
		{ortFlags{inputs: repeated{"sr=ones"}}, `-input "sr=ones": fill "ones": use zeros, a number, rand, rand:LO,HI or file:PATH`},
		{ortFlags{state: repeated{"hn"}}, `-state "hn": write OUTPUT=INPUT, e.g. stateN=state`},
		// A name given twice would keep the last and drop the first silently.
		{ortFlags{state: repeated{"stateN=state", "stateN=h"}}, `-state "stateN=state" and -state "stateN=h" both set output "stateN": give one`},
		{ortFlags{shapes: repeated{"input=1x512", "input=1x256"}}, `-shape "input=1x512" and -shape "input=1x256" both set input "input": give one`},
		{ortFlags{inputs: repeated{"sr=16000", "sr=8000"}}, `-input "sr=16000" and -input "sr=8000" both set input "sr": give one`},
		{ortFlags{dims: repeated{"batch=1", "seq=2, batch=4"}}, `-dims "batch=1" and -dims "batch=4" both set dimension "batch": give one`},
	} {
		_, err := c.f.modelConfig("m.onnx")
		assert.EqualError(t, err, c.want)
	}

	tf := ortFlags{tol: "1e-3,0", tolOutputs: repeated{"y=0,0.5"}}
	tol, err := tf.tolerances()
	require.NoError(t, err)
	assert.Equal(t, ort.Tolerances{Default: ort.Tolerance{Abs: 1e-3}, Outputs: map[string]ort.Tolerance{"y": {Rel: 0.5}}}, tol)
	_, err = (&ortFlags{tol: "1e-3,0", tolOutputs: repeated{"y=0,0.5", "y=0,0.1"}}).tolerances()
	assert.EqualError(t, err, `-tol-output "y=0,0.5" and -tol-output "y=0,0.1" both set output "y": give one`)
	_, err = (&ortFlags{tol: "1e-3"}).tolerances()
	assert.EqualError(t, err, `-tol "1e-3": write ABS,REL with both ≥ 0, e.g. 1e-5,1e-4`)
}

func TestORTParseCPUList(t *testing.T) {
	got, err := parseCPUList("0,2-4, 7")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 3, 4, 7}, got)
	got, err = parseCPUList("")
	require.NoError(t, err)
	assert.Nil(t, got)
	for _, bad := range []string{"a", "3-1", "-1", "1,"} {
		_, err := parseCPUList(bad)
		assert.EqualError(t, err, `-cpus "`+bad+`": write a list of CPUs and ranges, e.g. 0,2-3`)
	}
}

func TestORTUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "decodegap ort: give one model file after the flags: decodegap ort [flags] MODEL.onnx\n"},
		{[]string{"m.onnx"}, "decodegap ort: give at least one -arm (the base), e.g. -arm intra=1 -arm intra=2,spin=off; with one arm the run is an A/A check against the null arm\n"},
		{[]string{"-arm", "intra=1", "-rounds", "0", "m.onnx"}, "decodegap ort: -rounds 0: need 1 to 1000000000 (4 or more for a verdict)\n"},
		{[]string{"-arm", "intra=1", "-gap-kind", "nap", "m.onnx"}, "decodegap ort: -gap-kind \"nap\": use hybrid, sleep or busy\n"},
		{[]string{"-arm", "intra=1", "-until-decided", "-max-rounds", "3", "m.onnx"}, "decodegap ort: -max-rounds 3: need 4 to 1000000000 with -until-decided (4 rounds give the first 95% CI, 5 for 2–3 units under Holm)\n"},
		{[]string{"-arm", "intra=1", "-until-decided", "-rounds", "8", "m.onnx"}, "decodegap ort: -rounds with -until-decided: give the most rounds with -max-rounds\n"},
		{[]string{"-arm", "intra=1", "-max-rounds", "8", "m.onnx"}, "decodegap ort: -max-rounds 8 without -until-decided: use -rounds for a fixed number of rounds\n"},
		{[]string{"-arm", "intra=1", "-state", "stateN=state", "-state", "stateN=h", "m.onnx"}, "decodegap ort: -state \"stateN=state\" and -state \"stateN=h\" both set output \"stateN\": give one\n"},
		{[]string{"-arm", "intra=1", "-delta", "0", "m.onnx"}, `invalid value "0" for flag -delta: "0": the margin must lie between 0 and 100% (e.g. 2% or 0.02)`},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, runORT(c.args, &out, &errb), "%v", c.args)
		assert.True(t, strings.HasPrefix(errb.String(), c.want), "%v: %s", c.args, errb.String())
	}
}

func TestORTListVAD(t *testing.T) {
	parts := ort.Require(t)
	var out, errb bytes.Buffer
	code := runORT([]string{"-list", "-input", "sr=16000", parts.Model}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	got := out.String()
	assert.Contains(t, got, "model "+parts.Model+"\n")
	assert.Contains(t, got, `  "state"  float32   [2,?,128]        fill zeros, then carried from "stateN"`)
	assert.Contains(t, got, `  "sr"     int64     []               fill 16000`)
	assert.Contains(t, got, `  "stateN" float32   [?,?,?]          carried into "state"`)
	assert.Contains(t, got, "  unnamed inputs' axes: input@0, input@1, state@1\n")
	assert.Contains(t, got, "state carried after each step (automatic rule: output = input + N|n|_out|_new|_next, or present* → past_key_values*, present* → past*)\n  stateN → state (suffix N): both float32, [?,?,?] → [2,?,128], the shapes agree once the dynamic axes are set\n")
	assert.NotContains(t, got, "cannot run")

	out.Reset()
	require.Equal(t, 0, runORT([]string{"-list", "-no-auto-state", parts.Model}, &out, &errb))
	assert.Contains(t, out.String(), "  none: every step starts from the fills (set pairs with -state OUTPUT=INPUT)\n")
}

func TestORTNamesDimsFlags(t *testing.T) {
	goList, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	require.NoError(t, err)
	p := filepath.Join(strings.TrimSpace(string(goList)), "test_data", "example_dynamic_axes.onnx")
	ort.RequireLibrary(t)
	var out, errb bytes.Buffer
	assert.Equal(t, 2, runORT([]string{"-arm", "intra=1", "-o", filepath.Join(t.TempDir(), "o.txt"), p}, &out, &errb))
	assert.Equal(t, "decodegap ort: "+p+`: dynamic dimensions not set: "input_vectors_dynamic_axes_1" (input "input_vectors" axis 0); set them with -dims NAME=SIZE (INPUT@AXIS=SIZE for an unnamed one) or -shape INPUT=DxD (see -list)`+"\nrun 'decodegap ort -h' for usage\n", errb.String())
}

// TestORTListTestData lists every model of onnxruntime_go's test_data: the
// runnable ones exit 0, the two with non-tensor or string ports exit 1
// naming the port.
func TestORTListTestData(t *testing.T) {
	goList, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(goList)), "test_data", "*.onnx"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 9)
	refused := map[string]string{
		"sklearn_randomforest.onnx": `output "output_probability" is a sequence`,
		"example_strings.onnx":      `input "input" is a tensor of string`,
	}
	for _, p := range files {
		var out, errb bytes.Buffer
		code := runORT([]string{"-list", p}, &out, &errb)
		if why, ok := refused[filepath.Base(p)]; ok {
			assert.Equal(t, 1, code, p)
			assert.Contains(t, out.String(), "cannot run: "+p+": "+why, p)
			continue
		}
		assert.Equal(t, 0, code, "%s: %s%s", p, out.String(), errb.String())
		assert.Contains(t, out.String(), "model "+p+"\n")
		assert.Contains(t, out.String(), "inputs (")
	}
}

func TestORTListRefusesSequences(t *testing.T) {
	goList, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	require.NoError(t, err)
	p := filepath.Join(strings.TrimSpace(string(goList)), "test_data", "sklearn_randomforest.onnx")
	var out, errb bytes.Buffer
	assert.Equal(t, 1, runORT([]string{"-list", p}, &out, &errb))
	assert.Contains(t, out.String(), `  "output_probability" seq(map(int64,tensor(float))) [*]`)
	assert.Contains(t, out.String(), "cannot run: "+p+`: output "output_probability" is a sequence, seq(map(int64,tensor(float))): the generic step runs tensors only, so it cannot open this model`+"\n")
}

// writeClip writes frames of SynthAudio as little-endian float32.
func writeClip(t *testing.T, frames int) string {
	t.Helper()
	clip := ort.SynthAudio(0, frames)
	b := make([]byte, 4*len(clip))
	for i, s := range clip {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(s))
	}
	p := filepath.Join(t.TempDir(), "clip.f32")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// TestORTRunsVAD runs the command for real on Silero VAD: parity, two
// rounds of two arms and the null arm as child processes, the census and the
// verdict table.
func TestORTRunsVAD(t *testing.T) {
	parts := ort.Require(t)
	bin := buildDecodegap(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	cmd := exec.Command(bin, "ort", "-lock=false", "-screen=false", "-rounds", "2", "-benchtime", "64x", "-warmup", "4",
		"-seed", "7", "-gap", "100us", "-parity", "8",
		"-shape", "input=1x512", "-shape", "state=2x1x128", "-input", "sr=16000", "-input", "input=file:"+writeClip(t, 8),
		"-arm", "intra=1", "-arm", "two:intra=2,spin=off", "-o", out, "-json", out+".json", parts.Model)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())

	assert.Positive(t, rowsByKind(readJSONReport(t, out+".json", "ort"))["candidate two"])
	assert.Contains(t, stderr.String(), "decodegap ort: parity: arm two agrees with intra1 over 8 steps")
	assert.Contains(t, stderr.String(), "decodegap ort: 6 blocks (2 arms + null × 2 rounds, seed 7) into "+out)
	assert.Contains(t, stdout.String(), "== the first block of each arm: steady state and thread census (every block's log: "+out+".log)\n")
	for _, arm := range []string{"intra1", "two", "null"} {
		assert.Contains(t, stdout.String(), "  "+arm+": threads: ")
	}
	assert.Contains(t, stdout.String(), "benchstat: go tool benchstat -col 'arm@(intra1 two null)' -ignore round,screen "+out)

	count := map[string]int{}
	for _, r := range testutil.ResultsFile(t, out) {
		assert.Equal(t, "silero_vad_v5", r.GetConfig("model"))
		assert.Equal(t, "mean=100µs kind=hybrid shape=constant", r.GetConfig("gap"))
		assert.Equal(t, "Model", string(r.Name.Base()))
		count[r.GetConfig("arm")]++
	}
	assert.Equal(t, map[string]int{"intra1": 2, "two": 2, "null": 2}, count)
}

// TestORTFinishedBlocks: the blocks said to be finished leave out the
// lost ones (it said "the 4 finished blocks are in …" after "4 of 4
// blocks lost").
func TestORTFinishedBlocks(t *testing.T) {
	lost := interleave.Run{Err: &interleave.RunError{}}
	assert.Equal(t, "no block finished, so out.txt holds no result", finishedBlocks([]interleave.Run{lost, lost, lost, lost}, "out.txt"))
	assert.Equal(t, "the 1 finished block is in out.txt", finishedBlocks([]interleave.Run{lost, {}}, "out.txt"))
	assert.Equal(t, "the 2 finished blocks are in out.txt", finishedBlocks([]interleave.Run{{}, lost, {}}, "out.txt"))
}
