#!/usr/bin/env python3
"""Benchmark of the Python host: cold start (compile + instantiate, with
and without Extism's on-disk code cache), first call, and `split` on 10k
messages of about 400 bytes of JSON each.

Run: bindings/python/.venv/bin/python bindings/python/bench.py [--messages N] [--runs R]
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


def messages(n: int) -> list:
    out = []
    for i in range(n):
        m = {"id": "m%05d" % i, "conversation_id": "bench", "role": ("user", "assistant", "tool")[i % 3],
             "created_at": "2026-02-28T10:%02d:%02d.000Z" % ((i // 60) % 60, i % 60), "content": ""}
        base = len(json.dumps(m))
        m["content"] = ("Message %d: is there an error in the parser? We agreed on a fix. " % i * 8)[: 400 - base]
        if m["role"] == "tool":
            m["tool_call_id"] = "call_%d" % i
            m["role"] = "user"
        out.append(m)
    return out


def cold(wasm: str, cache_dir: str) -> float:
    """Seconds to import clipfold, compile, instantiate and call version in
    a fresh process."""
    code = ("import time; t=time.perf_counter(); import clipfold; c=clipfold.Compactor(%r); c.version(); "
            "print(time.perf_counter()-t)" % wasm)
    env = dict(os.environ, XDG_CACHE_HOME=cache_dir, HOME=cache_dir)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(r.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    wasm = clipfold.find_wasm()
    print("plug-in: %s (%.1f MB), extism %s" % (wasm, os.path.getsize(wasm) / 1e6, clipfold.compactor.extism.extism_version()))
    with tempfile.TemporaryDirectory() as d:
        first = cold(wasm, d)   # empty code cache: full compilation
        second = cold(wasm, d)  # the cache the first run wrote
    print("cold start, empty code cache:  %.3f s" % first)
    print("cold start, warm code cache:   %.3f s" % second)

    msgs = messages(args.messages)
    data = json.dumps({"messages": msgs, "config": {"keep_recent": 5}}, separators=(",", ":")).encode()
    print("split input: %d messages, %.2f MB (%.0f bytes/message)" % (len(msgs), len(data) / 1e6, len(data) / len(msgs)))
    with clipfold.Compactor(wasm) as c:
        t = time.perf_counter()
        c.version()
        print("first call on a new instance:  %.3f ms" % ((time.perf_counter() - t) * 1e3))
        raw, api = [], []
        for _ in range(args.runs):
            t = time.perf_counter()
            out = c.call("split", data)
            raw.append(time.perf_counter() - t)
        for _ in range(args.runs):
            t = time.perf_counter()
            res = c.split(msgs, config={"keep_recent": 5})
            api.append(time.perf_counter() - t)
        assert len(res["to_compress"]) + len(res["to_keep"]) == len(msgs)
        print("split, raw bytes (call):       median %.1f ms, min %.1f ms (output %.2f MB)"
              % (statistics.median(raw) * 1e3, min(raw) * 1e3, len(out) / 1e6))
        print("split, dicts (Compactor.split): median %.1f ms, min %.1f ms (incl. json encode/decode)"
              % (statistics.median(api) * 1e3, min(api) * 1e3))


if __name__ == "__main__":
    main()
