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
#   BENCH_BUDGET      seconds BenchmarkVAD may spend over its three gaps
#                     (default 300: with the build and the census, make bench
#                     fits 6 minutes on a quiet 2-core host). Each gap gets
#                     an equal share of what is left when it starts, as
#                     its CompareConfig.TimeBudget (-vad.budget); Compare
#                     stops a gap as soon as every verdict is decided, and
#                     the time it leaves goes to the gaps after it
#   BENCH_COUNT       when set, every gap's most rounds instead of the
#                     budget's (at least 8 leave the verdict's intervals
#                     room: under weighted Holm an arm's median step is
#                     judged at 97.5% and its mean and cpu/wall at 98.75%,
#                     whose intervals need 7 and 8 used rounds)
#   BENCH_STEPS       steps per arm per round at gaps 0s and 100µs, N of
#                     -benchtime=Nx (default 4000)
#   BENCH_STEPS_2MS   steps per arm per round at the 2ms gap (default 300:
#                     docs/noise-levels.md, the noise there is between
#                     blocks, so shorter blocks and more rounds pay)
#   BENCH_SLICE_2MS   steps per turn at the 2ms gap, -vad.slice
#                     (CompareConfig.Slice; default 0: Compare chooses,
#                     turns of 30 steps at 2ms): each round's arms take
#                     turns, so that they share the host's weather
#                     (docs/noise-levels.md); -1 runs every block whole.
#                     Gaps 0s and 100µs get 0 too, where Compare runs
#                     whole blocks
#   BENCH_DELTA       the margin of "equivalent", -vad.delta
#                     (CompareConfig.Verdict.Delta; default 5%): an arm is
#                     equivalent when its interval lies within ±BENCH_DELTA.
#                     On this workload ±2% (nullband's default) needs an MDE
#                     below 2%, which the budget does not reach on a shared
#                     2-core host: a quiet run's MDEs were 3.6-5.4% at 0s and
#                     2ms (docs/noise-levels.md, 2026-12-02), so every arm
#                     as fast as the base stayed undecided
#   BENCH_PLAN        a plan file from 'decodegap calibrate -plan-out': its
#                     steps set BENCH_STEPS_2MS and its rounds × blocks the
#                     2ms gap's most rounds
#   BENCH_CENSUS_STEPS  steps of each census run (default 1000)
#   BENCH_OUT         the output file (default bench.txt at the repository
#                     root, which git ignores)
#   GO                the go command (default go)
#
# Why two step counts: at 0s and 100µs a block must last long enough that
# one burst of a co-tenant's CPU (tens of ms) does not decide its mean, or
# the null arm disagrees with its twin and the round is rejected: 4000
# steps make a block last about 0.5-1.5 s (a step is 120-250 µs here). At
# 2ms the block medians of fresh sessions differ by far more than a
# block's own sampling noise (docs/noise-levels.md), so 300 steps (about
# 0.7 s) and more rounds reach a smaller MDE in the same time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
budget=${BENCH_BUDGET:-300}
count=${BENCH_COUNT:-}
steps=${BENCH_STEPS:-4000}
steps2ms=${BENCH_STEPS_2MS:-300}
slice2ms=${BENCH_SLICE_2MS:-0}
delta=${BENCH_DELTA:-5%}
cap2ms=
census_steps=${BENCH_CENSUS_STEPS:-1000}
out=${BENCH_OUT:-"$repo_root/bench.txt"}
go=${GO:-go}

die() {
	echo "bench.sh: $*" >&2
	exit 1
}

if [ -n "${BENCH_PLAN:-}" ]; then
	plan_steps= plan_blocks= plan_rounds=
	{
		read -r header || true
		[ "$header" = "gapbench-plan v1" ] || die "BENCH_PLAN=$BENCH_PLAN: not a plan file (its first line is not 'gapbench-plan v1'; write one with decodegap calibrate -plan-out)"
		while read -r key value; do
			case $key in
			steps) plan_steps=$value ;;
			blocks) plan_blocks=$value ;;
			rounds) plan_rounds=$value ;;
			esac
		done
	} <"$BENCH_PLAN"
	[ -n "$plan_steps" ] && [ -n "$plan_rounds" ] || die "BENCH_PLAN=$BENCH_PLAN: needs a steps and a rounds line"
	steps2ms=$plan_steps
	cap2ms=$((plan_rounds * ${plan_blocks:-1}))
fi
case $budget in '' | *[!0-9]*) die "BENCH_BUDGET=$budget: want whole seconds" ;; esac
[[ $slice2ms =~ ^(-1|[0-9]+)$ ]] || die "BENCH_SLICE_2MS=$slice2ms: want a whole number of steps (0: Compare chooses, -1: blocks whole)"
[[ $delta =~ ^[0-9]+(\.[0-9]+)?%$ ]] || die "BENCH_DELTA=$delta: want a percentage, e.g. 5%"
arms=5 # BenchmarkVAD's four settings and the null arm

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
	# Under -test.v, testing names each benchmark on a line of its own
	# before its results: drop those bare names, which are no results.
	grep -v -E '^Benchmark[^[:space:]]*$' "$log" >>"$out"
}

