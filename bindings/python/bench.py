#!/usr/bin/env python3
"""Benchmark of the Python host (the Extism Python SDK, Wasmtime: the
plain path, input and output through Extism memory): median time of
exports on histories of messages of about 400 bytes of JSON each
(internal/benchdata's conversation: --inputs=DIR reads the files
tools/benchreport writes, history-N.json), raw bytes in and out
(`Compactor.call`); and cold start (import, compile, instantiate, first
call) in fresh processes, with an empty and with a warm code cache.

Run: bindings/python/.venv/bin/python bindings/python/bench.py [options]
  --inputs DIR     history-N.json files (default: generate them here)
  --sizes 100,1000,10000,100000
  --exports split,score,shouldCompact
  --runs R         calls per export and size (default: by size)
  --cold-runs R    fresh processes per cold-start case (default 5)
  --json FILE      also write the results as JSON
The plug-in is $CLIPFOLD_WASM, else clipfold.find_wasm().
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import clipfold

WORDS = "the deploy failed because the config had a typo; we agreed to add validation and a test for it before Friday "
TEXT = WORDS * 5


def history(n: int) -> bytes:
    """internal/benchdata.History(n), ported (tools/benchreport passes the
    Go generator's own files with --inputs)."""
    msgs = []
    for i in range(n):
        start = (i * 7) % len(WORDS)
        content = TEXT[start:start + 220 + (i * 37) % 150]
        if i % 10 == 3:
            content += " \u2014 any idea?"
        sec = 10 * 3600 + i
        day, month = 28 + sec // 86400, 2
        if day > 28:
            day, month = day - 28, 3
        sec %= 86400
        msgs.append({"id": "m%d" % i, "conversation_id": "bench", "role": "assistant" if i % 2 else "user",
                     "content": content, "created_at": "2026-%02d-%02dT%02d:%02d:%02d.000Z" % (month, day, sec // 3600, sec // 60 % 60, sec % 60)})
    return json.dumps({"messages": msgs, "config": {"keep_recent": 20}}, separators=(",", ":"), ensure_ascii=False).encode()


def cold(wasm: str, cache_dir: str) -> float:
    """Milliseconds to import clipfold, compile, instantiate and call
    version in a fresh process whose Wasmtime cache lives in cache_dir."""
    code = ("import time; t=time.perf_counter(); import clipfold; c=clipfold.Compactor(%r); c.version(); "
            "print((time.perf_counter()-t)*1e3)" % wasm)
    env = dict(os.environ, XDG_CACHE_HOME=cache_dir, HOME=cache_dir)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(r.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs")
    ap.add_argument("--sizes", default="100,1000,10000,100000")
    ap.add_argument("--exports", default="split,score,shouldCompact")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    wasm = os.environ.get("CLIPFOLD_WASM") or clipfold.find_wasm()
    res = {"host": "python", "python": sys.version.split()[0], "extism": clipfold.compactor.extism.extism_version(),
           "wasm": wasm, "wasm_bytes": os.path.getsize(wasm), "calls": [], "cold_start": {}}
    print("plug-in: %s (%.2f MB), extism %s" % (wasm, res["wasm_bytes"] / 1e6, res["extism"]))

    with clipfold.Compactor(wasm) as c:
        for n in [int(s) for s in args.sizes.split(",")]:
            if args.inputs:
                with open(os.path.join(args.inputs, "history-%d.json" % n), "rb") as f:
                    data = f.read()
            else:
                data = history(n)
            runs = args.runs or (5 if n >= 100000 else 9 if n >= 10000 else 41)
            for export in args.exports.split(","):
                c.call(export, data)  # warm-up
                times = []
                for _ in range(runs):
                    t = time.perf_counter()
                    c.call(export, data)
                    times.append((time.perf_counter() - t) * 1e3)
                row = {"export": export, "messages": n, "input_bytes": len(data), "runs": runs,
                       "median_ms": statistics.median(times), "min_ms": min(times)}
                res["calls"].append(row)
                print("%-14s %8d %8.2f MB  median %9.2f ms  min %9.2f ms  (%d runs)"
                      % (export, n, len(data) / 1e6, row["median_ms"], row["min_ms"], runs))

    with tempfile.TemporaryDirectory() as d:
        empty = []
        for _ in range(args.cold_runs):
            with tempfile.TemporaryDirectory() as e:
                empty.append(cold(wasm, e))
        cold(wasm, d)  # fill the cache
        warm = [cold(wasm, d) for _ in range(args.cold_runs)]
    res["cold_start"] = {"nocache_ms": statistics.median(empty), "cache_ms": statistics.median(warm), "runs": args.cold_runs}
    print("cold start (fresh process, median): empty code cache %.1f ms, warm code cache %.1f ms"
          % (res["cold_start"]["nocache_ms"], res["cold_start"]["cache_ms"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
