"""compress end to end through the plug-in, with the SQLite store, and the
fault-injection matrix of docs/spec.md#nothing-is-lost."""

import glob
import json
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import clipfold
from clipfold import Compactor, SQLiteStore

from conftest import REPO, require_export

CONFIG = {"chunk_size": 10, "keep_recent": 5, "backoff_base_ms": 1, "compaction_max_retries": 1}


def build_conversation(n: int = 30) -> List[Dict[str, Any]]:
    """A conversation with decisions, questions, a tool call and its result,
    and non-ASCII text, in plain OpenAI style plus ids and times."""
    msgs: List[Dict[str, Any]] = [{"id": "sys", "role": "system", "content": "You are a careful coding agent.",
                                   "created_at": "2026-02-28T09:59:00.000Z"}]
    for i in range(n):
        t = "2026-02-28T10:%02d:%02d.000Z" % (i // 60, i % 60)
        if i == 7:
            msgs.append({"id": "m%d" % i, "role": "assistant", "content": None, "created_at": t, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"main.go\"}"}}]})
        elif i == 8:
            msgs.append({"id": "m%d" % i, "role": "tool", "tool_call_id": "call_1", "created_at": t,
                         "content": "package main\nfunc main() { panic(\"boom\") }"})
        elif i % 2 == 0:
            msgs.append({"id": "m%d" % i, "role": "user", "created_at": t, "x_unknown": {"kept": [1, 2.50, "é"]},
                         "content": "Step %d: can you fix the parser bug in parser_%d.go? It must stay under 2 ms — «très» important." % (i, i)})
        else:
            msgs.append({"id": "m%d" % i, "role": "assistant", "created_at": t,
                         "content": "We decided to rewrite tokenizer step %d; the error came from an off-by-one in line %d. " % (i, 40 + i) * 2})
    return msgs


def bundled_conversations() -> List[List[Dict[str, Any]]]:
    out = []
    for f in sorted(glob.glob(str(REPO / "testdata" / "conversations" / "*.json"))):
        if f.endswith(".facts.json"):
            continue
        doc = json.load(open(f, encoding="utf-8"))
        msgs = doc if isinstance(doc, list) else doc.get("messages") or doc.get("history")
        if isinstance(msgs, list) and len(msgs) > 10 and all(isinstance(m, dict) and "role" in m for m in msgs):
            out.append(msgs)
    return out


def test_bundled_conversations_are_there() -> None:
    """They are committed under testdata/conversations: none found is a
    failure (an empty parametrization would only skip)."""
    assert len(bundled_conversations()) >= 3, "expected the bundled conversations in %s" % (
        REPO / "testdata" / "conversations")


@pytest.fixture
def compactor(wasm: str) -> Iterator[Compactor]:
    with Compactor(wasm, store=SQLiteStore(), config=CONFIG) as c:
        require_export(c, "compress")
        yield c


