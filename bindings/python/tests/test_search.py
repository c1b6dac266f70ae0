"""SQLiteStore.search through the Go store's schema and queries: one ranked
list of batches and messages, questions as asked, superseded clip-archives
never hits, tool text searchable, ties to the more recent, any record read
by id, hostile queries harmless; and the upgrade of a version-1 file."""

import json
import sqlite3
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import clipfold
from clipfold import Compactor, NotFoundError, SQLiteStore, _schema

BASE = "2026-02-28T10:%02d:00.000Z"


def msg(mid: str, content: str, minute: int, conv: str = "c1", role: str = "user", **kw: Any) -> Dict[str, Any]:
    m = {"id": mid, "conversation_id": conv, "role": role, "content": content, "created_at": BASE % minute}
    m.update(kw)
    return m


def batch(conv: str, summary: str, start: int, end: int, sources: List[str], method: str = "extractive") -> Dict[str, Any]:
    meta = {"conversation_id": conv, "operation_id": "op", "depth": 0, "start": BASE % start, "end": BASE % end,
            "count": len(sources), "source_message_ids": sources, "method": method}
    return {"label": "compaction-batch-%s-%s" % (conv, BASE % end), "tier": "archival", "reason": "test",
            "content": json.dumps(meta, separators=(",", ":")) + "\n" + summary}


def recall_as(s: SQLiteStore, conv: str, op: str, msgs: List[Dict[str, Any]], search_text: Optional[Dict[str, str]] = None,
              writes: Optional[List[Dict[str, Any]]] = None, insert_content: str = "[Context Summary]") -> None:
    s.append_messages(conv, msgs)
    c: Dict[str, Any] = {"conversation_id": conv, "operation_id": op, "archive_writes": writes or [],
                         "archive_deletes": [], "remove_message_ids": [m["id"] for m in msgs],
                         "insert_message": {"id": "ca-" + op, "role": "system", "content": insert_content,
                                            "created_at": "2026-03-01T00:00:00.000Z"}}
    if search_text is not None:
        c["search_text"] = search_text
    s.commit(c)  # type: ignore[arg-type]


@pytest.fixture()
def store(pure: Compactor) -> SQLiteStore:
    return SQLiteStore(query_analyzer=pure.search_query)


def ids(hits: List[Any]) -> List[str]:
    return [h["id"] for h in hits]


def test_question_finds_the_answer(store: SQLiteStore) -> None:
    turns = [
        "Morning! Did everyone see the incident report from last night?",
        "Yes. The checkout service was down for twenty minutes.",
        "We should decide when to upgrade Postgres; the current version is out of support.",
        "Alice, what do you think about the schedule for the database work?",
        "I would rather not touch the database during the sales week.",
        "Agreed, the sales week is off limits for any migration.",
        "Alice: let's move the Postgres upgrade to Saturday 14 March, after the sales week.",
        "Sounds good. I'll book the maintenance window.",
    ]
    recall_as(store, "c1", "op1", [msg("q%d" % (i + 1), t, i, role=["user", "assistant"][i % 2]) for i, t in enumerate(turns)],
              writes=[batch("c1", "Alice scheduled the Postgres upgrade for Saturday 14 March.", 20, 25, ["q1", "q7"])])
    hits = store.search("When did Alice say we will upgrade Postgres?", limit=5)
    assert "q7" in ids(hits[:2]), ids(hits)
    b = [h for h in hits if h["kind"] == "batch"]
    assert b, ids(hits)
    assert b[0]["source_message_ids"] == ["q1", "q7"]
    assert (b[0]["start_time"], b[0]["end_time"]) == (BASE % 20, BASE % 25)
    assert b[0]["method"] == "extractive" and b[0]["depth"] == 0 and b[0]["message_count"] == 2
    assert b[0]["text"] == "Alice scheduled the Postgres upgrade for Saturday 14 March."
    m = [h for h in hits if h["id"] == "q7"][0]
    assert m["role"] == "user" and m["start_time"] == m["end_time"] == BASE % 6 and m["score"] > 0
    assert "[Postgres]" in m["snippet"] and m["depth"] is None and m["source_message_ids"] is None
    # only stop words: searched after all
    assert "q4" in ids(store.search("what do you think?"))
    # no word at all: no hits, no error
    assert store.search("?! ()") == []


