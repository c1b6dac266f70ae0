"""SQLiteStore: clipfold's durable memory on Python's built-in sqlite3.

The tables, the SQL and the commit rules are those of the Go store
(hostfuncs/store/sqlite, described in hostfuncs/store/SCHEMA.md), so a
database written by one host opens in the other:

- ``messages``: each conversation's active history, ordered by ``seq``,
  the exact JSON of each message in ``raw``;
- ``recall``: messages a compaction removed, moved here rather than
  destroyed, searchable;
- ``blocks``: archival blocks (batch summaries), searchable;
- ``search_fts``: one full-text index over the three (kept by triggers),
  so ``search`` ranks active and recalled messages and batches in one
  list;
- ``schema_migrations``: the applied schema versions.

The migration steps and the shared queries are the Go store's own .sql
files (see ``_schema``).

``commit`` is ``compaction_commit`` (docs/spec.md#compaction_commit): one ``BEGIN IMMEDIATE``
transaction that applies everything or nothing, and answers ``conflict``
when an id to remove or delete no longer exists.

What a store writes and reads is the plug-in's to say, as for every host
(hostfuncs/store/SCHEMA.md): the ``planCommit`` export gives the rows a
commit writes and the checks to make first, ``planAppend`` the row of each
appended message, ``parseBlocks`` what an archived block's content says of
itself. This module only runs the shared SQL with them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union
from contextlib import contextmanager
from pathlib import Path

from ._check import boolean, describe, invalid, json_text, path_like, string, whole_number
from ._schema import migrations as _migrations, query as _query
from ._locate import find_wasm
from ._plugin import QueryAnalyzerPlugin, export_caller
from .errors import ClipfoldError
from .types import Block, CommitRequest, Message, SearchHit, SearchQuery, StoredBlock

MEMORY_PATH = ":memory:"
READ_MIN_VERSION = 4
"""The oldest schema version a read-only store reads (SCHEMA.md, "Opening
for reading"): the queries run on it unchanged."""
BUSY_TIMEOUT_S = 30.0
DEFAULT_SEARCH_LIMIT = 20
MAX_SEARCH_LIMIT = 1000
ROLES = ("user", "assistant", "system", "tool")


class StoreError(Exception):
    """A store operation failed; ``code`` is the host error code it maps to."""

    code = "other"


class ConflictError(StoreError):
    """An id to remove or delete no longer exists: another compaction won."""

    code = "conflict"


class DuplicateIDError(StoreError):
    """Message ids the conversation already holds (active or in recall).
    Ids are unique within a conversation only: another conversation's
    message of the same id is another message."""

    def __init__(self, ids: Sequence[str], where: str = "") -> None:
        super().__init__("%smessage id(s) already stored in this conversation: %s" % (where, json.dumps(list(ids))))
        self.ids = list(ids)


class AmbiguousIDError(StoreError):
    """A message id read without its conversation that several
    conversations' recall holds: ``conversations`` lists them (at most
    10); name one to read its message."""

    def __init__(self, message_id: str, conversations: Sequence[str]) -> None:
        super().__init__("recall message %r: the id is in more than one conversation (%s): name the conversation"
                         % (message_id, ", ".join(repr(c) for c in conversations)))
        self.message_id = message_id
        self.conversations = list(conversations)


class NotFoundError(StoreError):
    code = "not_found"


def format_time(t: datetime) -> str:
    """clipfold's time format (docs/spec.md#conventions): UTC, milliseconds, ``Z``."""
    t = t.astimezone(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


QueryAnalyzer = Callable[[str], Mapping[str, Any]]
"""Analyses a natural-language query: the plug-in's searchQuery export,
``{"terms": [...], "fts5": "...", "tsquery": "..."}``."""

_default_analyzer_lock = threading.Lock()
_default_analyzer: Optional[QueryAnalyzer] = None


PluginCaller = Callable[[str, bytes], bytes]
"""Calls an export of the plug-in: ``caller(export, input) -> output``,
both JSON bytes; a failure the export reports raises ClipfoldError."""

_default_plugin: Optional[PluginCaller] = None


def default_plugin() -> PluginCaller:
    """The plug-in's exports on one shared instance of the plug-in
    ``find_wasm`` finds: what a store made without a Compactor plans its
    commits and appends and reads its blocks with."""
    global _default_plugin
    with _default_analyzer_lock:
        if _default_plugin is None:
            _default_plugin = export_caller(find_wasm())
        return _default_plugin


def default_query_analyzer() -> QueryAnalyzer:
    """The plug-in's searchQuery export on one shared instance of the
    plug-in ``find_wasm`` finds: what a store made without a Compactor
    analyses queries with."""
    global _default_analyzer
    with _default_analyzer_lock:
        if _default_analyzer is None:
            _default_analyzer = QueryAnalyzerPlugin(find_wasm())
        return _default_analyzer


MessageInput = Union[Mapping[str, Any], str, bytes]


def _enter_wal(db: sqlite3.Connection, wait_s: float) -> None:
    """Puts the file in WAL mode, which the file keeps. Leaving a rollback
    journal (the Node host's mode) takes the exclusive lock, and SQLite
    answers "database is locked" at once, without waiting, when another
    connection holds the write lock while this one reads (two readers that
    both want to write would deadlock otherwise). So the switch is retried,
    the read lock released in between, until wait_s has passed. A file
    already in WAL mode answers at once."""
    deadline = time.monotonic() + wait_s
    pause = 0.002
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as e:
            code = getattr(e, "sqlite_errorcode", None)  # Python 3.11+
            busy = code & 0xFF in (5, 6) if code is not None else "is locked" in str(e)  # SQLITE_BUSY, SQLITE_LOCKED
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


class SQLiteStore:
    """The embedded store: a file (WAL mode) or ``":memory:"``.

    Safe to share between threads (one connection, behind a lock); several
    processes, Go or Python, may share one file: every write transaction is
    ``BEGIN IMMEDIATE`` with a 30 s busy timeout, so racing commits are
    serialized by SQLite and the loser sees ``conflict``.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"] = MEMORY_PATH, *,
                 query_analyzer: Optional[QueryAnalyzer] = None, read_only: bool = False,
                 plugin: Optional[PluginCaller] = None) -> None:
        """``query_analyzer`` analyses search queries (the plug-in's
        searchQuery export); by default a Compactor using this store lends
        its plug-in, else one is loaded on the first search. ``plugin``
        calls the exports that say what a commit or an append writes and
        what a block holds (planCommit, planAppend, parseBlocks); by
        default a Compactor using this store lends its plug-in, else the
        shared one (``default_plugin``) is loaded on first use.

        ``read_only=True`` opens an existing database for reading only
        (search, recall, read, the active history — an archive the user
        may not be able to write): nothing is migrated or written, and
        every write raises StoreError saying the store is read-only.
        SCHEMA.md, "Opening for reading": a database of version 4 or newer
        (up to the newest this package knows) is read; an older one is
        refused with an error saying to open it writable once."""
        self.query_analyzer = query_analyzer
        self.plugin = plugin
        boolean(read_only, "read_only")
        path_like(path, "path")
        p = os.fspath(path)
        if not p:
            raise invalid("path", 'is empty (use a file path or ":memory:")')
        self.path = p
        self.read_only = read_only
        self._lock = threading.RLock()
        if read_only:
            self._db = _open_read_only(p)
            try:
                self._check_readable()
            except BaseException:
                self._db.close()
                raise
            return
        self._db = sqlite3.connect(p, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout = %d" % int(BUSY_TIMEOUT_S * 1000))
        self._db.execute("PRAGMA foreign_keys = ON")
        if p != MEMORY_PATH:
            _enter_wal(self._db, BUSY_TIMEOUT_S)
            self._db.execute("PRAGMA synchronous = NORMAL")
        self.migrate()

    def _check_readable(self) -> None:
        """A read-only store reads schema versions READ_MIN_VERSION up to
        the newest it knows; anything else is refused, naming what to do."""
        try:
            versions = [int(r[0]) for r in self._db.execute("SELECT version FROM schema_migrations")]
        except sqlite3.DatabaseError as e:
            if "no such table" not in str(e):
                raise
            raise StoreError("sqlite %s: not a clipfold database (it has no schema_migrations table)" % self.path) \
                from None
        version, known = max(versions, default=0), len(_migrations())
        if version > known:
            raise StoreError("sqlite %s: schema version %d is newer than this clipfold knows (up to %d): upgrade "
                             "clipfold" % (self.path, version, known))
        if version < READ_MIN_VERSION:
            raise StoreError("sqlite %s: schema version %d is older than reading needs (%d): open it writable once "
                             "(SQLiteStore(path), or any writing clipfold command) to migrate it"
                             % (self.path, version, READ_MIN_VERSION))

    # ------------------------------------------------------------ plumbing
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One BEGIN IMMEDIATE transaction: committed when the body
        returns, rolled back when it or the COMMIT fails. The failure is
        the error raised: SQLite rolls a transaction back itself on an I/O
        error (a full disk, a file-size limit), and a ROLLBACK then has
        nothing to undo — its own error must not replace the real one."""
        with self._lock:
            if self.read_only:
                raise StoreError("sqlite %s: opened read-only (read_only=True): nothing can be written" % self.path)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    try:
                        self._db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # the connection's next BEGIN reports a lasting problem
                raise

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection, for tools and tests that need SQL."""
        return self._db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "SQLiteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def migrate(self) -> int:
        """Applies pending migrations in one IMMEDIATE transaction; returns
        how many it applied (0 on an up-to-date database)."""
        with self._tx() as db:
            db.execute("""CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)""")
            applied = {r[0] for r in db.execute("SELECT version FROM schema_migrations")}
            n = 0
            for version, name, sql in _migrations():
                if version in applied:
                    continue
                # executescript would COMMIT first outside autocommit mode;
                # with isolation_level=None it runs inside our transaction.
                for stmt in _statements(sql):
                    db.execute(stmt)
                db.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                           (version, name, format_time(datetime.now(timezone.utc))))
                n += 1
            return n

    # ------------------------------------------------------------ messages
    def append_messages(self, conversation_id: str, messages: Sequence[MessageInput]) -> None:
        """Adds messages, in order, after the conversation's active history.

        Each message is a native Message (docs/spec.md#message; ``id``, ``role``, …) as a dict (stored
        as compact JSON) or the exact JSON text/bytes to store, in any
        shape of docs/spec.md#message-shapes; the plug-in's ``planAppend``
        export reads its row (role as clipfold reads it, text, time in
        clipfold's format). Ids are the messages' own and unique within
        the conversation, active and recall: a missing or repeated id, or
        one the conversation already holds, is an error
        (DuplicateIDError for a held one), and nothing is added; another
        conversation's message of the same id is no matter. Messages
        without ids go through :meth:`append_rows` with what the plug-in's
        ``decodeHistory`` export read of them (their derived ids), as
        ``Compactor.compress`` does."""
        self._insert_rows(conversation_id, self._plan_append(conversation_id, messages))

    def append_rows(self, conversation_id: str, rows: Sequence[Tuple[str, str, str, str, str]]) -> None:
        """Adds messages given as rows ``(id, role, content, created_at,
        raw)`` — the id, role, text and time the plug-in's ``decodeHistory``
        export reads in a message of any shape, and its exact JSON — after
        the conversation's active history, with append_messages' rules."""
        self._insert_rows(conversation_id, _check_rows(conversation_id, rows))

    def append_new(self, conversation_id: str, messages: Sequence[MessageInput]) -> List[MessageInput]:
        """Appends, in order and in one transaction, the messages whose id
        the conversation holds nowhere yet (neither active nor in recall),
        and returns them; a message whose id it holds is skipped, whatever
        its content. This is how a list the caller sends again and again is
        stored: processes and threads appending the same list at once store
        each message once, and none of them fails. ``messages`` is checked
        as for append_messages (a repeated id within it is an error, and
        nothing is added)."""
        rows = self._plan_append(conversation_id, messages)
        return [messages[i] for i in self._insert_rows(conversation_id, rows, skip_held=True)]

    def append_new_rows(self, conversation_id: str,
                        rows: Sequence[Tuple[str, str, str, str, str]]) -> List[Tuple[str, str, str, str, str]]:
        """append_new for rows ``(id, role, content, created_at, raw)`` as
        append_rows takes them: how ``Compactor.compress`` stores the list
        it is given. Returns the rows appended."""
        checked = _check_rows(conversation_id, rows)
        return [rows[i] for i in self._insert_rows(conversation_id, checked, skip_held=True)]

    def _insert_rows(self, conversation_id: str, rows: List[Tuple[str, str, str, str, str]],
                     skip_held: bool = False) -> List[int]:
        """Appends rows after the conversation's active history in one
        IMMEDIATE transaction (queries/held_ids.sql, append_message.sql):
        the check of the ids it holds and the insert see the same database.
        A held id is an error (DuplicateIDError, nothing added), or with
        ``skip_held`` left out. Returns the indexes of the rows appended."""
        if not rows:
            return []
        ids = json.dumps([r[0] for r in rows])
        with self._tx() as db:
            held = [r[0] for r in db.execute(_query("held_ids"), (ids, conversation_id))]
            if held and not skip_held:
                raise DuplicateIDError(held, "append to %r: " % conversation_id)
            skip = set(held)
            kept = [i for i, r in enumerate(rows) if r[0] not in skip]
            db.executemany(_query("append_message"), [(rows[i][0], conversation_id) + rows[i][1:] for i in kept])
        return kept

    def _plan_append(self, conversation_id: str,
                     messages: Sequence[MessageInput]) -> List[Tuple[str, str, str, str, str]]:
        """Each message's row (id, role, content, created_at, raw): raw the
        exact JSON given (a dict as compact JSON), the rest as the plug-in's
        planAppend export reads it."""
        raws: List[str] = []
        for i, m in enumerate(messages):
            if isinstance(m, (bytes, bytearray)):
                m = bytes(m).decode("utf-8")
            if isinstance(m, str):
                try:
                    json.loads(m)
                except ValueError as e:
                    raise StoreError("append: messages[%d]: not valid JSON: %s" % (i, e)) from None
                raws.append(m)
            else:
                raws.append(json_text(m, "messages[%d]" % i))
        if not raws:
            return []
        data = '{"conversation_id":%s,"messages":[%s]}' % (json.dumps(conversation_id), ",".join(raws))
        plan = self._export("planAppend", data.encode("utf-8", "surrogatepass"), "append to %r" % conversation_id)
        return [(r["id"], r["role"], r["content"], r["created_at"], raw) for r, raw in zip(plan["messages"], raws)]

    def _export(self, export: str, data: bytes, what: str) -> Any:
        """The plug-in's answer to an export, parsed; its refusal is a
        StoreError saying ``what`` was refused and why."""
        plugin = self.plugin or default_plugin()
        try:
            return json.loads(plugin(export, data))
        except ClipfoldError as e:
            raise StoreError("%s: %s" % (what, e)) from None

    def active_raw(self, conversation_id: str) -> List[str]:
        """The conversation's active history, each message's exact JSON."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT raw FROM messages WHERE conversation_id = ? ORDER BY seq", (conversation_id,))]

    def active_rows(self, conversation_id: str) -> List[Tuple[str, str]]:
        """The conversation's active history as ``(id, exact JSON)`` pairs."""
        with self._lock:
            return [(r[0], r[1]) for r in self._db.execute(
                "SELECT id, raw FROM messages WHERE conversation_id = ? ORDER BY seq", (conversation_id,))]

    def recalled_ids(self, conversation_id: str, ids: Sequence[str]) -> Set[str]:
        """The ids among ``ids`` that the conversation's recall storage holds."""
        j = json.dumps(_ids_arg("recalled_ids", ids))
        with self._lock:
            return {r[0] for r in self._db.execute(
                "SELECT id FROM recall WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1))",
                (j, _conversation_arg("recalled_ids", conversation_id)))}

    def active_messages(self, conversation_id: str) -> List[Message]:
        """The conversation's active history, in order."""
        return [json.loads(r) for r in self.active_raw(conversation_id)]

    def known_ids(self, conversation_id: str, ids: Sequence[str]) -> Set[str]:
        """The ids among ``ids`` the conversation holds, active or in recall."""
        j = json.dumps(_ids_arg("known_ids", ids))
        with self._lock:
            return {r[0] for r in self._db.execute(
                "SELECT id FROM messages WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1)) "
                "UNION SELECT id FROM recall WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1))",
                (j, _conversation_arg("known_ids", conversation_id)))}

    def recall(self, message_id: str, conversation_id: str = "") -> Message:
        """A message a compaction removed, as it was given: the
        conversation's message of this id. Without a conversation (``""``)
        the message of the only conversation whose recall holds the id;
        AmbiguousIDError, listing them, when several do (SCHEMA.md,
        "Reading by id"). NotFoundError when there is none."""
        string(message_id, "message_id")
        conv = _conversation_arg("recall", conversation_id, empty=True)
        with self._lock:
            rows = self._db.execute(
                "SELECT raw, conversation_id FROM recall WHERE id = ?1 AND (?2 = '' OR conversation_id = ?2) "
                "ORDER BY conversation_id LIMIT 11", (message_id, conv)).fetchall()
        if not rows:
            where = " in conversation %r" % conv if conv else ""
            raise NotFoundError("recall message %r: not found%s" % (message_id, where))
        if len(rows) > 1:
            raise AmbiguousIDError(message_id, [r[1] for r in rows[:10]])
        msg: Message = json.loads(rows[0][0])
        return msg

    # ------------------------------------------------------------ blocks
    def list_blocks(self, tier: str, label_prefix: str) -> List[Block]:
        """Blocks of tier whose label starts with label_prefix (taken
        literally), oldest first: what memory_list answers."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, label, content FROM blocks WHERE tier = ?1 AND label >= ?2 "
                "AND substr(label, 1, length(?2)) = ?2 ORDER BY pos", (tier, label_prefix)).fetchall()
        return [{"id": r[0], "label": r[1], "content": r[2]} for r in rows]

    def commit(self, c: Union[CommitRequest, str, bytes], now: Optional[datetime] = None) -> None:
        """Applies a compaction_commit in one transaction, or nothing
        (hostfuncs/store/SCHEMA.md, "The commit"): the rows and checks of the
        plug-in's planCommit export (``plan_commit``), written with the
        shared queries. ``c`` is the commit as a dict, or its exact JSON.

        Store-owned (``history_owner`` "store" or absent): the removed
        messages move from the active history to recall and the
        clip-archive is inserted before what stays; each of
        ``replace_messages`` moves to recall (an original recall already
        holds stays) and its row takes the replacement, same position.
        Caller-owned (``history_owner`` "caller"): the active history is not
        touched; each of ``recall_writes`` is written to recall once, and
        the clip-archive is not stored.

        Raises ConflictError when an id to remove or replace (store-owned)
        or a block to delete no longer exists, DuplicateIDError when an id
        it adds is held already, StoreError for a malformed commit."""
        plan = self.plan_commit(c, now)
        conv, op, at = plan["conversation_id"], plan["operation_id"], plan["now"]
        with self._tx() as db:
            if plan["checks"]:
                failed = db.execute(_query("commit_check"), (conv, json.dumps(plan["checks"]))).fetchall()
                if failed:
                    raise _check_failed(conv, op, failed)
            ins = plan["insert"]
            if ins is not None:
                db.execute(_query("insert_clip_archive"),
                           (ins["id"], conv, ins["role"], ins["content"], ins["created_at"], ins["raw"]))
            if plan["move_ids"]:
                db.execute(_query("move_to_recall"), (conv, json.dumps(plan["move_ids"]), at, op,
                                                      json.dumps(plan["search_text"], ensure_ascii=False)))
                _rewrite_nul_texts(db, conv, plan["search_text"])
            if plan["remove_ids"]:
                db.execute(_query("remove_messages"), (conv, json.dumps(plan["remove_ids"])))
            db.executemany(_query("replace_message"),
                           [(conv, r["id"], r["new_id"], r["role"], r["content"], r["raw"]) for r in plan["replace"]])
            db.executemany(_query("write_recall"), [(w["id"], conv, w["role"], w["content"], w["created_at"], w["raw"],
                                                     at, op, w["search_text"]) for w in plan["recall_writes"]])
            if plan["delete_ids"]:
                db.execute(_query("delete_blocks"), (json.dumps(plan["delete_ids"]),))
            db.executemany(_query("write_block"), [(w["tier"], w["label"], w["content"], at, conv, w["reason"], op)
                                                   for w in plan["archive_writes"]])

    def plan_commit(self, c: Union[CommitRequest, str, bytes], now: Optional[datetime] = None) -> Dict[str, Any]:
        """What a commit writes: the plug-in's planCommit export for ``c``
        (a dict, or its exact JSON) at ``now`` (default: the current time).
        StoreError names what is wrong with a malformed commit."""
        if isinstance(c, (bytes, bytearray)):
            text = bytes(c).decode("utf-8")
        elif isinstance(c, str):
            text = c
        elif isinstance(c, Mapping):
            text = json_text(c, "commit")
        else:
            raise invalid("commit", "must be a dict or its JSON, got %s" % describe(c))
        ms = int((now or datetime.now(timezone.utc)).timestamp() * 1000)
        data = '{"now":%d,"commit":%s}' % (ms, text)
        op = c.get("operation_id", "") if isinstance(c, Mapping) else ""
        plan: Dict[str, Any] = self._export("planCommit", data.encode("utf-8", "surrogatepass"), "commit %r" % op)
        return plan

    def recall_count(self, conversation_id: str = "") -> int:
        """How many messages recall storage holds (of one conversation, or all)."""
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM recall WHERE ?1 = '' OR conversation_id = ?1",
                                    (conversation_id,)).fetchone()
        return int(n)

    def index_active(self, conversation_id: str, texts: Mapping[str, str]) -> None:
        """Sets what the search index holds for active messages of the
        conversation (SCHEMA.md, "messages"): ``texts`` maps a message id
        to its search text as the plug-in renders it over the stored active
        history (the decodeHistory export with ``search_text``). Appended
        messages are indexed by their content until then; an id the active
        history does not hold is ignored."""
        string(conversation_id, "conversation_id")
        if not isinstance(texts, Mapping):
            raise invalid("texts", "must be a dict of message id to search text, got %s" % describe(texts))
        for k, v in texts.items():
            string(k, "texts key")
            string(v, "texts[%r]" % k)
        if not texts:
            return
        with self._tx() as db:
            db.execute(_query("index_active"), (conversation_id, json.dumps(dict(texts), ensure_ascii=False)))
            _rewrite_nul_texts(db, conversation_id, texts, "messages")

    # ------------------------------------------------------------ search
    def search(self, query: str, conversation_id: str = "", limit: int = DEFAULT_SEARCH_LIMIT,
               in_context: Optional[Sequence[Mapping[str, Any]]] = None) -> List[SearchHit]:
        """Ranked search (memory_read, docs/spec.md#search) over the active history,
        archived batches and recalled messages in one list, best first:
        ``query`` is a question as a person asks it, analysed by the
        plug-in's searchQuery export (any of its words matches; no character
        is search syntax). Hits are dicts: kind ("message" or "batch"), id,
        conversation_id, start_time / end_time (a message's created_at; a
        batch's covered range), score (higher is better), snippet (terms in
        [ ]), text (the full text: a message's indexed text, a batch's
        summary), role, label, created_at, operation_id, in_context (the
        message is still in the context: active, or one of
        ``in_context``), and for a batch depth, method, message_count and
        source_message_ids. Clip-archives are never hits.

        ``in_context``: the messages in the context of a conversation whose
        caller keeps them (caller-owned; ``conversation_id`` required), as
        the decodeHistory export with ``search_text`` gives them (``id``,
        ``role``, ``content``, ``created_at``, ``search_text``): ranked with
        everything else for this search only, nothing of them stored; one
        the conversation's recall holds is its recalled hit."""
        analyzer = self.query_analyzer or default_query_analyzer()
        return self.search_fts5(str(analyzer(query)["fts5"]), conversation_id, limit, in_context)

    def search_fts5(self, match: str, conversation_id: str = "", limit: int = DEFAULT_SEARCH_LIMIT,
                    in_context: Optional[Sequence[Mapping[str, Any]]] = None) -> List[SearchHit]:
        """``search`` with the query already analysed: ``match`` is the
        searchQuery export's "fts5" ("" finds nothing)."""
        string(match, "match")
        string(conversation_id, "conversation_id")
        whole_number(limit, "limit")
        rows_in = _in_context_rows(conversation_id, in_context) if in_context is not None else None
        if not match:
            return []
        limit = DEFAULT_SEARCH_LIMIT if limit <= 0 else min(limit, MAX_SEARCH_LIMIT)
        if rows_in:
            rows = self._search_in_context(match, conversation_id, limit, rows_in)
        else:
            with self._lock:
                rows = self._db.execute(_query("search"), (match, conversation_id, limit)).fetchall()
        metas = iter(self.parse_blocks([r[7] for r in rows if r[0] == "batch"]))
        hits: List[SearchHit] = []
        for kind, hid, conv, role, label, created, op, text, score, snippet, in_ctx in rows:
            hit: Dict[str, Any] = {"kind": kind, "id": hid, "conversation_id": conv, "start_time": created,
                                   "end_time": created, "score": float(score), "snippet": snippet, "text": text,
                                   "role": role, "label": label, "created_at": created, "operation_id": op,
                                   "in_context": bool(in_ctx),
                                   "depth": None, "method": None, "message_count": None, "source_message_ids": None}
            batch = next(metas)["batch"] if kind == "batch" else None
            if batch is not None:
                hit["text"] = batch["summary"]
                hit["start_time"], hit["end_time"] = batch["start_time"], batch["end_time"]
                for k in ("depth", "method", "message_count", "source_message_ids"):
                    hit[k] = batch[k]
            hits.append(hit)  # type: ignore[arg-type]
        return hits

    def parse_blocks(self, contents: Sequence[str]) -> List[Dict[str, Any]]:
        """What each archived block's content says of itself, as every host
        reads it (the plug-in's parseBlocks export): ``{"batch": {…}}`` for
        a batch (depth, start_time, end_time, message_count,
        source_message_ids, method, operation_id, summary), ``{"batch":
        None}`` for free text, and ``{"batch": None, "malformed": "…"}``
        when the first line is meant as batch metadata but cannot be read
        (the block is then a plain one, whole)."""
        if not contents:
            return []
        data = json.dumps({"contents": list(contents)}, ensure_ascii=False).encode("utf-8", "surrogatepass")
        blocks: List[Dict[str, Any]] = self._export("parseBlocks", data, "reading archived blocks")["blocks"]
        return blocks

    def _search_in_context(self, match: str, conv: str, limit: int,
                           rows_in: List[Tuple[str, str, str, str, Optional[str]]]) -> List[Any]:
        """search.sql with the caller's messages indexed in a transaction
        that is rolled back (queries/search_in_context.sql): nothing stays."""
        with self._lock:
            if self.read_only:
                raise StoreError("sqlite %s: opened read-only (read_only=True): a search with in_context messages "
                                 "indexes them for the search, which needs a writable store" % self.path)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(_query("search_in_context"), (conv, json.dumps(rows_in, ensure_ascii=False)))
                for mid, _, content, _, st in rows_in:
                    if "\x00" in content or "\x00" in (st or ""):  # see _rewrite_nul_texts
                        self._db.execute("UPDATE messages SET content = ?3, search_text = ?4 WHERE conversation_id = ?1 "
                                         "AND id = ?2 AND raw = ''", (conv, mid, content, st))
                return self._db.execute(_query("search"), (match, conv, limit)).fetchall()
            finally:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")

    def block(self, block_id: str) -> StoredBlock:
        """An archival block in full: id, tier, label, content (as written,
        metadata line included), conversation_id, reason, operation_id,
        created_at, and ``batch``: for a batch its metadata (depth,
        start_time, end_time, message_count, source_message_ids, method)
        and summary, else None — with ``malformed`` saying what is wrong
        when the first line is meant as metadata but cannot be read
        (``parse_blocks``)."""
        with self._lock:
            row = self._db.execute(
                "SELECT id, tier, label, content, COALESCE(conversation_id, ''), reason, COALESCE(operation_id, ''), "
                "created_at FROM blocks WHERE id = ?", (block_id,)).fetchone()
        if row is None:
            raise NotFoundError("block %r: not found" % block_id)
        b: Dict[str, Any] = dict(zip(("id", "tier", "label", "content", "conversation_id", "reason", "operation_id",
                                      "created_at"), row))
        meta = self.parse_blocks([b["content"]])[0]
        b["batch"], b["malformed"] = meta["batch"], meta.get("malformed")
        return b  # type: ignore[return-value]

    def read(self, record_id: str, conversation_id: str = "") -> Dict[str, Any]:
        """A recalled message or an archived block by id — what a search
        hit's ``id`` names: ``{"kind": "message", "message": {…}}`` (the
        message as it was given; the conversation's, or, without one, as
        ``recall`` finds it) or ``{"kind": "batch", "block": {…}}`` (see
        ``block``). A message wins an id clash; NotFoundError when neither
        exists."""
        string(record_id, "record_id")
        try:
            return {"kind": "message", "message": self.recall(record_id, conversation_id)}
        except NotFoundError:
            pass
        try:
            return {"kind": "batch", "block": self.block(record_id)}
        except NotFoundError:
            raise NotFoundError("read %r: no recalled message or archival block has this id" % record_id) from None

    # ------------------------------------------------------------ dump
    def dump(self) -> str:
        """Every table (schema, data and the full-text indexes' own tables)
        as sorted lines: two dumps are equal exactly when the data is."""
        lines: List[str] = []
        with self._lock:
            objs = self._db.execute(
                "SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name").fetchall()
            for typ, name, sql in objs:
                lines.append("%s %s: %s" % (typ, name, sql))
                if typ != "table":
                    continue
                cur = self._db.execute('SELECT * FROM "%s"' % name.replace('"', '""'))
                cols = [d[0] for d in cur.description]
                rows = sorted(" ".join("%s=%r" % (c, v) for c, v in zip(cols, row)) for row in cur)
                lines.extend("  " + r for r in rows)
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------ host functions
    def host_memory_list(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        """memory_list (docs/spec.md#host-functions): {"tier","label_prefix"} → {"blocks":[…]}."""
        tier = request.get("tier") or "archival"
        prefix = request.get("label_prefix")
        if not isinstance(tier, str) or not isinstance(prefix, str):
            return {"error": {"code": "invalid_request", "message": "memory_list: tier and label_prefix must be strings",
                              "retryable": False}}
        return {"blocks": self.list_blocks(tier, prefix)}

    def host_compaction_commit(self, request: Union[Mapping[str, Any], bytes]) -> Dict[str, Any]:
        """compaction_commit (docs/spec.md#compaction_commit): {"ok":true} or an error object,
        ``conflict`` when another compaction won. ``request`` is the
        commit, or the exact JSON the plug-in sent."""
        try:
            self.commit(request)  # type: ignore[arg-type]
        except ConflictError as e:
            return {"error": {"code": "conflict", "message": str(e), "retryable": False}}
        except sqlite3.OperationalError as e:
            busy = "locked" in str(e) or "busy" in str(e)
            return {"error": {"code": "unavailable" if busy else "other", "message": "commit: %s" % e,
                              "retryable": busy}}
        except (StoreError, sqlite3.Error, ValueError, TypeError, KeyError) as e:
            return {"error": {"code": "other", "message": str(e), "retryable": False}}
        return {"ok": True}


def _conversation_arg(what: str, conversation_id: Any, empty: bool = False) -> str:
    """A conversation id argument: a string, non-empty unless ``empty``."""
    if not isinstance(conversation_id, str) or (not conversation_id and not empty):
        raise invalid("conversation_id", "must be a %sstring, got %s (%s)"
                      % ("" if empty else "non-empty ", describe(conversation_id), what))
    return conversation_id


def _ids_arg(what: str, ids: Any) -> List[str]:
    """A list of message ids argument."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence) or not all(isinstance(x, str) for x in ids):
        raise invalid("ids", "must be a sequence of strings, got %s (%s)" % (describe(ids), what))
    return list(ids)


def _check_rows(conversation_id: str,
                rows: Sequence[Tuple[str, str, str, str, str]]) -> List[Tuple[str, str, str, str, str]]:
    """Rows as append_rows takes them (decodeHistory's reading of each
    message and its exact JSON), checked as arguments: ids non-empty and
    unique, roles known."""
    if not conversation_id:
        raise StoreError("append: conversation id is empty")
    out = []
    seen: Dict[str, int] = {}
    for i, (mid, role, content, created, raw) in enumerate(rows):
        if not isinstance(mid, str) or not mid:
            raise StoreError("append: rows[%d].id is empty" % i)
        if mid in seen:
            raise StoreError("append: rows[%d].id %r repeats rows[%d]" % (i, mid, seen[mid]))
        seen[mid] = i
        if role not in ROLES:
            raise StoreError("append: message %r: role %r is not user, assistant, system or tool" % (mid, role))
        if not isinstance(raw, str):
            raise StoreError("append: message %r: raw must be its JSON text" % mid)
        out.append((mid, role, content or "", created or "", raw))
    return out


def _check_failed(conv: str, op: str, failed: Sequence[Tuple[str, str, str]]) -> StoreError:
    """A commit's error when queries/commit_check.sql answered rows (field,
    must, id) of the plan's first failed check: ids that must be new are
    already stored; any other check failing is a conflict."""
    field, must = failed[0][0], failed[0][1]
    ids = [r[2] for r in failed]
    if must == "new":
        return DuplicateIDError(ids, "commit %r to %r: %s: " % (op, conv, field))
    return ConflictError("conflict: conversation %s: %s no longer exist: %s" % (json.dumps(conv), field, json.dumps(ids)))


def raw_json(value: Any) -> str:
    """A message's JSON as the Python host writes it (compact, non-ASCII as
    is): a message the host sent and the plug-in returned or committed
    parses and re-encodes to the very text that was sent."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _rewrite_nul_texts(db: sqlite3.Connection, conv: str, texts: Mapping[str, str], table: str = "recall") -> None:
    """move_to_recall.sql and index_active.sql read search texts out of
    JSON, and some SQLite versions (3.40, which Debian 12's Python uses)
    end a json_each value at a ``\u0000`` escape: the index would stop at
    the NUL. A text holding one is written again as bound (whole), which
    indexes it again in full. ``table``: recall or messages."""
    sql = "UPDATE %s SET search_text = ?3 WHERE conversation_id = ?1 AND id = ?2" % (
        "messages" if table == "messages" else "recall")
    for mid, text in texts.items():
        if "\x00" in text:
            db.execute(sql, (conv, mid, text))


