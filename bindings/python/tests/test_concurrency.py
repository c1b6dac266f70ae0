"""Compactions racing each other: threads sharing one Compactor, tasks
sharing one AsyncCompactor, and two Compactors (as two processes would)
on one SQLite file. A lost race is not a failure of summarizing: on one
Compactor the compactions of a conversation take turns and never
conflict; across Compactors the loser gets commit_conflict, which never
opens the circuit breaker. Nothing is lost either way."""

import asyncio
import threading
from typing import Any, Dict, List, Optional

import pytest

from clipfold import AsyncCompactor, CompactionResult, Compactor, SQLiteStore

from test_compress import build_conversation, summarizer

# Small windows so that a compaction is due every few messages; the
# breaker would open after 3 counted failures in a row.
CONFIG = {"chunk_size": 8, "keep_recent": 4, "model_max_tokens": 1000, "max_summary_tokens": 60,
          "max_consecutive_failures": 3, "backoff_base_ms": 1}
THREADS = 8
ROUNDS = 4


def history(n: int) -> List[Dict[str, Any]]:
    """n messages (a system prompt, then user, assistant and tool turns)."""
    return build_conversation(n)[:n]


def stored_ids(store: SQLiteStore, conv: str) -> List[str]:
    """Every message id the store holds for conv, active and in recall
    (the clip-archives a compaction writes are left out)."""
    db = store.connection
    ids = [r[0] for r in db.execute("SELECT id FROM messages WHERE conversation_id = ?", (conv,))]
    ids += [r[0] for r in db.execute("SELECT id FROM recall WHERE conversation_id = ?", (conv,))]
    return sorted(i for i in ids if not i.startswith("clip_"))


def check_results(results: List[CompactionResult], errors: List[BaseException]) -> None:
    assert not errors, errors
    assert len(results) == THREADS * ROUNDS
    for r in results:
        assert not r["failed"], (r["failure_code"], r["failure_message"])
        assert r["consecutive_failures"] == 0
    assert any(r["messages_compressed"] > 0 for r in results), "no compaction ever ran"


def check_nothing_lost(store: SQLiteStore, conv: str, sent: List[Dict[str, Any]]) -> None:
    ids = stored_ids(store, conv)
    assert len(ids) == len(set(ids)), "a message is stored twice"
    assert set(ids) == {m["id"] for m in sent}


def prefix(i: int, k: int) -> int:
    """How much of the conversation thread i sends in round k: the threads
    overlap, each a little ahead or behind the others."""
    return 12 + 10 * k + i


@pytest.mark.parametrize("caller_owned", [False, True])
def test_threads_sharing_a_compactor_never_conflict(wasm: str, caller_owned: bool) -> None:
    full = history(prefix(THREADS - 1, ROUNDS - 1))
    results: List[CompactionResult] = []
    errors: List[BaseException] = []
    start = threading.Barrier(THREADS)
    with Compactor(wasm, store=SQLiteStore(), config=CONFIG) as c:
        def work(i: int) -> None:
            try:
                start.wait()
                for k in range(ROUNDS):
                    results.append(c.compress("c1", full[:prefix(i, k)], only_if_due=True, caller_owned=caller_owned))
            except BaseException as e:  # reported by the test, not lost in the thread
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        check_results(results, errors)
        if caller_owned:
            # The caller keeps its list; recall holds each removed message once.
            recalled = [r[0] for r in c.store.connection.execute("SELECT id FROM recall WHERE conversation_id = 'c1'")
                        if not r[0].startswith("clip_")]
            assert recalled and len(recalled) == len(set(recalled))
            assert set(recalled) <= {m["id"] for m in full}
        else:
            check_nothing_lost(c.store, "c1", full)


def test_other_conversations_go_on_beside_a_compaction(wasm: str) -> None:
    """A compaction holds only its own conversation: while c1's waits for
    its LLM, a compaction of c2 on the same Compactor syncs and reads c2's
    history (its plug-in call then waits its turn)."""
    in_llm, c2_read = threading.Event(), threading.Event()
    with Compactor(wasm, store=SQLiteStore(), config=CONFIG) as c:
        inner = summarizer([])

        def llm(req: Dict[str, Any]) -> Dict[str, Any]:
            in_llm.set()
            assert c2_read.wait(30), "c2's compaction waited for c1's to read its history"
            return inner(req)
        c.llm = llm
        real = c.store.active_rows

        def active_rows(conv: str) -> Any:
            rows = real(conv)
            if conv == "c2":
                c2_read.set()
            return rows
        c.store.active_rows = active_rows  # type: ignore[method-assign]
        results: Dict[str, CompactionResult] = {}
        t1 = threading.Thread(target=lambda: results.update(c1=c.compress("c1", history(30))))
        t1.start()
        assert in_llm.wait(30)
        t2 = threading.Thread(target=lambda: results.update(
            c2=c.compress("c2", [dict(m, id="b" + m["id"]) for m in history(30)])))
        t2.start()
        t1.join(60)
        t2.join(60)
        assert set(results) == {"c1", "c2"}
        for r in results.values():
            assert not r["failed"] and r["messages_compressed"] > 0, r


