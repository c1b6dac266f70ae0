"""SQLiteStore: the Go store's schema, the all-or-nothing commit with the
conflict rule, recall and search, and files shared with the Go store."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from clipfold import SQLiteStore, _schema
from clipfold.store import AmbiguousIDError, ConflictError, DuplicateIDError, NotFoundError, StoreError

from conftest import REPO

GO_SQL = REPO / "hostfuncs" / "store" / "sqlite"


def msg(i: int, conv: str = "c1", **kw: Any) -> Dict[str, Any]:
    m = {"id": "m%d" % i, "conversation_id": conv, "role": "user" if i % 2 == 0 else "assistant",
         "content": "message %d about the tokenizer" % i, "created_at": "2026-02-28T10:00:%02d.000Z" % i}
    m.update(kw)
    return m


def commit(**kw: Any) -> Dict[str, Any]:
    c = {"conversation_id": "c1", "operation_id": "op_1",
         "archive_writes": [{"label": "compaction-batch-c1-2026-02-28T10:00:03.000Z", "tier": "archival",
                             "reason": "compaction", "content": '{"conversation_id":"c1"}\nsummary of the tokenizer'}],
         "archive_deletes": [], "remove_message_ids": ["m0", "m1", "m2"],
         "insert_message": {"id": "clip1", "conversation_id": "c1", "role": "system",
                            "content": "[Context Summary — 3 messages compressed]", "created_at": "2026-02-28T10:05:00.000Z"}}
    c.update(kw)
    return c


def test_schema_files_are_the_go_stores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No SQL is copied: Python runs the Go store's own migration files."""
    assert _schema.sql_dir().resolve() == GO_SQL.resolve()
    files = sorted(GO_SQL.glob("migrations/*.sql"))
    steps = _schema.migrations()
    assert [v for v, _, _ in steps] == [int(f.stem) for f in files] == list(range(1, len(files) + 1))
    for (v, name, sql), f in zip(steps, files):
        assert ("-- " + name + "\n" + sql).encode("utf-8") == f.read_bytes()
    assert "search_fts MATCH ?1" in _schema.query("search")
    # $CLIPFOLD_SQL_DIR is looked at before a checkout.
    copy = tmp_path / "sql"
    shutil.copytree(GO_SQL / "migrations", copy / "migrations")
    shutil.copytree(GO_SQL / "queries", copy / "queries")
    monkeypatch.setenv(_schema.SQL_DIR_ENV, str(copy))
    monkeypatch.setattr(_schema, "_cache", {})
    assert _schema.sql_dir() == copy


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    p = str(tmp_path / "a.db")
    with SQLiteStore(p) as s:
        assert s.migrate() == 0
        steps = len(list((GO_SQL / "migrations").glob("*.sql")))
        assert steps >= 4
        assert s.connection.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall() == [(v,) for v in range(1, steps + 1)]
    with SQLiteStore(p) as s:
        assert s.migrate() == 0


def test_commit_moves_messages_and_inserts_first() -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(i) for i in range(5)])
    raw_before = s.active_raw("c1")
    s.commit(commit())
    active = s.active_messages("c1")
    assert [m["id"] for m in active] == ["clip1", "m3", "m4"]
    assert s.active_raw("c1")[0] == ('{"id":"clip1","conversation_id":"c1","role":"system",'
                                     '"content":"[Context Summary — 3 messages compressed]","created_at":"2026-02-28T10:05:00.000Z"}')
    assert s.active_raw("c1")[1:] == raw_before[3:]
    assert s.recall("m1") == msg(1)
    blocks = s.list_blocks("archival", "compaction-batch-c1-")
    assert len(blocks) == 1 and blocks[0]["id"].startswith("blk_")
    hits = s.search("tokenizer")
    kinds = sorted((h["kind"], h["in_context"]) for h in hits)
    assert kinds == [("batch", False)] + [("message", False)] * 3 + [("message", True)] * 2, \
        "the batch, the three recalled messages and the two still active"
    assert any("[tokenizer]" in h["snippet"] for h in hits)
    # archive delete by id + a second commit
    s.commit(commit(operation_id="op_2", archive_deletes=[blocks[0]["id"]], archive_writes=[],
                    remove_message_ids=["clip1", "m3"], insert_message={"id": "clip2", "content": "x"}))
    assert [m["id"] for m in s.active_messages("c1")] == ["clip2", "m4"]
    assert s.list_blocks("archival", "compaction-batch-c1-") == []