: >"$out"
echo "bench.sh: building the benchmark binary (go test -c; a first build compiles ONNX Runtime's Go binding, a minute or more)"
(cd "$here" && "$go" test -c -o "$bin" .) || die "go test -c failed in $here (above: why)"
# rounds_for GAP_SECONDS STEPS GAPS_LEFT: the most rounds (-count) the
# gap's share of the budget left holds, at an estimated round of 5 arms ×
# (250 ms to open, warm up and read the counters + STEPS × (250 µs + the
# gap)); at least 8.
# (With 60 ms a block, the 2ms gap overran its share by a third at load 6.)
rounds_for() {
	local left=$((budget - SECONDS + t0))
	awk -v left="$left" -v g="$1" -v n="$2" -v k="$3" -v arms="$arms" 'BEGIN {
		r = int(left / k / (arms * (0.25 + n * (0.00025 + g)))); print (r < 8 ? 8 : r)
	}'
}
# (The -count matters beyond its cap: the sequential verdict spreads its
# error over the looks up to -count, so a cap far above what the budget
# can run costs power at every look: with a cap of 400 a run on a quiet
# host decided 4 of 18 rows.) share GAPS_LEFT: the seconds of the budget left,
# split evenly over the gaps still to run, the gap's
# CompareConfig.TimeBudget (-vad.budget): it stops a gap whose rounds run
# longer than the estimate. Compare stops a gap once every verdict is
# decided, so what it leaves goes to the gaps after it.
share() {
	echo $(((budget - SECONDS + t0) / $1))
}
t0=$SECONDS
if [ -n "$count" ]; then
	echo "bench.sh: BenchmarkVAD: 4 settings + null in $count interleaved rounds (-count $count): gaps 0s and 100µs with $steps steps per arm (-benchtime=${steps}x), 2ms with $steps2ms (-benchtime=${steps2ms}x); equivalent within ±$delta (BENCH_DELTA); progress: one line per block"
else
	echo "bench.sh: BenchmarkVAD: 4 settings + null in interleaved rounds within BENCH_BUDGET=${budget}s (each gap stops once every verdict is decided, or at the most rounds its share of the budget holds): gaps 0s and 100µs with $steps steps per arm (-benchtime=${steps}x), 2ms with $steps2ms (-benchtime=${steps2ms}x); equivalent within ±$delta (BENCH_DELTA); progress: one line per block"
fi
gi=0
most=0 # the most rounds any gap was given, for the weather's advice
for g in 0s 100µs 2ms; do
	n=$steps gs=0
	case $g in
	100µs) gs=0.0001 ;;
	2ms) n=$steps2ms gs=0.002 ;;
	esac
	c=$count tb=0s sl=0
	[ "$g" = 2ms ] && sl=$slice2ms
	if [ -z "$c" ]; then
		c=$(rounds_for "$gs" "$n" $((3 - gi)))
		tb="$(share $((3 - gi)))s"
	fi
	[ "$g" = 2ms ] && [ -n "$cap2ms" ] && c=$cap2ms
	[ "$c" -gt "$most" ] && most=$c
	echo "bench.sh: gap $g: at most $c rounds (-count $c) of -benchtime=${n}x within -vad.budget=$tb (0s: none), -vad.slice=$sl (0: Compare chooses turns or whole blocks, -1: whole), $((SECONDS - t0))s of the budget spent"
	# -test.v: each block's log, whose "host: contended" line is the
	# weather's source (without -v Compare prints only the result lines).
	run BenchmarkVAD -test.v -test.bench "^BenchmarkVAD\$/^gap=$g\$" -test.benchtime="${n}x" -test.count "$c" -vad.budget="$tb" -vad.slice="$sl" -vad.delta="$delta"
	gi=$((gi + 1))
done
spent=$((SECONDS - t0))
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
awk -v count="$most" -f "$here/weather.awk" "$out"

# Compare prints each gap's order and verdict table after its arms' lines,
# under "    --- decodegap.Compare: BENCH: order and verdicts", every line
# indented; the table is internal/verdicttext's. Print each gap's block
# without the order (it is in the file).
echo
echo "== verdicts: each arm against the first arm, mean step (sec/op), median step (p50-sec/op) and CPU time per step (cpu-sec/op), judged against the null arm (its own rows: the A/A check)"
awk '
	/^[ \t]+--- decodegap\.Compare: BenchmarkVAD\/[^:]*: order and verdicts/ {
		split($3, p, "/"); sub(/:$/, "", p[2]); print p[2]; block = 1; next
	}
	block && /^[ \t]+order at GOMAXPROCS/ { next }
	block && /^[ \t]/ { sub(/^    /, ""); print "  " $0; next }
	{ block = 0 }
' "$out"

# How many step-latency rows (mean and median step of the three arms against
# the base, at each gap) the verdicts decided, and in how long.
awk -v spent="$spent" -v budget="$budget" -v count="$count" '
	/^[ \t]+--- decodegap\.Compare: BenchmarkVAD\/[^:]*: order and verdicts/ { block = 1; next }
	block && $1 ~ /^intra[12]-(no)?spin$/ && ($2 == "sec/op" || $2 == "p50-sec/op" || $2 == "ns/op" || $2 == "p50-ns/op") {
		rows++; if ($3 != "undecided") decided++
	}
	block && !/^[ \t]/ { block = 0 }
	END {
		how = count != "" ? "at most " count " rounds a gap (BENCH_COUNT)" : "BENCH_BUDGET=" budget "s"
		printf "  decided: %d of %d step-latency rows (mean and median step, 3 arms × 3 gaps) in %ds of BenchmarkVAD, %s\n", decided, rows, spent, how
	}
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