def test_tasks_sharing_an_async_compactor_never_conflict(wasm: str) -> None:
    """Tasks on one AsyncCompactor, and threads on the Compactor under it,
    all compacting one conversation."""
    full = history(prefix(THREADS - 1, ROUNDS - 1))
    results: List[CompactionResult] = []
    errors: List[BaseException] = []

    async def main() -> None:
        async with AsyncCompactor(wasm, store=SQLiteStore(), config=CONFIG) as ac:
            def thread_work(i: int) -> None:
                try:
                    for k in range(ROUNDS):
                        results.append(ac.compactor.compress("c1", full[:prefix(i, k)], only_if_due=True))
                except BaseException as e:
                    errors.append(e)

            async def task_work(i: int) -> None:
                for k in range(ROUNDS):
                    results.append(await ac.compress("c1", full[:prefix(i, k)], only_if_due=True))
            threads = [threading.Thread(target=thread_work, args=(i,)) for i in range(THREADS // 2)]
            for t in threads:
                t.start()
            await asyncio.gather(*[task_work(i) for i in range(THREADS // 2, THREADS)])
            for t in threads:
                await asyncio.get_running_loop().run_in_executor(None, t.join, 120)
            check_results(results, errors)
            check_nothing_lost(ac.store, "c1", full)
    asyncio.run(main())


def test_a_lost_race_between_compactors_is_commit_conflict(wasm: str, tmp_path: Any) -> None:
    """Two Compactors on one SQLite file, as two processes: again and again
    b's compaction loses to a's (a commits while b summarizes). b's result
    is commit_conflict saying another compaction won; the breaker never
    counts it, so b is never refused; nothing is lost."""
    db = str(tmp_path / "shared.db")
    full = history(30 + 12 * 10)
    with Compactor(wasm, store=db, config=CONFIG) as a, Compactor(wasm, store=db, config=CONFIG) as b:
        handlers = b.host_handlers()
        race: Dict[str, Optional[List[Dict[str, Any]]]] = {"sent": None}

        def memory_list(data: bytes) -> bytes:
            # b has summarized and now lists the archive: a compacts first.
            sent = race["sent"]
            if sent is not None:
                race["sent"] = None
                won = a.compress("c1", sent)
                assert not won["failed"] and won["messages_compressed"] > 0, won
            return handlers["memory_list"](data)
        b.host_handlers = lambda: dict(handlers, memory_list=memory_list)  # type: ignore[method-assign]
        for k in range(10):
            sent = full[:30 + 12 * k]
            race["sent"] = sent
            r = b.compress("c1", sent)
            assert r["failed"] and r["failure_code"] == "commit_conflict", r
            assert r["failure_message"].startswith("another compaction of this conversation won"), r["failure_message"]
            assert "already stored" not in r["failure_message"]
            assert r["consecutive_failures"] == 0
            assert [m["id"] for m in r["history"]][-4:] == [m["id"] for m in sent][-4:], "b's history is returned as it was"
        check_nothing_lost(a.store, "c1", full[:30 + 12 * 9])
        # The breaker stayed closed: b compacts as soon as it wins.
        more = full[:30 + 12 * 10]
        r = b.compress("c1", more)
        assert not r["failed"], r
        check_nothing_lost(b.store, "c1", more)


def test_appending_the_same_new_messages_at_once(wasm: str, tmp_path: Any) -> None:
    """Two Compactors on one file sent the same new messages: one appends
    them just before the other's sync appends. The sync is one transaction
    that skips what the conversation holds (append_new_rows): b goes on, no
    duplicate-id error, each message stored once."""
    db = str(tmp_path / "shared.db")
    sent = history(30)
    with Compactor(wasm, store=db, config=CONFIG) as a, Compactor(wasm, store=db, config=CONFIG) as b:
        raced: List[bool] = []
        real = b.store.append_new_rows

        def append_new_rows(conv: str, rows: Any) -> Any:
            if not raced:
                raced.append(True)
                a.store.append_messages(conv, sent[:20])  # a appends most of them first
            added = real(conv, rows)
            assert [r[0] for r in added] == [m["id"] for m in sent[20:]], "b appends only the rest"
            return added
        b.store.append_new_rows = append_new_rows  # type: ignore[method-assign]
        r = b.compress("c1", sent)
        assert not r["failed"], r
        assert raced
        check_nothing_lost(b.store, "c1", sent)
