#!/usr/bin/env bash
# verdict-trials.sh: real-host trials of the verdict (issue 9).
#
# On a shared host, a ~35 µs pure-Go step with a 100 µs hybrid gap, 2000
# steps per block (examples/trials), judged by the verdict through
# `decodegap interleave` (separate processes) and through decodegap.Compare
# (one process), in three cases:
#   aa    A/A (B is A), with a spinner pinned to one CPU switched on halfway
#         through the rounds (decodegap spin);
#   five  B does 5% more work (no spinner);
#   two   B does 2% more work (no spinner).
# It prints, per case, route and metric, how many trials were called faster,
# slower, equivalent and undecided, and the load averages seen.
#
# Settings (environment):
#   TRIALS      trials per case and route                       (default 4)
#   ROUNDS_AA   rounds of an A/A trial                          (default 20)
#   ROUNDS_FIVE rounds of a 5% trial                            (default 10)
#   ROUNDS_TWO  rounds of a 2% trial                            (default 20)
#   CASES       which cases                                     (default "aa five two")
#   ROUTES      which routes                                    (default "interleave compare")
#   BENCHTIME   steps per block                                 (default 2000x)
#   SPIN_CPU    the CPU the A/A spinner is pinned to            (default 1)
#   WORK_FIVE, WORK_TWO  B's -work percent                      (default 105, 102)
#   UNTIL_DECIDED=1  interleave runs -until-decided -max-rounds ROUNDS_* instead of
#               a fixed -rounds (Compare always stops when decided, -count the most)
#   KEEP        folder for every trial's output (default: a temporary one, removed)
#
# Usage, from the repository root:
#   scripts/verdict-trials.sh
#   TRIALS=10 ROUTES=interleave CASES=aa scripts/verdict-trials.sh
set -euo pipefail

TRIALS=${TRIALS:-4}
ROUNDS_AA=${ROUNDS_AA:-20}
ROUNDS_FIVE=${ROUNDS_FIVE:-10}
ROUNDS_TWO=${ROUNDS_TWO:-20}
CASES=${CASES:-"aa five two"}
ROUTES=${ROUTES:-"interleave compare"}
BENCHTIME=${BENCHTIME:-2000x}
SPIN_CPU=${SPIN_CPU:-1}
WORK_FIVE=${WORK_FIVE:-105}
WORK_TWO=${WORK_TWO:-102}

cd "$(dirname "$0")/.."
if [[ -n "${KEEP:-}" ]]; then
	DIR=$KEEP
	mkdir -p "$DIR"
else
	DIR=$(mktemp -d -t verdict-trials.XXXXXX)
	trap 'rm -rf "$DIR"' EXIT
fi

echo "verdict-trials: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, trials $TRIALS, rounds aa $ROUNDS_AA five $ROUNDS_FIVE two $ROUNDS_TWO, benchtime $BENCHTIME, output in $DIR" >&2
go build -o "$DIR/decodegap" ./cmd/decodegap
go test -c -o "$DIR/trials.test" ./examples/trials

TALLY=$DIR/tally.txt # lines: case route metric outcome
LOADS=$DIR/loads.txt # lines: case route trial load1 load5 load15 (at the trial's start)
: >"$TALLY"
: >"$LOADS"
: >"$DIR/spin.log"

rounds_of() {
	case $1 in
	aa) echo "$ROUNDS_AA" ;;
	five) echo "$ROUNDS_FIVE" ;;
	two) echo "$ROUNDS_TWO" ;;
	esac
}
work_of() {
	case $1 in
	aa) echo 100 ;;
	five) echo "$WORK_FIVE" ;;
	two) echo "$WORK_TWO" ;;
	esac
}

SPIN_PID=
stop_spin() {
	if [[ -n "$SPIN_PID" ]]; then
		kill "$SPIN_PID" 2>/dev/null || true
		wait "$SPIN_PID" 2>/dev/null || true
		SPIN_PID=
	fi
}
trap 'stop_spin' INT TERM

# spin_when N CMD...: in the background, wait until CMD prints a number ≥ N,
# then start the spinner; records its pid in SPIN_WATCH.
spin_when() {
	local n=$1
	shift
	(
		local k
		while :; do
			k=$("$@" 2>/dev/null || true)
			[[ ${k:-0} -ge $n ]] && break
			sleep 0.2
		done
		exec "$DIR/decodegap" spin -cpu "$SPIN_CPU"
	) >>"$DIR/spin.log" 2>&1 &
	SPIN_PID=$!
}

# outcomes FILE: the metric and outcome of every verdict row of the
# candidate arm "cand" in a verdict table (decodegap interleave's, and the one
# decodegap.Compare logs), one "metric outcome" line each; the order line has
# no metric, and the reason lines below the table name "(cand" or "cand:".
outcomes() {
	awk '
	/(^|[[:space:]])cand([[:space:]]|$)/ {
		metric = ""; outcome = ""; rounds = "-"
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^(p[0-9]+-)?sec\/op$|^(p[0-9]+-)?ns\/op$|^cpu\/wall$/ && metric == "") metric = $i
			if ($i ~ /^(faster|slower|equivalent|undecided)$/ && outcome == "") outcome = $i
			# the rounds column: used rounds, "+Nq" quarantined
			if (outcome != "" && rounds == "-" && $i ~ /^[0-9]+(\+[0-9]+q)?$/) {
				split($i, u, "+")
				rounds = u[1] + u[2]
			}
		}
		if (metric != "" && outcome != "") print metric, outcome, rounds
	}' "$1"
}

