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
# writes their whole output to one file, and prints a summary: first the
# weather (how many blocks the contention screen called contended, and the
# foreign-%, psi-some-% and load1 the blocks saw), then the verdicts, the
# benchstat table of the main metrics (go tool benchstat -col /arm), and the
# census. While the benchmarks run, Compare prints one progress line per
# block (round, arm, elapsed, ETA) on standard error.
#
# Settings (environment):
#   BENCH_COUNT       rounds, -count (default 10: under weighted Holm an
#                     arm's median step is judged at 97.5% and its mean and
#                     cpu/wall at 98.75%, whose intervals need 7 and 8 used
#                     rounds; a busy host quarantines some)
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
count=${BENCH_COUNT:-10}
steps=${BENCH_STEPS:-4000}
steps2ms=${BENCH_STEPS_2MS:-600}
census_steps=${BENCH_CENSUS_STEPS:-1000}
out=${BENCH_OUT:-"$repo_root/bench.txt"}
go=${GO:-go}

die() {
	echo "bench.sh: $*" >&2
	exit 1
}

workdir=$(mktemp -d "${TMPDIR:-/tmp}/bench.XXXXXX")
trap 'rm -rf "$workdir"' EXIT
bin="$workdir/vad.test"

# run NAME ARGS...: run the benchmark binary in examples/vad with test flags
# ARGS, appending its standard output (the results and logs) to $out. Its
# standard error (Compare's progress, one line per block) goes straight to
# the terminal. On failure, show the end of its output.
run() {
	local name=$1
	shift
	local log="$workdir/run.log"
	if ! (cd "$here" && "$bin" -test.run '^$' "$@" >"$log"); then
		tail -n 40 "$log" >&2
		die "$name failed (above: the end of its output)"
	fi
	cat "$log" >>"$out"
}

: >"$out"
echo "bench.sh: building the benchmark binary (go test -c; a first build compiles ONNX Runtime's Go binding, a minute or more)"
(cd "$here" && "$go" test -c -o "$bin" .) || die "go test -c failed in $here (above: why)"
echo "bench.sh: BenchmarkVAD: 4 settings + null in $count interleaved rounds (-count $count): gaps 0s and 100µs with $steps steps per arm (-benchtime=${steps}x), 2ms with $steps2ms (-benchtime=${steps2ms}x); progress: one line per block"
run BenchmarkVAD -test.bench '^BenchmarkVAD$/^gap=(0s|100µs)$' -test.benchtime="${steps}x" -test.count "$count"
run BenchmarkVAD -test.bench '^BenchmarkVAD$/^gap=2ms$' -test.benchtime="${steps2ms}x" -test.count "$count"
# Without ONNX Runtime or the model the benchmarks skip, which go test reports
# as a pass with no results.
grep -q '^BenchmarkVAD/' "$out" ||
	die "BenchmarkVAD reported no results: it skips when ONNX Runtime or the Silero VAD model is missing; run 'make deps' at the repository root (or set ONNXRUNTIME_LIB and GAPBENCH_VAD_MODEL), then run this again"
echo "bench.sh: BenchmarkVADCensus: intra2 at a 2ms gap, spinning on and off, $census_steps steps each (-benchtime=${census_steps}x)"
run BenchmarkVADCensus -test.bench '^BenchmarkVADCensus$' -test.benchtime="${census_steps}x" -test.count 1
echo "bench.sh: full output in $out"

# The weather first: how many blocks the contention screen called contended
# (each block's log has one "host: contended: ..." or "host: clean ..."
# line), and the contention figures of the result lines (median and largest
# over the blocks). When most blocks were contended, say what that costs the
# verdicts and what to do about it.
echo
echo "== weather: the host while BenchmarkVAD ran"
awk -v count="$count" -f "$here/weather.awk" "$out"

# Compare prints each gap's order and verdict table after its arms' lines,
# under "    --- decodegap.Compare: BENCH: order and verdicts", every line
# indented; the table is internal/verdicttext's. Print each gap's block
# without the order (it is in the file).
echo
echo "== verdicts: each arm against the first arm, mean step (ns/op), median step (p50-ns/op) and CPU per wall second (cpu/wall), judged against the null arm"
awk '
	/^[ \t]+--- decodegap\.Compare: BenchmarkVAD\/[^:]*: order and verdicts/ {
		split($3, p, "/"); sub(/:$/, "", p[2]); print p[2]; block = 1; next
	}
	block && /^[ \t]+order at GOMAXPROCS/ { next }
	block && /^[ \t]/ { sub(/^    /, ""); print "  " $0; next }
	{ block = 0 }
' "$out"

echo
echo "== benchstat: step latency, CPU per wall second, achieved gap and null ratio by arm"
echo "   (every metric: go tool benchstat -col /arm -filter .name:VAD $out)"
(cd "$repo_root" && "$go" tool benchstat -col /arm \
	-filter '.name:VAD .unit:(sec/op OR p50-sec/op OR p90-sec/op OR cpu/wall OR gap-sec/op OR null-ratio)' "$out")

echo
echo "== census: BenchmarkVADCensus, where the CPU went at a 2ms gap"
awk '
	/^--- BENCH: BenchmarkVADCensus\// { sub(/^BenchmarkVADCensus\//, "", $3); name = $3; next }
	/^--- BENCH: / { name = "" }
	name != "" && /(step: |process: |threads: |CPU by thread)/ {
		sub(/^[ \t]+([a-z_]+\.go:[0-9]+: )?/, ""); print "  " name ": " $0
	}
' "$out"
