"""AsyncCompactor: the Compactor's surface as coroutines, run off the event
loop — serialized per instance, parallel across instances — and async LLMs
awaited on the caller's loop. Plain tests around asyncio.run."""

import asyncio
import inspect
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, TypeVar

import pytest

import clipfold
from clipfold import AsyncCompactor, ClipfoldError, Compactor, SQLiteStore

from test_compress import CONFIG, build_conversation

T = TypeVar("T")
WAIT = 30.0  # a bound for waits that only a bug reaches: a failure, never a hang


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await asyncio.wait_for(coro, 120)
    return asyncio.run(main())


def conversation(prefix: str, n: int = 30) -> List[Dict[str, Any]]:
    """build_conversation with ids of its own (ids are unique across a store)."""
    return [dict(m, id=prefix + m["id"]) for m in build_conversation(n)]


def summary(text: str = "Summary: the parser bug was fixed.") -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 8}}


SURFACE = ["compress", "compact_if_due", "should_compact", "split", "score", "chunk", "estimate_tokens",
           "build_summarization_request", "build_resummarization_request", "build_clip_archive", "provider_request",
           "provider_response", "version", "call", "has_export", "search", "search_query", "decode_history",
           "overhead_tokens", "memory_read", "build_memory_read", "compact_ahead", "count_context"]


def test_surface_matches_compactor() -> None:
    """Every public method of Compactor has a coroutine twin with the same
    parameters."""
    public = {n for n, f in inspect.getmembers(Compactor, inspect.isfunction) if not n.startswith("_")}
    assert public - {"host_handlers", "close"} == set(SURFACE), "a new Compactor method needs its AsyncCompactor twin"
    for name in SURFACE + ["close"]:
        fn = getattr(AsyncCompactor, name)
        assert inspect.iscoroutinefunction(fn), name
        sync_params = list(inspect.signature(getattr(Compactor, name)).parameters.values())
        async_params = list(inspect.signature(fn).parameters.values())
        assert [(p.name, p.kind, p.default) for p in async_params] == \
               [(p.name, p.kind, p.default) for p in sync_params], name
    assert inspect.iscoroutinefunction(AsyncCompactor.read) and inspect.iscoroutinefunction(AsyncCompactor.recall)


def test_pure_exports_give_the_sync_results(wasm: str, pure: Compactor) -> None:
    msgs = build_conversation(12)

    async def main() -> None:
        async with AsyncCompactor(wasm) as c:
            assert await c.score(msgs) == pure.score(msgs)
            assert await c.split(msgs, {"keep_recent": 3}) == pure.split(msgs, {"keep_recent": 3})
            assert await c.chunk(msgs, {"chunk_size": 4}) == pure.chunk(msgs, {"chunk_size": 4})
            assert await c.should_compact(msgs) == pure.should_compact(msgs)
            assert await c.estimate_tokens("abcde") == 2
            assert await c.build_summarization_request(msgs[1:3], "before") == \
                pure.build_summarization_request(msgs[1:3], "before")
            assert await c.build_resummarization_request(["a"]) == pure.build_resummarization_request(["a"])
            assert await c.build_clip_archive([]) == pure.build_clip_archive([])
            assert await c.version() == pure.version()
            assert await c.has_export("compress") is True
            assert await c.call("estimateTokens", {"text": "abcd", "config": {"token_estimator": "chars4"}}) == b'{"tokens":1}'
            assert (await c.search_query("the parser bugs"))["fts5"] == pure.search_query("the parser bugs")["fts5"]
            if pure.has_export("providerRequest"):
                req = pure.build_summarization_request(msgs[1:3])
                assert await c.provider_request("openai", req) == pure.provider_request("openai", req)
                assert await c.provider_response("openai", 429, "{}") == pure.provider_response("openai", 429, "{}")
    run(main())


