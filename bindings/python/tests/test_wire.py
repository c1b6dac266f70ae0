"""clipfold.wire: a compacted history put back on each provider's wire —
nothing clipfold-only left in a message, the clip-archive where the
provider wants it, every kept message otherwise as it was given."""

import json
from typing import Any, Dict, List

import pytest

from clipfold import Compactor, wire

from test_owner import FRAMEWORK_CONFIG, anthropic_turn, framework_turn, responses_turn

# The message fields each API takes (OpenAI Chat Completions, Anthropic
# Messages); anything else is "Additional properties are not allowed".
CHAT_FIELDS = {"system": {"role", "content", "name"}, "developer": {"role", "content", "name"},
               "user": {"role", "content", "name"},
               "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio", "function_call"},
               "tool": {"role", "content", "tool_call_id"}}
ANTHROPIC_FIELDS = {"role", "content"}


def native(n: int) -> List[Dict[str, Any]]:
    """A native history: Messages (docs/spec.md#message) with ids, times, a pinned note."""
    out: List[Dict[str, Any]] = []
    for i in range(n):
        for j, m in enumerate(framework_turn(i)):
            out.append(dict(m, id="m%d_%d" % (i, j), conversation_id="c1",
                            created_at="2026-02-28T10:%02d:%02d.000Z" % (i, j)))
    out[0]["pinned"] = True
    return out


def test_openai_chat_strips_bookkeeping(wasm: str) -> None:
    with Compactor(wasm, config=FRAMEWORK_CONFIG) as c:
        history = native(12)
        r = c.compress("c1", history)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        assert "id" in r["history"][0] and "created_at" in r["history"][0], "a native history's clip-archive"
        msgs = wire.openai_chat(r, system="You are the team's assistant.")
        assert msgs[0] == {"role": "system", "content": "You are the team's assistant."}
        assert msgs[1] == {"role": "system", "content": r["clip_archive"]}
        for m in msgs:
            assert set(m) <= CHAT_FIELDS[m["role"]], m
        by_content = {json.dumps(wire.strip(m), sort_keys=True) for m in history}
        for m in msgs[2:]:
            assert json.dumps(m, sort_keys=True) in by_content, "kept messages are otherwise as given"
        assert r["history"][0]["id"], "the result is not changed"
        # A framework history (no bookkeeping) goes out exactly as compress returned it.
        plain = [m for i in range(12) for m in framework_turn(i)]
        r2 = c.compress("c2", plain, caller_owned=True)
        assert wire.openai_chat(r2) == r2["history"]
        assert wire.openai_chat(r2["history"]) == r2["history"]


def test_anthropic_archive_in_system(wasm: str) -> None:
    with Compactor(wasm, config=FRAMEWORK_CONFIG) as c:
        history = [m for i in range(12) for m in anthropic_turn(i)]
        r = c.compress("a1", history, caller_owned=True)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        assert r["history"][0] == {"role": "user", "content": r["clip_archive"]}
        body = wire.anthropic(r, system="Be brief.")
        kept = r["history"][1:]
        if kept[0]["role"] == "user":
            assert body["system"] == "Be brief.\n\n" + r["clip_archive"]
            assert body["messages"] == kept
        else:  # the archive turn stays first: the API wants a user turn first
            assert body["system"] == "Be brief."
            assert body["messages"] == r["history"]
        assert body["messages"][0]["role"] == "user"
        for m in body["messages"]:
            assert set(m) <= ANTHROPIC_FIELDS
        # Both cases, forced: an assistant turn after the archive keeps it inline.
        archive_turn = {"role": "user", "content": "[Context Summary — 2 messages compressed]"}
        res = {"history": [archive_turn, {"role": "assistant", "content": "ok"}], "clip_archive": archive_turn["content"]}
        assert wire.anthropic(res) == {"messages": res["history"]}
        res = {"history": [archive_turn, {"role": "user", "content": "go on"}], "clip_archive": archive_turn["content"]}
        assert wire.anthropic(res, system="S") == {"system": "S\n\n" + archive_turn["content"],
                                                   "messages": [{"role": "user", "content": "go on"}]}


def test_anthropic_from_a_chat_history_lifts_system(wasm: str) -> None:
    with Compactor(wasm, config=FRAMEWORK_CONFIG) as c:
        history = [{"role": "system", "content": "Use metric units."}] + \
            [m for i in range(12) for m in framework_turn(i) if m["role"] in ("user", "assistant") and m["content"]]
        r = c.compress("a2", history, caller_owned=True)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        body = wire.anthropic(r)
        assert body["system"].startswith(r["clip_archive"]) and body["system"].endswith("Use metric units.")
        assert all(m["role"] in ("user", "assistant") for m in body["messages"])


def test_responses(wasm: str) -> None:
    with Compactor(wasm, config=FRAMEWORK_CONFIG) as c:
        history = [m for i in range(12) for m in responses_turn(i)]
        history[1]["id"] = "fc_api_item_1"  # an item's own id is the API's: it stays
        r = c.compress("r1", history, caller_owned=True)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        body = wire.responses(r, instructions="Be brief.")
        assert body == {"instructions": "Be brief.", "input": r["history"]}
        body = wire.responses(r, instructions="Be brief.", archive_in_instructions=True)
        assert body == {"instructions": "Be brief.\n\n" + r["clip_archive"], "input": r["history"][1:]}


def test_bad_input() -> None:
    with pytest.raises(TypeError):
        wire.openai_chat({"no": "history"})
