package ort

import (
	"fmt"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// VADConfig describes one Silero VAD v5 step. The zero VADConfig is the
// model Find reports, ONNX Runtime's default options and SynthAudio(0,
// SynthFrames).
type VADConfig struct {
	// Model is the path of silero_vad_v5.onnx; "" means the one Find
	// reports. Each path is read once per process and shared.
	Model string
	// Options are the session options.
	Options Options
	// Seed selects the synthetic clip SynthAudio(Seed, SynthFrames); ignored
	// when Audio is set.
	Seed uint64
	// Audio, when not nil, is the clip fed instead: 16 kHz mono samples in
	// [-1, 1], a positive multiple of VADFrameSamples long. It is read,
	// never written, and may be shared by several VADs.
	Audio []float32
}

// VAD is a Silero VAD v5 step on one ONNX Runtime session: each Step feeds
// the next 512-sample frame of its clip with sr = 16000 and the state the
// previous step returned (decode-shaped: every step depends on the last), and
// keeps the speech probability. A VAD must be used by one goroutine at a
// time; independent VADs may run concurrently.
type VAD struct {
	sess *Session
	// input, state, prob and stateN are the data of the session's tensors
	// "input" [1,512], "state" [2,1,128], "output" [1,1] and "stateN"
	// [2,1,128]; Step writes the first two and reads the last two.
	input, state, prob, stateN []float32
	// audio is the clip; pos is the offset of the next frame in it, a
	// multiple of VADFrameSamples below len(audio).
	audio []float32
	pos   int
	// frames counts the steps run since open or Reset.
	frames int64
	// last is the speech probability of the last step.
	last float32
	cfg  VADConfig
}

// modelCache holds each model file's bytes, read once per process.
var modelCache sync.Map // path → []byte

func readModel(path string) ([]byte, error) {
	if b, ok := modelCache.Load(path); ok {
		return b.([]byte), nil
	}
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the Silero VAD model: %w (run `%s` or set %s)", err, InstallCommand, ModelEnv)
	}
	v, _ := modelCache.LoadOrStore(path, b)
	return v.([]byte), nil
}

// OpenVAD opens a Silero VAD v5 step, loading ONNX Runtime first if needed.
// It costs one model parse (about 40 ms here) and about 2 KB of tensors;
// the model bytes and the default clip are shared between VADs. The caller
// must Close it.
func OpenVAD(cfg VADConfig) (*VAD, error) {
	if cfg.Model == "" {
		parts, _, err := findEach(os.Getenv, workDir())
		if err != nil {
			return nil, err
		}
		cfg.Model = parts.Model
	}
	audio := cfg.Audio
	if audio == nil {
		audio = defaultAudio(cfg.Seed)
	} else if len(audio) == 0 || len(audio)%VADFrameSamples != 0 {
		return nil, fmt.Errorf("VADConfig.Audio has %d samples: it must be a positive multiple of %d (one frame)", len(audio), VADFrameSamples)
	}
	data, err := readModel(cfg.Model)
	if err != nil {
		return nil, err
	}
	if err := checkVADSignature(data, cfg.Model); err != nil {
		return nil, err
	}
	if err := Init(""); err != nil {
		return nil, err
	}
	v := &VAD{audio: audio, cfg: cfg}
	var ins, outs []Binding
	fail := func(what string, err error) (*VAD, error) {
		destroyAll(ins, outs)
		return nil, fmt.Errorf("creating the Silero VAD %s tensor: %w", what, err)
	}
	input, err := ort.NewEmptyTensor[float32](ort.NewShape(1, VADFrameSamples))
	if err != nil {
		return fail("input", err)
	}
	ins = append(ins, Binding{"input", input})
	state, err := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
	if err != nil {
		return fail("state", err)
	}
	ins = append(ins, Binding{"state", state})
	sr, err := ort.NewScalar(int64(VADSampleRate))
	if err != nil {
		return fail("sr", err)
	}
	ins = append(ins, Binding{"sr", sr})
	prob, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 1))
	if err != nil {
		return fail("output", err)
	}
	outs = append(outs, Binding{"output", prob})
	stateN, err := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
	if err != nil {
		return fail("stateN", err)
	}
	outs = append(outs, Binding{"stateN", stateN})
	v.sess, err = openData(data, cfg.Model, ins, outs, cfg.Options)
	if err != nil {
		return nil, err
	}
	v.input, v.state = input.GetData(), state.GetData()
	v.prob, v.stateN = prob.GetData(), stateN.GetData()
	return v, nil
}

// checkVADSignature refuses a model that is not Silero VAD v5 by its
// inputs and outputs, before any tensor is made.
func checkVADSignature(data []byte, path string) error {
	sig, err := parseSignature(data)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	want := func(ps []Port, names ...string) bool {
		for _, n := range names {
			if p, ok := find1(ps, n); !ok || p.Kind != Tensor {
				return false
			}
		}
		return true
	}
	if !want(sig.Inputs, "input", "state", "sr") || !want(sig.Outputs, "output", "stateN") {
		return fmt.Errorf("%s is not Silero VAD v5: its inputs are %s and its outputs %s, where OpenVAD needs inputs \"input\", \"state\", \"sr\" and outputs \"output\", \"stateN\"; open any other model with OpenModel",
			path, portNames(sig.Inputs), portNames(sig.Outputs))
	}
	return nil
}

// Next runs one step and returns its speech probability, in [0, 1]. It does
// not allocate (except to build an error).
func (v *VAD) Next() (float32, error) {
	v.feed()
	if err := v.sess.Run(); err != nil {
		return 0, fmt.Errorf("running Silero VAD step %d: %w", v.frames, err)
	}
	return v.collect(), nil
}

// feed copies the next frame into the input tensor: the adapter's work
// before Run.
func (v *VAD) feed() {
	copy(v.input, v.audio[v.pos:v.pos+VADFrameSamples])
}

// collect advances the clip, carries stateN into the state input and
// returns the probability: the adapter's work after Run.
func (v *VAD) collect() float32 {
	v.pos += VADFrameSamples
	if v.pos == len(v.audio) {
		v.pos = 0
	}
	copy(v.state, v.stateN)
	v.frames++
	v.last = v.prob[0]
	return v.last
}

// Step runs one step; Prob returns its speech probability. Its signature
// matches decodegap.Step, so pass the method value v.Step. It does not
// allocate (except to build an error).
func (v *VAD) Step() error {
	_, err := v.Next()
	return err
}

// Prob returns the speech probability of the last step, in [0, 1]; 0 before
// the first step.
func (v *VAD) Prob() float32 { return v.last }

// Frames returns the number of steps run since OpenVAD or Reset.
func (v *VAD) Frames() int64 { return v.frames }

// Reset zeroes the model state and rewinds the clip to its first frame: the
// next step is the first of a new stream.
func (v *VAD) Reset() {
	clear(v.state)
	v.pos, v.frames, v.last = 0, 0, 0
}

// Options returns the session options the VAD was opened with.
func (v *VAD) Options() Options { return v.cfg.Options }

// Config returns the configuration the VAD was opened with, with Model
// resolved to the path used.
func (v *VAD) Config() VADConfig { return v.cfg }

// Close releases the session and its tensors. It is safe to call more than
// once; a step after Close returns an error.
func (v *VAD) Close() error {
	if v.sess == nil {
		return nil
	}
	err := v.sess.Close()
	v.input, v.state, v.prob, v.stateN = nil, nil, nil, nil
	return err
}
