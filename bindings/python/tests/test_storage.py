"""The store's files under real storage failures: an I/O error (a
file-size limit, as a full disk gives) reaches the caller as what it is,
leaves nothing behind, and the next call works once the cause is gone."""

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict

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
        out["recalled"] = sorted(store.recalled_ids([m["id"] for m in history]))
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
