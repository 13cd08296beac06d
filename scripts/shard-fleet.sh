#!/usr/bin/env bash
# shard-fleet.sh: the local fleet trial of issue 28. A fixture module of 40
# benchmarks (four slowed at head: Step03 and Step11 by 10%, Step19 and
# Step27 by 5%) is compared unsharded, then as 4 shards of the same
# -max-rounds, run 2 at a time on disjoint CPU sets (this host has 2 CPUs:
# shards 1 and 2 on CPUs 0 and 1 side by side, then 3 and 4), and the shards
# are merged. It prints the wall times, the load averages and the rows each
# report decided. A second unsharded run confined to CPU 0 (as each shard
# is; CPU0_REF=0 skips it) separates sharding from confinement. Usage: bash scripts/shard-fleet.sh [WORKDIR]
# Settings: ROUNDS (12), BENCHTIME (2000x), NBENCH (40).
set -euo pipefail
ROUNDS=${ROUNDS:-12}
BENCHTIME=${BENCHTIME:-2000x}
NBENCH=${NBENCH:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/shard-fleet-XXXXXX)}
mkdir -p "$work"
repo=$work/repo
dg=$work/decodegap
(cd "$root" && go build -o "$dg" ./cmd/decodegap)

gen() { # gen FILE slowed: writes the benchmark file; slowed=1 slows the four
	local f=$1 slowed=$2
	{
		printf 'package fix\n\nimport "testing"\n\nvar sink uint64\n\n//go:noinline\nfunc mix(n int) uint64 {\n\tx := uint64(88172645463325252)\n\tfor i := 0; i < n; i++ {\n\t\tx = x*6364136223846793005 + 1442695040888963407\n\t\tx ^= x >> 29\n\t}\n\treturn x\n}\n'
		for ((i = 0; i < NBENCH; i++)); do
			w=$((2000 + 100 * i))
			if [ "$slowed" = 1 ]; then
				case $i in 3 | 11) w=$((w * 110 / 100)) ;; 19 | 27) w=$((w * 105 / 100)) ;; esac
			fi
			printf '\nfunc BenchmarkStep%02d(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tsink += mix(%d)\n\t}\n}\n' "$i" "$w"
		done
	} >"$f"
}
if [ ! -d "$repo/.git" ]; then
	mkdir -p "$repo/fix"
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
	(cd "$repo" && git init -q -b main &&
		printf 'module example.com/fix\n\ngo 1.21\n' >go.mod &&
		printf '// Package fix is a fixture.\npackage fix\n' >fix/fix.go)
	gen "$repo/fix/fix_test.go" 0
	(cd "$repo" && git add . && git commit -q -m base)
	gen "$repo/fix/fix_test.go" 1
	(cd "$repo" && git commit -q --allow-empty -am head)
fi
common=(-base HEAD~1 -head HEAD -max-rounds "$ROUNDS" -benchtime "$BENCHTIME" -budget 0 -lock=false -screen=false)
cd "$repo"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b - a}'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "load before unsharded: $(load)"
t0=$(now)
"$dg" pr "${common[@]}" -o "$work/full.txt" ./... >"$work/full.report" 2>"$work/full.log" || true
t1=$(now)
echo "unsharded: $(elapsed "$t0" "$t1") s wall; $(grep -o '[0-9.hms]* of rounds' "$work/full.report")"
echo "load after unsharded: $(load)"
if [ "${CPU0_REF:-1}" = 1 ]; then # the same, confined to CPU 0 as each shard is
	t0=$(now)
	"$dg" pr "${common[@]}" -cpus 0 -o "$work/full-cpu0.txt" ./... >"$work/full-cpu0.report" 2>"$work/full-cpu0.log" || true
	echo "unsharded on CPU 0: $(elapsed "$t0" "$(now)") s wall; $(grep -o '[0-9.hms]* of rounds' "$work/full-cpu0.report")"
	echo "load after unsharded on CPU 0: $(load)"
fi

shard() { # shard I CPU
	local s=$(now)
	"$dg" pr "${common[@]}" -shard "$1/4" -run-id fleet -cpus "$2" -o "$work/shard$1.txt" ./... >"$work/shard$1.report" 2>"$work/shard$1.log" || true
	echo "shard $1/4 on CPU $2: $(elapsed "$s" "$(now)") s wall; $(grep -o 'in [0-9.hms]*;' "$work/shard$1.report")"
}
rm -f "$work"/shard?.txt
for pair in "1 2" "3 4"; do
	set -- $pair
	echo "load before shards $1,$2: $(load)"
	shard "$1" 0 &
	shard "$2" 1 &
	wait
done
echo "load after shards: $(load)"
"$dg" merge -fail-on 'slower>3%' "$work"/shard?.txt >"$work/merged.report" 2>&1 || true

decided() { # one line per row: benchmark (-GOMAXPROCS dropped), unit, outcome
	grep -E '^fix\.[^ ]+ +[^ ]+/op ' "$1" | sed -nE 's/^(fix\.Step[0-9]+)(-[0-9]+)? +([^ ]+) .*(slower by|faster by|equivalent within|undecided).*/\1 \3 \4/p' |
		sed -E 's/ (by|within)$//' | sort
}
decided "$work/full.report" >"$work/full.rows"
[ -f "$work/full-cpu0.report" ] && decided "$work/full-cpu0.report" >"$work/full-cpu0.rows"
decided "$work/merged.report" >"$work/merged.rows"
echo "unsharded: $(grep -E '^benchmarks:' "$work/full.report")"
[ -f "$work/full-cpu0.report" ] && echo "unsharded on CPU 0: $(grep -E '^benchmarks:' "$work/full-cpu0.report")"
echo "merged:    $(grep -E '^benchmarks:' "$work/merged.report")"
echo "rows decided (not undecided) by each, and the rows where they differ:"
key() { sed -E 's/^([^ ]+) ([^ ]+) /\1|\2 /' "$1"; }
for ref in full full-cpu0; do
	[ -f "$work/$ref.rows" ] || continue
	echo "$ref against merged:"
	join <(key "$work/$ref.rows") <(key "$work/merged.rows") |
		awk '{d1=($2!="undecided"); d2=($3!="undecided"); n1+=d1; n2+=d2; both+=(d1&&d2&&$2==$3); if ($2!=$3) print "  differ: " $0} END {print "  '"$ref"' decided " n1 " rows, merged " n2 ", the same way in both " both}'
done
echo "files in $work"
