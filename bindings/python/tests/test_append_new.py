"""SQLiteStore.append_new / append_new_rows: append, in one transaction,
the messages a conversation holds nowhere yet (neither active nor in
recall), skipping held ids whatever their content — the Go stores'
AppendNew (hostfuncs/store/storetest/appendnew.go). Threads on one store,
threads on two connections and processes on one file append the same
growing list at once: each message is stored once, in order, and no call
fails."""

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from clipfold import SQLiteStore
from clipfold.store import DuplicateIDError, StoreError

from test_store import commit, msg


def ids(messages: List[Any]) -> List[str]:
    return [m["id"] if isinstance(m, dict) else m[0] for m in messages]


def active_ids(store: SQLiteStore, conv: str) -> List[str]:
    return [r[0] for r in store.active_rows(conv)]


def test_appends_what_the_conversation_holds_nowhere() -> None:
    s = SQLiteStore()
    full = [msg(i) for i in range(6)]
    s.append_messages("c1", full[:4])
    s.commit(commit(remove_message_ids=["m0", "m1"]))  # m0, m1 recalled; m2, m3 active
    s.append_messages("c2", [msg(i, conv="c2") for i in range(6)])  # another conversation's ids are not c1's

    added = s.append_new("c1", full)
    assert ids(added) == ["m4", "m5"], "only what c1 holds nowhere is appended, in order"
    assert added[0] is full[4], "the messages appended are returned as given"
    assert active_ids(s, "c1") == ["clip1", "m2", "m3", "m4", "m5"]

    assert s.append_new("c1", full) == [], "a list appended again appends nothing"
    changed = msg(3, content="other words under a held id")
    recalled = msg(0, content="other words under a recalled id")
    assert s.append_new("c1", [recalled, changed]) == [], "held ids are skipped whatever their content"
    assert s.active_messages("c1")[2] == msg(3), "the held message is left as it was"
    assert s.recall("m0", "c1") == msg(0)
    assert s.recall_count("c1") == 2


def test_refuses_what_append_refuses_and_appends_nothing() -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(0)])
    with pytest.raises(StoreError, match="m7"):
        s.append_new("c1", [msg(7), msg(7)])
    with pytest.raises(StoreError, match="role"):
        s.append_new("c1", [msg(8), msg(9, role="robot")])
    with pytest.raises(StoreError, match="conversation_id"):
        s.append_new("", [msg(8)])
    with pytest.raises(StoreError, match="m8"):
        s.append_new_rows("c1", [("m8", "user", "a", "", "{}"), ("m8", "user", "b", "", "{}")])
    assert active_ids(s, "c1") == ["m0"], "a refused list appends nothing"
    # append_messages still refuses a held id: only append_new skips them.
    with pytest.raises(DuplicateIDError):
        s.append_messages("c1", [msg(0)])


def test_rows_as_compress_stores_them() -> None:
    s = SQLiteStore()
    rows: List[Tuple[str, str, str, str, str]] = [
        ("a%d" % i, "user", "text %d" % i, "2026-02-28T10:00:0%d.000Z" % i, json.dumps({"role": "user", "content": "text %d" % i}))
        for i in range(4)]
    assert s.append_new_rows("c1", rows[:2]) == rows[:2]
    assert s.append_new_rows("c1", rows) == rows[2:]
    assert s.append_new_rows("c1", rows) == []
    assert s.active_raw("c1") == [r[4] for r in rows]


def race(stores: List[SQLiteStore], workers: int = 8) -> None:
    """workers threads (alternating over stores) append the same list at
    once, in rounds over a growing prefix: none fails, each message is
    stored once, in order, and what the calls say they appended is what
    is stored."""
    full = [msg(i, conv="race") for i in range(40)]
    total = 0
    for n in (10, 25, 40):
        start = threading.Barrier(workers)
        counts = [0] * workers
        errors: List[BaseException] = []

        def work(g: int) -> None:
            try:
                start.wait()
                counts[g] = len(stores[g % len(stores)].append_new("race", full[:n]))
            except BaseException as e:  # reported by the test, not lost in the thread
                errors.append(e)
        threads = [threading.Thread(target=work, args=(g,)) for g in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        total += sum(counts)
        assert active_ids(stores[0], "race") == ids(full[:n]), "after the round of %d: each message once, in order" % n
        assert total == n


def test_threads_on_one_store() -> None:
    race([SQLiteStore()])


def test_threads_on_two_connections_to_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "race.db")
    with SQLiteStore(path) as a, SQLiteStore(path) as b:
        race([a, b])


CHILD = r"""
import json, sys
from clipfold import SQLiteStore
path, n, rounds = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
msgs = [{"id": "m%d" % i, "role": "user", "content": "message %d" % i} for i in range(n)]
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()  # every process starts at once
with SQLiteStore(path) as s:
    print(json.dumps([len(s.append_new("race", msgs[:k])) for k in rounds]))
"""


def test_processes_on_one_file(tmp_path: Path) -> None:
    """Eight processes append the same growing list to one file at once:
    each message once, in order; every process succeeds."""
    path = str(tmp_path / "procs.db")
    SQLiteStore(path).close()  # migrated once, before the race
    rounds = [10, 25, 40, 60]
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, path, "60", json.dumps(rounds)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    appended = 0
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        appended += sum(json.loads(out))
    with SQLiteStore(path) as s:
        assert active_ids(s, "race") == ["m%d" % i for i in range(60)]
    assert appended == 60, "what the processes say they appended is what is stored"

