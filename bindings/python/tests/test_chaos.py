"""The crash and concurrency suite of the Python host, as the Go one
(internal/chaos): child Python processes compact a growing prefix of the
bundled debugging session into one SQLite file through the public API
(Compactor, and AsyncCompactor every other run), killed with SIGKILL at
random instants, or run eight at once. After every kill and every round
the archive is checked as a user relies on it: the database is intact,
every message of the conversation is active or recalled (never both,
never lost), every recalled message is covered by an archived batch, and
the next compaction and a search work. One mixed round runs the Go
command, Python and Node processes at once on one file: Go and Python
share a file (WAL), the Node store cannot while they have it open and
must say so, not corrupt it; handed over, it compacts it.

$CHAOS_ROUNDS raises the number of kills and rounds (default: a run fit
for CI)."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from clipfold import Compactor

from conftest import REPO

SESSION = REPO / "testdata" / "conversations" / "debugging-session.json"
CONV = "conv-checkout-inc-4471"
QUESTION = "what was the root cause of the incident?"
OUTCOMES = ("compacted", "nothing to do", "lost the race")

CHILD = r"""
import asyncio, json, sys
from clipfold import AsyncCompactor, Compactor
db, file, mode = sys.argv[1:4]
with open(file, encoding="utf-8") as f:
    msgs = json.load(f)
conv, cfg = msgs[0]["conversation_id"], {"keep_recent": 4}
def ready():
    print("ready", flush=True)
if mode == "async":
    async def main():
        async with AsyncCompactor(store=db, config=cfg) as c:
            ready()
            return await c.compress(conv, msgs)
    r = asyncio.run(main())
else:
    with Compactor(store=db, config=cfg) as c:
        ready()
        r = c.compress(conv, msgs)
print(json.dumps({k: r.get(k) for k in ("failed", "failure_code", "failure_message", "messages_compressed")}))
"""


def rounds(default: int) -> int:
    """$CHAOS_ROUNDS, else default."""
    try:
        n = int(os.environ.get("CHAOS_ROUNDS", ""))
    except ValueError:
        return default
    return n if n > 0 else default


class Session:
    """The conversation: its messages, their ids, and files of its prefixes."""

    def __init__(self, directory: Path) -> None:
        self.raw: List[Dict[str, Any]] = json.loads(SESSION.read_text(encoding="utf-8"))
        self.ids = [str(m["id"]) for m in self.raw]
        assert all(self.ids) and {m["conversation_id"] for m in self.raw} == {CONV}
        self.dir = directory

    def prefix(self, k: int) -> str:
        p = self.dir / ("conv-%d.json" % k)
        if not p.exists():
            p.write_text(json.dumps(self.raw[:k]), encoding="utf-8")
        return str(p)


def python_child(db: str, file: str, mode: str = "sync") -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-c", CHILD, db, file, mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def outcome(res: Dict[str, Any]) -> str:
    """What a run did: compacted, nothing to do, lost the race — or what
    else it said."""
    if not res["failed"]:
        return "compacted" if res["messages_compressed"] > 0 else "nothing to do"
    if res["failure_code"] == "commit_conflict" and "another compaction" in (res["failure_message"] or ""):
        return "lost the race"
    return "%s: %s" % (res["failure_code"], res["failure_message"])


def result_of(p: "subprocess.Popen[str]", timeout: float = 180) -> str:
    out, err = p.communicate(timeout=timeout)
    try:
        return outcome(json.loads(out.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return "error (exit %s): %s" % (p.returncode, err.strip()[-2000:])


def _rows(db: sqlite3.Connection, sql: str) -> List[Any]:
    try:
        return db.execute(sql, (CONV,)).fetchall()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []  # killed before the first migration committed
        raise


def check(path: str, s: Session, prefixes: Sequence[int]) -> int:
    """What a user relies on after any crash; returns how many of the
    session's messages the archive holds (active or recalled). Appending
    is all or nothing, so the archive holds exactly one of the prefixes
    given so far (or nothing)."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None)  # a new connection, as a new process opens
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",), "SQLite integrity check"
        if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'search_fts'").fetchone() == (1,):
            db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")  # the index matches its tables
        active = _rows(db, "SELECT id, role, content FROM messages WHERE conversation_id = ? ORDER BY seq")
        recalled = _rows(db, "SELECT id, role, content FROM recall WHERE conversation_id = ? ORDER BY pos")
        blocks = _rows(db, "SELECT id, tier, content FROM blocks WHERE conversation_id = ?")
    finally:
        db.close()
    covered = set()
    for bid, _, content in blocks:
        meta = json.loads(content.split("\n", 1)[0])
        assert meta["conversation_id"] == CONV, bid
        covered.update(meta.get("source_message_ids") or [])

    def clip_archive(role: str, content: str) -> bool:
        return role == "system" and content.startswith("[Context Summary")
    order = {mid: i for i, mid in enumerate(s.ids)}
    held: Dict[str, str] = {}
    last = -1
    for i, (mid, role, content) in enumerate(active):
        if clip_archive(role, content):
            assert i == 0, "the clip-archive leads the active history"
            continue
        assert mid not in held, "message %s is active twice" % mid
        held[mid] = "active"
        assert mid in order, "active message %s is not one of the conversation's" % mid
        assert order[mid] > last, "active messages keep the conversation's order (%s)" % mid
        last = order[mid]
    for mid, role, content in recalled:
        if clip_archive(role, content):
            continue
        assert mid not in held, "message %s is both %s and recalled" % (mid, held.get(mid))
        held[mid] = "recall"
        assert mid in covered, "recalled message %s is covered by an archived batch" % mid
    n = len(held)
    for mid in s.ids[:n]:
        assert mid in held, "message %s is lost: the archive holds %d messages but not this one" % (mid, n)
    assert n == 0 or n in prefixes, "the archive holds %d messages, not one of the appended prefixes %s" % (n, prefixes)
    return n


