#!/usr/bin/env bash
# wazeroprof.sh — profile the plug-in as the Go host runs it: on wazero.
#
# Usage: scripts/wazeroprof.sh BENCH-REGEX [WASM] [BENCHTIME]
#   e.g. scripts/wazeroprof.sh 'BenchmarkSplit/wasm$/n=10000$'
#
# Builds the harness tests with wazero's `perfmap` build tag (wazero then
# writes /tmp/perf-PID.map, naming each compiled function's basic blocks),
# runs the benchmark under `perf record` with a fresh compilation cache
# (cached code has no map), and prints the time per wasm function, blocks
# summed, beside the Go host's own functions. WASM defaults to the shipped
# plug-in, embed/clipfold.wasm. Compiling the module shows up as
# "wazero compile"; use a BENCHTIME long enough to dwarf it (default
# 100x). scripts/wasmprof.sh does the same under Node's V8.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/wazeroprof.sh BENCH-REGEX [WASM] [BENCHTIME]" >&2; exit 2; }
command -v perf >/dev/null || { echo "wazeroprof: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WASM=$(cd "$(dirname "${2:-$REPO/embed/clipfold.wasm}")" && pwd)/$(basename "${2:-$REPO/embed/clipfold.wasm}")
cd "$REPO"
mkdir -p build
go test -tags perfmap -c -o build/wazeroprof.test ./harness
cache=$(mktemp -d)
before=$(ls /tmp/perf-*.map 2>/dev/null || true)
cleanup() {
	rm -rf "$cache"
	# the maps wazero wrote for this run (4 MB each)
	for m in /tmp/perf-*.map; do
		[[ -e $m ]] && ! grep -qxF "$m" <<<"$before" && rm -f "$m"
	done
	return 0
}
trap cleanup EXIT
(cd harness && CLIPFOLD_CACHE_DIR="$cache" CLIPFOLD_WASM="$WASM" \
	perf record -q -F 999 -o "$REPO/build/wazeroprof.perf" -- "$REPO/build/wazeroprof.test" \
	-test.run '^$' -test.bench "$1" -test.benchtime "${3:-100x}") | grep '^Benchmark' || true
perf report -i build/wazeroprof.perf --no-children --sort symbol --stdio 2>/dev/null | python3 -c '
import collections, re, sys
total = collections.Counter()
for line in sys.stdin:
    m = re.match(r"\s*([\d.]+)%\s+\[.\]\s+(.*)", line)
    if not m:
        continue
    name = re.sub(r":::::L\d+", "", m.group(2)).strip()
    name = re.sub(r"^\[\d+/\d+\]main\.", "wasm ", name)
    if re.search(r"wazevo/(backend|frontend|ssa)", name):
        name = "wazero compile"
    total[name[:100]] += float(m.group(1))
for name, pct in total.most_common(30):
    print("%6.2f%%  %s" % (pct, name))
'
