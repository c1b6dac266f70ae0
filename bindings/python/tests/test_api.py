"""The Pythonic API over the pure exports, and its typing."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import clipfold
from clipfold import ClipfoldError, Compactor

HERE = Path(__file__).resolve().parent


def test_pure_methods(pure: Compactor) -> None:
    msgs = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Is there a bug?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                                                                   "function": {"name": "grep", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "no match"}]},
            {"role": "user", "content": "ok"}]
    scores = pure.score(msgs)
    assert len(scores) == 5 and all(isinstance(x, float) for x in scores)
    sp = pure.split(msgs, config={"keep_recent": 1})
    assert set(sp) == {"to_compress", "to_keep", "prior_summary"}
    assert sp["to_keep"][-1]["content"] == "ok"
    assert pure.chunk(msgs, config={"chunk_size": 2})[0] == [msgs[0], msgs[1]]
    due = pure.should_compact(msgs, config={"model_max_tokens": 10, "context_budget": 0.5})
    assert due["due"] is True and due["limit"] == 5
    assert pure.estimate_tokens("abcde") == 2
    # The conservative estimate: "abcd" 2 and "e" 1, plus 4 tokens of framing a message.
    assert pure.estimate_tokens([{"role": "user", "content": "abcd"}, {"role": "user", "content": "e"}]) == 11
    req = pure.build_summarization_request(msgs[1:], previous_summary="before", model="m", max_tokens=100)
    assert req["model"] == "m" and req["max_tokens"] == 100 and req["temperature"] == 0
    assert req["messages"][0] == {"role": "system", "content": "Previous summary of conversation:\nbefore"}
    rreq = pure.build_resummarization_request(["a", "b"])
    assert rreq["messages"][0]["content"] == "Summary batch:\na"
    assert pure.build_clip_archive([]) == "[Context Summary — 0 messages compressed]"
    text = pure.build_clip_archive([{"content": "S", "depth": 0, "start_time": "2026-02-28T10:00:00Z",
                                     "end_time": "2026-02-28T10:05:00Z", "message_count": 3,
                                     "source_message_ids": ["a", "b", "c"]}])
    # seed 004's format: "cycle" for one (max depth 0 + 1), times in UTC with milliseconds
    assert text == ("[Context Summary — 3 messages compressed across 1 compaction cycle]\n"
                    "[Batch 1 — depth 0, 2026-02-28T10:00:00.000Z to 2026-02-28T10:05:00.000Z]\nS")
    v = pure.version()
    assert v["abi"] == 1 and v["version"]


def test_errors_are_clipfold_errors(pure: Compactor) -> None:
    with pytest.raises(ClipfoldError) as e:
        pure.score([{"role": "user", "content": "x"}, {"role": "wizard", "content": "y"}])
    assert e.value.code == "invalid_input" and e.value.field == "messages[1].role"
    with pytest.raises(ClipfoldError) as e:
        pure.call("score", b"{not json")
    assert e.value.code == "invalid_json"
    with pytest.raises(ClipfoldError) as e:
        pure.call("noSuchExport", b"{}")
    assert e.value.code == "plugin_error"
    assert pure.version()["abi"] == 1  # the instance still answers


def test_manifest_config_and_context_manager(wasm: str) -> None:
    msgs = [{"role": "user", "content": str(i)} for i in range(5)]
    with Compactor(wasm, manifest_config={"chunk_size": 2}) as c:
        assert [len(x) for x in c.chunk(msgs)] == [2, 2, 1]
        assert [len(x) for x in c.chunk(msgs, config={"chunk_size": 4})] == [4, 1]
    with pytest.raises(ClipfoldError):
        c.version()  # closed


def test_wasm_path_from_env(wasm: str, monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setenv("CLIPFOLD_WASM", wasm)
    monkeypatch.chdir(tmp_path)
    assert clipfold.find_wasm() == wasm
    monkeypatch.delenv("CLIPFOLD_WASM")
    # Given a start, walking up from it finds a build/clipfold.wasm.
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "clipfold.wasm").write_bytes(open(wasm, "rb").read())
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert clipfold.find_wasm(tmp_path / "a" / "b") == str(tmp_path / "build" / "clipfold.wasm")


def test_normalize_messages_adds_nothing() -> None:
    """Messages go to the plug-in as given: ids, times and null contents are
    the plug-in's to read (derived ids, the compaction's now)."""
    given = [{"role": "user", "content": None}, {"role": "user", "content": "x", "id": "k"}]
    out = clipfold.normalize_messages(given)
    assert out == given and out[0] is not given[0]
    with pytest.raises(clipfold.ClipfoldError) as e:
        clipfold.normalize_messages([{"role": "user", "content": "x"}, 42])
    assert e.value.code == "invalid_input" and e.value.field == "messages[1]"
    with pytest.raises(clipfold.ClipfoldError) as e:
        clipfold.normalize_messages([{"role": "user", "content": float("nan")}])
    assert e.value.field == "messages[0].content"


def test_host_callbacks_never_raise_into_the_plugin(wasm: str) -> None:
    # an llm returning garbage types is reported, not raised
    with Compactor(wasm, llm=lambda req: 42) as c:
        assert c._llm_complete(b"{}").startswith(b'{"error"')


def test_mypy_strict() -> None:
    """The package and an example of its use type-check under mypy --strict.
    mypy is one of the test extras (run_tests.sh installs them): its absence
    is a failure, not a reason to skip."""
    example = HERE / "typing_example.py"
    mypy = str(Path(sys.executable).parent / "mypy")
    if not os.path.exists(mypy):
        found = shutil.which("mypy")
        assert found, "mypy is not installed: pip install '.[test]' (run_tests.sh does)"
        mypy = found
    src = HERE.parent / "src" / "clipfold"
    r = subprocess.run([mypy, "--strict", "--no-incremental", str(src), str(example)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