def root_cause_found(wasm: str, path: str) -> None:
    with Compactor(wasm, store=path) as c:
        hits = c.search(QUESTION, conversation_id=CONV, limit=5)
    assert hits, "search found nothing"
    assert any("Rollback" in h["text"] for h in hits[:5]), \
        "the root cause (a missing tx.Rollback) is not in the top five hits: %s" % [h["text"][:80] for h in hits]


def test_killed_at_random_instants(wasm: str, tmp_path: Path) -> None:
    """Runs one after another on a growing prefix, each killed with
    SIGKILL at an instant drawn up to 1.1x how long the last run left
    alone took to compact, from its store opened and plug-in loaded (every
    fourth is left alone, to measure it as the prefix grows); the archive
    is whole after each. A run left alone then completes the compaction,
    and search finds the root cause."""
    s = Session(tmp_path)
    db = str(tmp_path / "chaos.db")
    n = rounds(12)
    prefixes: List[int] = []
    killed = stored = 0
    held = 0
    span: Optional[float] = None
    for i in range(n):
        k = min(len(s.raw), 120 + i * (len(s.raw) - 120) // n)
        prefixes.append(k)
        p = python_child(db, s.prefix(k), "async" if i % 2 else "sync")
        assert p.stdout is not None
        first = p.stdout.readline()
        started = time.monotonic()
        if span is not None and i % 4 and first == "ready\n":
            time.sleep(random.uniform(0, span))
            p.send_signal(signal.SIGKILL)
        out, err = p.communicate(timeout=180)
        if p.returncode == -signal.SIGKILL:
            killed += 1
        else:
            assert p.returncode == 0, "an unkilled run succeeds: %s" % err
            assert outcome(json.loads(out.strip().splitlines()[-1])) in OUTCOMES[:2], out
            span = (time.monotonic() - started) * 1.1
        now = check(db, s, prefixes)
        stored += p.returncode == -signal.SIGKILL and now > held  # killed after its sync had stored the prefix
        held = now
    print("python: %d of %d runs killed mid-way, %d of them after storing the new messages (kill instants up to %.2f s)"
          % (killed, n, stored, span or 0))
    assert killed > 0, "no run was killed: the suite tested nothing"

    p = python_child(db, s.prefix(len(s.raw)))
    assert result_of(p) in OUTCOMES[:2]
    assert check(db, s, prefixes + [len(s.raw)]) == len(s.raw), "every message is held"
    root_cause_found(wasm, db)


def test_processes_at_once(wasm: str, tmp_path: Path) -> None:
    """Eight processes compact the same conversation at once, in rounds
    over a growing prefix: each compacts, finds nothing to do, or loses
    the race and says another compaction won — nothing else — and the
    archive is whole after every round."""
    s = Session(tmp_path)
    db = str(tmp_path / "chaos.db")
    n = rounds(3)
    prefixes: List[int] = []
    outcomes: Dict[str, int] = {}
    for i in range(n):
        k = min(len(s.raw), 200 + (i + 1) * (len(s.raw) - 200) // n)
        prefixes.append(k)
        file = s.prefix(k)
        procs = [python_child(db, file, "async" if j % 2 else "sync") for j in range(8)]
        results = [result_of(p) for p in procs]
        for r in results:
            outcomes[r] = outcomes.get(r, 0) + 1
        assert all(r in OUTCOMES for r in results), results
        assert check(db, s, prefixes) == k, "round %d: every message is held" % i
    print("python: 8 processes x %d rounds: %s" % (n, outcomes))
    assert outcomes.get("compacted", 0) > 0, "some process compacted"
    root_cause_found(wasm, db)


NODE_CHILD = r"""
const [db, file, src] = process.argv.slice(1);
const { createCompactor, SQLiteStore } = await import(src);
const { readFileSync } = await import('node:fs');
const msgs = JSON.parse(readFileSync(file, 'utf8'));
let out;
try {
  const store = new SQLiteStore(db);
  const c = await createCompactor({ store, config: { keep_recent: 4 } });
  const r = await c.compress(msgs[0].conversation_id, msgs);
  await c.close();
  store.close();
  out = { failed: r.failed, failure_code: r.failure_code, failure_message: r.failure_message, messages_compressed: r.messages_compressed };
} catch (err) {
  out = { error: String(err?.message ?? err), code: err?.code ?? null };
}
console.log(JSON.stringify(out));
"""


def node_child(db: str, file: str) -> "subprocess.Popen[str]":
    src = (REPO / "bindings" / "node" / "src" / "index.js").as_uri()
    return subprocess.Popen(["node", "--input-type=module", "-e", NODE_CHILD, "--", db, file, src],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def go_child(cli: str, db: str, file: str, cache: str) -> "subprocess.Popen[str]":
    env = dict(os.environ, CLIPFOLD_CACHE_DIR=cache, CLIPFOLD_LOCK_TIMEOUT="120s")
    return subprocess.Popen([cli, "compact", file, "--quiet", "--json", "--keep-recent", "4", "--db", db],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def node_ready() -> None:
    """The Node package's dependencies, installed as `make chaos` does."""
    pkg = REPO / "bindings" / "node"
    if not (pkg / "node_modules" / "node-sqlite3-wasm").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=pkg, check=True, capture_output=True)


def test_go_python_and_node_on_one_file(wasm: str, tmp_path: Path) -> None:
    """The Go command and Python processes share one file at once (WAL,
    POSIX locks). A Node process started while they have it open (its
    -shm there) is refused with an error saying why, and changes nothing;
    handed over (Go and Python gone), Node compacts it, and then Go and
    Python again — the archive whole after each step."""
    s = Session(tmp_path)
    db, cache = str(tmp_path / "mixed.db"), str(tmp_path / "cache")
    cli = str(tmp_path / "clipfold")
    build = subprocess.run(["go", "build", "-o", cli, "./cmd/clipfold"], cwd=REPO, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    node_ready()
    total = len(s.raw)
    ks = [200, 420, 650, total]
    prefixes: List[int] = []

    prefixes.append(ks[0])
    assert result_of(go_child(cli, db, s.prefix(ks[0]), cache)) in OUTCOMES[:2]
    check(db, s, prefixes)

    # Go, Python and Node at once, while the file is open in WAL mode (a
    # connection kept open here stands for a long-lived Go or Python host).
    prefixes.append(ks[1])
    file = s.prefix(ks[1])
    holder = sqlite3.connect(db, timeout=30, isolation_level=None)
    try:
        holder.execute("SELECT count(*) FROM messages").fetchone()
        assert os.path.exists(db + "-shm"), "the file is not open in WAL mode: the case is not set up"
        procs = [go_child(cli, db, file, cache) for _ in range(3)] + [python_child(db, file) for _ in range(3)]
        nodes = [node_child(db, file) for _ in range(2)]
        shared = [result_of(p) for p in procs]
        refused = []
        for p in nodes:
            out, err = p.communicate(timeout=180)
            refused.append(json.loads(out.strip().splitlines()[-1]) if out.strip() else {"error": err})
    finally:
        holder.close()
    assert all(r in OUTCOMES for r in shared), shared
    assert "compacted" in shared
    for r in refused:
        assert "error" in r, "a Node store opened a file Go or Python have open: %s" % r
        assert "-shm exists" in r["error"] and "cannot use a file at the same time" in r["error"], r["error"]
    assert check(db, s, prefixes) == ks[1]

    # Handed over: Node alone converts the file to its rollback journal and compacts.
    prefixes.append(ks[2])
    out, err = node_child(db, s.prefix(ks[2])).communicate(timeout=180)
    res = json.loads(out.strip().splitlines()[-1])
    assert "error" not in res, res
    assert outcome(res) == "compacted", res
    assert check(db, s, prefixes) == ks[2]

    # And back: Go and Python at once on the file Node left.
    prefixes.append(ks[3])
    file = s.prefix(ks[3])
    procs = [go_child(cli, db, file, cache) for _ in range(2)] + [python_child(db, file, "async") for _ in range(2)]
    shared = [result_of(p) for p in procs]
    assert all(r in OUTCOMES for r in shared), shared
    assert check(db, s, prefixes) == total
    root_cause_found(wasm, db)


@pytest.fixture(autouse=True)
def _chaos_env(monkeypatch: pytest.MonkeyPatch, wasm: str) -> None:
    """The children load the plug-in under test."""
    monkeypatch.setenv("CLIPFOLD_WASM", wasm)