def _in_context_rows(conv: str, in_context: Any) -> List[Tuple[str, str, str, str, Optional[str]]]:
    """Checks a search's ``in_context`` messages and returns the rows
    queries/search_in_context.sql reads: [id, role, content, created_at,
    search_text]; errors name the argument."""
    if not conv:
        raise invalid("conversation_id", "a search with in_context messages needs the conversation they are the "
                                          "context of")
    if isinstance(in_context, (str, bytes)) or not isinstance(in_context, Sequence):
        raise invalid("in_context", "must be a list of messages as decodeHistory gives them, got %s"
                      % describe(in_context))
    rows: List[Tuple[str, str, str, str, Optional[str]]] = []
    for i, m in enumerate(in_context):
        f = "in_context[%d]" % i
        if not isinstance(m, Mapping):
            raise invalid(f, "must be a dict (id, role, content, created_at, search_text), got %s" % describe(m))
        mid = string(m.get("id"), f + ".id")
        if not mid:
            raise invalid(f + ".id", "is empty")
        role = string(m.get("role"), f + ".role")
        if role not in ROLES:
            raise invalid(f + ".role", "must be user, assistant, system or tool, got %r" % role)
        content = string(m.get("content", ""), f + ".content")
        created = m.get("created_at")
        created = "" if created is None else string(created, f + ".created_at")
        st = m.get("search_text")
        if st is not None:
            string(st, f + ".search_text")
        rows.append((mid, role, content, created, st or None))
    return rows


