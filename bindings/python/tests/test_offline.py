"""Offline, every host summarizes alike: for the messages and config of
testdata/offline, the Python package writes the batches the Go library and
the Node package write (the file holds them, written by the Go test),
every line dated from its message, no LLM call."""

import json
import re
from pathlib import Path
from typing import Any, Dict, List

from clipfold import Compactor

REPO = Path(__file__).resolve().parents[3]
DATED = re.compile(r"^\[\d{4}-\d{2}-\d{2}\] (User|Assistant|System|Tool call|Tool)[ :]")


def test_offline_batches_are_the_same_in_every_host(wasm: str) -> None:
    case: Dict[str, Any] = json.loads((REPO / "testdata" / "offline" / "debugging-session-60.json").read_text())
    messages: List[Dict[str, Any]] = json.loads((REPO / "testdata" / case["conversation"]).read_text())[: case["messages"]]
    with Compactor(wasm) as c:
        r = c.compress(messages[0]["conversation_id"], messages, config=case["config"])
    assert not r["failed"], r
    assert r["llm_calls"] == 0
    assert [b["method"] for b in r["batches"]] == ["extractive"] * len(case["batches"])
    assert [b["content"] for b in r["batches"]] == case["batches"]
    for b in r["batches"]:
        for line in b["content"].split("\n"):
            assert DATED.match(line), line
