#!/usr/bin/env bash
# bench.sh: gapbench's main job, run by `make bench` (after `make deps` has
# installed ONNX Runtime and the Silero VAD model). It runs
#
#   BenchmarkVAD        the four ONNX Runtime settings (1 or 2 intra-op
#                       threads, spinning on or off) and the null arm at gaps
#                       of 0, 100 µs and 2 ms, in interleaved rounds
#                       (decodegap.Compare): -count rounds of -benchtime=Nx
#                       steps per arm;
#   BenchmarkVADCensus  the 2-thread setting at a 2 ms gap with spinning on
#                       and off under decodegap.Run, for the thread census;
#
# writes their whole output to one file, and prints the benchstat table of the
# main metrics (go tool benchstat -col /arm), the verdicts, and the census.
#
# Settings (environment):
#   BENCH_COUNT       rounds, -count (default 8: the verdict's confidence
#                     interval needs at least 6 rounds that the null arm does
#                     not reject, and a busy host rejects some)
#   BENCH_STEPS       steps per arm per round at gaps 0s and 100µs, N of
#                     -benchtime=Nx (default 4000)
#   BENCH_STEPS_2MS   steps per arm per round at the 2ms gap (default 600)
#   BENCH_CENSUS_STEPS  steps of each census run (default 1000)
#   BENCH_OUT         the output file (default bench.txt at the repository
#                     root, which git ignores)
#   GO                the go command (default go)
#
# Why two step counts: a block must last long enough that one burst of a
# co-tenant's CPU (tens of ms) does not decide its mean, or the null arm
# disagrees with its twin and the round is rejected. 4000 steps at 0s and
# 100µs and 600 at 2ms make every block last about 0.5-1.5 s (a step is
# 120-250 µs here). With the defaults a run takes about three minutes
# on a 2-core machine: 5 arms × 8 rounds × about 3 s (a block at each gap), plus
# opening sessions and the census.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
count=${BENCH_COUNT:-8}
steps=${BENCH_STEPS:-4000}
steps2ms=${BENCH_STEPS_2MS:-600}
census_steps=${BENCH_CENSUS_STEPS:-1000}
out=${BENCH_OUT:-"$repo_root/bench.txt"}
go=${GO:-go}

die() {
	echo "bench.sh: $*" >&2
	exit 1
}

# run NAME ARGS...: run go test in examples/vad with ARGS, appending to $out;
# on failure show the end of its output.
run() {
	local name=$1
	shift
	local log
	log=$(mktemp "${TMPDIR:-/tmp}/bench.XXXXXX")
	if ! (cd "$here" && "$go" test -run '^$' "$@" >"$log" 2>&1); then
		tail -n 40 "$log" >&2
		rm -f "$log"
		die "$name failed (above: the end of its output)"
	fi
	cat "$log" >>"$out"
	rm -f "$log"
}

: >"$out"
echo "bench.sh: BenchmarkVAD: 4 settings + null in $count interleaved rounds (-count $count): gaps 0s and 100µs with $steps steps per arm (-benchtime=${steps}x), 2ms with $steps2ms (-benchtime=${steps2ms}x)"
run BenchmarkVAD -bench '^BenchmarkVAD$/^gap=(0s|100µs)$' -benchtime="${steps}x" -count "$count"
run BenchmarkVAD -bench '^BenchmarkVAD$/^gap=2ms$' -benchtime="${steps2ms}x" -count "$count"
# Without ONNX Runtime or the model the benchmarks skip, which go test reports
# as a pass with no results.
grep -q '^BenchmarkVAD/' "$out" ||
	die "BenchmarkVAD reported no results: it skips when ONNX Runtime or the Silero VAD model is missing; run 'make deps' at the repository root (or set ONNXRUNTIME_LIB and GAPBENCH_VAD_MODEL), then run this again"
echo "bench.sh: BenchmarkVADCensus: intra2 at a 2ms gap, spinning on and off, $census_steps steps each (-benchtime=${census_steps}x)"
run BenchmarkVADCensus -bench '^BenchmarkVADCensus$' -benchtime="${census_steps}x" -count 1
echo "bench.sh: full output in $out"

echo
echo "== benchstat: step latency, CPU per wall second, achieved gap and null ratio by arm"
echo "   (every metric: go tool benchstat -col /arm -filter .name:VAD $out)"
(cd "$repo_root" && "$go" tool benchstat -col /arm \
	-filter '.name:VAD .unit:(sec/op OR p50-sec/op OR p90-sec/op OR cpu/wall OR gap-sec/op OR null-ratio)' "$out")

# The verdicts head the log of each gap's last line (its null arm's last
# round); the census is in the log of each BenchmarkVADCensus line.
echo
echo "== verdicts: each arm against the first arm, mean step (ns/op), median step (p50-ns/op) and CPU per wall second (cpu/wall), judged against the null band"
awk '
	/^--- BENCH: BenchmarkVAD\// { split($3, p, "/"); gap = p[2] }
	/^--- BENCH: / { cur = $3 }
	cur ~ /^BenchmarkVAD\// && /^[ \t]+(compare\.go:[0-9]+: )?order \(Config\.Seed/ { print gap }
	cur ~ /^BenchmarkVAD\// && / vs [^ ]+: ns\/op / { sub(/^[ \t]+/, ""); print "  " $0 }
' "$out"

echo
echo "== census: BenchmarkVADCensus, where the CPU went at a 2ms gap"
awk '
	/^--- BENCH: BenchmarkVADCensus\// { sub(/^BenchmarkVADCensus\//, "", $3); name = $3; next }
	/^--- BENCH: / { name = "" }
	name != "" && /(step: |process: |threads: |CPU by thread)/ {
		sub(/^[ \t]+([a-z_]+\.go:[0-9]+: )?/, ""); print "  " name ": " $0
	}
' "$out"