def test_superseded_clip_archives_are_never_hits(store: SQLiteStore) -> None:
    store.append_messages("c1", [msg("m%d" % i, "message %d" % i, i) for i in range(4)])
    archive = "[Context Summary — 1 messages compressed]\n\nThe zeppelin migration was planned."

    def commit(op: str, remove: List[str], insert: str, search_text: Optional[Dict[str, str]]) -> None:
        c: Dict[str, Any] = {"conversation_id": "c1", "operation_id": op, "archive_writes": [], "archive_deletes": [],
                             "remove_message_ids": remove,
                             "insert_message": {"id": insert, "content": archive, "created_at": BASE % 30}}
        if search_text is not None:
            c["search_text"] = search_text
        store.commit(c)  # type: ignore[arg-type]

    commit("op1", ["m0"], "ca1", None)
    commit("op2", ["ca1", "m1"], "ca2", {"ca1": "", "m1": "message 1"})  # the plug-in's way
    commit("op3", ["ca2", "m2"], "ca3", None)  # a host that gives no search_text
    assert "zeppelin" in store.recall("ca1")["content"]
    for q in ("zeppelin", "Context Summary", "zeppelin migration planned"):
        assert not set(ids(store.search(q))) & {"ca1", "ca2", "ca3"}, q


def test_batches_and_messages_interleave_by_score(store: SQLiteStore) -> None:
    pad = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "eiusmod"]

    def rep(k: int) -> str:
        words = ["quokka"] * k
        while len(words) < 40:
            words.append(pad[len(words) % len(pad)])
        return " ".join(words)

    recall_as(store, "c1", "op1", [msg("m4", rep(4), 0), msg("m2", rep(2), 1)],
              writes=[batch("c1", rep(3), 0, 1, ["m4"]), batch("c1", rep(1), 1, 2, ["m2"])])
    recall_as(store, "c1", "op2", [msg("o%d" % i, rep(0), 10 + i) for i in range(8)])
    hits = store.search("quokka")
    assert [h["kind"] for h in hits] == ["message", "batch", "message", "batch"]
    assert [h["id"] for h in hits][0::2] == ["m4", "m2"]
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 4


