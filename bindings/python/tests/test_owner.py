"""Who owns the history (docs/spec.md#who-owns-the-history): frameworks keep their messages (no ids,
no times) and either replace their list with the compacted one or send all
of it every turn. Both work, store-owned or caller-owned, with no
duplicate, no no_gain and no commit_conflict — as the Go host's
TestCompressFrameworkPatterns, through the Python host."""

import json
from typing import Any, Dict, List

import pytest

from clipfold import Compactor, SQLiteStore
from clipfold.store import raw_json

from conftest import require_export

# The seeds' token arithmetic (chars4): these tests are about who owns the
# list. Counted conservatively, the clip-archive's four dated batch
# headers alone (about 45 tokens each) leave a 600-token window no room.
FRAMEWORK_CONFIG = {"keep_recent": 4, "chunk_size": 8, "max_summary_tokens": 80, "model_max_tokens": 1200,
                    "context_budget": 0.5, "token_estimator": "chars4"}


def framework_turn(i: int) -> List[Dict[str, Any]]:
    """A turn as frameworks keep it: OpenAI Chat dicts without ids or times."""
    return [
        {"role": "user", "content": "Question %d: what did we decide about module %d and its retry budget?" % (i, i)},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_%d" % i, "type": "function", "function": {
            "name": "search_notes", "arguments": json.dumps({"module": i})}}]},
        {"role": "tool", "tool_call_id": "call_%d" % i,
         "content": "notes: module %d keeps a retry budget of %d; decided on the %dth" % (i, 10 + i, i)},
        {"role": "assistant", "content": "We agreed module %d keeps a retry budget of %d; the decision was recorded "
                                         "in the notes." % (i, 10 + i)},
    ]


def tool_pairs_intact(history: List[Dict[str, Any]]) -> None:
    """Every tool message answers a call of an earlier assistant message of
    the same list (the request a provider would accept)."""
    calls = set()
    for m in history:
        for c in m.get("tool_calls") or []:
            calls.add(c["id"])
        if m.get("role") == "tool":
            assert m["tool_call_id"] in calls, "tool result without its call: %s" % m


@pytest.mark.parametrize("caller_owned,replace", [(False, True), (False, False), (True, True), (True, False)],
                         ids=["store-owned, list replaced", "store-owned, whole list every turn",
                              "caller-owned, list replaced", "caller-owned, whole list every turn"])
def test_framework_patterns(wasm: str, caller_owned: bool, replace: bool) -> None:
    with Compactor(wasm, store=SQLiteStore(), config=FRAMEWORK_CONFIG) as c:
        require_export(c, "decodeHistory")
        lst: List[Dict[str, Any]] = []
        everything: List[Dict[str, Any]] = []
        last: Any = None
        compactions = 0
        views = []
        for turn in range(20):
            lst = lst + framework_turn(turn)
            everything += framework_turn(turn)
            r = c.compress("fw", lst, caller_owned=caller_owned, only_if_due=True)
            assert not r["failed"], (turn, r["failure_code"], r["failure_message"])
            tool_pairs_intact(r["history"])
            if r["messages_compressed"] > 0:
                compactions += 1
                assert r["clip_archive"].startswith("[Context Summary")
                # A plain system message, nothing added; a user turn when
                # the kept messages start with an assistant turn or a tool result.
                role = "system" if r["history"][1]["role"] in ("user", "system") else "user"
                assert r["history"][0] == {"role": role, "content": r["clip_archive"]}, \
                    "plain Chat messages get a plain message, nothing added"
            if caller_owned and not replace:
                # The same list sent again gives the same view, and writes nothing.
                before = c.store.dump()
                again = c.compress("fw", lst, caller_owned=True, only_if_due=True)
                assert again["history"] == r["history"] and again["messages_compressed"] == 0
                assert c.store.dump() == before
            if replace:
                lst = r["history"]
            views.append(len(r["history"]))
            last = r
        assert compactions >= 3
        assert len(last["history"]) < len(everything) / 2, "the history sent back is compacted"
        # Nothing lost, nothing twice: every message is in the history
        # returned last or, once, in recall storage.
        decoded = c.decode_history("fw", everything)["messages"]
        returned = {raw_json(m) for m in last["history"]}
        removed = 0
        for d, m in zip(decoded, everything):
            if raw_json(m) in returned:
                continue
            removed += 1
            assert c.store.recall(d["id"]) == m, "lost: %s" % m
        rows = c.store.connection.execute("SELECT COUNT(*) FROM recall WHERE role <> 'system'").fetchone()[0]
        assert rows == removed, "each removed message is in recall once"
        if caller_owned:
            assert c.store.active_rows("fw") == [], "a caller-owned list is not stored"
        elif replace:
            assert [json.loads(r) for _, r in c.store.active_rows("fw")] == lst
        assert c.search("retry budget of module 3", conversation_id="fw")


