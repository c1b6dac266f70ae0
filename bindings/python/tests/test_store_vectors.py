"""The store vectors (testdata/store, README.md there): the appends,
commits and reads every store must answer alike, with the state it must
hold after — run here against the Python store, as the Go SQLite and
PostgreSQL stores run them (hostfuncs/store/storetest)."""

import json
import re
from datetime import datetime
from typing import Any, Dict, List

import pytest

from clipfold.errors import ClipfoldError
from clipfold.store import ConflictError, DuplicateIDError, NotFoundError, SQLiteStore, StoreError

from conftest import REPO

VECTORS = REPO / "testdata" / "store"
BLOCK_ID = re.compile(r"^blk_[0-9a-f]{24}$")


def cases() -> List[Any]:
    out = []
    for f in sorted(VECTORS.glob("*.json")):
        for c in json.loads(f.read_text("utf-8"))["cases"]:
            out.append(pytest.param(c, id="%s/%s" % (f.stem, c["name"])))
    assert out, "no store vectors in %s" % VECTORS
    return out


def compact(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def error_kind(e: Exception) -> str:
    if isinstance(e, ConflictError):
        return "conflict"
    if isinstance(e, DuplicateIDError):
        return "duplicate"
    if isinstance(e, NotFoundError):
        return "not_found"
    assert isinstance(e, (StoreError, ClipfoldError)), "an unexpected error: %r" % e
    return "invalid"


def block_by_label(s: SQLiteStore, label: str) -> Dict[str, Any]:
    found = [b for b in s.list_blocks("archival", label) if b["label"] == label]
    if not found:
        raise NotFoundError("no block labelled %r" % label)
    return dict(s.block(found[0]["id"]))


def subset(want: Dict[str, Any], got: Dict[str, Any], what: str) -> None:
    for k, v in want.items():
        assert k in got, "%s: no %r" % (what, k)
        assert got[k] == v, "%s: %r" % (what, k)


def run_step(s: SQLiteStore, i: int, step: Dict[str, Any]) -> None:
    want = step["want"]
    what = "step %d" % i
    try:
        if "append" in step:
            a = step["append"]
            msgs = [compact(m) for m in a["messages"]]
            if a.get("new_only"):
                added = s.append_new(a["conversation_id"], msgs)
                if "appended" in want:
                    assert [json.loads(m)["id"] for m in added] == want["appended"], what
            else:
                s.append_messages(a["conversation_id"], msgs)
        elif "commit" in step:
            c = step["commit"]
            deletes = c.get("archive_deletes") or []
            c = dict(c, archive_deletes=[block_by_label(s, d[len("block:"):])["id"] if d.startswith("block:") else d
                                         for d in deletes])
            s.commit(compact(c), now=datetime.fromisoformat(step["now"].replace("Z", "+00:00")))
        elif "read_block" in step:
            b = block_by_label(s, step["read_block"]["label"])
            assert BLOCK_ID.match(b["id"]), b["id"]
            if b.get("malformed") is None:
                b.pop("malformed", None)
            else:
                assert "malformed" in want["block"], "%s: malformed %r" % (what, b["malformed"])
            subset(want["block"], b, what)
        elif "recall" in step:
            r = step["recall"]
            assert s.recall(r["id"], r["conversation_id"]) == want["message"], what
        elif "search" in step:
            q = step["search"]
            hits = s.search(q["query"], q["conversation_id"])
            assert len(hits) == len(want["hits"]), "%s: %r" % (what, hits)
            for k, (w, h) in enumerate(zip(want["hits"], hits)):
                subset(w, dict(h), "%s: hit %d" % (what, k))
        else:
            pytest.fail("%s: no append, commit, read_block, recall or search" % what)
    except (StoreError, ClipfoldError) as e:
        if "error" not in want:
            raise
        assert error_kind(e) == want["error"]["kind"], "%s: %s" % (what, e)
        for word in want["error"]["says"]:
            assert word in str(e), "%s: %r does not say %r" % (what, str(e), word)
        return
    assert "error" not in want, "%s: no error, expected %r" % (what, want["error"])


@pytest.mark.parametrize("case", cases())
def test_store_vector(wasm: str, case: Dict[str, Any]) -> None:
    with SQLiteStore() as s:
        for i, step in enumerate(case["steps"]):
            run_step(s, i, step)
        (state,) = s.connection.execute((VECTORS / "state.sql").read_text("utf-8")).fetchone()
        got = json.loads(state)
        for table in ("messages", "recall", "blocks"):
            assert got[table] == case["state"][table], "table %s" % table
