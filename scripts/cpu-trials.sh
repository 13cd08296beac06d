#!/usr/bin/env bash
# cpu-trials.sh: real-host trials of decodegap's CPU verdict (cpu-sec/op).
# For each shape of examples/cpushapes (inline, fanout2, fanout4,
# background, exiting-thread, alloc: arm B does 10% more work than A in the
# same shape; inline-vs-fanout2: the same work in two shapes) and for the
# zstd decoder at concurrency 4 against 1, TRIALS runs of
# decodegap.Compare, each in its own child test binary and judged by the
# library's JSON report; counts the cpu-sec/op calls (more CPU,
# equivalent, undecided, less CPU: the wrong direction) and appends the
# table, with the date, the commit and this command, to OUT. The driver is
# examples/cpushapes/cmd/cputrials.
#
# Settings (environment):
#   TRIALS    trials per shape                                (default 20)
#   STEPS     steps per block, -benchtime=Nx                  (default 100)
#   COUNT     the most rounds, -count (Compare stops once every verdict is
#             decided)                                        (default 20)
#   GAP       the shapes' hybrid gap                          (default 500µs)
#   ZSTD_GAP  the zstd trials' gap                            (default 1ms)
#   W         arm A's work in units of ~100 µs                (default 1)
#   SHAPES    comma-separated (default: every shape and zstd)
#   OUT       the markdown file appended to ("-": stdout only)  (default docs/cpu-trials.md)
#   KEEP      folder for every trial's output (default: a temporary one)
#
# The full run (8 shapes × 20 trials) takes about 15 minutes on 2 cores.
#
#   scripts/cpu-trials.sh
#   TRIALS=1 OUT=- scripts/cpu-trials.sh        # one trial a shape: checks the driver
set -euo pipefail
TRIALS=${TRIALS:-20}
STEPS=${STEPS:-100}
COUNT=${COUNT:-20}
GAP=${GAP:-500µs}
ZSTD_GAP=${ZSTD_GAP:-1ms}
W=${W:-1}
SHAPES=${SHAPES:-inline,fanout2,fanout4,background,exiting-thread,alloc,inline-vs-fanout2,zstd}
OUT=${OUT:-docs/cpu-trials.md}
HOW="TRIALS=$TRIALS STEPS=$STEPS COUNT=$COUNT GAP=$GAP ZSTD_GAP=$ZSTD_GAP W=$W SHAPES=$SHAPES OUT=$OUT scripts/cpu-trials.sh"
cd "$(dirname "$0")/.."
BIN=$(mktemp -d -t cpu-trials.XXXXXX)
trap 'rm -rf "$BIN"' EXIT
go test -c -o "$BIN/cpushapes.test" ./examples/cpushapes
go test -c -o "$BIN/zstd.test" ./examples/zstd
go build -o "$BIN/cputrials" ./examples/cpushapes/cmd/cputrials
KEEPARG=()
if [[ -n "${KEEP:-}" ]]; then
	mkdir -p "$KEEP"
	KEEPARG=(-keep "$KEEP")
fi
"$BIN/cputrials" -cpushapes-test "$BIN/cpushapes.test" -zstd-test "$BIN/zstd.test" \
	-trials "$TRIALS" -benchtime "${STEPS}x" -count "$COUNT" -gap "$GAP" -zstd-gap "$ZSTD_GAP" -w "$W" \
	-shapes "$SHAPES" -out "$OUT" -how "$HOW" "${KEEPARG[@]}"
