#!/usr/bin/env bash
# spread.sh: the block-to-block spread of the Silero VAD's median step at a
# 2 ms gap, one line per candidate cause (docs/noise-levels.md). Each
# candidate runs BenchmarkVADSpread (examples/vad/spread_test.go) for
# SPREAD_BLOCKS blocks of SPREAD_STEPS steps and prints the blocks' median
# steps: their count, mean, coefficient of variation (sd/mean), min and
# max, with the load average before and after.
#
#   GAPBENCH_CACHE=/work/main/.cache bash scripts/spread.sh            # every candidate
#   bash scripts/spread.sh base sleep busy                             # some of them
#
# Settings (environment): SPREAD_BLOCKS (default 12), SPREAD_STEPS (600),
# SPREAD_REPS (1: how many times each candidate runs, interleaved),
# SPREAD_RAW (a file to append every block median to), GO.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vad="$here/../examples/vad"
blocks=${SPREAD_BLOCKS:-12}
steps=${SPREAD_STEPS:-600}
reps=${SPREAD_REPS:-1}
raw=${SPREAD_RAW:-/dev/null}
go=${GO:-go}

# The candidates: a name and the -spread.* flags that switch it.
declare -A flags=(
	[base]="-spread.harness=compare"
	[sleep]="-spread.kind=sleep"
	[busy]="-spread.kind=busy"
	[reused]="-spread.session=reused"
	[pin1]="-spread.cpus=1"
	[pin-thread]="-spread.pin-thread=1"
	[pin-thread0]="-spread.pin-thread=0"
	[arena-off]="-spread.arena=off"
	[denormal]="-spread.denormal-zero"
	[intra2]="-spread.intra=2"
	[intra2-nospin]="-spread.intra=2 -spread.spin=off"
	[bare-sleep]="-spread.harness=bare -spread.kind=sleep"
	[bare-busy]="-spread.harness=bare -spread.kind=busy"
	[bare-reused]="-spread.harness=bare -spread.kind=sleep -spread.session=reused"
	[bare-pin1]="-spread.harness=bare -spread.kind=sleep -spread.cpus=1"
)
order=(base sleep busy reused pin1 arena-off denormal intra2 intra2-nospin bare-sleep bare-busy bare-reused bare-pin1)
[ $# -gt 0 ] && order=("$@")

bin=$(mktemp "${TMPDIR:-/tmp}/spread.XXXXXX")
trap 'rm -f "$bin"' EXIT
bash "$here/fetch-ort.sh" >&2 # ONNX Runtime and the model (once; the benchmark skips without them)
(cd "$vad" && "$go" test -c -o "$bin" .)

printf '%-14s %6s %9s %7s %9s %9s  %s\n' candidate blocks mean-us cv-% min-us max-us "load1 before→after"
for rep in $(seq "$reps"); do
	for c in "${order[@]}"; do
		[ -n "${flags[$c]+x}" ] || { echo "spread.sh: unknown candidate $c (known: ${order[*]})" >&2; exit 2; }
		l0=$(cut -d' ' -f1 /proc/loadavg)
		# shellcheck disable=SC2086
		out=$(cd "$vad" && "$bin" -test.run '^$' -test.bench '^BenchmarkVADSpread$' -spread ${flags[$c]} \
			-test.benchtime="${steps}x" -test.count "$blocks" 2>/dev/null)
		l1=$(cut -d' ' -f1 /proc/loadavg)
		echo "$out" | awk -v c="$c" -v rep="$rep" '
			{ for (i = 2; i < NF; i++) if ($(i+1) == "p50-ns/op" && $i ~ /^[0-9.]+$/) print c, rep, $i }
		' | tee -a "$raw" | awk -v c="$c" -v l="$l0→$l1" '
			{ x[n++] = $3 / 1000 }
			END {
				if (n == 0) { printf "%-14s no blocks\n", c; exit }
				for (i = 0; i < n; i++) { s += x[i]; if (i == 0 || x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i] }
				m = s / n; for (i = 0; i < n; i++) v += (x[i] - m)^2
				sd = n > 1 ? sqrt(v / (n - 1)) : 0
				printf "%-14s %6d %9.1f %7.1f %9.1f %9.1f  %s\n", c, n, m, 100 * sd / m, lo, hi, l
			}'
	done
done