def test_tool_names_inputs_and_outputs_are_searchable(store: SQLiteStore) -> None:
    call = msg("call1", "", 0, role="assistant",
               tool_calls=[{"id": "t1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Reykjavik"}'}}])
    res = msg("res1", "3 degrees, gale-force winds", 1, role="tool", tool_call_id="t1")
    recall_as(store, "c1", "op1", [call, res], search_text={"call1": 'get_weather {"city":"Reykjavik"}',
                                                            "res1": "3 degrees, gale-force winds"})
    for q, want in (("get_weather", "call1"), ("Reykjavik", "call1"), ("gale winds", "res1")):
        hits = store.search(q)
        assert hits and hits[0]["id"] == want, (q, ids(hits))
    assert store.search("Reykjavik")[0]["text"] == 'get_weather {"city":"Reykjavik"}'
    assert store.recall("call1") == call


def test_compress_indexes_tool_calls_end_to_end(pure: Compactor) -> None:
    """The plug-in renders search_text; the Python store indexes it."""
    with Compactor(pure.wasm_path) as c:
        hist = [msg("u%d" % i, "small talk number %d about nothing much" % i, i, conv="c9") for i in range(30)]
        hist[3] = msg("a3", "", 3, conv="c9", role="assistant", tool_calls=[
            {"id": "t9", "type": "function", "function": {"name": "lookup_invoice", "arguments": '{"number":"INV-7731"}'}}])
        hist[4] = msg("t4", "invoice INV-7731 is overdue by 12 days", 4, conv="c9", role="tool", tool_call_id="t9")
        r = c.compress("c9", hist, config={"keep_recent": 5})
        assert not r["failed"], r
        hits = c.search("lookup_invoice", conversation_id="c9")
        assert hits and hits[0]["id"] == "a3", ids(hits)
        assert "INV-7731" in hits[0]["text"]
        got = c.store.search("overdue invoice", conversation_id="c9")  # the store's own analyzer: the Compactor's
        assert "t4" in ids(got)
        assert not [h for h in c.search("Context Summary") if h["id"].startswith("clip_")]


def test_ties_go_to_the_more_recent(store: SQLiteStore) -> None:
    # The same words in another order score alike but are not the same
    # text (a repeated text is folded into the better hit); two messages
    # apart, so neither is the other's neighbour.
    text = "the narwhal plan"
    recall_as(store, "c1", "op1", [msg("old", text, 0), msg("mid", "unrelated words", 15, role="assistant"),
                                   msg("new", "the plan narwhal", 30)],
              writes=[batch("c1", text, 0, 10, ["old"]), batch("c1", text, 40, 50, ["new"])])
    hits = store.search("narwhal")
    assert len({round(h["score"], 9) for h in hits}) == 1
    assert [h["end_time"] for h in hits] == [BASE % 50, BASE % 30, BASE % 10, BASE % 0]


def test_repeats_and_context_only_neighbours_fold(store: SQLiteStore) -> None:
    # The same rule as the Go stores (storetest's SearchFoldsRepeats): a
    # message whose own words repeat a better hit's is folded into it, and
    # so is one found only through its context (after "\n\n» ") right next
    # to a better hit; own words outrank the same words as context.
    sep = "\n\n\u00bb "
    texts = [("q1", "user", "Did last night's backup work?", "Yes, it ran cleanly."),
             ("a1", "assistant", "Yes, it ran cleanly.", "Did last night's backup work?"),
             ("q2", "user", "Did last night's backup work?", "Yes, it ran cleanly."),
             ("a2", "assistant", "Yes, it ran cleanly.", "Did last night's backup work?"),
             ("y1", "user", "Unrelated small talk.", "More small talk."),
             ("y2", "assistant", "More small talk.", "the nightly backup is fine")]
    msgs = [msg(i, own, n if n < 4 else n + 6, role=role) for n, (i, role, own, _) in enumerate(texts)]
    recall_as(store, "c1", "op1", msgs, search_text={i: own + sep + ctx for i, _, own, ctx in texts})
    hits = store.search("backup")
    assert [h["id"] for h in hits] == ["q2", "y2"]
    assert hits[0]["score"] > hits[1]["score"]


def test_read_any_record_by_id(store: SQLiteStore) -> None:
    m = msg("m1", "the full original text", 0, x_extra={"é": [1, 2.5]})
    w = batch("c1", "the full summary", 0, 59, ["m1"])
    recall_as(store, "c1", "op1", [m], writes=[w])
    hits = store.search("full")
    assert sorted(h["kind"] for h in hits) == ["batch", "message"]
    for h in hits:
        r = store.read(h["id"])
        assert r["kind"] == h["kind"]
        if h["kind"] == "message":
            assert r["message"] == m
        else:
            b = r["block"]
            assert b["content"] == w["content"] and b["label"] == w["label"] and b["tier"] == "archival"
            assert b["conversation_id"] == "c1" and b["operation_id"] == "op1" and b["reason"] == "test"
            assert b["batch"] is not None and b["batch"]["summary"] == "the full summary"
            assert b["batch"]["source_message_ids"] == ["m1"]
            assert store.block(h["id"]) == b
    for missing in ("nope", "", "blk_000000000000000000000000"):
        with pytest.raises(NotFoundError):
            store.read(missing)
        with pytest.raises(NotFoundError):
            store.block(missing)


HOSTILE = ['', ' ', '?', '"', '""', '"deploy', "'", "deploy's", '-', '-deploy', '*', 'deploy*', ':', 'step:3', '^x',
           '(', ')', '()', 'NOT', 'AND', 'OR', 'NEAR', 'NEAR(deploy script)', 'deploy NEAR/2 script', '{body}: x',
           "'; DROP TABLE messages; --", '%', '_', '\\', '<->', '!deploy & (script | error)', "deploy:*", '😀',
           'tab\tnewline\nnul\x00byte', '\udcff lone surrogate', 'the', 'what is it', '“smart”', '\u0301',
           'deploy ' * 2000, '(' * 500, '"' * 501, 'a' * 10000, 'what ' * 2000]


def test_hostile_queries(store: SQLiteStore) -> None:
    recall_as(store, "c1", "op1", [msg("m1", "error: the deploy-script failed (exit 1) at step:3; what is it", 0)])
    for q in HOSTILE:
        for conv in ("", "c1"):
            store.search(q, conversation_id=conv)  # no exception
    for q in ('"deploy script"', "deploy-script", "(deploy)", "-error", "step:3", "NOT deploy", "what is it?"):
        assert ids(store.search(q)) == ["m1"], q


def test_store_without_compactor_loads_the_plugin(tmp_path: Path, wasm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLIPFOLD_WASM", wasm)
    monkeypatch.setattr(clipfold.store, "_default_analyzer", None)
    with SQLiteStore(str(tmp_path / "x.db")) as s:
        recall_as(s, "c1", "op1", [msg("m1", "the otter escaped", 0)])
        assert ids(s.search("where did the otters escape to?")) == ["m1"]


def test_upgrade_from_version_1(tmp_path: Path, pure: Compactor) -> None:
    """A file written before the unified index (version 1) is migrated in
    place: everything re-indexed, superseded clip-archives not."""
    p = str(tmp_path / "v1.db")
    db = sqlite3.connect(p, isolation_level=None)
    v1 = _schema.migrations()[0]
    db.execute("BEGIN")
    db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    for stmt in clipfold.store._statements(v1[2]):
        db.execute(stmt)
    db.execute("INSERT INTO schema_migrations VALUES (1, ?, '2026-01-01T00:00:00.000Z')", (v1[1],))
    w = batch("c1", "The walrus outage was fixed by a rollback.", 0, 30, ["m1"])
    db.execute("INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id) "
               "VALUES ('m1', 'c1', 1, 'user', 'the walrus service is down', ?, '{}', ?, 'op1'), "
               "('ca0', 'c1', 0, 'system', '[Context Summary] walrus', ?, '{}', ?, 'op1')",
               (BASE % 0, BASE % 59, BASE % 0, BASE % 59))
    db.execute("INSERT INTO blocks (id, tier, label, content, created_at, conversation_id) VALUES ('blk_a', 'archival', ?, ?, ?, 'c1')",
               (w["label"], w["content"], BASE % 59))
    db.execute("COMMIT")
    db.close()
    with SQLiteStore(p, query_analyzer=pure.search_query) as s:
        assert s.connection.execute("SELECT max(version) FROM schema_migrations").fetchone() == \
            (len(_schema.migrations()),)
        assert sorted(ids(s.search("walrus"))) == ["blk_a", "m1"]
        names = {r[0] for r in s.connection.execute("SELECT name FROM sqlite_master")}
        assert not names & {"recall_fts", "blocks_fts"}


SEP = "\n\n» "  # core.SearchContextSep: a search text's context lines follow it


def test_active_messages_are_hits_in_context(store: SQLiteStore) -> None:
    call = msg("call1", "", 1, role="assistant",
               tool_calls=[{"id": "t1", "type": "function", "function": {"name": "get_order", "arguments": '{"order":4471}'}}])
    store.append_messages("c1", [msg("u1", "where is my parcel?", 0), call,
                                 msg("res1", '{"status":"shipped","carrier":"Pelican Post"}', 2, role="tool")])
    hits = store.search("pelican")
    assert ids(hits) == ["res1"]
    assert hits[0]["in_context"] and hits[0]["operation_id"] == "" and hits[0]["role"] == "tool"
    assert store.search("get_order 4471") == [], "a call's name and arguments are not its content"
    # The plug-in's search texts, set after the append (an id not active is ignored).
    store.index_active("c1", {"call1": 'get_order {"order":4471}' + SEP + "where is my parcel?",
                              "res1": '{"status":"shipped","carrier":"Pelican Post"}' + SEP + 'get_order {"order":4471}',
                              "gone": "ignored words"})
    hits = store.search("get_order 4471")
    assert ids(hits) == ["call1"] and hits[0]["in_context"], "res1 only quotes call1, its neighbour: folded"
    assert store.search("ignored") == []
    store.index_active("c1", {"u1": "where is my parcel\x00 yakety"})  # past a NUL (see _rewrite_nul_texts)
    assert ids(store.search("yakety")) == ["u1"]
    # Comparable scores: the same text active in c2, recalled in c3.
    same = "the walrus inventory counts seventeen crates"
    store.append_messages("c2", [msg("w1", same, 0, conv="c2")])
    recall_as(store, "c3", "op3", [msg("w1", same, 0, conv="c3")])
    hits = store.search("walrus crates")
    assert sorted((h["conversation_id"], h["in_context"]) for h in hits) == [("c2", True), ("c3", False)]
    assert hits[0]["score"] == pytest.approx(hits[1]["score"])
    # Moved to recall by a commit: one hit, no longer in context; the clip-archive is none.
    store.commit({"conversation_id": "c1", "operation_id": "op1", "archive_writes": [], "archive_deletes": [],  # type: ignore[typeddict-item]
                  "remove_message_ids": ["u1", "call1", "res1"], "search_text": {"res1": '{"carrier":"Pelican Post"}'},
                  "insert_message": {"id": "ca1", "content": "[Context Summary — 3 messages compressed] pelican",
                                     "created_at": BASE % 30}})
    hits = store.search("carrier pelican", "c1")
    assert ids(hits) == ["res1"] and not hits[0]["in_context"] and hits[0]["operation_id"] == "op1"


def test_in_context_messages_are_ranked_for_one_search(store: SQLiteStore, tmp_path: Path) -> None:
    old = msg("m1", "the quokka census counted forty", 0)
    store.commit({"conversation_id": "c1", "operation_id": "op1", "history_owner": "caller",  # type: ignore[typeddict-item]
                  "archive_writes": [], "archive_deletes": [], "remove_message_ids": [],
                  "insert_message": {"id": "ca1", "content": "[Context Summary]", "created_at": BASE % 9},
                  "recall_writes": [{"id": "m1", "role": "user", "content": old["content"], "created_at": old["created_at"],
                                     "search_text": old["content"], "message": old}]})
    before = store.dump()
    ctx = [{"id": "ca1", "role": "system", "content": "[Context Summary — 1 message compressed] quokka", "created_at": None},
           {"id": "m1", "role": "user", "content": old["content"], "created_at": old["created_at"]},
           {"id": "m2", "role": "assistant", "content": "the quokka census counted fifty", "created_at": BASE % 5,
            "search_text": "the quokka census counted fifty"},
           {"id": "m3", "role": "tool", "content": "42\x00 crates", "created_at": None,
            "search_text": "42\x00 crates" + SEP + 'count_quokkas {"island":"Rottnest"}'}]
    hits = store.search("quokka census", "c1", in_context=ctx)
    assert sorted((h["id"], h["in_context"]) for h in hits) == [("m1", False), ("m2", True)], \
        "the clip-archive is no hit; m1 is its recalled row, once"
    assert hits[0]["score"] == pytest.approx(hits[1]["score"]), "in context or recalled, one scale"
    assert ids(store.search("Rottnest", "c1", in_context=ctx)) == ["m3"]
    assert ids(store.search("crates", "c1", in_context=ctx)) == ["m3"], "past a NUL"
    assert store.dump() == before, "nothing of them stays"
    assert store.search("fifty", "c1") == []
    for bad, field in [({"conversation_id": ""}, "conversation_id"),
                       ({"in_context": [{"id": "a", "role": "wizard", "content": ""}]}, "in_context[0].role"),
                       ({"in_context": [{"role": "user", "content": ""}]}, "in_context[0].id"),
                       ({"in_context": "not a list"}, "in_context")]:
        kw: Dict[str, Any] = {"conversation_id": "c1", "in_context": ctx}
        kw.update(bad)
        with pytest.raises(clipfold.ClipfoldError) as e:
            store.search("quokka", **kw)
        assert field in str(e.value)
    path = tmp_path / "ro.db"
    SQLiteStore(path).close()
    ro = SQLiteStore(path, read_only=True, query_analyzer=store.query_analyzer)
    with pytest.raises(clipfold.StoreError, match="read-only"):
        ro.search("quokka", "c1", in_context=ctx)
    ro.close()


def test_compactor_indexes_the_active_history_and_reads_within_a_budget(pure: Compactor, wasm: str) -> None:
    """Through the plug-in: a store-owned compress syncs, then gives the
    appended messages the plug-in's search text (a call found by its name
    and arguments, in context); a caller-owned list is searched through
    ``in_context``; memory_read answers within its budget."""
    with Compactor(wasm) as c:
        turn = [{"role": "user", "content": "where is order 4471?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "t1", "type": "function", "function": {"name": "get_order", "arguments": '{"order":4471}'}}]},
                {"role": "tool", "tool_call_id": "t1", "content": '{"status":"lost","carrier":"Pelican Post"}'}]
        r = c.compress("c1", turn, only_if_due=True)
        assert r["messages_compressed"] == 0
        hits = c.search('get_order {"order":4471}', "c1")
        assert hits and all(h["in_context"] for h in hits)
        assert any(h["text"].startswith('get_order {"order":4471}') for h in hits), hits
        # The same list caller-owned: nothing stored, found through in_context.
        assert c.search("get_order", "c2") == []
        hits = c.search("get_order", "c2", in_context=turn)
        assert hits and all(h["in_context"] for h in hits)
        with pytest.raises(clipfold.ClipfoldError, match="conversation_id"):
            c.search("get_order", "", in_context=turn)
        # memory_read within its budget.
        long = [{"role": "tool", "tool_call_id": "t1", "content": "[" + ",".join('{"row":%d,"v":"filler"}' % i for i in range(900))
                 + ',{"row":4471,"v":"Pelican Post"}]'}]
        out = c.memory_read("row 4471 Pelican", "c3", in_context=turn[:2] + long, max_tokens=200)
        assert c.estimate_tokens(out["text"]) <= 200 and out["tokens"] <= 200
        assert "Pelican Post" in out["text"], out
        assert out["passage"] is not None or out["whole"], out
        with pytest.raises(clipfold.ClipfoldError, match="max_tokens"):
            c.memory_read("x", "c3", max_tokens=20)
