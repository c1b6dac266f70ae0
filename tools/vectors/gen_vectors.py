#!/usr/bin/env python3
"""Writes testdata/vectors/*.json, clipfold's conformance vectors.

Expected outputs are computed here, in Python, straight from SPEC.md and the
seed documents -- independently of the Go code they test -- or written out
by hand. Every host (Go native, Go+wasm, Node, Python) runs these files.

Vector file shape:
  {"export": "score", "vectors": [
     {"name": "...", "proves": ["compaction-v2.AC3.1"],
      "input": {...} | "input_raw": "exact bytes",
      "expected": {...}            -- compared as JSON, numbers within 1e-9
      | "expected_raw": "bytes"    -- compared byte for byte
      | "error": {"code": "invalid_input", "field": "messages[0].role"}}]}

Run: python3 tools/vectors/gen_vectors.py   (from the repository root)
"""
import json
import math
import os
from datetime import datetime, timedelta, timezone

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "vectors")

DEFAULT_SYSTEM_PROMPT = ("You are summarizing a conversation history to preserve essential context while "
                         "compacting it. Create a concise narrative summary that maintains chronological order "
                         "and preserves the causal chain of decisions.")
DEFAULT_DIRECTIVE = """Summarize the conversation above. Follow these priorities:

PRESERVE: Decisions made and their rationale. Tool outcomes (successes and failures). User constraints and preferences explicitly stated. Causal chains explaining why decisions were made.

CONDENSE: Repetitive exchanges into single statements. Verbose tool output into key results. Conversational filler and acknowledgements.

PRIORITIZE: Recent context over older context. Actionable information over historical detail. Unresolved questions and pending tasks.

REMOVE: Greetings and small talk. Redundant confirmations. Formatting artifacts.

Output only the summary text as a flowing narrative, not bullet points."""

BASE = datetime(2026, 2, 28, 10, 0, 0, tzinfo=timezone.utc)


def ts(minutes):
    t = BASE + timedelta(minutes=minutes)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def msg(i, role, content, **extra):
    m = {"id": "m%d" % i, "conversation_id": "c1", "role": role, "content": content, "created_at": ts(i)}
    m.update(extra)
    return m


def call(i, call_id, name="read_file", args='{"path":"main.go"}', content=""):
    return msg(i, "assistant", content, tool_calls=[
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}])


def result(i, call_id, content, **extra):
    return msg(i, "tool", content, tool_call_id=call_id, **extra)


# ---------------------------------------------------------------- reference
DEFAULTS = dict(chunk_size=20, keep_recent=5, role_weight_system=10.0, role_weight_user=5.0,
                role_weight_assistant=3.0, recency_decay=0.95, question_bonus=2.0, tool_call_bonus=4.0,
                keyword_bonus=1.5, content_length_weight=1.0, pin_system=True, max_chunk_tokens=None,
                important_keywords=["error", "fail", "bug", "fix", "decision", "agreed", "constraint",
                                    "requirement"])


def cfg(over=None):
    c = dict(DEFAULTS)
    c.update(over or {})
    return c


def text(m):
    c = m.get("content")
    if isinstance(c, list):
        parts = []
        for p in c:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("type", "text") == "text":
                parts.append(p["text"])
        return "\n".join(parts)
    return c or ""


def has_calls(m):
    tc = m.get("tool_calls")
    return tc not in (None, [], {}, "", False)


def score(m, index, total, c):
    role = m["role"]
    w = {"system": c["role_weight_system"], "user": c["role_weight_user"], "tool": c["role_weight_user"],
         "assistant": c["role_weight_assistant"]}[role]
    s = w * c["recency_decay"] ** (total - 1 - index)
    t = text(m)
    if "?" in t:
        s += c["question_bonus"]
    if has_calls(m):
        s += c["tool_call_bonus"]
    low = t.lower()
    kws = []
    for k in c["important_keywords"]:
        k = k.lower()
        if k and k not in kws:
            kws.append(k)
    s += c["keyword_bonus"] * sum(1 for k in kws if k in low)
    s += min(len(t) / 100 * c["content_length_weight"], 3.0)
    return s


def is_clip(m):
    return m["role"] == "system" and text(m).startswith("[Context Summary")


def pinned(m, c):
    return m.get("pinned") is True or (c["pin_system"] and m["role"] == "system" and not is_clip(m))


def leaders(msgs, start):
    """Unit leader of every message at or after start (SPEC: call + results)."""
    lead = list(range(len(msgs)))
    calls = {}
    for i in range(start, len(msgs)):
        m = msgs[i]
        if m["role"] == "assistant" and has_calls(m):
            for tc in m["tool_calls"]:
                if tc.get("id"):
                    calls[tc["id"]] = i
        elif m["role"] == "tool":
            tid = m.get("tool_call_id")
            if tid:
                if tid in calls:
                    lead[i] = calls[tid]
            elif i > start:
                p = lead[i - 1]
                if msgs[p]["role"] == "assistant" and has_calls(msgs[p]) and (msgs[i - 1]["role"] == "tool" or p == i - 1):
                    lead[i] = p
    return lead


def split(msgs, c):
    n = len(msgs)
    start, prior = 0, None
    if n and is_clip(msgs[0]):
        prior, start = msgs[0], 1
    cut = max(start, n - c["keep_recent"])
    lead = leaders(msgs, start)
    while True:
        m = min([lead[i] for i in range(cut, n)] + [cut])
        if m == cut:
            break
        cut = m
    pin_lead = {lead[i] for i in range(start, cut) if pinned(msgs[i], c)}
    total = cut - start
    best, order = {}, []
    for i in range(start, cut):
        if lead[i] in pin_lead:
            continue
        s = score(msgs[i], i - start, total, c)
        if lead[i] == i:
            best[i] = s
            order.append(i)
        else:
            best[lead[i]] = max(best[lead[i]], s)
    order.sort(key=lambda u: best[u])  # Python's sort is stable
    comp = []
    for u in order:
        comp += [i for i in range(start, cut) if lead[i] == u]
    keep = [i for i in range(start, cut) if lead[i] in pin_lead] + list(range(cut, n))
    return {"to_compress": [msgs[i] for i in comp], "to_keep": [msgs[i] for i in keep], "prior_summary": prior}


def answers(m, call_msg):
    if m["role"] != "tool":
        return False
    tid = m.get("tool_call_id")
    return not tid or any(tc.get("id") == tid for tc in call_msg["tool_calls"])


