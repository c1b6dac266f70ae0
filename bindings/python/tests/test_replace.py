"""After a compaction the history fits
(docs/spec.md#counting-tokens-and-the-window): tool results cleared (``clear_tool_results``, and the window
guarantee), a message larger than the window middle-truncated, pinned
overflow refused with over_window — through the real plug-in and SQLite.
The Python store applies a commit's ``replace_messages`` as the Go stores
do (hostfuncs/store/SCHEMA.md, "The commit"): the original to recall, the
replacement in its place; caller-owned lists get the replacements back in
their view every turn, with no duplicate recall row."""

import json
from typing import Any, Dict, List

import pytest

from clipfold import Compactor, SQLiteStore
from clipfold.store import ConflictError, DuplicateIDError, StoreError, raw_json

from test_owner import anthropic_turn, calls_and_results, framework_turn, responses_turn, tool_pairs_intact

CLEARED = '[tool result cleared: read_log; full output in recall storage as "t1" (memory_read)]'


def log_output(i: int) -> str:
    return " ".join("2026-03-0%d 10:%02d:%02d worker-%d shard=%d retry=%d status=degraded latency_ms=%d"
                    % (1 + i % 9, j % 60, (i * j) % 60, i, j, j % 5, 100 + 7 * j) for j in range(40))


def tool_turn(i: int) -> List[Dict[str, Any]]:
    """A turn of an agent reading logs: OpenAI Chat dicts without ids, a
    long tool output."""
    return [
        {"role": "user", "content": "Turn %d: what does shard %d say?" % (i, i)},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_%d" % i, "type": "function", "function": {
            "name": "read_logs" if i % 2 == 0 else "grep_logs", "arguments": json.dumps({"shard": i})}}]},
        {"role": "tool", "tool_call_id": "call_%d" % i, "content": log_output(i)},
        {"role": "assistant", "content": "Shard %d is degraded; retries climb." % i},
    ]


def store_messages(conv: str) -> List[Dict[str, Any]]:
    return [{"id": "u1", "role": "user", "content": "read the deployment log please"},
            {"id": "a1", "role": "assistant", "content": "reading it"},
            {"id": "t1", "role": "tool", "content": "the deployment log: kestrel-cluster rollout stalled at 73 percent"},
            {"id": "u2", "role": "user", "content": "thanks"}]


@pytest.mark.parametrize("new_id", ["t1", "d_t1cleared"])
def test_store_replaces_in_place(new_id: str) -> None:
    s = SQLiteStore()
    s.append_messages("c1", store_messages("c1"))
    msg: Dict[str, Any] = {"role": "tool", "content": CLEARED}
    if new_id == "t1":
        msg = {"id": "t1", **msg}
    s.commit({"conversation_id": "c1", "operation_id": "op1", "insert_message": None,
              "replace_messages": [{"id": "t1", "new_id": new_id, "role": "tool", "content": CLEARED, "message": msg}],
              "search_text": {"t1": "the deployment log: kestrel-cluster rollout stalled at 73 percent"}})
    rows = s.active_rows("c1")
    assert [r[0] for r in rows] == ["u1", "a1", new_id, "u2"], "the replacement takes the original's place"
    assert json.loads(rows[2][1]) == msg
    assert s.recall("t1", "c1")["content"] == "the deployment log: kestrel-cluster rollout stalled at 73 percent"
    hits = s.search_fts5('"kestrel" OR "stalled"', "c1")
    assert any(h["id"] == "t1" and "kestrel" in h["text"] for h in hits), hits
    # Both ids are held: the list sent again appends nothing.
    assert s.append_new("c1", [store_messages("c1")[2]]) == []
    assert s.append_new("c1", [{"id": new_id, "role": "tool", "content": CLEARED}]) == []
    # A later compaction removes the replacement: the original stays.
    s.commit({"conversation_id": "c1", "operation_id": "op2", "remove_message_ids": ["u1", "a1", new_id],
              "insert_message": {"id": "ca1", "role": "system", "content": "[Context Summary — 3 messages]"},
              "search_text": {new_id: ""}})
    assert [r[0] for r in s.active_rows("c1")] == ["ca1", "u2"]
    assert s.recall("t1", "c1")["content"].startswith("the deployment log"), "the original, not its replacement"


