"""The public API's arguments: a wrong type, or a float JSON cannot hold
(NaN, ±Infinity), is a ClipfoldError naming the argument or the field —
not a bare ValueError or TypeError from deep inside, not a value silently
read another way, and never stored."""

from typing import Any, Callable

import pytest

from clipfold import Anthropic, ClipfoldError, Compactor, OpenAICompatible, SQLiteStore

AT = "2026-03-01T10:00:00Z"


def refused(call: Callable[[], Any], field: str) -> ClipfoldError:
    with pytest.raises(ClipfoldError) as e:
        call()
    assert e.value.code == "invalid_input" and e.value.field == field, e.value
    return e.value


def test_constructor(wasm: str) -> None:
    refused(lambda: Compactor(wasm, config="x"), "config")  # type: ignore[arg-type]
    refused(lambda: Compactor(wasm, config=[("keep_recent", 4)]), "config")  # type: ignore[arg-type]
    refused(lambda: Compactor(wasm, manifest_config="x"), "manifest_config")  # type: ignore[arg-type]
    refused(lambda: Compactor(wasm, store=5), "store")  # type: ignore[arg-type]
    refused(lambda: Compactor(wasm, config={"chunk_size": float("nan")}), "config.chunk_size")


def test_search(wasm: str) -> None:
    with Compactor(wasm) as c:
        refused(lambda: c.search("q", limit="a"), "limit")  # type: ignore[arg-type]
        refused(lambda: c.search("q", limit=2.5), "limit")  # type: ignore[arg-type]
        refused(lambda: c.search("q", conversation_id=5), "conversation_id")  # type: ignore[arg-type]
        refused(lambda: c.search(None), "query")  # type: ignore[arg-type]
        refused(lambda: c.store.search("q", limit="a"), "limit")  # type: ignore[arg-type]
        refused(lambda: c.store.search_fts5("q", limit=None), "limit")  # type: ignore[arg-type]
        refused(lambda: c.store.recall(None), "message_id")  # type: ignore[arg-type]
        refused(lambda: c.store.recall("m1", conversation_id=5), "conversation_id")  # type: ignore[arg-type]
        refused(lambda: c.store.read(7), "record_id")  # type: ignore[arg-type]
        refused(lambda: SQLiteStore(5), "path")  # type: ignore[arg-type]
        refused(lambda: SQLiteStore(""), "path")
        refused(lambda: SQLiteStore(read_only="yes"), "read_only")  # type: ignore[arg-type]
        assert c.search("nothing", limit=5) == []


def test_call_options(wasm: str) -> None:
    with Compactor(wasm) as c:
        msgs = [{"id": "a", "role": "user", "content": "x", "created_at": AT}]
        refused(lambda: c.score(msgs, config="x"), "config")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, config="x"), "config")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, caller_owned="no"), "caller_owned")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, dry_run=1), "dry_run")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, only_if_due="yes"), "only_if_due")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, operation_id=3), "operation_id")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, shape=["chat"]), "shape")  # type: ignore[arg-type]
        refused(lambda: c.compress("c1", msgs, now=1772272800), "now")  # type: ignore[arg-type]
        refused(lambda: c.compact_if_due("c1", msgs, target_share="0.5"), "target_share")  # type: ignore[arg-type]
        refused(lambda: c.compact_if_due("c1", msgs, target_share=1.5), "target_share")
        refused(lambda: c.compress("c1", msgs, config={"keep_recent": float("inf")}), "config.keep_recent")
        refused(lambda: c.should_compact(msgs, config={"model_max_tokens": float("nan")}), "config.model_max_tokens")
        assert c.store.active_rows("c1") == [], "nothing stored"


def test_non_json_numbers_name_the_field(wasm: str) -> None:
    with Compactor(wasm) as c:
        refused(lambda: c.compress("c1", [{"id": "a", "role": "user", "content": "x", "created_at": AT},
                                          {"id": "b", "role": "user", "content": float("nan"), "created_at": AT}]),
                "history[1].content")
        refused(lambda: c.score([{"role": "user", "content": [{"type": "text", "text": "x", "w": float("-inf")}]}]),
                "messages[0].content[0].w")
        assert c.store.active_rows("c1") == []
        # The store refuses them too, instead of writing the invalid JSON token Infinity.
        with pytest.raises(Exception) as e:
            c.store.append_messages("c2", [{"id": "b", "role": "user", "content": float("inf"), "created_at": AT}])
        assert "content" in str(e.value) and "not a JSON number" in str(e.value), e.value
        assert c.store.active_raw("c2") == []


def test_llm_adapters() -> None:
    refused(lambda: OpenAICompatible("ftp://me:hunter2@h"), "base_url")
    refused(lambda: OpenAICompatible(None), "base_url")  # type: ignore[arg-type]
    refused(lambda: Anthropic(api_key=5), "api_key")  # type: ignore[arg-type]
    refused(lambda: Anthropic(model=5), "model")  # type: ignore[arg-type]
    refused(lambda: OpenAICompatible(timeout="30"), "timeout")  # type: ignore[arg-type]
    refused(lambda: OpenAICompatible(timeout=0), "timeout")
    refused(lambda: OpenAICompatible(headers={"x": 1}), "headers")  # type: ignore[dict-item]
    e = refused(lambda: Anthropic("ftp://me:hunter2@h/?key=sk-1"), "base_url")
    assert "hunter2" not in str(e) and "sk-1" not in str(e)