@pytest.mark.parametrize("bad", [
    {"remove_message_ids": ["m0", "gone"]},
    {"archive_deletes": ["blk_missing"]},
    {"remove_message_ids": ["x9"]},  # exists, but in another conversation
])
def test_conflict_changes_nothing(bad: Dict[str, Any]) -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(i) for i in range(5)])
    s.append_messages("c2", [msg(9, "c2", id="x9")])
    before = s.dump()
    with pytest.raises(ConflictError):
        s.commit(commit(**bad))
    assert s.dump() == before
    out = s.host_compaction_commit(commit(**bad))
    assert out["error"]["code"] == "conflict" and out["error"]["retryable"] is False
    assert s.dump() == before


def test_failure_half_way_rolls_back() -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(i) for i in range(5)])
    before = s.dump()
    # the insert's id is taken: detected after the checks, inside the transaction
    out = s.host_compaction_commit(commit(insert_message={"id": "m4", "content": "dup"}))
    assert out["error"]["code"] == "other"
    assert s.dump() == before
    out = s.host_compaction_commit(commit(archive_writes=[{"label": "", "content": "x"}]))
    assert "error" in out and s.dump() == before


def caller_commit(op: str = "op_1", ids: Any = (0, 1, 2), **kw: Any) -> Dict[str, Any]:
    """A caller-owned commit (history_owner "caller") removing msg(i) for i in ids."""
    writes = [{"id": "m%d" % i, "role": msg(i)["role"], "content": msg(i)["content"],
               "created_at": msg(i)["created_at"], "search_text": "tokenizer %d" % i, "message": msg(i)} for i in ids]
    c = commit(operation_id=op, remove_message_ids=[], history_owner="caller", recall_writes=writes)
    c.update(kw)
    return c


def test_caller_owned_commit_writes_recall_once_and_leaves_active_alone() -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(7)])  # an active history the commit must not touch
    active = s.active_raw("c1")
    s.commit(caller_commit())
    assert s.active_raw("c1") == active
    assert s.recall_count("c1") == 3 and s.recall("m1") == msg(1)
    assert len(s.list_blocks("archival", "compaction-batch-c1-")) == 1
    # The same list sent again (a later compaction, overlapping removals):
    # each id is written once, the first write wins, nothing conflicts.
    first = s.connection.execute("SELECT id, operation_id, removed_at FROM recall ORDER BY id").fetchall()
    s.commit(caller_commit("op_2", (1, 2, 3, 3)))
    assert s.recall_count("c1") == 4
    rows = s.connection.execute("SELECT id, operation_id, removed_at FROM recall ORDER BY id").fetchall()
    assert rows[:3] == first and rows[3][:2] == ("m3", "op_2")
    # The clip-archive is not stored for a caller-owned conversation.
    assert s.connection.execute("SELECT COUNT(*) FROM messages WHERE id = 'clip1'").fetchone() == (0,)
    assert s.search_fts5('"tokenizer"', "c1")


@pytest.mark.parametrize("bad,err", [
    ({"archive_deletes": ["blk_missing"]}, ConflictError),
    ({"remove_message_ids": ["m0"]}, StoreError),
    ({"history_owner": "robot"}, StoreError),
    ({"recall_writes": [{"id": "", "role": "user", "message": {}}]}, StoreError),
    ({"recall_writes": [{"id": "m1", "role": "robot", "message": {}}]}, StoreError),
    ({"recall_writes": [{"id": "m1", "role": "user", "message": "not an object"}]}, StoreError),
])
def test_caller_owned_commit_refusals_change_nothing(bad: Dict[str, Any], err: type) -> None:
    s = SQLiteStore()
    s.commit(caller_commit("op_c2", (), conversation_id="c2", archive_writes=[],
                           insert_message={"id": "clip2", "role": "system", "content": "x"},
                           recall_writes=[{"id": "x9", "role": "user", "content": "c2's", "message": {"id": "x9"}}]))
    before = s.dump()
    c = caller_commit()
    c.update(bad)
    with pytest.raises(err) as e:
        s.commit(c)
    assert type(e.value) is err
    assert s.dump() == before
    out = s.host_compaction_commit(c)
    assert out["error"]["code"] == ("conflict" if err is ConflictError else "other")
    assert s.dump() == before


