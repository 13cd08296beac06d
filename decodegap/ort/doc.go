// Package ort builds decode-shaped steps from ONNX models run by the real ONNX
// Runtime shared library, through github.com/yalue/onnxruntime_go.
//
// A step is a func() error, the shape of decodegap.Step. Any model:
//
//	m, err := ort.OpenModel(ort.ModelConfig{Path: "model.onnx",
//		Dims: map[string]int64{"batch": 1}, Options: ort.Options{IntraOpThreads: 1}})
//	...
//	defer m.Close()
//	decodegap.Run(b, cfg, decodegap.Func(m.Step))
//
// Inspect lists a model's inputs, outputs (element types, shapes with their
// dynamic axes) and metadata without ONNX Runtime. OpenModel allocates every
// tensor (ModelConfig.Inputs fills inputs: zeros, a constant, seeded random,
// or a file fed one tensor per step), sizes outputs whose shape is dynamic by
// one run, and carries state from outputs into inputs after each step: by
// ModelConfig.State and by the rule of StatePairs (stateN → state, hn → h,
// present.* → past_key_values.*). A model with a non-tensor input or output
// (sequence, map) or a string tensor is refused when it opens, naming it.
// Masks default to ones and a merged decoder's use_cache_branch to whether
// state is carried; rates and other scalars left out are listed
// (DefaultFills) and refused under ModelConfig.StrictFills. OpenDecoder
// runs a decoder at a growing context instead of a window (Decoder:
// Prefill, Token, Depth, Reset; decodegap.RunDecode drives it). Sizes,
// threads and file reads have documented limits (MaxTensorBytes,
// MaxThreads, MaxFileBytes: a *LimitError).
// ModelParity checks that two configurations agree within per-output
// tolerances before anything is timed. OpenVAD is a hand-written step for
// Silero VAD v5, the project's reference workload.
//
// This package knows nothing of gaps or statistics; it opens sessions with
// the options being compared (Options: threads, spinning, execution mode,
// graph optimisation, memory arena, and Options.Custom for the rest) and runs
// them without allocating (Model.Step, Session.Run, VAD.Step).
//
// # Finding ONNX Runtime and the model
//
// Nothing is committed to the repository: `make deps` (which runs
// `bash scripts/fetch-ort.sh`) downloads ONNX Runtime 1.30.0
// (libonnxruntime.so.1, from the npm package onnxruntime-node@1.30.0) and the
// Silero VAD v5 model (silero_vad_v5.onnx, from @ricky0123/vad-web@0.0.31),
// checks their SHA-256, and puts them in a cache folder. Find looks, in
// order:
//
//   - ONNXRUNTIME_LIB: the path of libonnxruntime.so.1 (LibraryEnv), and
//     GAPBENCH_VAD_MODEL: the path of silero_vad_v5.onnx (ModelEnv). When one
//     is set, its file must exist: Find never falls back to the cache behind
//     a variable that names a missing file.
//   - GAPBENCH_CACHE: the cache folder (CacheEnv), as given to fetch-ort.sh.
//   - otherwise .cache/ in the directory of the nearest go.mod above the
//     working directory: the repository root, where `make deps` puts it.
//
// Require wraps Find for tests and benchmarks (RequireLibrary needs only the
// library, RequireModel the library and a model of the test's): when a part
// is missing it skips with the command that installs it, except when the CI
// environment variable is set (to anything but "", "0" or "false"), where it
// fails: CI must really run the ONNX Runtime tests.
//
// # Environment and ownership
//
// ONNX Runtime is loaded once per process (Init) and never destroyed;
// OpenModel, Open and OpenVAD call Init themselves, from any goroutine. A
// Model, Session or VAD owns its session and tensors until Close; its Step
// does not allocate and is for one goroutine at a time. Independent
// instances may run concurrently; each costs one model parse to open.
package ort
