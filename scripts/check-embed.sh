#!/usr/bin/env bash
# check-embed.sh — the committed plug-in is what its sources build.
#
# Usage: scripts/check-embed.sh [BUILT]   (default: build/clipfold-tinygo.wasm)
#
# embed/clipfold.wasm.sum records the hash of the sources the committed
# plug-in was built from and the toolchain that built it (TinyGo, LLVM,
# clang, wasi-libc, binaryen and Go versions; scripts/build-tinygo.sh
# writes them beside every build). When a fresh build of today's sources
# used the same toolchain, it must be byte-for-byte the committed file:
# otherwise the build is not reproducible, and this fails. When the
# toolchain differs (a Debian point release of LLVM, another Go), it only
# says so. make test-tinygo runs it after building from a clean clone.
set -euo pipefail
cd "$(dirname "$0")/.."
built=${1:-build/clipfold-tinygo.wasm}
[[ -f $built && -f $built.toolchain ]] || { echo "check-embed: $built or its .toolchain is missing: make build-tinygo" >&2; exit 1; }
if ! go test -count=1 -run TestEmbeddedIsFresh ./embed >/dev/null 2>&1; then
	echo "check-embed: embed/clipfold.wasm is not fresh for these sources (go test ./embed says why): nothing to compare" >&2
	exit 0
fi
recorded=$(sed -n 's/^toolchain //p' embed/clipfold.wasm.sum)
have=$(cat "$built.toolchain")
if [[ $have != "$recorded" ]]; then
	printf 'check-embed: not compared: this build used\n  %s\nthe committed plug-in\n  %s\n' "$have" "$recorded" >&2
	exit 0
fi
if ! cmp -s "$built" embed/clipfold.wasm; then
	echo "check-embed: FAILED: $built differs from embed/clipfold.wasm although sources and toolchain are the same ($have): the build is not reproducible" >&2
	exit 1
fi
echo "check-embed: $built is byte-for-byte embed/clipfold.wasm ($have)" >&2
