"""Compaction ahead of time (Compactor.compact_ahead, AsyncCompactor,
threads) and the per-turn count (count_context), through the real plug-in,
SQLite stores and an OpenAI-compatible summarizer on a real HTTP server."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from clipfold import AsyncCompactor, Compactor, OpenAICompatible, SQLiteStore

from summarizer import Summarizer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CONFIG = {"keep_recent": 4, "max_summary_tokens": 120, "model_max_tokens": 3000}


def turn(i: int) -> List[Dict[str, Any]]:
    """A framework's turn: messages without ids or times, a tool call."""
    return [
        {"role": "user", "content": "Question %d: what did we decide about module %d and its retry budget?" % (i, i)},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_%d" % i, "type": "function", "function": {
            "name": "search_notes", "arguments": '{"module":%d}' % i}}]},
        {"role": "tool", "tool_call_id": "call_%d" % i,
         "content": "notes: module %d keeps a retry budget of %d; decided on the %dth" % (i, 10 + i, i)},
        {"role": "assistant", "content": "We agreed module %d keeps a retry budget of %d; the decision was recorded in "
                                         "the notes." % (i, 10 + i)},
    ]


def big_turn(i: int) -> List[Dict[str, Any]]:
    """A turn whose tool result is a long log: kept whole it would not fit a target."""
    t = turn(i)
    t[2] = {"role": "tool", "tool_call_id": "call_%d" % i,
            "content": ("log line %d: retry budget exhausted for module %d after 3 attempts\n" % (i, i)) * 40}
    return t


def compactor(wasm: str, s: Summarizer, store: Any = None, config: Optional[Dict[str, Any]] = None) -> Compactor:
    return Compactor(wasm, llm=OpenAICompatible(s.url, api_key="k", model="m"), store=store,
                     config=dict(CONFIG if config is None else config))


def until_applied(c: Compactor, conv: str, history: Any, **kw: Any) -> Dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        r = c.compact_ahead(conv, history, **kw)
        if r["compaction"] is not None or r["discarded"] or time.monotonic() > deadline:
            return dict(r)
        time.sleep(0.005)


def is_clip(m: Any) -> bool:
    return "[Context Summary" in json.dumps(m)


# ------------------------------------------------------------------ the count
def session(name: str) -> List[Dict[str, Any]]:
    return list(json.loads((REPO / "testdata" / "conversations" / name).read_text()))


