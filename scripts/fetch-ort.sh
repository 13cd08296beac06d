#!/usr/bin/env bash
# fetch-ort.sh: install the real parts the ONNX Runtime benchmarks use.
#
#   ONNX Runtime 1.30.0   libonnxruntime.so.1  from npm package onnxruntime-node@1.30.0
#                          (bin/napi-v6/linux/x64/libonnxruntime.so.1)
#   Silero VAD v5 model    silero_vad_v5.onnx   from npm package @ricky0123/vad-web@0.0.31
#                          (dist/silero_vad_v5.onnx)
#
# Each package is fetched with `npm pack` (a tarball download: no install
# scripts run, nothing lands in node_modules), the one file is taken out with
# `tar`, and its SHA-256 is checked against the constants below before it is
# moved into the cache. Needs only node/npm, tar and sha256sum.
#
# Where the files go:
#   $GAPBENCH_CACHE/onnxruntime-1.30.0/libonnxruntime.so.1
#   $GAPBENCH_CACHE/silero-vad-web-0.0.31/silero_vad_v5.onnx
# GAPBENCH_CACHE defaults to .cache/ at the repository root (git ignores it).
# decodegap/ort looks in the same places (or at ONNXRUNTIME_LIB and
# GAPBENCH_VAD_MODEL, which name the two files directly).
#
# Idempotent: when both files are present with the right checksums it only
# verifies them and prints one line. A cached file with a wrong checksum is
# removed and fetched again; a freshly fetched file with a wrong checksum is
# an error, and is never installed. decodegap/ort checks the same checksums
# before it loads anything.
set -euo pipefail

ORT_VERSION=1.30.0
ORT_PACKAGE="onnxruntime-node@${ORT_VERSION}"
ORT_MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
ORT_SHA256=ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23

VAD_VERSION=0.0.31
VAD_PACKAGE="@ricky0123/vad-web@${VAD_VERSION}"
VAD_MEMBER="package/dist/silero_vad_v5.onnx"
VAD_SHA256=2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${GAPBENCH_CACHE:-"$repo_root/.cache"}
ort_dest="$cache/onnxruntime-${ORT_VERSION}/libonnxruntime.so.1"
vad_dest="$cache/silero-vad-web-${VAD_VERSION}/silero_vad_v5.onnx"

die() {
	echo "fetch-ort.sh: $*" >&2
	exit 1
}

for tool in npm tar sha256sum; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "'$tool' is not installed; install it (npm comes with Node.js) and run 'make deps' again"
done

# sha_ok FILE WANT: true when FILE exists and its SHA-256 is WANT.
sha_ok() {
	[ -f "$1" ] || return 1
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ]
}

if sha_ok "$ort_dest" "$ORT_SHA256" && sha_ok "$vad_dest" "$VAD_SHA256"; then
	echo "fetch-ort.sh: ONNX Runtime ${ORT_VERSION} and Silero VAD v5 present and verified in $cache"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-ort.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# fetch PACKAGE MEMBER WANT DEST: npm pack PACKAGE into $tmp, extract MEMBER,
# check its SHA-256 against WANT, and move it to DEST.
fetch() {
	local package=$1 member=$2 want=$3 dest=$4
	if [ -f "$dest" ]; then
		if sha_ok "$dest" "$want"; then
			return 0
		fi
		# Never leave a damaged file where the library loader finds it
		# (a truncated shared library crashes the process that maps it).
		rm -f "$dest"
		echo "fetch-ort.sh: $dest has the wrong SHA-256; removed it, fetching it again" >&2
	fi
	echo "fetch-ort.sh: fetching $package (npm pack, no install scripts)"
	local dir="$tmp/$(echo "$package" | tr '/@' '__')"
	mkdir -p "$dir"
	# npm's own messages go to pack.log, shown when it fails.
	(cd "$dir" && npm pack --ignore-scripts "$package" >"$dir/pack.log" 2>&1) ||
		die "'npm pack $package' failed:
$(tail -n 20 "$dir/pack.log")
Check that npm can reach its registry ('npm ping', 'npm config get registry'), then run 'make deps' again."
	local tarball
	tarball=$(find "$dir" -maxdepth 1 -name '*.tgz' | head -n 1)
	[ -n "$tarball" ] || die "'npm pack $package' produced no tarball in $dir"
	tar -xzf "$tarball" -C "$dir" "$member" ||
		die "$package has no $member; the pinned version must ship it (see docs in this script)"
	local got
	got=$(sha256sum "$dir/$member" | cut -d' ' -f1)
	if [ "$got" != "$want" ]; then
		die "SHA-256 mismatch for $member from $package:
  want $want
  got  $got
The file npm served is not the one this project pinned. Do not use it.
Check which registry npm uses ('npm config get registry'; a mirror may serve a
different build), clear npm's cache ('npm cache clean --force') and run
'make deps' again. Change the constant in scripts/fetch-ort.sh only if you have
verified the new file yourself."
	fi
	mkdir -p "$(dirname "$dest")"
	# Copy beside the destination, then rename: a reader never sees half a file.
	cp "$dir/$member" "$dest.partial"
	mv -f "$dest.partial" "$dest"
	echo "fetch-ort.sh: installed $dest (sha256 $got)"
}

fetch "$ORT_PACKAGE" "$ORT_MEMBER" "$ORT_SHA256" "$ort_dest"
fetch "$VAD_PACKAGE" "$VAD_MEMBER" "$VAD_SHA256" "$vad_dest"