def _open_read_only(path: str) -> sqlite3.Connection:
    """A connection that never writes the database (SCHEMA.md, "Opening for
    reading"): the URI ``mode=ro``, no journal mode set. A WAL database
    with no ``-shm`` file (no process has it open) in a directory the
    reader cannot write cannot be read so — SQLite would have to create the
    ``-shm`` — and is opened ``immutable=1`` (no locks) instead, unless a
    non-empty ``-wal`` file holds commits not yet in the database file:
    only a writer can apply them, so that is refused."""
    if path == MEMORY_PATH:
        raise StoreError("sqlite: read_only needs a database file, not %s" % MEMORY_PATH)
    if not os.path.isfile(path):
        raise StoreError("sqlite %s: no such database file (read_only opens an existing one)" % path)
    uri = Path(os.path.abspath(path)).as_uri()

    def connect(query: str) -> sqlite3.Connection:
        db = sqlite3.connect(uri + query, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute("PRAGMA busy_timeout = %d" % int(BUSY_TIMEOUT_S * 1000))
            db.execute("SELECT 1 FROM sqlite_master LIMIT 1")  # the first read opens the file (and its log)
        except BaseException:
            db.close()
            raise
        return db

    try:
        return connect("?mode=ro")
    except sqlite3.OperationalError as e:
        if os.path.exists(path + "-journal"):
            raise StoreError("sqlite %s: a write to it was interrupted (its rollback journal %s-journal is there) and "
                             "only a writer can roll it back: open it writable once (%s)" % (path, path, e)) from None
        if not _is_wal(path) or os.path.exists(path + "-shm") or not re.search("readonly|unable to open", str(e)):
            raise
    wal = path + "-wal"
    if os.path.exists(wal) and os.path.getsize(wal) > 0:
        raise StoreError("sqlite %s: its write-ahead log %s holds commits not yet in the database file, and this "
                         "directory cannot be written to apply them: open it writable once (or copy the database "
                         "with its -wal file somewhere writable)" % (path, wal))
    return connect("?immutable=1")


def _is_wal(path: str) -> bool:
    """Whether the database file's header says WAL mode."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[:16] == b"SQLite format 3\x00" and (head[18] == 2 or head[19] == 2)


def _statements(script: str) -> List[str]:
    """Splits a script into statements (triggers keep their inner ';')."""
    out, cur = [], ""
    for line in script.splitlines(True):
        cur += line
        if sqlite3.complete_statement(cur):
            stmt = cur.strip()
            if stmt:
                out.append(stmt)
            cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out

