#!/usr/bin/env python3
"""Writes testdata/trajectories: real agent tool trajectories for the
trajectory benchmark (tools/trajectories, make trajectories).

Each trajectory is a public benchmark's ground-truth tool calls executed
through that benchmark's own tool implementations, so every tool result is
what the real tool returns:

  * bfcl-eval (Apache-2.0): the Berkeley Function Calling Leaderboard's
    multi_turn_long_context set. Each entry has several user turns and,
    per turn, the ground-truth call sequence (data/possible_answer); the
    calls run on the entry's initial state through the executable classes
    of bfcl_eval/eval_checker/multi_turn_eval/func_source_code
    (GorillaFileSystem, TwitterAPI, TravelAPI, TradingBot, ...), with
    long_context=True as BFCL does for that set. The calls are parsed with
    ast (never eval) and matched to the methods' parameters. A call that
    raises gives BFCL's own "Error during execution: ..." text.
  * agentdojo (MIT): the workspace, travel, banking and slack suites
    (benchmark version v1.2.2). A session is a run of consecutive user tasks
    of one suite; each task's ground truth is computed and executed as
    agentdojo's GroundTruthPipeline does (FunctionsRuntime.run_function,
    results rendered by tool_result_to_str as YAML) on the suite's default
    environment with that task's init_environment: every task starts from
    the suite's data, as the benchmark defines its ground truths.

The messages are in clipfold's native shape (docs/spec.md#message): a system
message, user turns, assistant messages with one OpenAI-style tool call
each, tool messages answering them, and the assistant's final text per
turn. What is not real and is said so in the README: the system prompts
of the bfcl trajectories and their final assistant lines (templated:
"Done: called cd, mkdir, mv."; agentdojo's final lines are the tasks'
GROUND_TRUTH_OUTPUT, its system prompt agentdojo's default one), the ids
and the timestamps.

Run once, with the pinned versions (from the repository root):

  python3 -m venv build/traj-venv
  build/traj-venv/bin/pip install -r tools/trajectories/gen/requirements.txt
  build/traj-venv/bin/pip install --no-deps bfcl-eval==2026.3.23
  TZ=UTC build/traj-venv/bin/python tools/trajectories/gen/generate.py

It rewrites testdata/trajectories/*.json; the README there is written by
hand. The output is deterministic (the tools' random generators are
seeded by their scenarios; TZ=UTC fixes TradingBot's dates).
"""
import ast
import copy
import importlib
import inspect
import json
import os
import sys
from datetime import datetime, timedelta, timezone

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testdata", "trajectories")

BFCL_VERSION = "2026.3.23"
AGENTDOJO_VERSION = "0.1.35"
AGENTDOJO_BENCHMARK = "v1.2.2"

# bfcl: per class, the BFCL_PER_CLASS entries of multi_turn_long_context
# whose calls to that class's tools return the most text (classes in the
# order below; an entry already picked is not picked again).
BFCL_PER_CLASS = 4
BFCL_CLASSES = ["GorillaFileSystem", "TwitterAPI", "MessageAPI", "TicketAPI", "TravelAPI", "TradingBot",
                "VehicleControlAPI", "MathAPI"]

# agentdojo: sessions per suite (consecutive user tasks, split evenly).
AGENTDOJO_SESSIONS = {"workspace": 5, "travel": 2, "banking": 1, "slack": 1}


def iso(t):
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


class Writer:
    """Builds one trajectory's messages: ids <prefix>-NNNN, strictly
    increasing timestamps, call ids call_<prefix>_<n>."""

    def __init__(self, prefix, conversation_id, start):
        self.prefix, self.conv, self.t, self.msgs, self.calls = prefix, conversation_id, start, [], 0

    def add(self, role, content, seconds, **extra):
        self.t += timedelta(seconds=seconds)
        m = {"id": "%s-%04d" % (self.prefix, len(self.msgs) + 1), "conversation_id": self.conv, "role": role,
             "content": content}
        m.update(extra)
        m["created_at"] = iso(self.t)
        self.msgs.append(m)
        return m

    def call(self, name, args, result):
        self.calls += 1
        cid = "call_%s_%d" % (self.prefix.replace("-", "_"), self.calls)
        self.add("assistant", "", 4, tool_calls=[{"id": cid, "type": "function", "function": {
            "name": name, "arguments": json.dumps(args, ensure_ascii=False)}}])
        self.add("tool", result, 2, tool_call_id=cid)

    def write(self, name):
        path = os.path.join(OUT, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            f.write("[\n")
            f.write(",\n".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in self.msgs))
            f.write("\n]\n")
        return path


# ---------------------------------------------------------------- bfcl

def bfcl_value(node):
    return ast.literal_eval(node)


