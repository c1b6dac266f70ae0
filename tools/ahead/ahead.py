"""The Python rows of tools/ahead (go run ./tools/ahead runs this script with
the package's virtualenv; it is not meant to be run alone).

replay: replays one session as an agent loop through Compactor.compact_ahead
(or, --sync, compact_if_due), a caller-owned list on a SQLite store, against
the summarizer at --url: a model call before each assistant message and one
after the last, each turn (a user message and what follows up to the next
one) starting --turn-interval seconds after the one before. Prints JSON: the
model calls, every call's wait and the waits at compactions (ms), the
compactions, the calls over the limit, the wall time and the ids of the
final history (the Go side checks the rest are in recall storage).

count: the per-turn check at each size of --sizes, one new message a turn:
Compactor.count_context against LangChain's count_tokens_approximately on
the same messages, the fastest of --runs turns each (ms), each timed in a loop
of its own with the garbage collector off, as timeit does."""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from typing import Any, Dict, List

from clipfold import Compactor, OpenAICompatible, SQLiteStore


def turns_of(msgs: List[Dict[str, Any]]) -> List[int]:
    """The turn (from 1) of each message, as `clipfold run` splits them: a
    user message after the first one starts a turn."""
    out, t, seen_user = [], 1, False
    for m in msgs:
        if m.get("role") == "user":
            if seen_user:
                t += 1
            seen_user = True
        out.append(t)
    return out


def replay(a: argparse.Namespace) -> Dict[str, Any]:
    with open(a.session) as f:
        msgs: List[Dict[str, Any]] = json.load(f)
    conv = str(msgs[0].get("conversation_id") or "session")
    turn_of = turns_of(msgs)
    if a.turns > 0:
        msgs = [m for m, t in zip(msgs, turn_of) if t <= a.turns]
    store = SQLiteStore(a.db)
    c = Compactor(a.wasm, llm=OpenAICompatible(a.url, api_key="k", model="m"), store=store,
                  config={"model_max_tokens": a.model_max_tokens})
    waits: List[float] = []
    comp_waits: List[float] = []
    out: Dict[str, Any] = {"model_calls": 0, "compactions": 0, "compactions_failed": 0, "calls_over_limit": 0,
                           "started": 0, "applied": 0, "at_limit": 0, "discarded": 0}
    history: List[Any] = []
    pending = 0
    cur, turn_start = 0, time.monotonic()
    start = time.monotonic()

    def model_call(upto: int) -> None:
        nonlocal history, pending
        history = history + msgs[pending:upto]
        pending = upto
        out["model_calls"] += 1
        t0 = time.monotonic()
        if a.sync:
            r = c.compact_if_due(conv, history, caller_owned=True)
            took = (time.monotonic() - t0) * 1000
            waits.append(took)
            if r is not None:
                history = list(r["history"])
                if r["failed"]:
                    out["compactions_failed"] += 1
                elif r["messages_compressed"] > 0:
                    out["compactions"] += 1
                    comp_waits.append(took)
            sc = c.should_compact(history)
            tokens, limit = sc["tokens"], sc["limit"]
        else:
            ar = c.compact_ahead(conv, history, caller_owned=True)
            took = (time.monotonic() - t0) * 1000
            waits.append(took)
            history = list(ar["history"])
            out["started"] += int(ar["started"])
            out["discarded"] += int(bool(ar["discarded"]))
            comp = ar["compaction"]
            if comp is not None:
                if comp["failed"]:
                    out["compactions_failed"] += 1
                elif comp["messages_compressed"] > 0:
                    out["compactions"] += 1
                    out["applied" if ar["prepared"] else "at_limit"] += 1
                    comp_waits.append(took)
            tokens, limit = ar["tokens"], ar["limit"]
        if tokens > limit:
            out["calls_over_limit"] += 1

    for i, m in enumerate(msgs):
        if m.get("role") != "assistant" or i == 0:
            continue
        if a.turn_interval > 0 and turn_of[i] != cur:
            if cur:
                time.sleep(max(0.0, turn_start + a.turn_interval - time.monotonic()))
            cur, turn_start = turn_of[i], time.monotonic()
        model_call(i)
    model_call(len(msgs))
    out["wall_ms"] = (time.monotonic() - start) * 1000
    if not a.sync:
        c._ahead_state().wait(60)  # a compaction still under way: let it end before the store closes
    out["waits_ms"], out["compaction_waits_ms"] = waits, comp_waits
    out["conversation_id"], out["replayed"] = conv, pending
    out["final_ids"] = [m.get("id") for m in history if isinstance(m, dict)]
    c.close()
    store.close()
    return out


def count(a: argparse.Namespace) -> Dict[str, Any]:
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.messages.utils import count_tokens_approximately

    with open(a.session) as f:
        texts = [str(m.get("content") or "") for m in json.load(f) if isinstance(m.get("content"), str)]
    rows = []
    with Compactor(a.wasm) as c:
        for n in a.sizes:
            total = n + a.runs
            msgs = [HumanMessage(texts[i % len(texts)]) if i % 2 == 0 else AIMessage(texts[i % len(texts)])
                    for i in range(total)]
            key = "count-%d" % n
            c.count_context(key, msgs[:n])  # the turns before: counted once
            turns = [msgs[:k] for k in range(n + 1, total + 1)]  # one new message a turn
            # Each timed alone, the collector off while timing (as timeit does).
            ours, theirs = [], []
            gc.collect()
            gc.disable()
            try:
                for lst in turns:
                    t0 = time.perf_counter()
                    got = c.count_context(key, lst)
                    ours.append((time.perf_counter() - t0) * 1000)
                for lst in turns:
                    t0 = time.perf_counter()
                    count_tokens_approximately(lst)
                    theirs.append((time.perf_counter() - t0) * 1000)
            finally:
                gc.enable()
            rows.append({"messages": n, "count_context_ms": min(ours), "count_tokens_approximately_ms": min(theirs),
                         "runs": a.runs, "tokens": got["tokens"]})
    import langchain_core
    return {"rows": rows, "langchain_core": langchain_core.__version__}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("mode", choices=["replay", "count"])
    p.add_argument("--wasm", required=True)
    p.add_argument("--session", required=True)
    p.add_argument("--url", default="")
    p.add_argument("--db", default=":memory:")
    p.add_argument("--model-max-tokens", type=int, default=20000)
    p.add_argument("--turn-interval", type=float, default=0.0)
    p.add_argument("--turns", type=int, default=0)
    p.add_argument("--sync", action="store_true")
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[100, 1000, 10000])
    p.add_argument("--runs", type=int, default=20)
    a = p.parse_args()
    if a.mode == "replay" and not a.url:
        p.error("replay: --url is required")
    json.dump(replay(a) if a.mode == "replay" else count(a), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
