#!/usr/bin/env bash
# mixture-trials.sh: real-host trials of a candidate slow in some sessions
# only (issue 33). Each trial runs examples/trials' BenchmarkCompare
# (decodegap.Compare: base, cand and the null arm interleaved in one
# process) with a cand whose block, drawn afresh for every block, does
# SLOW_WORK percent of the base's work with chance SHARE and the base's
# work otherwise. It tallies how often each of cand's rows was called
# faster, slower, equivalent or undecided, with the load average at each
# trial's start, the rounds judged and the rounds quarantined.
#
# Settings (environment):
#   TRIALS     trials                                   (default 8)
#   SHARE      share of cand's blocks that are slow      (default 0.4)
#   SLOW_WORK  work of a slow block, percent of base's   (default 110)
#   GAP        the hybrid gap between steps              (default 50µs)
#   COUNT      the most rounds, -count (Compare stops once every verdict
#              is decided)                               (default 20)
#   BENCHTIME  steps per block                           (default 2000x)
#   KEEP       folder for every trial's output (default: a temporary one)
#
#   scripts/mixture-trials.sh
#   TRIALS=20 SHARE=0.2 SLOW_WORK=105 scripts/mixture-trials.sh
set -euo pipefail
TRIALS=${TRIALS:-8}
SHARE=${SHARE:-0.4}
SLOW_WORK=${SLOW_WORK:-110}
GAP=${GAP:-50µs}
COUNT=${COUNT:-20}
BENCHTIME=${BENCHTIME:-2000x}
cd "$(dirname "$0")/.."
if [[ -n "${KEEP:-}" ]]; then
	DIR=$KEEP
	mkdir -p "$DIR"
else
	DIR=$(mktemp -d -t mixture-trials.XXXXXX)
	trap 'rm -rf "$DIR"' EXIT
fi
go test -c -o "$DIR/trials.test" ./examples/trials
TALLY=$DIR/tally.txt # trial metric outcome rounds quarantined
: >"$TALLY"
echo "# mixture-trials: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), trials $TRIALS, share $SHARE, slow work $SLOW_WORK%, gap $GAP, -benchtime=$BENCHTIME, -count $COUNT"
for t in $(seq "$TRIALS"); do
	out=$DIR/trial$t.txt
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	start=$(date +%s)
	"$DIR/trials.test" -test.run '^$' -test.bench 'Compare$' -test.benchtime "$BENCHTIME" -test.count "$COUNT" \
		-gap "$GAP" -cand-slow-share "$SHARE" -cand-slow-work "$SLOW_WORK" >"$out" 2>"$out.log" || echo "trial $t failed: see $out.log" >&2
	grep -q -- '--- decodegap\.Compare: .*order and verdicts' "$out" || {
		echo "mixture-trials.sh: trial $t printed no Compare table (see $out and $out.log)" >&2
		exit 1
	}
	secs=$(($(date +%s) - start))
	echo "trial $t: load at start $load, ${secs}s"
	# cand's rows of the verdict table: metric, outcome, then the rounds
	# column "used" or "used+Nq".
	awk -v t="$t" '
		/--- decodegap\.Compare: .*order and verdicts/ { table = 1; next }
		table && $1 == "cand" && $2 ~ /^(p50-)?(ns|sec)\/op$|^cpu-(ns|sec)\/op$/ {
			rounds = "-"; q = 0
			for (i = 4; i <= NF; i++) if ($i ~ /^[0-9]+(\+[0-9]+q)?$/) { n = split($i, u, "+"); rounds = u[1]; if (n > 1) { q = u[2]; sub(/q/, "", q) }; break }
			print t, $2, $3, rounds, q
		}' "$out" | tee -a "$TALLY" | sed 's/^/  /'
done
echo
echo "| metric | faster | slower | equivalent | undecided | mean rounds used | rounds quarantined |"
echo "|---|---|---|---|---|---|---|"
# CPU rows read "more CPU" and "less CPU": counted as slower and faster.
awk '{ k = $2; n[k]++; v = $3 == "more" ? "slower" : $3 == "less" ? "faster" : $3; c[k, v]++; r[k] += $4; q[k] += $5; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
	END { for (i = 1; i <= m; i++) { k = order[i]; printf "| %s | %d | %d | %d | %d | %.1f | %d |\n", k, c[k, "faster"], c[k, "slower"], c[k, "equivalent"], c[k, "undecided"], r[k] / n[k], q[k] } }' "$TALLY"
echo
echo "# trials in which some row of cand was called slower: $(awk '$3 == "slower" || $3 == "more" { s[$1] = 1 } END { print length(s) }' "$TALLY") of $TRIALS"