def test_caller_owned_needs_the_list(wasm: str) -> None:
    with Compactor(wasm) as c:
        with pytest.raises(Exception) as e:
            c.compress("fw", None, caller_owned=True)
        assert getattr(e.value, "field", None) == "history"


def test_messages_come_back_as_given(wasm: str) -> None:
    """Nothing added: no id, no created_at, content None stays None, unknown
    fields kept; the only new message is the clip-archive."""
    with Compactor(wasm, config=dict(FRAMEWORK_CONFIG, keep_recent=3)) as c:
        msgs = [m for i in range(6) for m in framework_turn(i)]
        msgs[0]["x_custom"] = {"kept": [1, 2.5, "é"]}
        for owner in (False, True):
            r = c.compress("given-%s" % owner, msgs, caller_owned=owner)
            assert not r["failed"] and r["messages_compressed"] > 0, r
            assert r["history"][1:] == msgs[len(msgs) - len(r["history"]) + 1:]
            role = "system" if r["history"][1]["role"] in ("user", "system") else "user"
            assert r["history"][0] == {"role": role, "content": r["clip_archive"]}


def anthropic_turn(i: int) -> List[Dict[str, Any]]:
    chat = framework_turn(i)
    return [
        {"role": "user", "content": chat[0]["content"]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_%d" % i, "name": "search_notes",
                                           "input": {"module": i}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_%d" % i, "content": chat[2]["content"]}]},
        {"role": "assistant", "content": [{"type": "text", "text": chat[3]["content"]}]}]


def responses_turn(i: int) -> List[Dict[str, Any]]:
    chat = framework_turn(i)
    return [
        {"type": "message", "role": "user", "content": chat[0]["content"]},
        {"type": "function_call", "call_id": "fc_%d" % i, "name": "search_notes", "arguments": json.dumps({"module": i})},
        {"type": "function_call_output", "call_id": "fc_%d" % i, "output": chat[2]["content"]},
        {"type": "message", "role": "assistant", "content": chat[3]["content"]}]


def calls_and_results(shape: str, history: List[Dict[str, Any]]) -> Any:
    blocks = [b for m in history for b in
              ([m] if shape == "responses" else m["content"] if isinstance(m["content"], list) else [])]
    return ({b.get("id") or b.get("call_id") for b in blocks if b.get("type") in ("tool_use", "function_call")},
            {b.get("tool_use_id") or b.get("call_id") for b in blocks
             if b.get("type") in ("tool_result", "function_call_output")})


@pytest.mark.parametrize("shape", ["anthropic", "responses"])
def test_other_shapes_caller_owned_resend(wasm: str, shape: str) -> None:
    """The resend pattern in the Anthropic and Responses shapes: the view
    keeps tool units whole, the clip-archive takes the shape's form, each
    removed message is in recall once."""
    turn = anthropic_turn if shape == "anthropic" else responses_turn
    with Compactor(wasm, config=FRAMEWORK_CONFIG) as c:
        lst: List[Dict[str, Any]] = []
        compacted = 0
        for i in range(20):
            lst += turn(i)
            r = c.compress("s", lst, caller_owned=True, only_if_due=True)
            assert not r["failed"], (i, r["failure_code"], r["failure_message"])
            compacted += r["messages_compressed"]
            h = r["history"]
            if r["clip_archive"] is not None:
                if shape == "anthropic":
                    assert h[0] == {"role": "user", "content": r["clip_archive"]}
                else:
                    assert h[0] == {"type": "message", "role": "system", "content": r["clip_archive"]}
            calls, results = calls_and_results(shape, h)
            assert results <= calls, "a tool result without its call"
        assert compacted > 0
        # Superseded clip-archives stay in recall for provenance; every other
        # recalled row is one removed message, once.
        rows = c.store.connection.execute(
            "SELECT COUNT(*) FROM recall WHERE conversation_id = 's' AND content NOT LIKE '[Context Summary%'").fetchone()
        assert rows[0] == compacted
