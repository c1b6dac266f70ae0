"""The store's files under real storage conditions: an I/O error (a
file-size limit, as a full disk gives) reaches the caller as what it is,
leaves nothing behind, and the next call works once the cause is gone; an
archive the user cannot write is read (``read_only=True``) without
migrating or writing anything."""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from clipfold import ClipfoldError, Compactor, SQLiteStore, _schema
from clipfold.store import StoreError, _statements

from test_compress import CONFIG, build_conversation

# Runs in a child process: RLIMIT_FSIZE is per process, and a write past it
# raises SIGXFSZ, which is ignored so that the write fails with EFBIG (the
# disk I/O error SQLite reports) instead of killing the process.
LIMITED = textwrap.dedent(r'''
    import json, resource, signal, sys
    from clipfold import Compactor, SQLiteStore

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    path, wasm, config, history = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    out = {}

    def limit(size):
        """No write past `size` bytes of a file: the write-ahead log, empty
        after the checkpoint, holds a transaction until it commits."""
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))

    def lift():
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    store = SQLiteStore(path)
    with Compactor(wasm, store=store, config=config) as c:
        store.append_messages("small", [{"id": "s0", "role": "user", "content": "kept before the failure"}])
        big = [{"id": "b%d" % i, "role": "user", "content": "x" * 2000 + str(i)} for i in range(1500)]
        limit(65536)
        try:
            store.append_messages("big", big)
            out["append_first"] = "ok"
        except Exception as e:
            out["append_first"] = "%s: %s" % (type(e).__name__, e)
        out["append_in_transaction"] = store.connection.in_transaction
        lift()
        store.append_messages("big", big)
        out["big"] = len(store.active_rows("big"))

        store.append_messages("c1", history)
        limit(8192)
        r = c.compress("c1")
        out["compress_first"] = [r["failed"], r["failure_code"], r["failure_message"]]
        lift()
        r = c.compress("c1")
        out["compress_second"] = [r["failed"], r["messages_compressed"]]
        out["active"] = [i for i, _ in store.active_rows("c1")]
        out["recalled"] = sorted(store.recalled_ids("c1", [m["id"] for m in history]))
    print(json.dumps(out))
''')