def chunk(msgs, c):
    size, max_tok = max(1, c["chunk_size"]), c["max_chunk_tokens"]
    chunks, cur, cur_tok, k = [], [], 0, 0
    while k < len(msgs):
        end = k + 1
        if msgs[k]["role"] == "assistant" and has_calls(msgs[k]):
            while end < len(msgs) and answers(msgs[end], msgs[k]):
                end += 1
        unit = msgs[k:end]
        unit_tok = sum(math.ceil(len(text(m)) / 4) for m in unit)
        if cur and ((max_tok and cur_tok + unit_tok > max_tok) or (not max_tok and len(cur) + len(unit) > size)):
            chunks.append(cur)
            cur, cur_tok = [], 0
        cur += unit
        cur_tok += unit_tok
        k = end
    if cur:
        chunks.append(cur)
    return chunks


def fmt_time(s):
    t = datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def clip_archive(batches, clip_first, clip_last, total):
    """Seed 004's buildClipArchive, transcribed."""
    if not batches:
        return "[Context Summary — 0 messages compressed]"
    cycles = max(b["depth"] for b in batches) + 1
    lines = ["[Context Summary — %d messages compressed across %d compaction cycle%s]"
             % (total, cycles, "" if cycles == 1 else "s")]
    n = len(batches)
    if n <= clip_first + clip_last:
        earliest, recent, omission = batches, [], False
    else:
        earliest, recent, omission = batches[:clip_first], batches[n - clip_last:] if clip_last else [], True

    def line(num, b):
        return "[Batch %d — depth %d, %s to %s]" % (num, b["depth"], fmt_time(b["start_time"]), fmt_time(b["end_time"]))

    if earliest:
        if omission:
            lines.append("## Earliest context")
        for i, b in enumerate(earliest):
            lines += [line(i + 1, b), b["content"], ""]
    if omission:
        lines += ["[... %d earlier summaries omitted, searchable via memory_read ...]" % (n - clip_first - clip_last), ""]
    if recent:
        if omission:
            lines.append("## Recent context")
        for i, b in enumerate(recent):
            lines += [line(n - len(recent) + i + 1, b), b["content"], ""]
    return "\n".join(lines).strip()


def clamp(s, mx):
    if mx <= 0 or len(s) <= mx:
        return s
    head = mx // 2
    tail = mx - head
    return s[:head] + "[… %d characters omitted …]" % (len(s) - mx) + s[len(s) - tail:]


def summ_request(system_prompt, previous, msgs, model, max_tokens, max_chars=20000):
    out = []
    if previous:
        out.append({"role": "system", "content": "Previous summary of conversation:\n" + previous})
    for m in msgs:
        t = text(m)
        if m["role"] == "user":
            out.append({"role": "user", "content": clamp(t, max_chars)})
        elif m["role"] == "assistant":
            if t == "" and has_calls(m):
                t = "\n".join("[Tool call]: %s(%s)" % (tc["function"]["name"], tc["function"]["arguments"])
                              for tc in m["tool_calls"])
            out.append({"role": "assistant", "content": clamp(t, max_chars)})
        elif m["role"] == "tool":
            out.append({"role": "user", "content": "[Tool result]: " + clamp(t, max_chars)})
    out.append({"role": "user", "content": DEFAULT_DIRECTIVE})
    return {"system": system_prompt or DEFAULT_SYSTEM_PROMPT, "messages": out, "model": model,
            "max_tokens": max_tokens, "temperature": 0}


def resumm_request(system_prompt, contents, model, max_tokens):
    out = [{"role": "system", "content": "Summary batch:\n" + c} for c in contents]
    out.append({"role": "user", "content": DEFAULT_DIRECTIVE})
    return {"system": system_prompt or DEFAULT_SYSTEM_PROMPT, "messages": out, "model": model,
            "max_tokens": max_tokens, "temperature": 0}


def err(code, field):
    return {"code": code, "field": field}


files = {}


def vec(export, name, proves, input=None, expected=None, error=None, input_raw=None, expected_raw=None):
    v = {"name": name, "proves": proves}
    if input_raw is not None:
        v["input_raw"] = input_raw
    else:
        v["input"] = input
    if error is not None:
        v["error"] = error
    elif expected_raw is not None:
        v["expected_raw"] = expected_raw
    else:
        v["expected"] = expected
    files.setdefault(export, []).append(v)


# ---------------------------------------------------------------- score
def score_vec(name, proves, msgs, over=None):
    c = cfg(over)
    inp = {"messages": msgs}
    if over:
        inp["config"] = over
    vec("score", name, proves, inp, {"scores": [score(m, i, len(msgs), c) for i, m in enumerate(msgs)]})


for role in ["system", "user", "assistant", "tool"]:
    score_vec("role weight: lone %s message" % role, ["compaction-v2.AC3.1"], [msg(0, role, "hello")])
score_vec("role weight: system > user > assistant at equal distance from the end", ["compaction-v2.AC3.1"],
          [msg(0, "assistant", "same"), msg(1, "user", "same"), msg(2, "system", "same")],
          {"recency_decay": 1.0})
score_vec("recency: identical messages score higher when newer", ["compaction-v2.AC3.2"],
          [msg(i, "user", "hi") for i in range(4)])
score_vec("content: question mark adds question_bonus", ["compaction-v2.AC3.3"],
          [msg(0, "user", "is it done"), msg(1, "user", "is it done?")], {"recency_decay": 1.0})
score_vec("content: tool calls add tool_call_bonus", ["compaction-v2.AC3.3"],
          [msg(0, "assistant", ""), call(1, "call_1")], {"recency_decay": 1.0})
score_vec("content: each distinct keyword adds keyword_bonus, case-insensitive", ["compaction-v2.AC3.3"],
          [msg(0, "user", "an ERROR, a fix, another fix and a Bug"), msg(1, "user", "errors everywhere")])
score_vec("content: length bonus grows per 100 chars and caps at 3", ["compaction-v2.AC3.3"],
          [msg(0, "user", "x" * 150), msg(1, "user", "y" * 299), msg(2, "user", "z" * 5000)])
score_vec("config: custom weights, decay and keywords override the defaults", ["compaction-v2.AC3.5"],
          [msg(0, "user", "deploy it"), msg(1, "assistant", "done, deploy finished with error")],
          {"role_weight_user": 1.0, "role_weight_assistant": 7.5, "recency_decay": 0.5,
           "important_keywords": ["deploy", "DEPLOY"], "keyword_bonus": 0.25, "content_length_weight": 0})