def test_store_replace_refusals() -> None:
    s = SQLiteStore()
    s.append_messages("c1", store_messages("c1"))
    s.commit({"conversation_id": "c1", "operation_id": "op0", "remove_message_ids": ["u1"],
              "insert_message": {"id": "ca0", "role": "system", "content": "[Context Summary]"}})

    def rep(**kw: Any) -> Dict[str, Any]:
        r = {"id": "t1", "new_id": "t1", "role": "tool", "content": CLEARED, "message": {"role": "tool", "content": CLEARED}}
        r.update(kw)
        return r

    cases = [
        ({"replace_messages": [rep(id="u1")]}, ConflictError, "u1"),
        ({"replace_messages": [rep(new_id="u2")]}, DuplicateIDError, "u2"),
        ({"replace_messages": [rep()], "history_owner": "caller"}, StoreError, "replace_messages: must be empty"),
        ({"replace_messages": [rep(message="x")]}, StoreError, "message"),
        ({"replace_messages": [rep()], "remove_message_ids": ["t1"]}, StoreError, "removed or replaced twice"),
    ]
    for extra, err, word in cases:
        before = s.dump()
        c: Dict[str, Any] = {"conversation_id": "c1", "operation_id": "op1", "insert_message": None}
        c.update(extra)
        with pytest.raises(err) as e:
            s.commit(c)  # type: ignore[arg-type]
        assert word in str(e.value)
        assert s.dump() == before, "nothing changed"


