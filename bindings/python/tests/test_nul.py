"""Text after a NUL character ("\\u0000", valid JSON) is stored, indexed
and read back whole, in messages and in batch summaries."""

import sqlite3
from pathlib import Path

from clipfold import Compactor, SQLiteStore

from test_compress import CONFIG, build_conversation


def test_words_after_a_nul_are_found_and_read_back_whole(wasm: str, tmp_path: Path) -> None:
    path = str(tmp_path / "nul.db")
    text = "the log line ends here\u0000then zanzibar walrus, after the NUL"
    with Compactor(wasm, store=path, config=CONFIG) as c:
        # Store-owned: appended, compacted, moved to recall with the
        # search text the commit gives (passed to SQLite as JSON).
        history = build_conversation(30)
        history[3] = dict(history[3], content=text)
        r = c.compress("c1", history)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        mid = history[3]["id"]
        hits = c.search("zanzibar", "c1")
        assert any(h["id"] == mid and "zanzibar walrus" in h["text"] for h in hits), hits
        assert c.store.recall(mid, "c1")["content"] == text
        # A batch summary and a caller-owned recall write.
        summary = ('{"conversation_id":"c2","depth":0,"start":"2026-02-28T10:00:00Z","end":"2026-02-28T10:00:00Z",'
                   '"count":1}\nsummary before\u0000after the NUL: quokka')
        said = "a\u0000b kangaroo"
        c.store.commit({"conversation_id": "c2", "operation_id": "op1", "history_owner": "caller",
                        "archive_writes": [{"label": "compaction-batch-c2-x", "tier": "archival", "content": summary}],
                        "insert_message": {"id": "clip", "role": "system", "content": "x"},
                        "recall_writes": [{"id": "r1", "role": "user", "content": said, "search_text": said,
                                           "message": {"id": "r1", "role": "user", "content": said}}]})
        found = c.search("quokka kangaroo", "c2")
        assert sorted((h["kind"], h["text"]) for h in found) == \
            [("batch", "summary before\u0000after the NUL: quokka"), ("message", said)]
        assert [b["content"] for b in c.store.list_blocks("archival", "compaction-batch-c2-")] == [summary]
    # The columns hold the whole text (read by a connection of its own).
    db = sqlite3.connect(path)
    try:
        (content, search_text), = db.execute(
            "SELECT content, search_text FROM recall WHERE conversation_id = 'c1' AND id = ?", (mid,)).fetchall()
        assert content == text and "then zanzibar walrus, after the NUL" in search_text
    finally:
        db.close()
    with SQLiteStore(path, read_only=True) as s:
        assert s.recall(mid, "c1")["content"] == text
