#!/usr/bin/env bash
# step.sh NAME WHAT -- COMMAND...: one step of `make test`. Prints what the
# step does before it starts (so a long silence has a reason on screen), runs
# COMMAND, then prints how long it took. Exits with COMMAND's status.
set -uo pipefail
name=$1 what=$2
shift 2
[ "${1-}" = "--" ] && shift
printf '==> %s: %s\n' "$name" "$what"
start=$SECONDS
"$@"
status=$?
took=$((SECONDS - start))
if [ "$status" -eq 0 ]; then
	printf '<== %s: done in %dm%02ds\n' "$name" $((took / 60)) $((took % 60))
else
	printf '<== %s: FAILED (exit %d) after %dm%02ds\n' "$name" "$status" $((took / 60)) $((took % 60))
fi
exit "$status"