score_vec("characters are code points (non-ASCII)", ["compaction-v2.AC3.3"],
          [msg(0, "user", "ünïcödé? 日本語テキスト")])
score_vec("content-part arrays are joined with newlines", ["compaction-v2.AC3.3"],
          [msg(0, "user", [{"type": "text", "text": "first part"}, {"type": "image_url", "image_url": {"url": "x"}},
                           {"type": "text", "text": "a bug?"}])])
score_vec("empty history scores nothing", [], [])
score_vec("empty and null content", [], [msg(0, "user", ""), msg(1, "assistant", None)])
vec("score", "unknown role is rejected naming the field", [],
    {"messages": [msg(0, "user", "a"), msg(1, "robot", "b")]}, error=err("invalid_input", "messages[1].role"))
vec("score", "missing role", [], {"messages": [{"id": "x", "content": "a"}]}, error=err("invalid_input", "messages[0].role"))
vec("score", "messages is required", [], {}, error=err("invalid_input", "messages"))
vec("score", "messages must be an array", [], {"messages": {"0": 1}}, error=err("invalid_input", "messages"))
vec("score", "a message must be an object", [], {"messages": ["hello"]}, error=err("invalid_input", "messages[0]"))
vec("score", "content of the wrong type", [], {"messages": [msg(0, "user", 42)]},
    error=err("invalid_input", "messages[0].content"))
vec("score", "recency_decay above 1", [], {"messages": [], "config": {"recency_decay": 1.5}},
    error=err("invalid_input", "config.recency_decay"))
vec("score", "negative weight", [], {"messages": [], "config": {"role_weight_user": -1}},
    error=err("invalid_input", "config.role_weight_user"))
vec("score", "keywords must be strings", [], {"messages": [], "config": {"important_keywords": [1, 2]}},
    error=err("invalid_input", "config.important_keywords"))
vec("score", "invalid JSON", [], input_raw='{"messages": [', error=err("invalid_json", ""))
vec("score", "empty input", [], input_raw='', error=err("invalid_json", ""))
vec("score", "input must be an object", [], input_raw='[1,2]', error=err("invalid_input", ""))
vec("score", "bad created_at", [], {"messages": [msg(0, "user", "a", created_at="yesterday")]},
    error=err("invalid_input", "messages[0].created_at"))
vec("score", "unknown config keys are ignored", [], {"messages": [msg(0, "user", "hello")], "config": {"colour": "blue"}},
    {"scores": [5.05]})

# ---------------------------------------------------------------- split
def split_vec(name, proves, msgs, over=None):
    c = cfg(over)
    inp = {"messages": msgs}
    if over:
        inp["config"] = over
    vec("split", name, proves, inp, split(msgs, c))


ten = [msg(i, "user" if i % 2 == 0 else "assistant", "message number %d" % i) for i in range(10)]
split_vec("keeps the last keep_recent messages verbatim, in order", ["context-compaction.AC1.6"], ten)
split_vec("history no longer than keep_recent compresses nothing", ["context-compaction.AC1.6"], ten[:5])
split_vec("keep_recent 0 compresses everything", ["context-compaction.AC1.6"], ten[:4], {"keep_recent": 0})
varied = [msg(0, "user", "Hi there"), msg(1, "assistant", "Hello! How can I help?"),
          msg(2, "user", "We hit a bug in the parser, please fix it"), msg(3, "assistant", "ok"),
          msg(4, "user", "What was the decision on the database?"),
          msg(5, "assistant", "We agreed on PostgreSQL 16 as a hard constraint. " * 4),
          msg(6, "user", "thanks"), msg(7, "assistant", "sure"), msg(8, "user", "next"), msg(9, "assistant", "go on")]
split_vec("to_compress is sorted by importance, lowest first", ["compaction-v2.AC3.4"], varied, {"keep_recent": 3})
split_vec("equal scores keep chronological order (stable)", ["compaction-v2.AC3.6"],
          [msg(i, "user", "same") for i in range(6)], {"keep_recent": 1, "recency_decay": 1.0})
prior = msg(0, "system", "[Context Summary — 12 messages compressed across 1 compaction cycle]\n[Batch 1 — depth 0, x to y]\nold")
split_vec("a leading clip-archive is the prior summary, neither compressed nor kept", ["context-compaction.AC1.6"],
          [prior] + ten[1:8], {"keep_recent": 2})
split_vec("a clip-archive that is not first is an ordinary system message", [],
          [ten[0], prior, ten[2], ten[3]], {"keep_recent": 1, "pin_system": False})
tool_hist = [msg(0, "user", "read main.go please"), call(1, "call_1"), result(2, "call_1", "package main\nfunc main() {}"),
             msg(3, "assistant", "It is a stub."), msg(4, "user", "ok")]
