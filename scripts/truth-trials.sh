#!/usr/bin/env bash
# truth-trials.sh: the ground truth on the real workload (issue 25). Each
# trial runs make bench's comparison (BenchmarkVAD, decodegap.Compare, the
# null arm included) at one gap with the ground-truth arms of -vad.truth:
# intra1-spin (the base), "same" (an identical arm) and the base with a
# busy wait of 5% and of 10% of its median step after the model's call
# (plus5pct, plus10pct). It tallies, per arm and metric, how often each was
# called faster, slower, equivalent or undecided, with the load average at
# every trial's start and the rounds used, and the trial's wall time.
#
# Settings (environment):
#   TRIALS    trials per gap                                 (default 3)
#   GAPS      gaps, BenchmarkVAD's sub-benchmark names        (default 2ms)
#   STEPS     steps per block, -benchtime=Nx                  (default 300)
#   COUNT     the most rounds, -count (Compare stops once every verdict is
#             decided)                                        (default 40)
#   TRUTH     the extra costs, -vad.truth                     (default 0.05,0.10)
#   SLICE     CompareConfig.Slice, -vad.slice (default 0: Compare chooses,
#             turns of 30 steps at 2ms; -1: blocks whole)
#   SPIN_CPU  when set, a spinner (decodegap spin) pinned to that CPU runs
#             through every trial: the "under load" case
#   KEEP      folder for every trial's output (default: a temporary one)
#
#   GAPBENCH_CACHE=/work/main/.cache scripts/truth-trials.sh
#   TRIALS=10 GAPS="100µs 2ms" scripts/truth-trials.sh
set -euo pipefail
TRIALS=${TRIALS:-3}
GAPS=${GAPS:-2ms}
STEPS=${STEPS:-300}
COUNT=${COUNT:-40}
TRUTH=${TRUTH:-0.05,0.10}
SLICE=${SLICE:-0}
cd "$(dirname "$0")/.."
if [[ -n "${KEEP:-}" ]]; then
	DIR=$KEEP
	mkdir -p "$DIR"
else
	DIR=$(mktemp -d -t truth-trials.XXXXXX)
	trap 'rm -rf "$DIR"' EXIT
fi
# ONNX Runtime and the model (once; BenchmarkVAD skips without them).
bash scripts/fetch-ort.sh >&2
go test -c -o "$DIR/vad.test" ./examples/vad
SPIN_PID=
if [[ -n "${SPIN_CPU:-}" ]]; then
	go build -o "$DIR/decodegap" ./cmd/decodegap
	"$DIR/decodegap" spin -cpu "$SPIN_CPU" >"$DIR/spin.log" 2>&1 &
	SPIN_PID=$!
	trap 'kill "$SPIN_PID" 2>/dev/null || true; [[ -n "${KEEP:-}" ]] || rm -rf "$DIR"' EXIT
fi
TALLY=$DIR/tally.txt # gap trial arm metric outcome rounds
: >"$TALLY"
echo "# truth-trials: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), trials $TRIALS, gaps $GAPS, -benchtime=${STEPS}x, -count $COUNT, -vad.truth=$TRUTH, -vad.slice=$SLICE, spinner ${SPIN_CPU:-none}"
for g in $GAPS; do
	for t in $(seq "$TRIALS"); do
		out=$DIR/gap$g.trial$t.txt
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		start=$(date +%s)
		(cd examples/vad && "$DIR/vad.test" -test.run '^$' -test.bench "^BenchmarkVAD\$/^gap=$g\$" -vad.truth="$TRUTH" -vad.slice="$SLICE" \
			-test.benchtime="${STEPS}x" -test.count "$COUNT" >"$out" 2>"$out.log") || echo "trial $t at $g failed: see $out.log" >&2
		# A skipped or unmatched benchmark exits 0 with no table: stop
		# rather than tally nothing.
		grep -q -- '--- decodegap\.Compare: .*order and verdicts' "$out" || {
			echo "truth-trials.sh: trial $t at $g printed no Compare table (skipped? see $out and $out.log)" >&2
			exit 1
		}
		secs=$(($(date +%s) - start))
		echo "gap $g trial $t: load at start $load, ${secs}s"
		awk -v g="$g" -v t="$t" '
			/--- decodegap\.Compare: .*order and verdicts/ { table = 1; next }
			table && $1 ~ /^(same|plus[0-9.]+pct)$/ && $2 ~ /^(p50-)?(ns|sec)\/op$|^cpu\/wall$|^cpu-sec\/op$/ {
				rounds = "-"
				for (i = 4; i <= NF; i++) if ($i ~ /^[0-9]+(\+[0-9]+q)?$/) { split($i, u, "+"); rounds = u[1] + u[2]; break }
				print g, t, $1, $2, $3, rounds
			}' "$out" | tee -a "$TALLY" | sed 's/^/  /'
	done
done
echo
echo "| gap | arm | metric | faster | slower | equivalent | undecided | mean rounds |"
echo "|---|---|---|---|---|---|---|---|"
# CPU rows read "more CPU" and "less CPU": counted as slower and faster.
awk '{ k = $1 " | " $3 " | " $4; n[k]++; v = $5 == "more" ? "slower" : $5 == "less" ? "faster" : $5; c[k, v]++; r[k] += $6; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
	END { for (i = 1; i <= m; i++) { k = order[i]; printf "| %s | %d | %d | %d | %d | %.1f |\n", k, c[k, "faster"], c[k, "slower"], c[k, "equivalent"], c[k, "undecided"], r[k] / n[k] } }' "$TALLY"
