#!/usr/bin/env bash
# bench.sh: `decodegap ort` on Silero VAD v5, without a line of Go: the model
# file as a step (a 512-sample frame of a synthetic speech clip fed each step,
# sr = 16000, stateN carried into state by the automatic rule) at a 2 ms gap,
# comparing 1 intra-op thread, 2 with spinning and 2 without, with the null arm,
# in interleaved rounds; prints the parity check, each arm's steady state and
# thread census, the verdicts and the benchstat command. Needs `make deps`
# (ONNX Runtime and the model in .cache/).
#
# Settings (environment):
#   ORT_ROUNDS  rounds (default 10: under weighted Holm over 3 metrics
#               the verdict needs 7–8 used rounds, and a busy host
#               quarantines some)
#   ORT_STEPS   steps per block, N of -benchtime=Nx (default 600: about 1.5 s
#               a block at 2 ms)
#   ORT_GAP     the idle gap before each step (default 2ms)
#   ORT_OUT     the output file (default bench-ort.txt at the repository root;
#               the blocks' logs go to the same name + .log); replaced if present
#   GO          the go command (default go)
# With the defaults it takes about 8 × 4 blocks × 1.5 s ≈ 1 minute, plus
# building the command.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
rounds=${ORT_ROUNDS:-10}
steps=${ORT_STEPS:-600}
gap=${ORT_GAP:-2ms}
out=${ORT_OUT:-"$repo_root/bench-ort.txt"}
go=${GO:-go}

model=${GAPBENCH_VAD_MODEL:-"${GAPBENCH_CACHE:-$repo_root/.cache}/silero-vad-web-0.0.31/silero_vad_v5.onnx"}
[ -s "$model" ] || {
	echo "bench.sh: the Silero VAD model is not at $model: run 'make deps' at the repository root (or set GAPBENCH_VAD_MODEL)" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ortvad.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$repo_root" && "$go" build -o "$tmp/decodegap" ./cmd/decodegap && "$go" run ./examples/ortvad/clip -o "$tmp/clip.f32")
rm -f "$out" "$out.log"

# From the repository root, so that decodegap/ort finds .cache/ through go.mod.
cd "$repo_root"
"$tmp/decodegap" ort -rounds "$rounds" -benchtime "${steps}x" -gap "$gap" \
	-shape input=1x512 -shape state=2x1x128 \
	-input sr=16000 -input "input=file:$tmp/clip.f32" \
	-arm intra1:intra=1 -arm intra2-spin:intra=2,spin=on -arm intra2-nospin:intra=2,spin=off \
	-o "$out" "$model"