def test_compress_search_read_with_a_file_store(wasm: str, tmp_path: Path) -> None:
    async def main() -> None:
        c = await AsyncCompactor.open(wasm, store=tmp_path / "chat.db", config=CONFIG)
        async with c:
            history = build_conversation(30)
            r = await c.compress("c1", history)
            assert not r["failed"], r
            assert r["history"][0]["content"].startswith("[Context Summary")
            assert [m["id"] for m in c.store.active_messages("c1")] == [m["id"] for m in r["history"]]
            hits = await c.search("where was the off-by-one error?", conversation_id="c1")
            assert hits and all(h["conversation_id"] == "c1" for h in hits)
            rec = await c.read(hits[0]["id"])
            assert rec["kind"] == hits[0]["kind"]
            assert (rec["message"]["id"] if rec["kind"] == "message" else rec["block"]["id"]) == hits[0]["id"]
            kept = {m["id"] for m in r["history"]}
            removed = [m["id"] for m in history if m["id"] not in kept]
            assert removed and (await c.recall(removed[0])) == history[1] or removed[0] != history[1]["id"]
            assert (await c.recall(removed[-1]))["id"] == removed[-1]
            due = await c.compact_if_due("c1", config={"model_max_tokens": 10 ** 6})
            assert due is None
        assert c.closed
        with pytest.raises(ClipfoldError) as e:
            await c.version()
        assert e.value.code == "internal" and "closed" in e.value.message
        await c.close()  # idempotent
    run(main())
    with SQLiteStore(tmp_path / "chat.db") as s:  # committed durably, readable by a new process
        assert s.active_messages("c1")[0]["content"].startswith("[Context Summary")


def test_compact_if_due_compacts_to_the_target(wasm: str) -> None:
    async def main() -> None:
        async with AsyncCompactor(wasm, config={"model_max_tokens": 2000, "context_budget": 0.5}) as c:
            history = build_conversation(60)
            r = await c.compact_if_due("c1", history)
            assert r is not None and not r["failed"], r
            assert await c.estimate_tokens(r["history"]) <= 1000
    run(main())


def test_calls_on_one_instance_are_serialized_in_order(wasm: str) -> None:
    """Three compactions and a version() made at once on one instance: the
    plug-in is never entered twice at a time (the LLM sees one call at a
    time) and calls finish in the order they were made."""
    active = 0
    most = 0
    done: List[str] = []

    async def llm(req: Dict[str, Any]) -> Dict[str, Any]:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await asyncio.sleep(0.01)  # yield to the loop: another call could enter now if it were not serialized
        active -= 1
        return summary()

    async def main() -> None:
        async with AsyncCompactor(wasm, llm=llm, config=CONFIG) as c:
            async def tagged(tag: str, aw: Awaitable[Any]) -> Any:
                out = await aw
                done.append(tag)
                return out
            results = await asyncio.gather(*[tagged("c%d" % i, c.compress("c%d" % i, conversation("c%d" % i)))
                                             for i in range(3)], tagged("version", c.version()))
            for r in results[:3]:
                assert not r["failed"], r
                assert r["llm_calls"] >= 2
    run(main())
    assert most == 1
    assert done == ["c0", "c1", "c2", "version"]


def test_instances_run_in_parallel_with_an_async_llm(wasm: str) -> None:
    """Two instances compacting at once: each LLM call waits until the other
    instance's call has started too — possible only if both plug-in calls
    are under way together (serialized, they would time out and fail)."""
    entered: Dict[str, asyncio.Event] = {}

    def llm_for(me: str, other: str) -> Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]:
        async def llm(req: Dict[str, Any]) -> Dict[str, Any]:
            entered[me].set()
            await asyncio.wait_for(entered[other].wait(), WAIT)
            return summary()
        return llm

    async def main() -> None:
        entered["a"], entered["b"] = asyncio.Event(), asyncio.Event()
        store = SQLiteStore()  # one store shared by both
        async with AsyncCompactor(wasm, llm=llm_for("a", "b"), store=store, config=CONFIG) as a, \
                AsyncCompactor(wasm, llm=llm_for("b", "a"), store=store, config=CONFIG) as b:
            ra, rb = await asyncio.gather(a.compress("ca", build_conversation(30)),
                                          b.compress("cb", conversation("b")))
            assert not ra["failed"] and not rb["failed"], (ra, rb)
        store.close()
    run(main())