def test_io_error_reaches_the_caller_and_the_next_call_works(wasm: str, tmp_path: Path) -> None:
    path = str(tmp_path / "limited.db")
    history = build_conversation(30)
    p = subprocess.run([sys.executable, "-c", LIMITED, path, wasm, json.dumps(CONFIG), json.dumps(history)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out: Dict[str, Any] = json.loads(p.stdout.splitlines()[-1])
    # The append past the limit: SQLite's own error, not the ROLLBACK's
    # ("cannot rollback - no transaction is active"), and no transaction
    # left open on the connection.
    assert out["append_first"] == "OperationalError: disk I/O error", out
    assert out["append_in_transaction"] is False
    assert out["big"] == 1500
    # The commit past the limit: a failed compaction naming the I/O error,
    # the history unchanged.
    failed, code, message = out["compress_first"]
    assert failed is True and code is not None, out
    assert "disk I/O error" in message and "rollback" not in message, message
    # Once the limit is lifted: compacted, and every message is active or
    # in recall.
    assert out["compress_second"][0] is False and out["compress_second"][1] > 0, out
    ids = [m["id"] for m in history]
    assert sorted((set(out["active"]) & set(ids)) | set(out["recalled"])) == sorted(ids)
    assert not set(out["active"]) & set(out["recalled"])
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT content FROM messages WHERE id = 's0'").fetchall() == [("kept before the failure",)]
    finally:
        db.close()
    assert not os.path.exists(path + "-journal")


READER = textwrap.dedent(r"""
    import json, os, sys
    from clipfold import SQLiteStore
    from clipfold.store import StoreError

    path, want = sys.argv[1], json.loads(sys.argv[2])
    out = {}
    try:
        open(os.path.join(os.path.dirname(path), "probe"), "w").close()
        out["probe"] = "written"
    except OSError as e:
        out["probe"] = type(e).__name__
    try:
        SQLiteStore(path).close()
        out["writable_open"] = "ok"
    except Exception as e:
        out["writable_open"] = "%s: %s" % (type(e).__name__, e)
    try:
        with SQLiteStore(path, read_only=True) as s:
            out["hits"] = [h["id"] for h in s.search_fts5(want["fts5"], want["conversation"])]
            out["recalled"] = s.recall(want["recalled"])
            out["read"] = s.read(want["recalled"])["kind"]
            out["block"] = s.read(want["block"])["block"]["id"]
            out["active"] = s.active_messages(want["conversation"])
            try:
                s.append_messages(want["conversation"], [{"id": "new", "role": "user", "content": "x"}])
                out["write"] = "ok"
            except StoreError as e:
                out["write"] = str(e)
    except Exception as e:
        out["read_only_open"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(out))
""")


def no_dac_override() -> None:
    """Run in the child before it executes: root without the capabilities
    that let it write any file whatever its mode (CAP_DAC_OVERRIDE,
    CAP_DAC_READ_SEARCH) is held to the modes like any user."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, %d)" % cap)


def reader(path: str, want: Dict[str, Any]) -> Dict[str, Any]:
    """Runs READER in a process that cannot write the archive's file or
    directory (the modes deny it; root runs without the capabilities that
    override them) and checks that it cannot."""
    preexec = no_dac_override if os.geteuid() == 0 else None
    p = subprocess.run([sys.executable, "-c", READER, path, json.dumps(want)], capture_output=True, text=True,
                       timeout=120, preexec_fn=preexec)
    assert p.returncode == 0, p.stderr
    out: Dict[str, Any] = json.loads(p.stdout.splitlines()[-1])
    assert out["probe"].startswith("PermissionError"), "the reader can write the directory: the case proves nothing"
    return out


@pytest.fixture
def shared_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory the tests make read-only, writable again afterwards."""
    d = tmp_path / "archive"
    d.mkdir()
    try:
        yield d
    finally:
        d.chmod(0o755)


def snapshot(d: Path) -> Dict[str, str]:
    """Each file of the directory and its content's hash."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(d.iterdir())}


def make_read_only(d: Path) -> None:
    for f in d.iterdir():
        f.chmod(0o444)
    d.chmod(0o555)


def test_read_only_archive_is_read_by_a_user_who_cannot_write_it(wasm: str, shared_dir: Path) -> None:
    path = str(shared_dir / "archive.db")
    history = build_conversation(30)
    with Compactor(wasm, store=path, config=CONFIG) as c:
        r = c.compress("c1", history)
        assert not r["failed"] and r["messages_compressed"] > 0
        active = c.store.active_messages("c1")
        hits = c.search("parser bug", "c1")
        recalled = next(h["id"] for h in hits if h["kind"] == "message" and not h["in_context"])
        block = next(h["id"] for h in hits if h["kind"] == "batch")
        want = {"fts5": c.search_query("parser bug")["fts5"], "conversation": "c1", "recalled": recalled,
                "block": block}
        expected_hits = [h["id"] for h in hits]
        expected_recall = c.store.recall(recalled)
    # The store closed: the log is in the file, which is in WAL mode, and
    # no -shm is left (what the Go and Python stores leave behind).
    assert sorted(os.listdir(shared_dir)) == ["archive.db"]
    make_read_only(shared_dir)
    before = snapshot(shared_dir)
    out = reader(path, want)
    # Opening it to write fails, as the report says (the case is real) …
    assert out["writable_open"] != "ok", out
    # … and reading it works: search, recall and read by id, the active history.
    assert "read_only_open" not in out, out
    assert out["hits"] == expected_hits
    assert out["recalled"] == expected_recall
    assert out["read"] == "message" and out["block"] == block
    assert out["active"] == active
    assert "read-only" in out["write"], out
    assert snapshot(shared_dir) == before


def test_read_only_refuses_a_log_only_a_writer_can_apply(shared_dir: Path) -> None:
    """A WAL database whose -wal holds commits (a writer died) in a
    directory the reader cannot write: refused, saying why — reading the
    file alone would miss those commits."""
    path = str(shared_dir / "archive.db")
    code = textwrap.dedent("""
        import os, sys
        from clipfold import SQLiteStore
        s = SQLiteStore(sys.argv[1])
        s.connection.execute("PRAGMA wal_autocheckpoint = 0")
        s.append_messages("c1", [{"id": "m1", "role": "user", "content": "only in the log"}])
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", code, path], check=True, timeout=60)
    os.remove(path + "-shm")  # no process has it open
    assert os.path.getsize(path + "-wal") > 0
    make_read_only(shared_dir)
    out = reader(path, {"fts5": "x", "conversation": "c1", "recalled": "m1", "block": "b"})
    assert "write-ahead log" in out["read_only_open"] and "open it writable once" in out["read_only_open"], out


def schema_at(path: str, version: int) -> sqlite3.Connection:
    """A database migrated up to `version` only, as an older clipfold left it."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    for v, name, sql in _schema.migrations()[:version]:
        for stmt in _statements(sql):
            db.execute(stmt)
        db.execute("INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')", (v, name))
    db.execute("COMMIT")
    return db


def test_read_only_reads_version_4_and_never_migrates(tmp_path: Path, pure: Compactor) -> None:
    path = str(tmp_path / "v4.db")
    db = schema_at(path, 4)
    db.execute("INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw) "
               "VALUES ('m2', 'c1', 2, 'user', 'still active', '', ?)", (json.dumps({"id": "m2"}),))
    db.execute("INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, "
               "operation_id) VALUES ('m1', 'c1', 1, 'user', 'the walrus escaped', '', ?, "
               "'2026-01-01T00:00:00.000Z', 'op1')", (json.dumps({"id": "m1"}),))
    db.close()
    before = snapshot(tmp_path)
    with SQLiteStore(path, read_only=True, query_analyzer=pure.search_query) as s:
        assert [h["id"] for h in s.search("where is the walrus?")] == ["m1"]
        assert s.recall("m1") == {"id": "m1"}
        assert s.active_messages("c1") == [{"id": "m2"}]
        with pytest.raises(StoreError, match="read-only"):
            s.migrate()
    assert snapshot(tmp_path) == before
    db = sqlite3.connect(path)
    assert db.execute("SELECT max(version) FROM schema_migrations").fetchone() == (4,)
    db.close()


@pytest.mark.parametrize("version, message", [
    (3, "schema version 3 is older than reading needs (4): open it writable once"),
    (99, "schema version 99 is newer than this clipfold knows"),
])
def test_read_only_refuses_a_schema_it_cannot_read(tmp_path: Path, version: int, message: str) -> None:
    path = str(tmp_path / "old.db")
    db = schema_at(path, min(version, len(_schema.migrations())))
    if version > len(_schema.migrations()):
        db.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', '2026-01-01T00:00:00.000Z')",
                   (version,))
    db.close()
    before = snapshot(tmp_path)
    with pytest.raises(StoreError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SQLiteStore(path, read_only=True)
    assert snapshot(tmp_path) == before


def test_read_only_needs_an_existing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such database file"):
        SQLiteStore(str(tmp_path / "missing.db"), read_only=True)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(StoreError, match="needs a database file"):
        SQLiteStore(read_only=True)
    with pytest.raises(ClipfoldError, match="read_only: must be True or False"):
        SQLiteStore(str(tmp_path / "x.db"), read_only="yes")  # type: ignore[arg-type]