def bfcl_render(result):
    """What BFCL's execute_multi_turn_func_call feeds back to the model."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


class BFCLEntry:
    def __init__(self, entry, answer):
        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES
        self.entry, self.answer = entry, answer
        self.methods, self.owner = {}, {}
        for cn in entry["involved_classes"]:
            obj = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[cn]), cn)()
            if cn not in STATELESS_CLASSES:
                obj._load_scenario(copy.deepcopy(entry["initial_config"].get(cn, {})), long_context=True)
            for name, method in inspect.getmembers(obj, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = method
                    self.owner[name] = cn

    def run(self, call):
        """Parses one ground-truth call ("cd(folder='document')"), runs
        it, returns (name, arguments, result text)."""
        node = ast.parse(call, mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError("not a plain call: %r" % call)
        name = node.func.id
        method = self.methods[name]
        params = list(inspect.signature(method).parameters)
        args = {params[i]: bfcl_value(a) for i, a in enumerate(node.args)}
        for kw in node.keywords:
            args[kw.arg] = bfcl_value(kw.value)
        try:
            result = bfcl_render(method(**copy.deepcopy(args)))
        except Exception as e:  # BFCL's own rendering of a failed call
            result = "Error during execution: %s" % e
        return name, args, result


def bfcl_trajectories():
    import bfcl_eval
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING
    data = os.path.join(os.path.dirname(bfcl_eval.__file__), "data")
    entries = [json.loads(l) for l in open(os.path.join(data, "BFCL_v4_multi_turn_long_context.json"))]
    answers = {}
    for l in open(os.path.join(data, "possible_answer", "BFCL_v4_multi_turn_long_context.json")):
        a = json.loads(l)
        answers[a["id"]] = a

    # Size every entry's output per class, then pick per class.
    sized = []
    for e in entries:
        runner = BFCLEntry(e, answers[e["id"]])
        per_class = {}
        for turn in answers[e["id"]]["ground_truth"]:
            for c in turn:
                fname, _, result = runner.run(c)
                cn = runner.owner[fname]
                per_class[cn] = per_class.get(cn, 0) + len(result)
        sized.append((per_class, e))
    chosen, seen = [], set()
    for cn in BFCL_CLASSES:
        cands = sorted((s for s in sized if s[0].get(cn, 0) > 0 and s[1]["id"] not in seen),
                       key=lambda s: (-s[0][cn], s[1]["id"]))
        for _, e in cands[:BFCL_PER_CLASS]:
            seen.add(e["id"])
            chosen.append(e)

    docs = {}
    for cn, fn in MULTI_TURN_FUNC_DOC_FILE_MAPPING.items():
        p = os.path.join(data, "multi_turn_func_doc", fn)
        if os.path.exists(p):
            docs[cn] = [json.loads(l)["name"] for l in open(p)]

    out = []
    start = datetime(2025, 3, 3, 9, 0, 0, tzinfo=timezone.utc)
    for n, e in enumerate(sorted(chosen, key=lambda e: int(e["id"].rsplit("_", 1)[1]))):
        num = int(e["id"].rsplit("_", 1)[1])
        name = "bfcl-lc-%03d" % num
        w = Writer(name, "traj-" + name, start + timedelta(days=n))
        tools = [t for cn in e["involved_classes"] for t in docs.get(cn, []) if t not in e.get("excluded_function", [])]
        w.add("system", "You are an assistant that completes the user's requests by calling tools. Tools: "
              + ", ".join(tools) + ".", 0)
        runner = BFCLEntry(e, answers[e["id"]])
        for turn, calls in zip(e["question"], answers[e["id"]]["ground_truth"]):
            for um in turn:
                w.add("user", um["content"], 60)
            names = []
            for c in calls:
                fname, args, result = runner.run(c)
                w.call(fname, args, result)
                names.append(fname)
            w.add("assistant", "Done: called %s." % ", ".join(names) if names else "Done.", 3)
        w.write(name)
        out.append((name, e["id"], e["involved_classes"], len(w.msgs), w.calls))
    return out


# ------------------------------------------------------------ agentdojo

def agentdojo_trajectories():
    import warnings
    warnings.simplefilter("ignore")
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.functions_runtime import FunctionsRuntime
    from agentdojo.task_suite.load_suites import get_suite

    system = load_system_message(None).strip()
    out = []
    start = datetime(2024, 5, 13, 8, 30, 0, tzinfo=timezone.utc)
    day = 0
    for suite_name, sessions in AGENTDOJO_SESSIONS.items():
        suite = get_suite(AGENTDOJO_BENCHMARK, suite_name)
        tasks = sorted(suite.user_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
        for s in range(sessions):
            part = tasks[s * len(tasks) // sessions:(s + 1) * len(tasks) // sessions]
            name = "agentdojo-%s-%d" % (suite_name, s + 1)
            w = Writer(name, "traj-" + name, start + timedelta(days=day))
            day += 1
            w.add("system", system, 0)
            for tid, task in part:
                env = task.init_environment(suite.load_and_inject_default_environment({}))
                runtime = FunctionsRuntime(suite.tools)
                w.add("user", task.PROMPT, 90)
                for call in task.ground_truth(env.model_copy(deep=True)):
                    result, error = runtime.run_function(env, call.function, dict(call.args), raise_on_error=False)
                    text = tool_result_to_str(result) if error is None else error
                    w.call(call.function, dict(call.args), text)
                final = task.GROUND_TRUTH_OUTPUT.strip()
                w.add("assistant", final if final else "Done.", 5)
            w.write(name)
            out.append((name, "%s %s" % (suite_name, ", ".join(t for t, _ in part)), [suite_name], len(w.msgs),
                        w.calls))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = bfcl_trajectories() + agentdojo_trajectories()
    for r in rows:
        print("%-24s %4d messages %3d calls  %s" % (r[0], r[3], r[4], r[1]))
    print("%d trajectories" % len(rows), file=sys.stderr)


if __name__ == "__main__":
    main()