def test_message_ids_are_per_conversation() -> None:
    """Callers number each conversation alike (m0, m1, …): the same id in
    another conversation is another message — appended, compacted,
    recalled and written by a caller-owned commit — while a repeat within
    one conversation is still refused."""
    s = SQLiteStore()
    s.append_messages("c1", [msg(i) for i in range(5)])
    s.append_messages("c2", [msg(i, "c2") for i in range(5)])
    s.commit(commit())
    s.commit(commit(conversation_id="c2", insert_message=dict(commit()["insert_message"], conversation_id="c2"),
                    archive_writes=[{"label": "compaction-batch-c2-x", "content": "c2's summary"}]))
    assert [m["id"] for m in s.active_messages("c1")] == [m["id"] for m in s.active_messages("c2")] == \
        ["clip1", "m3", "m4"]
    assert s.recall("m1", "c1") == msg(1) and s.recall("m1", "c2") == msg(1, "c2")
    assert s.read("m1", "c2") == {"kind": "message", "message": msg(1, "c2")}
    assert s.recalled_ids("c2", ["m1", "m3", "x"]) == {"m1"}
    assert s.known_ids("c2", ["m1", "m3", "x"]) == {"m1", "m3"} and s.known_ids("c3", ["m1"]) == set()
    # Without a conversation: the only one that holds the id, else an
    # error naming them.
    with pytest.raises(AmbiguousIDError, match="'c1', 'c2'") as e:
        s.recall("m1")
    assert e.value.conversations == ["c1", "c2"]
    s.append_messages("c3", [msg(9, "c3", id="only3")])
    s.commit(commit(conversation_id="c3", remove_message_ids=["only3"], archive_writes=[],
                    insert_message={"id": "clip3", "conversation_id": "c3", "role": "system", "content": "x"}))
    assert s.recall("only3")["id"] == "only3"
    with pytest.raises(NotFoundError, match="in conversation 'c1'"):
        s.recall("only3", "c1")
    # A repeat within a conversation, active or in recall, is refused.
    before = s.dump()
    for conv, mid in (("c1", "m4"), ("c2", "m0"), ("c1", "clip1")):
        with pytest.raises(DuplicateIDError, match="already stored in this conversation") as d:
            s.append_messages(conv, [msg(7, conv, id=mid)])
        assert d.value.ids == [mid]
    assert s.dump() == before
    # A caller-owned commit writes an id another conversation holds.
    s.commit(caller_commit("op_c", (1,), conversation_id="c4", archive_writes=[],
                           insert_message={"id": "clip4", "role": "system", "content": "x"}))
    assert s.recall("m1", "c4") == msg(1) and s.recall_count("c4") == 1


def test_store_owned_commit_stores_insert_raw() -> None:
    """The clip-archive as compress returned it, in the history's shape."""
    s = SQLiteStore()
    s.append_messages("c1", [msg(i) for i in range(5)])
    shaped = {"role": "user", "content": "[Context Summary — 3 messages compressed]\n\nsummary"}
    s.commit(commit(insert_raw=shaped))
    assert s.active_raw("c1")[0] == json.dumps(shaped, ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(StoreError, match="insert_raw"):
        s.commit(commit(operation_id="op_2", remove_message_ids=["m3"], insert_message={"id": "clip2"},
                        insert_raw=["not", "an", "object"]))


def test_append_rejects_duplicates_and_bad_roles() -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(0)])
    before = s.dump()
    # Each is a StoreError naming what is wrong (not any exception at all).
    for bad, names in (([msg(1), msg(0)], "m0"), ([msg(1), msg(1)], "m1"), ([msg(2, role="robot")], "robot"),
                       ([msg(3, conv="other")], "other")):
        with pytest.raises(StoreError, match=names):
            s.append_messages("c1", bad)
        assert s.dump() == before