def test_clearing_alone_calls_no_llm(wasm: str) -> None:
    """clear_tool_results: clearing the older tool results is enough, so
    nothing is summarized and no LLM is called; the originals are in recall,
    the placeholders name them, the pairs stay."""
    turns = [m for i in range(8) for m in tool_turn(i)]
    with Compactor(wasm, store=SQLiteStore()) as c:
        full = c.estimate_tokens(turns)
        cfg = {"clear_tool_results": 2, "model_max_tokens": full * 10 // 8 * 6 // 10}
        r = c.compress("logs", turns, config=cfg)
        assert not r["failed"], r["failure_message"]
        assert r["llm_calls"] == 0 and r["messages_compressed"] == 0 and r["clip_archive"] is None
        assert r["tool_results_cleared"] == 6
        assert r["tokens_estimate_after"] <= cfg["model_max_tokens"] * 0.8
        tool_pairs_intact(r["history"])
        ids = c.decode_history("logs", turns)["messages"]
        for d, m, got in zip(ids, turns, r["history"]):
            if got == m:
                continue
            assert got["content"].startswith("[tool result cleared: ")
            assert ('"%s"' % d["id"]) in got["content"]
            assert c.store.recall(d["id"], "logs") == m, "the original is in recall"
        # The store's active history is what was returned.
        assert [json.loads(raw) for _, raw in c.store.active_rows("logs")] == r["history"]

        # Just over the limit: clearing the grep_logs results is enough.
        excl = c.compress("logs2", turns, config=dict(cfg, clear_exclude_tools=["read_logs"],
                                                    model_max_tokens=full * 10 // 8 - 40))
        assert not excl["failed"], excl["failure_message"]
        assert excl["tool_results_cleared"] == 3 and excl["llm_calls"] == 0
        contents = [str(m.get("content") or "") for m in excl["history"]]
        assert any(t.startswith("[tool result cleared: grep_logs") for t in contents)
        assert not any(t.startswith("[tool result cleared: read_logs") for t in contents), \
            "clear_exclude_tools are never cleared"


@pytest.mark.parametrize("caller_owned,replace", [(False, True), (False, False), (True, True), (True, False)],
                         ids=["store-owned, list replaced", "store-owned, whole list every turn",
                              "caller-owned, list replaced", "caller-owned, whole list every turn"])
def test_framework_patterns_with_clearing(wasm: str, caller_owned: bool, replace: bool) -> None:
    """The ways frameworks keep their lists (no ids), with tool results
    cleared turn after turn: no duplicate, pairs intact, every history
    within the window, nothing lost, each original in recall once."""
    cfg = {"keep_recent": 8, "chunk_size": 8, "model_max_tokens": 5000, "clear_tool_results": 2}
    with Compactor(wasm, store=SQLiteStore(), config=cfg) as c:
        lst: List[Dict[str, Any]] = []
        everything: List[Dict[str, Any]] = []
        cleared = 0
        last: Any = None
        for turn in range(16):
            lst = lst + tool_turn(turn)
            everything += tool_turn(turn)
            r = c.compress("fw", lst, caller_owned=caller_owned, only_if_due=True)
            assert not r["failed"], (turn, r["failure_code"], r["failure_message"])
            tool_pairs_intact(r["history"])
            assert r["tokens_estimate_after"] <= 4000
            cleared += r["tool_results_cleared"]
            if caller_owned and not replace:
                before = c.store.dump()
                again = c.compress("fw", lst, caller_owned=True, only_if_due=True)
                assert again["history"] == r["history"], "the view re-renders the replacements"
                assert again["messages_compressed"] == 0 and again["tool_results_cleared"] == 0
                assert c.store.dump() == before, "the same list writes nothing"
            if replace:
                lst = r["history"]
            last = r
        assert cleared > 0
        decoded = c.decode_history("fw", everything)["messages"]
        returned = {raw_json(m) for m in last["history"]}
        removed = 0
        for d, m in zip(decoded, everything):
            if raw_json(m) in returned:
                continue
            removed += 1
            assert c.store.recall(d["id"], "fw") == m, "lost: %s" % m
        originals = c.store.connection.execute(
            "SELECT COUNT(*) FROM recall WHERE conversation_id = 'fw' AND role <> 'system' "
            "AND content NOT LIKE '%in recall storage as%'").fetchone()[0]
        assert originals == removed, "each original is in recall once"


@pytest.mark.parametrize("shape", ["chat", "anthropic", "responses"])
def test_recent_tail_three_times_target(wasm: str, shape: str) -> None:
    """A tool-heavy history whose recent tail alone is three times the
    target compacts under it, pairs intact in the shape's own form."""
    def turn(i: int) -> List[Dict[str, Any]]:
        chat = tool_turn(i)
        if shape == "chat":
            return chat
        t = anthropic_turn(i) if shape == "anthropic" else responses_turn(i)
        if shape == "anthropic":
            t[2]["content"][0]["content"] = chat[2]["content"]
        else:
            t[2]["output"] = chat[2]["content"]
        return t
    msgs = [m for i in range(10) for m in turn(i)]
    with Compactor(wasm) as c:
        tail = c.estimate_tokens(msgs[-12:])
        target = tail // 3
        r = c.compress("tail-" + shape, msgs, caller_owned=True, config={"keep_recent": 12, "target_tokens": target})
        assert not r["failed"], r["failure_message"]
        assert r["tokens_estimate_after"] <= target
        assert r["tool_results_cleared"] > 0
        if shape == "chat":
            tool_pairs_intact(r["history"])
        else:
            calls, results = calls_and_results(shape, r["history"])
            assert results <= calls, "a tool result without its call"
        assert r["history"][-1] == msgs[-1], "the newest message is kept whole"


def test_truncates_huge_message_and_refuses_pinned_overflow(wasm: str) -> None:
    msgs = [m for i in range(3) for m in tool_turn(i)]
    huge = {"id": "paste", "role": "user", "content": "Here is the whole dump: " + log_output(9) * 40}
    with Compactor(wasm, store=SQLiteStore()) as c:
        r = c.compress("huge", msgs + [huge], config={"target_tokens": 3000})
        assert not r["failed"], r["failure_message"]
        assert r["messages_truncated"] == 1 and r["tokens_estimate_after"] <= 3000
        last = r["history"][-1]
        assert 'characters omitted; the full text is in recall storage as "paste"' in last["content"]
        assert last["content"].startswith("Here is the whole dump: ")
        assert c.store.recall("paste", "huge") == huge

        pinned = [{"role": "system", "content": "Rules: " + log_output(1) * 20}] + msgs
        r = c.compress("pinned", pinned, config={"target_tokens": 2000})
        assert r["failed"] and r["failure_code"] == "over_window"
        assert "pinned messages" in r["failure_message"]
        assert r["history"] == pinned
        assert c.store.recall_count("pinned") == 0, "nothing moved"
        assert [json.loads(raw) for _, raw in c.store.active_rows("pinned")] == pinned, "nothing changed"
