#!/usr/bin/env bash
# bisect-trials.sh DECODEGAP RUNS SLOW_AT [flags...]: run 'decodegap bisect'
# RUNS times on fresh synthetic repositories of 32 commits
# (scripts/bisect-fixture.sh) with a 5% slowdown planted at commit SLOW_AT
# (0: none, a no-change search), and print one line a run: the planted
# commit's index, the named one (or none), the steps and the wall time.
# Extra flags go to bisect, e.g. -delta 4% -bisect-unit cpu-sec/op.
set -euo pipefail
dg=$(realpath "$1") runs=$2 at=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/bisect-trials.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$runs"); do
	repo="$tmp/repo$r"
	mapfile -t commits < <(bash "$here/bisect-fixture.sh" "$repo" 32 "$at" 5)
	start=$(date +%s)
	out=$(cd "$repo" && "$dg" bisect -json -good "${commits[0]}" -bad "${commits[32]}" -bench '^BenchmarkWork$' "$@" . 2>"$tmp/log$r") || {
		echo "run $r: bisect failed:"; tail -5 "$tmp/log$r"; continue; }
	secs=$(( $(date +%s) - start ))
	named=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); f=d.get("First") or ""; print(d["Commits"].index(f) if f else "none", len(d["Steps"]), d["Why"])')
	echo "run $r: planted $at named $named ${secs}s"
done