def test_label_prefix_is_literal_and_per_conversation() -> None:
    s = SQLiteStore()
    s.append_messages("c1", [msg(i) for i in range(5)])
    s.append_messages("c1-x", [msg(i, "c1-x", id="y%d" % i) for i in range(3)])
    s.commit(commit())
    s.commit(commit(conversation_id="c1-x", remove_message_ids=["y0"],
                    archive_writes=[{"label": "compaction-batch-c1-x-2026", "content": "x"}],
                    insert_message={"id": "clipx", "content": "x"}))
    assert len(s.list_blocks("archival", "compaction-batch-c1-")) == 2  # prefix match, docs/spec.md#memory_list
    assert len(s.list_blocks("archival", "compaction-batch-c1-x-")) == 1
    assert s.list_blocks("archival", "compaction-batch-c1_") == []
    assert s.list_blocks("archival", "compaction-batch-c%") == []
    assert s.host_memory_list({"tier": "archival", "label_prefix": "compaction-batch-c1-x-"})["blocks"][0]["content"] == "x"


def gointerop(*args: str) -> str:
    """Runs the Go side of the interop test. Go is always present where this
    repository is tested (its CI builds the plug-in with it): no Go is a
    failure, not a skip."""
    assert shutil.which("go") is not None, "the go toolchain is not on PATH"
    env = dict(os.environ, GOFLAGS="-mod=mod")
    r = subprocess.run(["go", "run", "./bindings/python/tests/testdata/gointerop", *args], cwd=REPO,
                       capture_output=True, text=True, timeout=540, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_go_store_reads_python_file_and_python_reads_go_writes(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    with SQLiteStore(db) as s:
        s.append_messages("c1", [msg(i, x_extra={"é": [1, 2.5]}) for i in range(5)])
        s.commit(commit())
        py_active = s.active_raw("c1")
        py_blocks = s.list_blocks("archival", "compaction-batch-c1-")
    out = json.loads(gointerop("read", db, "c1", "compaction-batch-c1-", "m0", "m2"))
    assert [json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in out["active"]] == py_active
    assert out["blocks"] == py_blocks
    assert out["recall"]["m2"] == msg(2, x_extra={"é": [1, 2.5]})
    assert out["search_hits"] >= 1
    gointerop("write", db, "c7")
    with SQLiteStore(db) as s:
        assert [m["id"] for m in s.active_messages("c7")] == ["gclip", "g3"]
        assert s.recall("g1")["content"] == "go message 1 about the tokenizer"
        assert s.list_blocks("archival", "compaction-batch-c7-")[0]["content"] == "go summary of the tokenizer"
        assert s.migrate() == 0
        # and Python commits on the file Go wrote
        s.commit(commit(conversation_id="c7", remove_message_ids=["gclip"], archive_writes=[],
                        insert_message={"id": "pyclip", "content": "again"}))
        assert [m["id"] for m in s.active_messages("c7")] == ["pyclip", "g3"]


@pytest.mark.parametrize("begin", ["BEGIN DEFERRED", "BEGIN IMMEDIATE"], ids=["reader", "writer"])
def test_open_waits_for_a_rollback_journal_file(tmp_path: Path, begin: str) -> None:
    """A file in rollback-journal mode (as the Node host leaves it) is put
    in WAL mode when opened. The switch needs the exclusive lock; while
    another connection writes, SQLite answers SQLITE_BUSY at once, without
    waiting. SQLiteStore waits for the other connection, reading or
    writing, instead of raising "database is locked"."""
    import sqlite3
    import threading

    path = str(tmp_path / "rollback.db")
    s = SQLiteStore(path)
    s.append_messages("c1", [msg(0)])
    s._db.execute("PRAGMA journal_mode = DELETE")
    s.close()

    other = sqlite3.connect(path, isolation_level=None)
    other.execute(begin)
    assert other.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
    opened: List[Any] = []

    def open_it() -> None:
        try:
            st = SQLiteStore(path)
            opened.append(st._db.execute("PRAGMA journal_mode").fetchone()[0])
            st.close()
        except Exception as e:  # noqa: BLE001 - reported below
            opened.append(e)

    t = threading.Thread(target=open_it)
    t.start()
    t.join(0.3)
    assert t.is_alive(), "SQLiteStore returned while another connection held the file: %r" % opened
    other.execute("ROLLBACK")
    other.close()
    t.join(30)
    assert opened == ["wal"]
