#!/usr/bin/env bash
# own-history.sh GOOD BAD DB [COUNT]: measure BenchmarkDetect100k
# (decodegap/internal/steady) at every first-parent commit from GOOD to BAD
# (both included), COUNT runs each (default 5), in a temporary git worktree
# under /tmp, and store each commit's output in the history store DB with
# 'decodegap history add -commit SHA -date DATE'. It prints one line per
# commit: index, commit, the load average before the run and the file.
# Then it writes 'history detect' (text and -json, both -method values)
# and, unless OWN_HISTORY_BISECT=0, runs 'decodegap bisect -faster' from
# GOOD to BAD on one sub-benchmark (OWN_HISTORY_BENCH, default
# Detect100k/drift: one result a run, so cpu-sec/op is measured and
# judged; OWN_HISTORY_BISECT_FLAGS adds flags); with OWN_HISTORY_CONFIRM=1
# also 'history detect -confirm', which bisects every change point. All
# goes into the output directory (OWN_HISTORY_OUT, default a new
# /tmp/own-history.*).
# The decodegap used is built from the checkout holding this script.
# Waits while /tmp/quiet-now exists (a quiet-host trial runs).
set -euo pipefail
good=$1 bad=$2 db=$3 count=${4:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OWN_HISTORY_OUT:-$(mktemp -d /tmp/own-history.XXXXXX)}
mkdir -p "$out"
quiet() { while [ -e /tmp/quiet-now ]; do sleep 20; done; }
quiet
(cd "$here" && go build -o "$out/decodegap" ./cmd/decodegap)
wt="$out/wt"
git -C "$here" worktree add --detach "$wt" "$good" >/dev/null 2>&1
trap 'git -C "$here" worktree remove --force "$wt"' EXIT
i=0
for c in $(git -C "$here" rev-list --first-parent --reverse "$good^1..$bad"); do
	git -C "$wt" checkout -q --detach "$c"
	date=$(git -C "$here" show -s --format=%cI "$c")
	f="$out/$(printf %02d "$i")-${c:0:7}.txt"
	quiet
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	(cd "$wt" && go test -run '^$' -bench 'Detect100k' -count "$count" ./decodegap/internal/steady) >"$f"
	"$out/decodegap" history add -commit "$c" -date "$date" -db "$db" "$f" >/dev/null
	echo "$i ${c:0:7} load $load $f"
	i=$((i + 1))
done
dg="$out/decodegap"
quiet
echo "detect: load $(cut -d' ' -f1-3 /proc/loadavg)"
"$dg" history detect -db "$db" | tee "$out/detect.txt"
"$dg" history detect -db "$db" -json >"$out/detect.json"
"$dg" history detect -db "$db" -method otava | tee "$out/detect-otava.txt"
"$dg" history detect -db "$db" -method otava -json >"$out/detect-otava.json"
if [ "${OWN_HISTORY_BISECT:-1}" != 0 ]; then
	quiet
	echo "bisect: start $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	# shellcheck disable=SC2086
	(cd "$here" && "$dg" bisect -faster -good "$good" -bad "$bad" -bench "${OWN_HISTORY_BENCH:-Detect100k/drift}" \
		-bisect-unit cpu-sec/op -delta 10% -max-rounds 30 -budget 3m -o "$out/bisect-results.txt" ${OWN_HISTORY_BISECT_FLAGS:-} \
		./decodegap/internal/steady) | tee "$out/bisect.txt"
	echo "bisect: end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ "${OWN_HISTORY_CONFIRM:-0}" = 1 ]; then
	quiet
	echo "confirm: start $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	set +e
	# shellcheck disable=SC2086
	(cd "$here" && "$dg" history detect -db "$db" -confirm -bisect-unit cpu-sec/op -delta 10% -max-rounds 30 -budget 3m \
		${OWN_HISTORY_BISECT_FLAGS:-} ./decodegap/internal/steady) | tee "$out/confirm.txt"
	echo "confirm: exit ${PIPESTATUS[0]}, end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	set -e
fi