@pytest.mark.parametrize("config", [{}, {"overhead_tokens": 1234, "image_tokens": 900}])
def test_count_context_is_should_compacts_count(wasm: str, config: Dict[str, Any]) -> None:
    """Turn after turn, the count that pays only for new messages equals
    should_compact's count of the whole list: without usage, with usage
    at a length counted before and at one never counted, after the list
    was replaced (a compaction) and in another shape (LangChain objects)."""
    rng = random.Random(7)
    msgs = session("debugging-session.json")[:400]
    with Compactor(wasm) as c:
        n = 0
        while n < len(msgs):
            n = min(len(msgs), n + rng.randint(1, 6))
            lst = msgs[:n]
            got = c.count_context("k", lst, config=config)
            want = c.should_compact(lst, config)
            assert (got["tokens"], got["limit"], got["due"]) == (want["tokens"], want["limit"], want["due"]), n
            assert got["prepare_limit"] == want["prepare_limit"] == int(0.7 * want["limit"])
            if n > 10:
                for k in (n - 3, n // 2, n):  # a length counted before, or not
                    usage = {"input_tokens": 5000 + k, "messages": k}
                    got = c.count_context("k", lst, usage=usage, config=config)  # type: ignore[arg-type]
                    want = c.should_compact(lst, config, usage=usage)  # type: ignore[arg-type]
                    assert got["tokens"] == want["tokens"], (n, k)
        # The list replaced, as a compaction does: counted anew.
        replaced = [{"role": "system", "content": "[Context Summary — 300 messages compressed]"}] + msgs[300:]
        assert c.count_context("k", replaced, config=config)["tokens"] == c.should_compact(replaced, config)["tokens"]
        # A message replaced in place at the end is a new list too.
        edited = replaced[:-1] + [{"role": "user", "content": "something else entirely"}]
        assert c.count_context("k", edited, config=config)["tokens"] == c.should_compact(edited, config)["tokens"]

        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        lc: List[Any] = []
        for i in range(30):
            lc += [HumanMessage("question %d about the retry budget of module %d?" % (i, i)),
                   AIMessage("", tool_calls=[{"name": "notes", "args": {"module": i}, "id": "c%d" % i}]),
                   ToolMessage("module %d: budget %d" % (i, 10 + i), tool_call_id="c%d" % i),
                   AIMessage("Module %d keeps %d." % (i, 10 + i))]
            got = c.count_context("lc", lc, config=config)
            assert got["tokens"] == c.should_compact(lc, config)["tokens"]


def test_count_context_is_flat_in_the_history_length(wasm: str) -> None:
    """A turn's count costs what its new messages cost: at 10,000 messages
    as at 100 the plug-in is handed the new message alone, and the count is
    should_compact's of the whole list. (Its time is measured by the
    benchmarks, not here.)"""
    from langchain_core.messages import AIMessage, HumanMessage

    def history(n: int) -> List[Any]:
        return [HumanMessage("question %d: what is the retry budget of module %d?" % (i, i)) if i % 2 == 0 else
                AIMessage("Module %d keeps a retry budget of %d, as decided in the notes of the %dth." % (i, i + 10, i))
                for i in range(n)]

    with Compactor(wasm) as c:
        real = c._aux
        handed: List[int] = []

        def recording(export: str, data: bytes) -> Any:
            if export == "estimateTokens":
                handed.append(len(data))
            return real(export, data)

        c._aux = recording  # type: ignore[assignment]
        per_turn = {}
        try:
            for n in (100, 10_000):
                lst = history(n)
                c.count_context("flat-%d" % n, lst)
                handed.clear()
                for i in range(30):
                    lst = lst + [HumanMessage("and module %d?" % (i % 10))]
                    got = c.count_context("flat-%d" % n, lst)
                    assert got["tokens"] == c.should_compact(lst)["tokens"], (n, i)
                per_turn[n] = list(handed)
        finally:
            c._aux = real  # type: ignore[method-assign]
        assert len(per_turn[100]) == 30 and per_turn[10_000] == per_turn[100], per_turn
        assert max(per_turn[100]) < 600, "the new message alone, not the history: %s" % per_turn[100]


# ------------------------------------------------------------------ ahead of time
@pytest.mark.parametrize("resend", [False, True])
def test_compact_ahead_applies_in_the_background(wasm: str, tmp_path: Path, resend: bool) -> None:
    """Over the soft threshold a compaction starts in a thread and the call
    returns at once; turns go on while the summarizer works; the next call
    that finds it done applies it, the messages appended meanwhile after
    the clip-archive, untouched. The list sent back as returned, or resent
    whole."""
    with Summarizer(gated=True) as s, compactor(wasm, s, str(tmp_path / "a.db")) as c:
        lst: List[Any] = []
        everything: List[Any] = []
        i = 0
        started = None
        while started is None:
            assert i < 40
            lst = lst + turn(i)
            everything = everything + turn(i)
            r = c.compact_ahead("bg", everything if resend else lst, caller_owned=True)
            assert r["compaction"] is None and r["waited_ms"] == 0
            lst = r["history"]
            if r["started"]:
                assert r["prepare_limit"] < r["tokens"] <= r["limit"]
                started = r
            i += 1
        snapshot = len(lst)
        for _ in range(2):
            lst = lst + turn(i)
            everything = everything + turn(i)
            i += 1
            t0 = time.monotonic()
            r = c.compact_ahead("bg", everything if resend else lst, caller_owned=True)
            assert time.monotonic() - t0 < 1
            assert r["compaction"] is None and not r["started"] and r["tokens"] <= r["limit"]
            lst = r["history"]
        assert s.answered == 0
        s.release()
        r = until_applied(c, "bg", everything if resend else lst, caller_owned=True)
        assert not r["discarded"] and r["prepared"] and r["waited_ms"] == 0
        comp = r["compaction"]
        assert not comp["failed"] and comp["messages_compressed"] > 0
        assert is_clip(r["history"][0])
        tail = lst[snapshot:]
        assert r["history"][-len(tail):] == tail
        assert r["tokens"] < started["tokens"]
        # The removed messages are in recall storage.
        assert c.store.recall_count("bg") >= comp["messages_compressed"]
        nxt = r["history"] + turn(i)
        everything = everything + turn(i)
        assert c.compact_ahead("bg", everything if resend else nxt, caller_owned=True)["history"] == nxt


def test_compact_ahead_waits_only_at_the_limit(wasm: str) -> None:
    """Reaching the limit before the work is done, the call waits for the
    rest of it, which is then applied: one compaction's calls, made once."""
    with Summarizer(gated=True) as s, compactor(wasm, s) as c:
        lst: List[Any] = []
        started = False
        for i in range(60):
            lst = lst + turn(i)
            if started and c.count_context("probe", lst)["due"]:
                threading.Timer(0.3, s.release).start()
            r = c.compact_ahead("limit", lst, caller_owned=True)
            started = started or r["started"]
            if r["compaction"] is not None:
                break
            lst = r["history"]
        assert started and r["prepared"]
        assert 250 <= r["waited_ms"] < 10_000
        assert r["tokens"] <= r["limit"]
        assert s.calls == r["compaction"]["llm_calls"]


def test_compact_ahead_starts_earlier_when_the_history_grows_fast(wasm: str) -> None:
    """A history that grows fast starts its compaction before the soft
    threshold (over the limit minus twice the growth last seen); the same
    count reached in small steps starts none."""
    cfg = {"keep_recent": 2, "max_summary_tokens": 120, "model_max_tokens": 10000}
    with Summarizer() as s, compactor(wasm, s, config=cfg) as c:
        due = c.should_compact([])
        limit, prepare_limit = due["limit"], due["prepare_limit"]

        def count(lst: List[Any]) -> int:
            return int(c.should_compact(lst)["tokens"])

        def note(i: int, n: int) -> Dict[str, Any]:
            text, k = "", 0
            while len(text) < 4 * n:
                text += "note %d line %d: the retry budget of module %d stays at %d. " % (i, k, k % 7, 10 + k % 5)
                k += 1
            return {"role": "user", "content": text}

        def grow(lst: List[Any], step: int, to: int) -> List[Any]:
            lst = list(lst)
            while count(lst) < to:
                lst.append(note(len(lst), step))
            return lst

        goal = prepare_limit - limit // 20
        r = c.compact_ahead("fast", grow([], limit // 10, limit * 35 // 100), caller_owned=True)
        assert not r["started"]
        before = r["tokens"]
        r = c.compact_ahead("fast", grow(r["history"], limit // 50, goal), caller_owned=True)
        assert limit - 2 * (r["tokens"] - before) < r["tokens"] < prepare_limit
        assert r["started"], "a compaction starts before the soft threshold"

        slow: List[Any] = []
        while True:
            nxt = grow(slow, limit // 50, count(slow) + limit // 50)
            if count(nxt) >= r["tokens"]:
                break
            q = c.compact_ahead("slow", nxt, caller_owned=True)
            assert not q["started"], "at %d of %d tokens, growing by 2%%" % (q["tokens"], limit)
            slow = q["history"]


def test_pure_exports_answer_while_a_compaction_waits_in_the_background(wasm: str) -> None:
    """A compaction under way in the background, held by its summarizer,
    occupies one plug-in instance; should_compact, estimate_tokens,
    overhead_tokens and score answer meanwhile from another, at once."""
    with Summarizer(gated=True) as s, compactor(wasm, s) as c:
        lst: List[Any] = []
        for i in range(60):
            lst = lst + turn(i)
            r = c.compact_ahead("held", lst, caller_owned=True)
            lst = r["history"]
            if r["started"]:
                break
        assert r["started"]
        while s.calls == 0:  # the dry run is inside its summarizer call
            time.sleep(0.005)
        answers: Dict[str, Any] = {}

        def check() -> None:
            answers["due"] = c.should_compact(lst)
            answers["tokens"] = c.estimate_tokens(lst)
            answers["overhead"] = c.overhead_tokens(system="You are terse.", tools=[])
            answers["scores"] = c.score(lst[:4])

        t = threading.Thread(target=check)
        t.start()
        t.join(30)
        held = t.is_alive()
        s.release()
        t.join()
        assert not held, "a pure export waited for the compaction under way"
        assert s.calls >= 1 and answers["due"]["tokens"] > 0 and answers["tokens"] > 0
        assert answers["overhead"] > 0 and len(answers["scores"]) == 4
        c._ahead_state().wait(30)


def prepare(c: Compactor, s: Summarizer, conv: str, caller_owned: bool) -> List[Any]:
    lst: List[Any] = []
    for i in range(40):
        lst = lst + turn(i)
        r = c.compact_ahead(conv, lst if caller_owned else turn(i), caller_owned=caller_owned)
        if caller_owned:
            lst = r["history"]
        if r["started"]:
            s.release()
            while s.answered == 0:
                time.sleep(0.005)
            time.sleep(0.1)  # the dry run ends after the answer
            return lst
    raise AssertionError("never over the soft threshold")


def test_compact_ahead_drops_a_compaction_the_history_changed_under(wasm: str, tmp_path: Path) -> None:
    # A message it summarized, edited.
    with Summarizer(gated=True) as s, compactor(wasm, s) as c:
        lst = prepare(c, s, "edit", True)
        edited = list(lst)
        edited[2] = {"role": "tool", "tool_call_id": "call_0", "content": "notes: module 0 was dropped"}
        r = c.compact_ahead("edit", edited, caller_owned=True)
        assert r["discarded"] == "the history changed under it" and r["compaction"] is None
        assert r["history"] == edited
        assert c.store.list_blocks("archival", "compaction-batch-edit-") == []
        assert r["started"], "still over the soft threshold: prepared again on the history as it is"
    # Another compaction committed first (caller-owned).
    db = str(tmp_path / "won.db")
    with Summarizer(gated=True) as s, compactor(wasm, s, db) as c, Summarizer() as s2, compactor(wasm, s2, db) as other:
        lst = prepare(c, s, "won", True)
        res = other.compress("won", lst, caller_owned=True)
        assert not res["failed"]
        r = c.compact_ahead("won", lst, caller_owned=True)
        assert r["discarded"] == "another compaction committed first"
        assert len(c.store.list_blocks("archival", "compaction-batch-won-")) == res["batches_created"]
    # Store-owned: the store's commit answers conflict.
    db = str(tmp_path / "store.db")
    with Summarizer(gated=True) as s, compactor(wasm, s, db) as c, Summarizer() as s2, compactor(wasm, s2, db) as other:
        prepare(c, s, "so", False)
        before = [row[0] for row in c.store.active_rows("so")]
        res = other.compress("so")
        assert not res["failed"]
        r = c.compact_ahead("so")
        assert r["discarded"] and r["discarded"].startswith("the history changed under it")
        after = {row[0] for row in c.store.active_rows("so")}
        assert len(after) == len(res["history"])
        assert all(i in after or c.store.recalled_ids("so", [i]) for i in before), "nothing lost"


@pytest.mark.parametrize("caller_owned", [False, True])
def test_compact_ahead_keeps_what_was_appended(wasm: str, tmp_path: Path, caller_owned: bool) -> None:
    """The messages appended while the compaction was prepared stay after
    the clip-archive; the kept message the commit replaces (a tool result
    cleared to fit the target) is replaced in place, its original in
    recall storage; store-owned, the store holds what the call returned."""
    cfg = {"keep_recent": 6, "max_summary_tokens": 120, "model_max_tokens": 3000}
    with Summarizer(gated=True) as s, compactor(wasm, s, str(tmp_path / "k.db"), cfg) as c:
        lst: List[Any] = []
        appended: List[Any] = []
        started = False
        for i in range(40):
            nxt = turn(i) if started else big_turn(i)
            if started:
                appended += nxt
            lst = lst + nxt
            r = c.compact_ahead("kept", lst if caller_owned else nxt, caller_owned=caller_owned)
            lst = r["history"]
            if started:
                break
            started = r["started"]
        assert started
        s.release()
        r = until_applied(c, "kept", lst if caller_owned else None, caller_owned=caller_owned)
        assert not r["discarded"] and r["prepared"]
        assert r["compaction"]["tool_results_cleared"] > 0
        assert is_clip(r["history"][0])
        assert r["history"][-len(appended):] == appended
        if caller_owned:
            assert len(c.store.list_blocks("archival", "compaction-replaced-kept-")) == 1
        else:
            assert "replace_messages" in r["compaction"]["commit"]
            assert [json.loads(raw) for _, raw in c.store.active_rows("kept")] == r["history"]


def test_async_compactor_compacts_ahead_with_an_async_llm(wasm: str) -> None:
    """AsyncCompactor: the check runs in its worker, the compaction under way
    in a thread of its own, an async LLM awaited on the loop; later turns
    never queue behind it."""
    answered = []

    async def llm(request: Dict[str, Any]) -> Dict[str, Any]:
        await asyncio.sleep(0.5)
        answered.append(1)
        return {"content": [{"type": "text", "text": "We agreed the retry budgets of the modules."}]}

    async def main() -> None:
        async with AsyncCompactor(wasm, llm=llm, config=CONFIG) as c:
            lst: List[Any] = []
            started = 0
            waits = []
            for i in range(30):
                lst = lst + turn(i)
                t0 = time.monotonic()
                r = await c.compact_ahead("async", lst, caller_owned=True)
                waits.append(time.monotonic() - t0)
                lst = r["history"]
                started += r["started"]
                if r["compaction"] is not None:
                    assert r["prepared"] and not r["compaction"]["failed"]
                    assert is_clip(lst[0])
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("no compaction applied")
            assert started == 1 and answered
            assert max(waits) < 0.4, waits  # nobody waited for the 0.5 s summarizer
            counted = await c.count_context("async-k", lst)
            assert counted["tokens"] == (await c.should_compact(lst))["tokens"]

    asyncio.run(main())


def test_compact_ahead_from_threads(wasm: str, tmp_path: Path) -> None:
    """Threads, one conversation each, on one Compactor: every one gets its
    compactions applied, none lost."""
    with Summarizer(latency=0.05) as s, compactor(wasm, s, str(tmp_path / "t.db")) as c:
        errors: List[BaseException] = []
        applied: Dict[str, int] = {}

        def agent(conv: str) -> None:
            try:
                lst: List[Any] = []
                for i in range(40):
                    lst = lst + turn(i)
                    r = c.compact_ahead(conv, lst, caller_owned=True)
                    lst = r["history"]
                    if r["compaction"] is not None and not r["compaction"]["failed"]:
                        applied[conv] = applied.get(conv, 0) + 1
                    assert r["tokens"] <= r["limit"]
                    time.sleep(0.02)
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=agent, args=("t%d" % k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert sorted(applied) == ["t0", "t1", "t2"] and all(n >= 1 for n in applied.values())


def test_a_model_summarizing_gets_chunks_of_what_one_request_holds(wasm: str) -> None:
    """With a model summarizing, compress sizes chunks to what one request
    holds (max_chunk_tokens "auto") unless chunk_size is set: the bundled
    884-message session is one call, not 44."""
    msgs = session("debugging-session.json")
    conv = msgs[0]["conversation_id"]
    with Summarizer() as s, Compactor(wasm, llm=OpenAICompatible(s.url, api_key="k", model="m")) as c:
        r = c.compress(conv, msgs)
        assert not r["failed"] and r["messages_compressed"] == len(msgs) - 6
        assert r["llm_calls"] == 1 and s.calls == 1
    with Summarizer() as s, Compactor(wasm, llm=OpenAICompatible(s.url, api_key="k", model="m"),
                                      config={"chunk_size": 20}) as c:
        r = c.compress(conv, msgs)
        assert not r["failed"] and r["llm_calls"] > 40


# ------------------------------------------------------------------ kill -9
CHILD = textwrap.dedent("""
    import json, sys, time
    from clipfold import Compactor, OpenAICompatible
    db, url, caller_owned = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    turns = json.loads(sys.stdin.read())
    c = Compactor(llm=OpenAICompatible(url, api_key="k", model="m"), store=db, config=%s)
    lst = []
    for t in turns:
        lst = lst + t
        r = c.compact_ahead("chaos", lst if caller_owned else t, caller_owned=caller_owned)
        if caller_owned:
            lst = r["history"]
        if r["started"]:
            print("started", flush=True)
        time.sleep(0.01)
    print("done", flush=True)
""" % json.dumps(CONFIG))


@pytest.mark.parametrize("caller_owned", [False, True])
def test_killed_with_a_compaction_under_way_loses_nothing(wasm: str, tmp_path: Path, caller_owned: bool) -> None:
    """A process killed (SIGKILL) while a compaction prepared in the
    background waits for its summarizer, or just after, changes nothing of
    the store but what it had committed: the file is intact, every message
    stored is active or in recall storage (never both), and a new process
    compacts on."""
    db = str(tmp_path / "chaos.db")
    env = dict(os.environ, CLIPFOLD_WASM=wasm)
    rng = random.Random(3)
    sent: List[Any] = []
    with Summarizer(latency=0.4) as s:
        for round_ in range(3):
            turns = [turn(i) for i in range(20 * round_, 20 * round_ + 20)]
            sent += [m for t in turns for m in t]
            p = subprocess.Popen([sys.executable, "-c", CHILD, db, s.url, "1" if caller_owned else "0"], env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write(json.dumps(turns))
            p.stdin.close()
            line = p.stdout.readline().strip()
            assert line == "started", line
            time.sleep(rng.uniform(0.0, 0.6))  # while the summarizer works, or as it answers
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            db_ = sqlite3.connect(db)
            assert db_.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            active = [r[0] for r in db_.execute("SELECT id FROM messages WHERE conversation_id = 'chaos'")]
            recalled = [r[0] for r in db_.execute("SELECT id FROM recall WHERE conversation_id = 'chaos'")]
            db_.close()
            assert not set(active) & set(recalled), "a message both active and recalled"
            if not caller_owned:
                # Each process appends its turns in order until it is
                # killed: of every round's messages, those stored are a
                # prefix (a killed process never handed over the rest).
                with Compactor(wasm) as c:
                    ids = [m["id"] for m in c.decode_history("chaos", sent)["messages"]]
                stored = set(active) | set(recalled)
                for r_ in range(round_ + 1):
                    mine = ids[80 * r_:80 * r_ + 80]
                    appended = [i for i in mine if i in stored]
                    assert appended == mine[:len(appended)], "round %d: the stored messages are a prefix of " \
                                                             "what was sent" % r_
                    assert len(appended) >= 4, "round %d: the call that started a compaction stored its turn" % r_
    # A new process completes a compaction on the same file.
    with Summarizer() as s, compactor(wasm, s, db) as c:
        lst = sent + [m for i in range(60, 80) for m in turn(i)]
        r = c.compress("chaos", lst, caller_owned=caller_owned)
        assert not r["failed"], r["failure_message"]