# compare_outcomes FILE: the same from decodegap.Compare's older one-line
# form "cand vs base: ns/op slower: B/A … ; p50-ns/op equivalent: …".
compare_outcomes() {
	awk '
	/cand vs base: / {
		line = $0
		sub(/.*cand vs base: /, "", line)
		n = split(line, parts, /; /)
		for (i = 1; i <= n; i++) {
			split(parts[i], w, /[ :]+/)
			if (w[2] ~ /^(faster|slower|equivalent|undecided)$/) print w[1], w[2]
		}
	}' "$1"
}

run_interleave() { # case trial
	local c=$1 t=$2 r w out
	r=$(rounds_of "$c")
	w=$(work_of "$c")
	out=$DIR/interleave-$c-$t
	if [[ $c == aa ]]; then
		# The runner appends each run's results as it finishes, with an
		# "arm: NAME" line (no arm runs twice in a row): count the runs.
		spin_when $((3 * (r / 2))) sh -c "grep -c '^arm: ' '$out.txt'"
	fi
	local rounds=(-rounds "$r")
	if [[ -n "${UNTIL_DECIDED:-}" ]]; then
		rounds=(-until-decided -max-rounds "$r")
	fi
	# Every arm gets a -work flag of the same length: a longer command line
	# moves the process's stack, which alone shifted the median step by
	# 0.1-0.2% in an A/A trial (B's "-work=100" against A's nothing), a
	# real difference the verdict then calls.
	"$DIR/decodegap" interleave "${rounds[@]}" -benchtime "$BENCHTIME" -bench 'Step$' -o "$out.txt" \
		"base=$DIR/trials.test -work=100" "cand=$DIR/trials.test -work=$w" >"$out.verdict" 2>"$out.log" || true
	stop_spin
	outcomes "$out.verdict" | sed "s/^/$c interleave /" >>"$TALLY"
}

run_compare() { # case trial
	local c=$1 t=$2 r w out
	r=$(rounds_of "$c")
	w=$(work_of "$c")
	out=$DIR/compare-$c-$t
	mkdir -p "$out.trace"
	if [[ $c == aa ]]; then
		# Compare writes one trace file per block as it goes: 3 per round.
		spin_when $((3 * (r / 2))) sh -c "ls '$out.trace' | wc -l"
	fi
	DECODEGAP_TRACE=$out.trace "$DIR/trials.test" -test.run '^$' -test.bench 'Compare$' \
		-test.benchtime "$BENCHTIME" -test.count "$r" -cand-work "$w" >"$out.txt" 2>&1 || true
	stop_spin
	{
		outcomes "$out.txt"
		compare_outcomes "$out.txt"
	} | sed "s/^/$c compare /" >>"$TALLY"
}

for t in $(seq 1 "$TRIALS"); do
	for c in $CASES; do
		for route in $ROUTES; do
			echo "$c $route $t $(cut -d' ' -f1-3 /proc/loadavg)" >>"$LOADS"
			echo "verdict-trials: trial $t of $TRIALS, case $c, $route (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
			"run_$route" "$c" "$t"
		done
	done
done

echo "# rounds: mean rounds judged per trial (used + quarantined; Compare and -until-decided may stop early)"
echo "# verdict-trials: $(date -u '+%Y-%m-%d %H:%M UTC'): $TRIALS trials per case and route; rounds aa $ROUNDS_AA, five $ROUNDS_FIVE (work $WORK_FIVE), two $ROUNDS_TWO (work $WORK_TWO); benchtime $BENCHTIME"
printf '%-5s %-10s %-12s %7s %7s %11s %10s %7s %7s\n' case route metric faster slower equivalent undecided trials rounds
for c in $CASES; do
	for route in $ROUTES; do
		awk -v c="$c" -v r="$route" -v trials="$TRIALS" '
		$1 == c && $2 == r { n[$3]++; k[$3 " " $4]++; if ($5 != "-" && $5 != "") { rs[$3] += $5; rn[$3]++ }; if (!($3 in seen)) { seen[$3] = 1; order[++m] = $3 } }
		END {
			if (m == 0) printf "%-5s %-10s %-12s %7s %7s %11s %10s %7d  (no verdict rows found)\n", c, r, "-", "-", "-", "-", "-", trials
			for (i = 1; i <= m; i++) {
				x = order[i]
				mr = "-"
				if (rn[x]) mr = sprintf("%.1f", rs[x] / rn[x])
				printf "%-5s %-10s %-12s %7d %7d %11d %10d %7d %7s\n", c, r, x, k[x " faster"], k[x " slower"], k[x " equivalent"], k[x " undecided"], n[x], mr
			}
		}' "$TALLY"
	done
done
awk '{ l1 += $4; l5 += $5; if (min == "" || $4 < min) min = $4; if ($4 > max) max = $4; n++ }
	END { if (n) printf "load average at trial starts: 1-min %.1f–%.1f (mean %.1f), 5-min mean %.1f, over %d trials\n", min, max, l1 / n, l5 / n, n }' "$LOADS"
if [[ " $CASES " == *" aa "* ]]; then
	echo "spinner (CPU $SPIN_CPU) switched on in $(awk '/spinning on CPU/ { n++ } END { print n + 0 }' "$DIR/spin.log") of the $(grep -c '^aa ' "$LOADS") A/A trials"
fi