def summarizer(calls: List[Dict[str, Any]]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    def llm(req: Dict[str, Any]) -> Dict[str, Any]:
        calls.append(req)
        return {"content": [{"type": "text", "text": "Summary %d: parser bug fixed, tokenizer rewritten." % len(calls)}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 8}}
    return llm


@pytest.mark.parametrize("conv_index", range(len(bundled_conversations())))
def test_compress_end_to_end(compactor: Compactor, conv_index: int) -> None:
    calls: List[Dict[str, Any]] = []
    compactor.llm = summarizer(calls)
    history = bundled_conversations()[conv_index]
    conv = str(history[0].get("conversation_id") or "c1")
    r = compactor.compress(conv, history)
    assert r["failed"] is False, r
    assert r["messages_compressed"] > 0 and r["batches_created"] >= 1
    assert r["tokens_estimate_after"] < r["tokens_estimate_before"]
    assert r["llm_calls"] == len(calls) >= 1
    for req in calls:
        assert 0 < req["timeout_ms"] <= 120000
    out = r["history"]
    assert len(out) < len(history)
    # The clip-archive: a system message, or a user turn when the kept
    # messages start with an assistant turn or a tool result.
    assert out[0]["content"].startswith("[Context Summary")
    after = next((m["role"] for m in out[1:] if m["role"] != "system"), "user")
    assert out[0]["role"] == ("system" if after == "user" else "user"), out[:3]
    # kept messages come back as they were sent (unknown fields included)
    sent = {m["id"]: m for m in history}
    for m in out[1:]:
        assert m == sent[m["id"]]
    # the database agrees with the result
    store = compactor.store
    active = store.active_messages(conv)
    assert [m["id"] for m in active] == [m["id"] for m in out]
    assert active[0]["content"] == out[0]["content"]
    kept = {m["id"] for m in out}
    removed = [m["id"] for m in history if m["id"] not in kept]
    assert len(removed) == r["messages_compressed"]
    for mid in removed:
        assert store.recall(mid) == sent[mid]  # moved, not destroyed
    blocks = store.list_blocks("archival", "compaction-batch-%s-" % conv)
    assert len(blocks) == len(r["batches"])
    covered = set()
    for b in blocks:
        meta = json.loads(b["content"].split("\n", 1)[0])
        assert meta["conversation_id"] == conv and meta["operation_id"] == r["operation_id"]
        covered.update(meta["source_message_ids"])
    assert set(removed) <= covered
    assert store.search("tokenizer rewritten", conversation_id=conv)


def test_compress_twice_replaces_the_clip_archive(compactor: Compactor) -> None:
    compactor.llm = summarizer([])
    history = build_conversation(30)
    r1 = compactor.compress("c1", history)
    assert not r1["failed"]
    more = r1["history"] + [{"id": "n%d" % i, "role": "user", "created_at": "2026-02-28T11:00:%02d.000Z" % i,
                             "content": "Another requirement %d: never break the public API. " % i * 3} for i in range(20)]
    r2 = compactor.compress("c1", more)
    assert not r2["failed"], r2
    hist = r2["history"]
    assert sum(1 for m in hist if str(m.get("content", "")).startswith("[Context Summary")) == 1
    assert r1["history"][0]["id"] not in [m["id"] for m in hist]
    assert [m["id"] for m in compactor.store.active_messages("c1")] == [m["id"] for m in hist]


def test_compress_from_the_store_and_dry_run(compactor: Compactor) -> None:
    compactor.llm = summarizer([])
    compactor.store.append_messages("c2", build_conversation(20))
    before = compactor.store.dump()
    r = compactor.compress("c2", None, dry_run=True)
    assert not r["failed"] and "commit" in r
    assert r["commit"]["conversation_id"] == "c2"
    assert compactor.store.dump() == before
    r = compactor.compress("c2")
    assert not r["failed"]
    assert compactor.store.dump() != before


def test_nothing_to_compress_is_not_a_failure(compactor: Compactor) -> None:
    def no_call(req: Any) -> Any:
        raise AssertionError("no host call expected")
    compactor.llm = no_call
    r = compactor.compress("c3", [{"role": "user", "content": "hi"}])
    assert r["failed"] is False and r["messages_compressed"] == 0


def test_invalid_input_raises(compactor: Compactor) -> None:
    with pytest.raises(clipfold.ClipfoldError) as e:
        compactor.compress("c1", [{"id": "a", "role": "robot", "content": "x", "created_at": "2026-02-28T10:00:00.000Z"}])
    assert e.value.code == "invalid_input" and e.value.field == "history[0].role"


# ---------------------------------------------------------------- fault injection
ERR = {
    "auth": {"error": {"code": "auth", "message": "bad key", "retryable": False}},
    "timeout": {"error": {"code": "timeout", "message": "slow", "retryable": True}},
    "unavailable": {"error": {"code": "unavailable", "message": "store down", "retryable": False}},
    "conflict": {"error": {"code": "conflict", "message": "another compaction won", "retryable": False}},
}


def run_with_fault(compactor: Compactor, fail: Callable[[str, int], Optional[Any]]) -> Dict[str, Any]:
    """Runs compress with handlers that ask fail(name, n) before each host
    call (n counts that function's calls from 0); a non-None answer is
    returned instead of the real one (an exception is raised as is)."""
    history = build_conversation(30)
    compactor.store.append_messages("c1", history)
    raw_history = "[" + ",".join(compactor.store.active_raw("c1")) + "]"
    data = ('{"conversation_id":"c1","history":%s,"config":%s}' % (raw_history, json.dumps(CONFIG))).encode()
    before = compactor.store.dump()
    counts: Dict[str, int] = {}
    real = compactor.host_handlers()

    def wrap(name: str) -> Callable[[bytes], bytes]:
        def h(b: bytes) -> bytes:
            n = counts.get(name, 0)
            counts[name] = n + 1
            out = fail(name, n)
            if out is not None:
                return json.dumps(out).encode()
            return real[name](b)
        return h

    out = compactor.call("compress", data, handlers={k: wrap(k) for k in real})
    text = out.decode("utf-8")
    result = json.loads(text)
    # The result starts with the history (api/compress.go appendResult).
    result["_raw_history_identical"] = text.startswith('{"history":' + raw_history + ',')
    result["_db_unchanged"] = compactor.store.dump() == before
    result["_counts"] = counts
    return result


def test_no_fault_baseline(compactor: Compactor) -> None:
    compactor.llm = summarizer([])
    r = run_with_fault(compactor, lambda name, n: None)
    assert r["failed"] is False
    assert r["_counts"] == {"llm_complete": 3, "memory_list": 1, "compaction_commit": 1}
    assert not r["_db_unchanged"]


MATRIX = [
    ("llm_complete", 0, ERR["auth"], "llm_failed"),
    ("llm_complete", 1, ERR["auth"], "llm_failed"),
    ("llm_complete", 2, ERR["auth"], "llm_failed"),
    ("llm_complete", 0, "raise", "llm_failed"),
    ("llm_complete", 0, {"content": [{"type": "text", "text": ""}]}, "invalid_summary"),
    ("memory_list", 0, ERR["unavailable"], "host_error"),
    ("memory_list", 0, "raise", "host_error"),
    ("compaction_commit", 0, ERR["conflict"], "commit_conflict"),
    ("compaction_commit", 0, ERR["unavailable"], "host_error"),
    ("compaction_commit", 0, "raise", "host_error"),
]


@pytest.mark.parametrize("name,nth,answer,code", MATRIX,
                         ids=["%s#%d-%s" % (n, i, a if isinstance(a, str) else (a.get("error") or {}).get("code", "empty"))
                              for n, i, a, _ in MATRIX])
def test_fault(compactor: Compactor, name: str, nth: int, answer: Any, code: str) -> None:
    compactor.llm = summarizer([])
    persistent = answer == ERR["auth"] or isinstance(answer, dict) and "content" in answer

    def fail(fn: str, n: int) -> Optional[Any]:
        if fn != name or (n != nth and not (persistent and n > nth)):
            return None
        if answer == "raise":
            raise RuntimeError("injected failure")
        return answer

    r = run_with_fault(compactor, fail)
    assert r["failed"] is True, r
    assert r["failure_code"] == code, r
    assert r["_raw_history_identical"], "history must come back byte for byte"
    assert r["_db_unchanged"], "the store must be untouched"
    assert r["consecutive_failures"] == (0 if code == "commit_conflict" else 1), "a lost race does not count"


def test_llm_timeout_is_retried_then_fails(compactor: Compactor) -> None:
    compactor.llm = summarizer([])
    r = run_with_fault(compactor, lambda fn, n: ERR["timeout"] if fn == "llm_complete" else None)
    assert r["failed"] and r["failure_code"] == "llm_timeout"
    assert r["_counts"]["llm_complete"] >= 2  # retried
    assert r["_raw_history_identical"] and r["_db_unchanged"]


def test_real_conflict_between_two_compactors(wasm: str, tmp_path: Any) -> None:
    db = str(tmp_path / "shared.db")
    history = build_conversation(30)
    with Compactor(wasm, store=db, llm=summarizer([]), config=CONFIG) as a, \
            Compactor(wasm, store=db, llm=summarizer([]), config=CONFIG) as b:
        require_export(a, "compress")
        a.store.append_messages("c1", history)
        # b prepares its compaction on the same history, then a wins first
        plan = b.compress("c1", history, dry_run=True)
        assert not plan["failed"]
        assert not a.compress("c1", history)["failed"]
        snapshot = b.store.dump()
        commit = plan["commit"]
        assert b.store.host_compaction_commit(commit)["error"]["code"] == "conflict"
        assert b.store.dump() == snapshot
        # A race inside compress: while b waits for its LLM, a compacts the
        # same (store-owned) history and wins; b's commit conflicts and
        # changes nothing.
        more = [dict(m, id="n" + m["id"]) for m in build_conversation(30)[1:]]
        a.store.append_messages("c1", more)
        after_a: List[str] = []
        inner = summarizer([])

        def racing(req: Dict[str, Any]) -> Dict[str, Any]:
            if not after_a:
                assert not a.compress("c1")["failed"]
                after_a.append(a.store.dump())
            return inner(req)
        b.llm = racing
        r = b.compress("c1")
        assert r["failed"] and r["failure_code"] == "commit_conflict", r
        assert b.store.dump() == after_a[0]


def test_breaker_opens_after_consecutive_failures(compactor: Compactor) -> None:
    compactor.llm = lambda req: ERR["auth"]
    history = build_conversation(30)
    codes = [compactor.compress("c9", history)["failure_code"] for _ in range(4)]
    assert codes == ["llm_failed"] * 3 + ["breaker_open"]


def test_extractive_default_through_the_plugin(wasm: str) -> None:
    """Offline by default: compress summarizes inside the plug-in
    (summarizer "extractive"), so batches are "extractive" with dated lines
    and llm_complete is never called."""
    with Compactor(wasm, config=CONFIG) as c:
        require_export(c, "compress")
        assert isinstance(c.llm, clipfold.Extractive)
        assert c.llm.uses_plugin
        calls: List[str] = []
        handlers = c.host_handlers()
        inner = handlers["llm_complete"]

        def counting(data: bytes) -> bytes:
            calls.append("llm_complete")
            return inner(data)

        handlers["llm_complete"] = counting
        c.host_handlers = lambda: handlers  # type: ignore[method-assign]
        history = build_conversation(30)
        for m in history[1:]:
            if m["role"] != "tool" and m["content"]:
                m["content"] += " Here is the full log output again for reference: " + "lorem ipsum dolor sit amet " * 30
        r = c.compress("c1", history)
        assert not r["failed"], r
        assert calls == [] and r["llm_calls"] == 0
        assert r["tokens_estimate_after"] < r["tokens_estimate_before"] / 2
        assert "parser" in r["history"][0]["content"] or "tokenizer" in r["history"][0]["content"]
        assert r["batches"]
        for b in r["batches"]:
            assert b["method"] == "extractive"
            for line in b["content"].split("\n"):
                assert line.startswith("[2026-02-28] "), line
        # A call may still choose the LLM path: Extractive answers it
        # through the plug-in's extractiveSummary export.
        other = [dict(m, id="c2-" + m["id"]) for m in build_conversation(30)]
        r2 = c.compress("c2", other, config={"summarizer": "llm"})
        assert not r2["failed"], (r2["failure_code"], r2["failure_message"])
        assert r2["llm_calls"] > 0 and all(b["method"] == "llm" for b in r2["batches"])


def test_extractive_adapter_is_the_export(wasm: str) -> None:
    req = {"system": "s", "max_tokens": 100, "messages": [
        {"role": "user", "content": "Hi there! How have you been?"},
        {"role": "user", "content": "The build fails with error E42 in main.go; we must fix it before Friday."},
        {"role": "user", "content": "Summarize the conversation above."}]}
    with Compactor(wasm) as c:
        assert c.llm.complete(req) == json.loads(c.call("extractiveSummary", req))
        assert "E42" in c.llm.complete(req)["content"][0]["text"]
    unattached = clipfold.Extractive()
    assert unattached.complete(req)["error"]["code"] == "unavailable"
    assert not hasattr(clipfold, "extractive_summary"), "no second implementation of the summarizer"


def test_explicit_llm_keeps_the_llm_summarizer(wasm: str) -> None:
    seen: List[Any] = []

    def llm(req: Any) -> Dict[str, Any]:
        seen.append(req)
        return {"content": [{"type": "text", "text": "summary text"}]}

    with Compactor(wasm, llm=llm, config=CONFIG) as c:
        r = c.compress("c1", build_conversation(30))
        assert not r["failed"], r
        assert len(seen) == r["llm_calls"] > 0
        assert all(b["method"] == "llm" for b in r["batches"])


def test_compact_if_due_compacts_to_the_target(wasm: str) -> None:
    with Compactor(wasm, config=CONFIG) as c:
        history = build_conversation(120)
        tokens = c.should_compact(history)["tokens"]
        assert c.compact_if_due("c1", history, config={"model_max_tokens": tokens * 2}) is None
        cfg = {"model_max_tokens": int(tokens * 0.75)}
        limit = c.should_compact(history, cfg)["limit"]
        r = c.compact_if_due("c1", history, config=cfg)
        assert r is not None and not r["failed"], r
        target = int(limit * 0.8)  # the default share
        assert target // 2 < r["tokens_estimate_after"] <= target, (r["tokens_estimate_after"], target)
        kept = [m["id"] for m in r["history"][1:] if m["id"] != "sys"]
        assert kept == [m["id"] for m in history[len(history) - len(kept):]], "the newest, contiguous"
        assert len(kept) > CONFIG["keep_recent"]
        assert all(b["method"] == "extractive" for b in r["batches"])
        # The store's history (history=None) works the same, and
        # target_share=0 compacts to keep_recent (a window too small for
        # the clip-archive and keep_recent would fail with over_window).
        r2 = c.compact_if_due("c1", None, config={"model_max_tokens": r["tokens_estimate_after"]}, target_share=0)
        assert r2 is not None and not r2["failed"], r2
        assert len(r2["history"]) <= CONFIG["keep_recent"] + 3
        with pytest.raises(clipfold.ClipfoldError, match="target_share: must be a number in"):
            c.compact_if_due("c1", history, target_share=1.5)
