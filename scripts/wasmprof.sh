#!/usr/bin/env bash
# wasmprof.sh — profile the TinyGo build of one export (tools/wasmprof).
#
# Usage: scripts/wasmprof.sh EXPORT INPUT-FILE [CALLS]
#
# Builds tools/wasmprof with the plug-in's TinyGo target and flags, runs it
# under Node's WASI with `perf record -g` and V8's perf map (which names
# every wasm function), and prints `perf report`. Without perf on PATH it
# only times the calls. Output: build/wasmprof.wasm, build/wasmprof.perf.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: scripts/wasmprof.sh EXPORT INPUT-FILE [CALLS]" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ENV_FILE=$("$REPO/scripts/install-tinygo.sh" --env)
# shellcheck source=/dev/null
. "$ENV_FILE"
cd "$REPO"
mkdir -p build
GOWORK=off "$TINYGO" build -target="$CLIPFOLD_TINYGO_TARGET" -no-debug -scheduler=none -opt=z -gc=precise \
	-o build/wasmprof.wasm ./tools/wasmprof
input=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
run=(node --no-warnings tools/wasmprof/run.mjs build/wasmprof.wasm "$1" "$input" "${3:-1}")
if command -v perf >/dev/null; then
	perf record -q -g -F 999 -o build/wasmprof.perf node --perf-basic-prof --no-logfile-per-isolate --logfile=build/wasmprof-v8.log "${run[@]:1}"
	perf report -i build/wasmprof.perf --no-children --sort symbol -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60
else
	"${run[@]}"
fi