def test_instances_run_in_parallel_with_a_sync_llm(wasm: str) -> None:
    """The same with blocking LLMs (as the HTTP adapters are): they meet at
    a barrier, so each runs in its own instance's worker thread, and the
    event loop is never blocked by them."""
    barrier = threading.Barrier(2, timeout=WAIT)
    threads = set()

    def llm(req: Dict[str, Any]) -> Dict[str, Any]:
        threads.add((threading.get_ident(), threading.current_thread().name))
        assert threading.current_thread() is not threading.main_thread()
        barrier.wait()
        return summary()

    async def main() -> None:
        async with AsyncCompactor(wasm, llm=llm, config=CONFIG) as a, \
                AsyncCompactor(wasm, llm=llm, config=CONFIG) as b:
            ra, rb = await asyncio.gather(a.compress("c1", build_conversation(30)),
                                          b.compress("c1", build_conversation(30)))
            assert not ra["failed"] and not rb["failed"], (ra, rb)
    run(main())
    assert len(threads) == 2 and all(name.startswith("clipfold") for _, name in threads)


def test_the_event_loop_keeps_running_during_a_call(wasm: str) -> None:
    """A blocking LLM waits for an event that only a coroutine on the loop
    sets: if the call blocked the loop, it would wait in vain and fail."""
    release = threading.Event()

    def llm(req: Dict[str, Any]) -> Dict[str, Any]:
        if not release.wait(WAIT):
            return {"error": {"code": "other", "message": "the event loop was blocked", "retryable": False}}
        return summary()

    async def main() -> None:
        async with AsyncCompactor(wasm, llm=llm, config=CONFIG) as c:
            task = asyncio.ensure_future(c.compress("c1", build_conversation(30)))
            await asyncio.sleep(0)
            release.set()
            r = await task
            assert not r["failed"], r
    run(main())


def test_search_runs_beside_a_compaction(wasm: str) -> None:
    """search uses the second plug-in instance: it answers while a
    compaction on the same AsyncCompactor waits for its LLM."""
    async def main() -> None:
        gate = asyncio.Event()

        async def llm(req: Dict[str, Any]) -> Dict[str, Any]:
            await asyncio.wait_for(gate.wait(), WAIT)
            return summary()

        async with AsyncCompactor(wasm, llm=llm, config=CONFIG) as c:
            first = await c.compress("c1", build_conversation(30), config={"summarizer": "extractive"})
            assert not first["failed"]
            task = asyncio.ensure_future(c.compress("c2", conversation("x")))
            hits = await c.search("off-by-one error", conversation_id="c1")  # while c2's compaction waits
            assert hits
            assert not task.done()
            gate.set()
            assert not (await task)["failed"]
    run(main())


def test_async_llm_errors_and_timeouts_fail_safe(wasm: str) -> None:
    async def raising(req: Dict[str, Any]) -> Dict[str, Any]:
        raise RuntimeError("the model is down")

    cancelled: List[bool] = []

    async def slow(req: Dict[str, Any]) -> Dict[str, Any]:
        try:
            await asyncio.sleep(WAIT)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return summary()

    async def error_object(req: Dict[str, Any]) -> Dict[str, Any]:
        return {"error": {"code": "auth", "message": "bad key", "retryable": False}}

    async def main() -> None:
        history = build_conversation(30)
        # the slow one: its request's timeout_ms is what is left of compaction_timeout;
        # past it the coroutine is cancelled and the compaction fails at its deadline
        for llm, codes in ((raising, {"llm_failed"}), (error_object, {"llm_failed"}),
                           (slow, {"llm_timeout", "deadline_exceeded"})):
            cfg = dict(CONFIG, compaction_timeout=300) if llm is slow else CONFIG
            async with AsyncCompactor(wasm, llm=llm, config=cfg) as c:
                r = await c.compress("c1", history)
                assert r["failed"] and r["failure_code"] in codes, r
                assert r["history"] == history
                assert c.store.active_messages("c1") == history  # nothing lost
    run(main())
    assert cancelled and all(cancelled)  # the coroutine past its timeout_ms was cancelled