split_vec("the keep boundary moves earlier so a tool result never loses its call", [], tool_hist, {"keep_recent": 3})
multi = [msg(0, "user", "check both files"),
         msg(1, "assistant", "", tool_calls=[
             {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"a.go"}'}},
             {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"b.go"}'}}]),
         result(2, "call_a", "package a"), result(3, "call_b", "error: no such file b.go"),
         msg(4, "assistant", "b.go is missing"), msg(5, "user", "fine"), msg(6, "assistant", "done"), msg(7, "user", "bye")]
split_vec("a call and its results move as one unit, scored by the best member", [], multi, {"keep_recent": 2})
split_vec("results split across the boundary pull the whole unit into to_keep", [], multi, {"keep_recent": 5})
split_vec("an orphan tool result (no matching call) is its own unit", [],
          [msg(0, "user", "a"), result(1, "call_zz", "orphan output"), msg(2, "assistant", "b"), msg(3, "user", "c")],
          {"keep_recent": 1})
split_vec("tool results without tool_call_id attach to the call they follow", [],
          [msg(0, "user", "run it"), call(1, "call_1", name="bash", args='{"cmd":"make"}'),
           msg(2, "tool", "build failed: error 2"), msg(3, "user", "hmm"), msg(4, "assistant", "fixing")],
          {"keep_recent": 2})
split_vec("pinned and system messages stay, in original order, ahead of the recent ones", [],
          [msg(0, "system", "You are a careful agent."), msg(1, "user", "a"), msg(2, "user", "remember: port 8443", pinned=True),
           msg(3, "assistant", "b"), msg(4, "user", "c"), msg(5, "assistant", "d")], {"keep_recent": 2})
split_vec("pin_system false lets system messages be compressed", [],
          [msg(0, "system", "You are a careful agent."), msg(1, "user", "a"), msg(2, "assistant", "b")],
          {"keep_recent": 1, "pin_system": False})
split_vec("a pinned tool result keeps its whole unit", [],
          [msg(0, "user", "x"), call(1, "call_1"), result(2, "call_1", "important output", pinned=True),
           msg(3, "user", "y"), msg(4, "assistant", "z")], {"keep_recent": 1})
split_vec("empty history", [], [])
split_vec("one message", [], [msg(0, "user", "only")], {"keep_recent": 0})
split_vec("non-ASCII content and content arrays", [],
          [msg(0, "user", [{"type": "text", "text": "Привет, какая ошибка?"}]), msg(1, "assistant", "エラーは修正済み"),
           msg(2, "user", "👍")], {"keep_recent": 1})
vec("split", "keep_recent must not be negative", [], {"messages": [], "config": {"keep_recent": -1}},
    error=err("invalid_input", "config.keep_recent"))
vec("split", "keep_recent must be an integer", [], {"messages": [], "config": {"keep_recent": 2.5}},
    error=err("invalid_input", "config.keep_recent"))
raw_in = '{"messages":[{"id":"m1","role":"user","content":"a","x-extra":{"kept":[1,2]}},  {"role":"assistant","content":"b\\u00e9","id":"m2"}],"config":{"keep_recent":1}}'
vec("split", "messages are echoed byte-for-byte, unknown fields kept", [], input_raw=raw_in,
    expected_raw='{"to_compress":[{"id":"m1","role":"user","content":"a","x-extra":{"kept":[1,2]}}],"to_keep":[{"role":"assistant","content":"b\\u00e9","id":"m2"}],"prior_summary":null}')

# ---------------------------------------------------------------- chunk
def chunk_vec(name, proves, msgs, over=None):
    c = cfg(over)
    inp = {"messages": msgs}
    if over:
        inp["config"] = over
    vec("chunk", name, proves, inp, {"chunks": chunk(msgs, c)})


chunk_vec("10 messages by 3 give chunks of 3, 3, 3, 1", ["context-compaction.AC1.2"], ten, {"chunk_size": 3})
chunk_vec("chunk_size larger than the input gives one chunk", ["context-compaction.AC1.2"], ten[:4])
chunk_vec("empty input gives no chunks", ["context-compaction.AC1.2"], [])
chunk_vec("max_chunk_tokens cuts by estimated tokens", ["context-compaction.AC1.2"],
          [msg(i, "user", "w" * (10 * (i + 1))) for i in range(6)], {"max_chunk_tokens": 20})
chunk_vec("a message larger than max_chunk_tokens gets a chunk of its own", [],
          [msg(0, "user", "a" * 8), msg(1, "tool", "b" * 400, tool_call_id=None), msg(2, "user", "c" * 8)],
          {"max_chunk_tokens": 10})
chunk_vec("a tool call and its results are never cut apart", [],
          [msg(0, "user", "x"), msg(1, "user", "y")] + multi[1:4] + [msg(5, "user", "z")], {"chunk_size": 3})
vec("chunk", "chunk_size 0 is rejected, never looped on", [], {"messages": ten, "config": {"chunk_size": 0}},
    error=err("invalid_input", "config.chunk_size"))
vec("chunk", "max_chunk_tokens 0 is rejected", [], {"messages": ten, "config": {"max_chunk_tokens": 0}},
    error=err("invalid_input", "config.max_chunk_tokens"))
vec("chunk", "chunk_size must be a number", [], {"messages": ten, "config": {"chunk_size": "20"}},
    error=err("invalid_input", "config.chunk_size"))

# ---------------------------------------------------------------- estimateTokens
vec("estimateTokens", "text: ceil(chars / 4)", [], {"text": "abcde"}, {"tokens": 2})
vec("estimateTokens", "text: empty", [], {"text": ""}, {"tokens": 0})
vec("estimateTokens", "text: code points, not bytes", [], {"text": "日本語テキスト🙂"}, {"tokens": 2})
vec("estimateTokens", "messages: one ceiling over all contents", [],
    {"messages": [msg(0, "user", "a"), msg(1, "assistant", "b"), msg(2, "user", "c")]}, {"tokens": 1})
vec("estimateTokens", "messages: content arrays count their joined text", [],
    {"messages": [msg(0, "user", [{"type": "text", "text": "abcd"}, {"type": "text", "text": "efgh"}])]}, {"tokens": 3})
vec("estimateTokens", "text or messages is required", [], {}, error=err("invalid_input", "text"))
vec("estimateTokens", "text must be a string", [], {"text": 12}, error=err("invalid_input", "text"))

# ---------------------------------------------------------------- shouldCompact
over = {"model_max_tokens": 10, "context_budget": 0.5}
vec("shouldCompact", "due when the estimate exceeds context_budget x model_max_tokens", ["context-compaction.AC1.1"],
    {"messages": [msg(0, "user", "x" * 24)], "config": over}, {"due": True, "tokens": 6, "limit": 5})
vec("shouldCompact", "not due at exactly the limit", ["context-compaction.AC1.1"],
    {"messages": [msg(0, "user", "x" * 20)], "config": over}, {"due": False, "tokens": 5, "limit": 5})
vec("shouldCompact", "defaults: 0.8 x 200000", ["context-compaction.AC1.1"],
    {"messages": [msg(0, "user", "hello")]}, {"due": False, "tokens": 2, "limit": 160000})
vec("shouldCompact", "context_budget must be in (0, 1]", [], {"messages": [], "config": {"context_budget": 0}},
    error=err("invalid_input", "config.context_budget"))
vec("shouldCompact", "summarizer \"extractive\" is a valid config key", [],
    {"messages": [msg(0, "user", "hello")], "config": {"summarizer": "extractive"}}, {"due": False, "tokens": 2, "limit": 160000})
vec("shouldCompact", "summarizer must be \"llm\" or \"extractive\"", [], {"messages": [], "config": {"summarizer": "gpt"}},
    error=err("invalid_input", "config.summarizer"))

# ---------------------------------------------------------------- buildSummarizationRequest
conv = [msg(0, "user", "Can we ship on Friday?"), msg(1, "assistant", "Only if the migration passes."),
        msg(2, "system", "[Context Summary — old]"), call(3, "call_9", name="run_tests", args='{"pkg":"./..."}'),
        result(4, "call_9", "FAIL: TestMigrate (0.02s)")]
vec("buildSummarizationRequest", "default system prompt, roles kept, tool messages as user, directive last",
    ["compaction-v2.AC1.1", "compaction-v2.AC1.3", "compaction-v2.AC1.4", "compaction-v2.AC1.5", "compaction-v2.AC4.4"],
    {"system_prompt": None, "previous_summary": None, "messages": conv, "model": "claude-x", "max_tokens": 512},
    summ_request(None, None, conv, "claude-x", 512))
vec("buildSummarizationRequest", "previous summary becomes one system message first",
    ["compaction-v2.AC1.2", "context-compaction.AC1.3"],
    {"system_prompt": None, "previous_summary": "They planned a Friday release.", "messages": conv[:2],
     "model": "m", "max_tokens": 100},
    summ_request(None, "They planned a Friday release.", conv[:2], "m", 100))
vec("buildSummarizationRequest", "an empty previous summary adds no system message", ["compaction-v2.AC1.5"],
    {"system_prompt": "", "previous_summary": "", "messages": conv[:1], "model": "m", "max_tokens": 100},
    summ_request(None, None, conv[:1], "m", 100))
vec("buildSummarizationRequest", "a custom prompt is used as is", ["compaction-v2.AC4.3", "compaction-v2.AC1.1"],
    {"system_prompt": "You are Lasa. Summarize in first person, {keep braces}.", "messages": conv[:1],
     "model": "m", "max_tokens": 100},
    summ_request("You are Lasa. Summarize in first person, {keep braces}.", None, conv[:1], "m", 100))
vec("buildSummarizationRequest", "defaults: model and max_tokens from config", [],
    {"messages": conv[:1], "config": {"model": "gpt-x", "max_summary_tokens": 77, "prompt": "P"}},
    summ_request("P", None, conv[:1], "gpt-x", 77))
vec("buildSummarizationRequest", "defaults: SPEC defaults with nothing set", [],
    {"messages": []}, summ_request(None, None, [], "", 1024))
huge = [msg(0, "tool", "abcdefghijklmnopqrstuvwxyz", tool_call_id="c"), msg(1, "user", "короткий")]
vec("buildSummarizationRequest", "each message is middle-truncated to max_message_chars", [],
    {"messages": huge, "model": "m", "max_tokens": 10, "config": {"max_message_chars": 10}},
    summ_request(None, None, huge, "m", 10, max_chars=10))
arr = [msg(0, "user", [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}])]
vec("buildSummarizationRequest", "content-part arrays are joined", [], {"messages": arr, "model": "m", "max_tokens": 5},
    summ_request(None, None, arr, "m", 5))
vec("buildSummarizationRequest", "max_tokens must be positive", [], {"messages": [], "max_tokens": 0},
    error=err("invalid_input", "max_tokens"))
vec("buildSummarizationRequest", "previous_summary must be a string", [], {"messages": [], "previous_summary": 3},
    error=err("invalid_input", "previous_summary"))

# ---------------------------------------------------------------- buildResummarizationRequest
vec("buildResummarizationRequest", "one system message per batch, directive last", ["compaction-v2.AC1.6"],
    {"system_prompt": None, "batch_contents": ["first summary", "second summary"], "model": "m", "max_tokens": 300},
    resumm_request(None, ["first summary", "second summary"], "m", 300))
vec("buildResummarizationRequest", "custom prompt as is", ["compaction-v2.AC1.6", "compaction-v2.AC4.3"],
    {"system_prompt": "Custom.", "batch_contents": ["only"], "model": "m", "max_tokens": 3},
    resumm_request("Custom.", ["only"], "m", 3))
vec("buildResummarizationRequest", "no batches: only the directive", ["compaction-v2.AC1.6"],
    {"batch_contents": []}, resumm_request(None, [], "", 1024))
vec("buildResummarizationRequest", "batch_contents is required", [], {}, error=err("invalid_input", "batch_contents"))
vec("buildResummarizationRequest", "batch_contents holds strings", [], {"batch_contents": ["a", 1]},
    error=err("invalid_input", "batch_contents[1]"))

# ---------------------------------------------------------------- buildClipArchive
def batch(i, depth=0, count=10, content=None):
    return {"content": content or "Summary of part %d." % (i + 1), "depth": depth, "start_time": ts(i * 60),
            "end_time": ts(i * 60 + 59), "message_count": count, "source_message_ids": ["m%d" % i]}


def clip_vec(name, proves, batches, over=None, total=None):
    c = {"clip_first": 2, "clip_last": 2}
    c.update(over or {})
    inp = {"batches": batches}
    if over:
        inp["config"] = over
    if total is not None:
        inp["total_messages_compressed"] = total
    t = total if total is not None else sum(b["message_count"] for b in batches)
    vec("buildClipArchive", name, proves, inp, {"content": clip_archive(batches, c["clip_first"], c["clip_last"], t)})


six = [batch(i) for i in range(6)]
clip_vec("first clip_first and last clip_last batches, middle omitted", ["context-compaction.AC3.1", "context-compaction.AC3.2"],
         six, total=60)
clip_vec("all batches shown without separator when they fit", ["context-compaction.AC3.4"], six[:3])
clip_vec("exactly clip_first + clip_last batches: no omission", ["context-compaction.AC3.4"], six[:4])
clip_vec("one more than fits: one omitted", ["context-compaction.AC3.2"], six[:5])
clip_vec("no batches", ["context-compaction.AC3.4"], [], total=0)
clip_vec("cycles = max depth + 1, plural", [], [batch(0, depth=2, count=40), batch(1), batch(2)])
clip_vec("clip_first 0: no earliest section", ["context-compaction.AC3.1"], six, {"clip_first": 0, "clip_last": 1})
clip_vec("clip_last 0: no recent section", ["context-compaction.AC3.1"], six, {"clip_first": 1, "clip_last": 0})
clip_vec("clip 0/0 with batches: only the separator", [], six[:2], {"clip_first": 0, "clip_last": 0})
clip_vec("times print as UTC with milliseconds", [],
         [{"content": "Zeitzone", "depth": 0, "start_time": "2026-02-28T11:00:00+01:00",
           "end_time": "2026-02-28T10:30:00.123456Z", "message_count": 3}])
clip_vec("non-ASCII and multi-line content", [], [batch(0, content="Первая строка\nзначение 🙂"), batch(1)])
vec("buildClipArchive", "batches is required", [], {}, error=err("invalid_input", "batches"))
vec("buildClipArchive", "start_time is required", [], {"batches": [{"content": "x", "depth": 0, "end_time": ts(0)}]},
    error=err("invalid_input", "batches[0].start_time"))
vec("buildClipArchive", "depth must be a non-negative integer", [], {"batches": [dict(batch(0), depth=-1)]},
    error=err("invalid_input", "batches[0].depth"))
vec("buildClipArchive", "end_time must be RFC 3339", [], {"batches": [dict(batch(0), end_time="noon")]},
    error=err("invalid_input", "batches[0].end_time"))


# ---------------------------------------------------------------- providerRequest / providerResponse
def provider_body(provider, req):
    """SPEC §3 providerRequest, transcribed: the wire body each provider accepts."""
    msgs = [m for m in req["messages"] if m["content"].strip() != ""]
    if provider == "anthropic":
        system = "\n\n".join([x for x in [req.get("system") or ""] if x] + [m["content"] for m in msgs if m["role"] == "system"])
        turns = []
        for m in msgs:
            if m["role"] == "system":
                continue
            if turns and turns[-1]["role"] == m["role"]:
                turns[-1]["content"] += "\n\n" + m["content"]
            else:
                turns.append({"role": m["role"], "content": m["content"]})
        if not turns or turns[0]["role"] != "user":
            turns.insert(0, {"role": "user", "content": "(conversation continues)"})
        body = {"model": req["model"], "max_tokens": req.get("max_tokens") or 1024}
        if system:
            body["system"] = system
        body["messages"] = turns
        body["temperature"] = req.get("temperature", 0)
        return "/v1/messages", body
    chat = ([{"role": "system", "content": req["system"]}] if req.get("system") else []) + \
           [{"role": m["role"], "content": m["content"]} for m in msgs]
    if provider == "openai":
        return "/v1/chat/completions", {"model": req["model"], "messages": chat, "max_tokens": req["max_tokens"],
                                        "temperature": req.get("temperature", 0)}
    return "/api/chat", {"model": req["model"], "messages": chat, "stream": False,
                         "options": {"temperature": req.get("temperature", 0), "num_predict": req["max_tokens"]}}


def pr_vec(name, proves, provider, req):
    path, body = provider_body(provider, req)
    vec("providerRequest", name, proves, {"provider": provider, "request": req}, {"url_path": path, "body": body})


summ = summ_request(None, "Earlier: the team chose Go.", conv[:2], "claude-3-5-haiku", 256)
pr_vec("anthropic: system-role messages lifted and joined into system after request.system",
       ["compaction-v2.AC2.1", "compaction-v2.AC2.2", "compaction-v2.AC2.4"], "anthropic", summ)
multi_sys = {"system": "Base prompt.", "model": "m", "max_tokens": 64, "temperature": 0,
             "messages": [{"role": "system", "content": "first system"}, {"role": "user", "content": "hello"},
                          {"role": "system", "content": "second system"}, {"role": "assistant", "content": "hi"},
                          {"role": "user", "content": "bye"}]}
pr_vec("anthropic: several system messages concatenated in order", ["compaction-v2.AC2.5"], "anthropic", multi_sys)
pr_vec("openai: system first, system-role messages kept in place and in order",
       ["compaction-v2.AC2.3", "compaction-v2.AC2.5"], "openai", multi_sys)
pr_vec("ollama: the openai message list in /api/chat's body", ["compaction-v2.AC2.3"], "ollama", multi_sys)
pr_vec("openai: a summarization request", ["compaction-v2.AC2.3", "compaction-v2.AC2.4"], "openai", summ)
no_sys = {"system": "", "model": "m", "max_tokens": 5, "temperature": 0,
          "messages": [{"role": "user", "content": "only user"}]}
pr_vec("anthropic: request.system alone still works (backward compatible)", ["compaction-v2.AC2.4"], "anthropic",
       dict(no_sys, system="Just the field."))
pr_vec("openai: no system prompt, no system message", ["compaction-v2.AC2.4"], "openai", no_sys)
awkward = {"system": "S", "model": "m", "max_tokens": 9, "temperature": 0,
           "messages": [{"role": "assistant", "content": "I spoke first"}, {"role": "assistant", "content": "twice"},
                        {"role": "user", "content": ""}, {"role": "user", "content": "then you"}]}
pr_vec("anthropic: empty turns dropped, same-role turns merged, a user turn first", [], "anthropic", awkward)
pr_vec("openai: empty messages dropped", [], "openai", awkward)
vec("providerRequest", "unknown provider", [], {"provider": "bard", "request": no_sys}, error=err("invalid_input", "provider"))
vec("providerRequest", "request is required", [], {"provider": "openai"}, error=err("invalid_input", "request"))
vec("providerRequest", "tool role is not a model-request role", [],
    {"provider": "openai", "request": dict(no_sys, messages=[{"role": "tool", "content": "x"}])},
    error=err("invalid_input", "request.messages[0].role"))

def presp(name, provider, status, body, expected, proves=None):
    vec("providerResponse", name, proves or [], {"provider": provider, "status": status, "body": body}, expected)

ok = {"content": [{"type": "text", "text": "The summary."}], "stop_reason": "end_turn",
      "usage": {"input_tokens": 120, "output_tokens": 5}}
presp("anthropic: a Messages API response", "anthropic", 200,
      {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-x",
       "content": [{"type": "text", "text": "The summary."}], "stop_reason": "end_turn", "stop_sequence": None,
       "usage": {"input_tokens": 120, "output_tokens": 5}}, ok)
presp("openai: a chat completion", "openai", 200,
      {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
       "choices": [{"index": 0, "message": {"role": "assistant", "content": "The summary."}, "finish_reason": "stop"}],
       "usage": {"prompt_tokens": 120, "completion_tokens": 5, "total_tokens": 125}}, ok)
presp("ollama: an /api/chat response", "ollama", 200,
      {"model": "llama3", "created_at": "2026-02-28T10:00:00Z", "message": {"role": "assistant", "content": "The summary."},
       "done": True, "done_reason": "stop", "prompt_eval_count": 120, "eval_count": 5}, ok)
presp("body may be a string holding the JSON", "openai", 200,
      json.dumps({"choices": [{"message": {"role": "assistant", "content": "The summary."}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 120, "completion_tokens": 5}}), ok)
presp("anthropic 429 is rate_limited and retryable", "anthropic", 429,
      {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}},
      {"error": {"code": "rate_limited", "message": "Number of request tokens has exceeded your per-minute rate limit", "retryable": True}})
presp("anthropic 529 overloaded is unavailable and retryable", "anthropic", 529,
      {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
      {"error": {"code": "unavailable", "message": "Overloaded", "retryable": True}})
presp("openai context length is context_overflow, not retryable", "openai", 400,
      {"error": {"message": "This model's maximum context length is 8192 tokens.", "type": "invalid_request_error",
                 "param": "messages", "code": "context_length_exceeded"}},
      {"error": {"code": "context_overflow", "message": "This model's maximum context length is 8192 tokens.", "retryable": False}})
presp("openai 401 is auth", "openai", 401,
      {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}},
      {"error": {"code": "auth", "message": "Incorrect API key provided.", "retryable": False}})
presp("ollama 500 is unavailable and retryable", "ollama", 500, {"error": "model runner has unexpectedly stopped"},
      {"error": {"code": "unavailable", "message": "model runner has unexpectedly stopped", "retryable": True}})
vec("providerResponse", "status is required", [], {"provider": "openai", "body": {}}, error=err("invalid_input", "status"))
vec("providerResponse", "body is required", [], {"provider": "openai", "status": 200}, error=err("invalid_input", "body"))

# ---------------------------------------------------------------- extractiveSummary
# The offline summarizer answering a ModelRequest. Its choices are
# heuristics, so the expected texts are written out by hand for small,
# unambiguous cases: what must be dropped, kept, and never re-emitted.
def ex_vec(name, messages, expected_text, max_tokens=1024):
    req = {"system": DEFAULT_SYSTEM_PROMPT, "messages": messages + [{"role": "user", "content": DEFAULT_DIRECTIVE}],
           "model": "m", "max_tokens": max_tokens}
    tokens = lambda t: (len(t) + 3) // 4
    usage_in = tokens(req["system"]) + sum(tokens(m["content"]) for m in req["messages"])
    vec("extractiveSummary", name, [], req,
        {"content": [{"type": "text", "text": expected_text}], "stop_reason": "end_turn",
         "usage": {"input_tokens": usage_in, "output_tokens": tokens(expected_text)}})


ex_vec("greetings, thanks and content-free questions are dropped; both sides count; a request has no dates", [
    {"role": "user", "content": "Hey Mel! Good to see you! How have you been?"},
    {"role": "assistant", "content": "Hey Caroline! I'm good, thanks. What about you?"},
    {"role": "user", "content": "I went to the pottery class in Denver with Jon on Saturday."},
    {"role": "assistant", "content": "My son Liam started violin lessons at Westside Music."},
    {"role": "user", "content": "Thanks! Talk soon!"}],
    "User: I went to the pottery class in Denver with Jon on Saturday.\n"
    "Assistant: My son Liam started violin lessons at Westside Music.")
ex_vec("the previous summary guides the choice and is never re-emitted", [
    {"role": "system", "content": "Previous summary of conversation:\nUser: We adopted a beagle called Max."},
    {"role": "user", "content": "We adopted a beagle called Max."},
    {"role": "assistant", "content": "I ran my first half marathon in Boston."}],
    "Assistant: I ran my first half marathon in Boston.")
ex_vec("re-summarization keeps each line's date and label, in date order, a repeated line once", [
    {"role": "system", "content": "Summary batch:\n[2023-05-20] User: We agreed on a $40,000 budget for Q3.\n"
                                  "[2023-05-08] Assistant: Hello there, sounds good."},
    {"role": "system", "content": "Summary batch:\n[2023-05-09] Tool: FAILED: migration 0042_add_index.sql timed out after 300s.\n"
                                  "[2023-05-20] User: We agreed on a $40,000 budget for Q3."}],
    "[2023-05-09] Tool: FAILED: migration 0042_add_index.sql timed out after 300s.\n"
    "[2023-05-20] User: We agreed on a $40,000 budget for Q3.")
ex_vec("tool results and calls are labelled", [
    {"role": "assistant", "content": "[Tool call]: lookup_order({\"order\":\"ORD-5523109\"})"},
    {"role": "user", "content": "[Tool result]: order ORD-5523109: delivered by DHL on 2026-02-27"}],
    "Tool call: lookup_order({\"order\":\"ORD-5523109\"})\n"
    "Tool: order ORD-5523109: delivered by DHL on 2026-02-27")
ex_vec("only filler: the best sentence, never an empty summary", [
    {"role": "user", "content": "Thanks!"}], "User: Thanks!")


# ---------------------------------------------------------------- searchQuery
# A second transcription of the query analysis (SPEC §3 searchQuery, §5
# memory_read), from the descriptions, not from the Go code: words are runs
# of letters and digits (the vectors keep to ASCII and Latin-1, where
# Python's str.isalnum agrees with SQLite's unicode61), folded to lower case
# without diacritics; PostgreSQL's English stop words; Porter's stemmer as
# FTS5 runs it (see porter below); any-term matching.
STOP = set("""i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on off over under again further then
once here there when where why how all any both each few more most other some such no nor not only own same so than too
very s t can will just don should now""".split())
assert len(STOP) == 127


def q_tokens(text):
    """(folded, lower) words of text: letter/digit runs; a combining mark continues a word."""
    import unicodedata
    out, cur = [], ""
    for ch in text + " ":
        if ch.isalnum() or (cur and unicodedata.category(ch) == "Mn"):
            cur += ch
        elif cur:
            lower = cur.lower()
            folded = "".join(c for c in unicodedata.normalize("NFD", lower) if unicodedata.category(c) != "Mn")
            out.append((folded, lower))
            cur = ""
    return out


def porter(word):
    """Porter's algorithm (1980) as SQLite's FTS5 porter tokenizer runs it:
    on the UTF-8 bytes of the folded word (any byte but a e i o u, and y
    after a consonant, is a consonant); words under 3 or over 64 bytes are
    left alone; every rule needs a non-empty stem; Step 2 has the two rules
    of Porter's later code (bli -> ble, logi -> log)."""
    w = word.encode("utf-8")
    if len(w) < 3 or len(w) > 64:
        return word
    w = w.decode("latin-1")  # one character per byte

    def cons(s, i):
        c = s[i]
        if c in "aeiou":
            return False
        if c == "y":
            return i == 0 or not cons(s, i - 1)
        return True

    def m(s):
        seq = "".join("c" if cons(s, i) else "v" for i in range(len(s)))
        n, i = 0, 0
        while i < len(seq) and seq[i] == "c":
            i += 1
        while i < len(seq):
            while i < len(seq) and seq[i] == "v":
                i += 1
            if i >= len(seq):
                break
            while i < len(seq) and seq[i] == "c":
                i += 1
            n += 1
        return n

    def has_vowel(s):
        return any(not cons(s, i) for i in range(len(s)))

    def cvc(s):
        return len(s) >= 3 and cons(s, len(s) - 3) and not cons(s, len(s) - 2) and cons(s, len(s) - 1) \
            and s[-1] not in "wxy"

    def step(s, rules):
        for suf, rep, cond in rules:
            if s.endswith(suf) and len(s) > len(suf):
                stem = s[:-len(suf)]
                return (stem + rep, True) if cond(stem) else (s, False)
        return s, False

    m0 = lambda st: m(st) > 0
    m1 = lambda st: m(st) > 1
    # Step 1a
    if w.endswith("sses") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 3:
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    # Step 1b
    if w.endswith("eed") and len(w) > 3:
        if m0(w[:-3]):
            w = w[:-1]
    else:
        w, removed = step(w, [("ed", "", has_vowel), ("ing", "", has_vowel)])
        if removed:
            w, done = step(w, [("at", "ate", lambda st: True), ("bl", "ble", lambda st: True), ("iz", "ize", lambda st: True)])
            if not done:
                if len(w) >= 2 and w[-1] == w[-2] and cons(w, len(w) - 1) and w[-1] not in "lsz":
                    w = w[:-1]
                elif m(w) == 1 and cvc(w):
                    w += "e"
    # Step 1c
    if w.endswith("y") and has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w, _ = step(w, [(a, b, m0) for a, b in [
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
        ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
        ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
        ("iviti", "ive"), ("biliti", "ble"), ("logi", "log")]])
    w, _ = step(w, [(a, b, m0) for a, b in [
        ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", "")]])
    w, _ = step(w, [(a, "", m1) for a in [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent"]]
        + [("ion", "", lambda st: m1(st) and st[-1] in "st")]
        + [(a, "", m1) for a in ["ou", "ism", "ate", "iti", "ous", "ive", "ize"]])
    # Step 5a
    if w.endswith("e"):
        st = w[:-1]
        if m(st) > 1 or (m(st) == 1 and not cvc(st)):
            w = st
    # Step 5b
    if w.endswith("ll") and m(w[:-1]) > 1:
        w = w[:-1]
    return w.encode("latin-1").decode("utf-8")


def search_query(query):
    items, seen = [], set()
    budget = [64]  # words searched at most, phrases' words included

    def add(toks):
        toks = toks[:budget[0]]
        key = " ".join(f for f, _ in toks)
        if toks and key not in seen:
            seen.add(key)
            items.append(toks)
            budget[0] -= len(toks)

    parts = query.replace("\u201c", '"').replace("\u201d", '"').split('"')
    if len(parts) % 2 == 0:  # an unpaired quote is ignored
        parts[-2:] = [parts[-2] + parts[-1]]
    for i, part in enumerate(parts):
        toks = q_tokens(part)
        if i % 2 == 1:  # a phrase; a word over 255 bytes splits it
            run = []
            for t in toks + [("x" * 256, "")]:
                if len(t[0].encode("utf-8")) > 255:
                    add(run)
                    run = []
                else:
                    run.append(t)
        else:
            toks = [t for t in toks if len(t[0].encode("utf-8")) <= 255]
            for t in toks:
                add([t])
    kept = [it for it in items if len(it) > 1 or it[0][0] not in STOP] or items
    terms = []
    for it in kept:
        for f, _ in it:
            if porter(f) not in terms:
                terms.append(porter(f))
    fts5 = " OR ".join('"' + " ".join(f for f, _ in it) + '"' for it in kept)
    tsq = " | ".join(("'%s'" % it[0][1]) if len(it) == 1 else "(" + " <-> ".join("'%s'" % l for _, l in it) + ")"
                     for it in kept)
    return {"terms": terms, "fts5": fts5, "tsquery": tsq}


def sq_vec(name, query, proves=None, **extra):
    inp = dict(query=query, **extra)
    vec("searchQuery", name, proves or ["compaction-v2.AC4.3"], inp, search_query(query))


sq_vec("a question: stop words and question words dropped, the rest any-term", "What did Alice say about the budget?")
sq_vec("words are stemmed in terms, folded but not stemmed in fts5 and tsquery",
       "Connections failed while deploying the generalizations of relational operators")
sq_vec("a quoted phrase stays a phrase, stop words and all", '"connection leak" in "the worker pool" today')
sq_vec("typographic quotes make a phrase; an unpaired quote is ignored", "\u201cretry budget\u201d for \"payments")
sq_vec("only stop words: they are searched after all", "what is it and who did that?")
sq_vec("case and repeats: each word once", "Deploy DEPLOY deploy deploys")
sq_vec("diacritics folded for SQLite, kept for PostgreSQL", "Café résumé naïve SEÑOR façade")
sq_vec("apostrophes, hyphens, underscores and dots separate words", "Alice's e-mail about foo_bar.baz v2 isn't here")
sq_vec("search operators are plain words", "NOT deploy AND (script OR error*) NEAR/3 ^col:value -x +y")
sq_vec("nothing but punctuation: empty strings, no terms", "?! -- (*) :: ''")
sq_vec("empty query", "")
sq_vec("language english is the default", "Rollback plan", language="english")
sq_vec("language null is the default", "Rollback plan", language=None)
sq_vec("a word over 255 bytes is ignored", "short " + "x" * 256 + " kept " + "y" * 255)
sq_vec("at most 64 words are searched", " ".join("w%03dq" % i for i in range(60)) + ' "a b c d e f" g')
sq_vec("a word over 255 bytes splits a phrase", '"one ' + "z" * 300 + ' two three"')
sq_vec("porter edge cases", "ies sses eed aed bled sky happy controll rate roll oscillators archaeology")
vec("searchQuery", "query is required", [], {}, error=err("invalid_input", "query"))
vec("searchQuery", "query must be a string", [], {"query": 7}, error=err("invalid_input", "query"))
vec("searchQuery", "only english is supported", [], {"query": "x", "language": "fr"}, error=err("invalid_input", "language"))

# ---------------------------------------------------------------- version
vec("version", "version and ABI", [], {}, {"version": "0.1.0", "abi": 1})

os.makedirs(OUT, exist_ok=True)
for export, vs in files.items():
    with open(os.path.join(OUT, export + ".json"), "w", encoding="utf-8") as f:
        json.dump({"export": export, "vectors": vs}, f, ensure_ascii=False, indent=1)
        f.write("\n")
print("wrote", sum(len(v) for v in files.values()), "vectors in", len(files), "files")
