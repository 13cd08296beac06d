#!/usr/bin/env bash
# bisect-fixture.sh DIR COMMITS SLOW_AT PERCENT [BROKEN_AT]: build a synthetic git
# repository in DIR (which must not exist) for 'decodegap bisect': a module
# with one benchmark (BenchmarkWork: a fixed loop of integer work) and
# COMMITS commits after the first (the good one). Commit number SLOW_AT
# (1 … COMMITS) makes the loop PERCENT% longer; every other commit only
# edits a note. SLOW_AT 0 plants nothing (a no-change search). Commit
# number BROKEN_AT (default 0: none) does not compile, and the commit after
# it mends it (a commit 'decodegap bisect' must skip). The
# commits' hashes, oldest first, are printed one a line (the first is
# good, the last bad).
set -euo pipefail
dir=$1 n=$2 at=$3 pct=$4 broken=${5:-0}
mkdir "$dir"
cd "$dir"
git init -q
git config user.email fixture@gapbench.invalid
git config user.name fixture
cat > go.mod <<'EOF'
module example.com/work

go 1.21
EOF
work() {
	cat > work.go <<EOF
// Package work is decodegap bisect's synthetic fixture.
package work

// Loops is the loop's length.
const Loops = $1

// Work runs the loop and returns its checksum.
func Work(seed uint64) uint64 {
	x := seed
	for i := 0; i < Loops; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
EOF
}
cat > work_test.go <<'EOF'
package work

import "testing"

var sink uint64

func BenchmarkWork(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Work(uint64(i))
	}
}
EOF
base=20000
loops=$base
work $loops
echo 0 > note.txt
git add -A
git commit -q -m "good"
git rev-parse HEAD
for i in $(seq 1 "$n"); do
	if [ "$i" -eq "$at" ]; then
		loops=$(( base + base * pct / 100 ))
		work $loops
		git commit -q -am "commit $i: the loop $pct% longer"
	elif [ "$i" -eq "$broken" ]; then
		echo 'func Broken() { undefinedName() }' >> work.go
		git commit -q -am "commit $i: does not compile"
	elif [ "$broken" -gt 0 ] && [ "$i" -eq $(( broken + 1 )) ]; then
		work $loops
		git commit -q -am "commit $i: compiles again"
	else
		echo "$i" > note.txt
		git commit -q -am "commit $i: a note"
	fi
	git rev-parse HEAD
done