def test_invalid_input_raises_clipfold_error(wasm: str) -> None:
    async def main() -> None:
        async with AsyncCompactor(wasm) as c:
            with pytest.raises(ClipfoldError) as e:
                await c.score([{"role": "user", "content": "x"}, {"role": "wizard", "content": "y"}])
            assert e.value.code == "invalid_input" and e.value.field == "messages[1].role"
            with pytest.raises(ClipfoldError) as e:
                await c.call("score", b"{not json")
            assert e.value.code == "invalid_json"
            with pytest.raises(ClipfoldError) as e:
                await c.compact_if_due("c1", [], target_share=2)
            assert e.value.field == "target_share"
            assert (await c.version())["abi"] == 1  # the instance still answers
    run(main())


def test_cancelled_call_finishes_and_the_instance_goes_on(wasm: str, tmp_path: Path) -> None:
    """Cancelling an await cannot stop Wasm under way: the compaction runs to
    its end (and commits); the next call waits for it, then works."""
    async def main() -> None:
        started = asyncio.Event()
        gate = asyncio.Event()

        async def llm(req: Dict[str, Any]) -> Dict[str, Any]:
            started.set()
            await asyncio.wait_for(gate.wait(), WAIT)
            return summary()

        async with AsyncCompactor(wasm, llm=llm, store=tmp_path / "c.db", config=CONFIG) as c:
            task = asyncio.ensure_future(c.compress("c1", build_conversation(30)))
            await asyncio.wait_for(started.wait(), WAIT)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            gate.set()
            assert (await c.version())["abi"] == 1  # queued behind the cancelled compaction
            assert c.store.active_messages("c1")[0]["content"].startswith("[Context Summary")
    run(main())


def test_close_waits_for_calls_already_made(wasm: str) -> None:
    async def main() -> None:
        c = AsyncCompactor(wasm, config=CONFIG)
        task = asyncio.ensure_future(c.compress("c1", build_conversation(30)))
        await asyncio.sleep(0)
        await c.close()
        assert not (await task)["failed"]
        with pytest.raises(ClipfoldError):
            await c.search("parser")
    run(main())


def test_wrap_and_attributes(wasm: str) -> None:
    sync = Compactor(wasm, config={"keep_recent": 2})

    async def main() -> None:
        async with AsyncCompactor.wrap(sync) as c:
            assert c.compactor is sync and c.store is sync.store and c.config == {"keep_recent": 2}
            assert c.wasm_path == wasm and isinstance(c.llm, clipfold.Extractive)
    run(main())
    with pytest.raises(ClipfoldError):
        sync.version()  # closing the wrapper closed it


def test_sync_compactor_runs_an_async_llm(wasm: str) -> None:
    """A plain Compactor in a thread without an event loop runs an async
    LLM in a fresh loop; called from inside a running loop it cannot (it
    would block that loop) and fails safe, naming AsyncCompactor."""
    async def llm(req: Dict[str, Any]) -> Dict[str, Any]:
        await asyncio.sleep(0)
        return summary("Async summary.")

    with Compactor(wasm, llm=llm, config=CONFIG) as c:
        r = c.compress("c1", build_conversation(30))
        assert not r["failed"], r
        assert "Async summary." in r["history"][0]["content"]

        captured: List[Optional[BaseException]] = []
        orig = c._llm_complete

        def spy(data: bytes) -> bytes:
            try:
                return orig(data)
            except BaseException as e:  # what the host context turns into an error object
                captured.append(e)
                raise

        async def inside_a_loop() -> Any:
            return c.call("compress", {"conversation_id": "c2", "history": build_conversation(30),
                                         "config": CONFIG},
                handlers=dict(c.host_handlers(), llm_complete=spy))
        import json
        out = json.loads(asyncio.run(inside_a_loop()))
        assert out["failed"] and out["failure_code"] == "llm_failed"
        assert captured and "AsyncCompactor" in str(captured[0])


def test_adapters_acomplete_runs_off_the_loop() -> None:
    """``await adapter.acomplete(req)`` runs the blocking adapter in a
    thread (the HTTP exchange itself is tested in test_http)."""
    ex = clipfold.Extractive()

    async def main() -> Dict[str, Any]:
        return await ex.acomplete({"messages": [{"role": "user", "content": "x"}]})
    out = run(main())
    assert out["error"]["code"] == "unavailable"  # unattached: a clean error, not an exception
