"""Loads a clipfold plug-in with nothing but the extism PyPI package and
WASI, provides the three host functions of docs/spec.md#host-functions scripted from
harness/sdks/cases.json, and checks the cases there.

Usage: python check.py CASES_JSON WASM

Output (harness/sdks/README.md): "sdk NAME VERSION", then "ok CASE" or
"FAIL CASE: why" per case. Exit status 1 when any case failed.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from importlib.metadata import version
from typing import Annotated, Any, Callable, Dict, List

import extism


class Host:
    """What the plug-in sent to each host function, and the script of the
    case being run."""

    def __init__(self) -> None:
        self.script: Dict[str, Any] = {}
        self.llm: List[Any] = []
        self.list: List[Any] = []
        self.commits: List[Any] = []


HOST = Host()
JSON = Annotated[Any, extism.Json]


# functions= is passed explicitly below, so these are not picked up from
# the SDK's process-wide registry by accident.
@extism.host_fn(name="llm_complete", namespace="extism:host/user")
def llm_complete(req: JSON) -> JSON:
    HOST.llm.append(req)
    time.sleep(HOST.script.get("llm_delay_ms", 0) / 1000)
    return HOST.script["llm_complete"]


@extism.host_fn(name="memory_list", namespace="extism:host/user")
def memory_list(req: JSON) -> JSON:
    HOST.list.append(req)
    return HOST.script["memory_list"]


@extism.host_fn(name="compaction_commit", namespace="extism:host/user")
def compaction_commit(req: JSON) -> JSON:
    HOST.commits.append(req)
    return HOST.script["compaction_commit"]


class CheckError(Exception):
    pass


def same(what: str, got: Any, want: Any) -> None:
    if got != want or type(got) is not type(want):
        raise CheckError("%s: got %r, want %r" % (what, got, want))


def ids(msgs: Any) -> List[Any]:
    return [m.get("id") for m in msgs or []]


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: python check.py CASES_JSON WASM", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    print("sdk extism %s (extism-sys %s, runtime %s)"
          % (version("extism"), version("extism-sys"), extism.extism_version()))
    try:
        # WASI through the runtime's wasmtime-wasi, which has real clocks
        # (there is no clock option).
        plugin = extism.Plugin({"wasm": [{"path": sys.argv[2]}]}, wasi=True,
                               functions=[llm_complete, memory_list, compaction_commit])
    except extism.Error as e:
        print("FAIL load: %s" % e)
        return 1

    def call(c: Dict[str, Any]) -> Any:
        HOST.script = c.get("host", {})
        HOST.llm, HOST.list, HOST.commits = [], [], []
        return json.loads(plugin.call(c["export"], json.dumps(c["input"])))

    def split(c: Dict[str, Any]) -> None:
        res = call(c)
        same("to_compress ids", ids(res["to_compress"]), c["expect"]["to_compress"])
        same("to_keep ids", ids(res["to_keep"]), c["expect"]["to_keep"])
        same("prior_summary", res["prior_summary"], c["expect"]["prior_summary"])

    def compress(c: Dict[str, Any]) -> None:
        e = c["expect"]
        res = call(c)
        same("failed", res["failed"], e["failed"])
        same("messages_compressed", res["messages_compressed"], e["messages_compressed"])
        same("batches_created", res["batches_created"], e["batches_created"])
        same("llm_calls", res["llm_calls"], e["llm_calls"])
        same("llm_complete calls", len(HOST.llm), e["llm_calls"])
        same("compaction_commit calls", len(HOST.commits), e["commits"])
        same("memory_list calls", len(HOST.list), 1)
        same("memory_list label_prefix", HOST.list[0].get("label_prefix"), e["label_prefix"])
        first, kept = res["history"][0], res["history"][1:]
        summary = c["host"]["llm_complete"]["content"][0]["text"]
        same("history[0].role", first.get("role"), "system")
        if not first["content"].startswith(e["archive_prefix"]):
            raise CheckError("history[0].content starts %r, want %r"
                             % (first["content"][:len(e["archive_prefix"]) + 10], e["archive_prefix"]))
        if summary not in first["content"]:
            raise CheckError("history[0].content does not hold the LLM's summary")
        same("kept ids", ids(kept), e["kept_ids"])
        commit = HOST.commits[0]
        same("commit conversation_id", commit["conversation_id"], e["conversation_id"])
        same("commit remove_message_ids (sorted)", sorted(commit["remove_message_ids"]), e["removed_ids"])
        same("commit operation_id", commit["operation_id"], res["operation_id"])
        same("commit insert_message.content", commit["insert_message"]["content"], first["content"])
        same("commit archive_writes", len(commit["archive_writes"]), 1)

    def invalid(c: Dict[str, Any]) -> None:
        try:
            res = call(c)
        except extism.Error as err:
            msg = str(err)
            if not msg.startswith(c["error_prefix"]):
                raise CheckError("error %r, want one starting %r" % (msg, c["error_prefix"]))
            return
        raise CheckError("succeeded with %r, want an error starting %r" % (res, c["error_prefix"]))

    def deadline(c: Dict[str, Any]) -> None:
        e = c["expect"]
        res = call(c)
        same("failed", res["failed"], e["failed"])
        same("failure_code", res["failure_code"], e["failure_code"])
        same("history ids", ids(res["history"]), e["history_ids"])
        same("llm_complete calls", len(HOST.llm), e["llm_calls"])
        same("compaction_commit calls", len(HOST.commits), e["commits"])

    checks: Dict[str, Callable[[Dict[str, Any]], None]] = {
        "split": split, "compress": compress, "invalid": invalid, "deadline": deadline}
    failed = 0
    for name, check in checks.items():
        try:
            check(cases[name])
            print("ok %s" % name)
        except CheckError as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
        except Exception:  # noqa: BLE001 - a crash is a failed case, reported in full
            failed += 1
            print("FAIL %s: %s" % (name, traceback.format_exc().strip().replace("\n", "\n    ")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
