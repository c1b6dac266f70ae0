#!/usr/bin/env python3
"""Writes testdata/vectors/*.json, clipfold's conformance vectors.

Expected outputs are computed here, in Python, straight from docs/spec.md and the
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
import re
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


# ---------------------------------------------------------------- message shapes
# docs/spec.md#message-shapes, transcribed: every message
# is read into one normalized form whatever its shape -- role as clipfold
# reads it, content (tool-result outputs first, then text parts, joined
# with "\n"), tool entries (calls, and results carried as parts), the
# call it answers (tool_call_id), whether the next message joins its tool
# unit -- plus the set of shapes it fits. Arguments and outputs that are
# JSON values are their text as written in the input: shape vectors are
# written as input_raw, compact (cj), so that text is cj of the value.
CHAT, ANTH, RESP, AISDK, LC = "chat", "anthropic", "responses", "ai_sdk", "langchain"
SHAPE_ORDER = [CHAT, ANTH, RESP, AISDK, LC]
ALL_SHAPES = frozenset(SHAPE_ORDER)
PREFIX = "[Context Summary"


def cj(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def args_text(v):
    """A tool call's arguments: a string as it is, other JSON as written, null/absent ''."""
    if v is None:
        return ""
    return v if isinstance(v, str) else cj(v)


# Media parts (image, document, file, audio) met while normalizing the
# current message, inside its tool outputs too: each counts image_tokens.
MEDIA = [0]


def parts_text(parts):
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, dict):
            ty = p.get("type")
            ty = ty if isinstance(ty, str) else ""
            if ty in ("image", "image_url", "input_image", "document", "file", "input_file", "audio", "input_audio", "media"):
                MEDIA[0] += 1
            if ty in ("", "text", "input_text", "output_text"):
                if isinstance(p.get("text"), str):
                    out.append(p["text"])
            elif ty in ("image", "image_url", "input_image"):
                out.append("[image]")
            elif ty == "document":
                out.append("[document]")
            elif ty in ("file", "input_file"):
                out.append("[file]")
            elif ty in ("audio", "input_audio"):
                out.append("[audio]")
            elif ty == "media":
                out.append("[media]")
    return "\n".join(out)


def output_text(v):
    """A tool result's output: a string, parts' text, other JSON as written."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return parts_text(v)
    return cj(v)


def ai_sdk_output(p):
    if "output" not in p:
        return args_text(p.get("result"))
    out = p["output"]
    if isinstance(out, dict):
        t = out.get("type")
        if t in ("text", "error-text"):
            return args_text(out.get("value"))
        if t in ("json", "error-json"):
            return cj(out["value"]) if "value" in out else ""
        if t == "content":
            return output_text(out.get("value"))
    return args_text(out)


# What a content part fits, and its text: (shapes, kind) by type.
PART = {
    "text": ({CHAT, ANTH, AISDK, LC}, "text"), "input_text": ({RESP}, "text"), "output_text": ({RESP}, "text"),
    "refusal": ({CHAT, RESP}, "refusal"),
    "image": ({ANTH, AISDK, LC}, "[image]"), "image_url": ({CHAT, LC}, "[image]"), "input_image": ({RESP}, "[image]"),
    "document": ({ANTH}, "[document]"), "file": ({CHAT, AISDK, LC}, "[file]"), "input_file": ({RESP}, "[file]"),
    "input_audio": ({CHAT}, "[audio]"), "audio": ({LC}, "[audio]"), "media": ({AISDK}, "[media]"),
    "thinking": ({ANTH}, None), "redacted_thinking": ({ANTH}, None), "reasoning": ({AISDK, LC}, None),
    "tool_use": ({ANTH}, "call"), "server_tool_use": ({ANTH}, "call"), "tool_result": ({ANTH}, "result"),
    "tool-call": ({AISDK}, "call"), "tool-result": ({AISDK}, "result"), "tool_call": ({LC}, "call"),
}


class ShapeError(Exception):
    def __init__(self, field):
        self.field = field


def gstr(v):
    return v if isinstance(v, str) else ""


def norm(m, i=0):
    """One message, normalized (see above). Raises ShapeError(field)."""
    if not isinstance(m, dict):
        raise ShapeError("messages[%d]" % i)
    n = {"role": None, "content": "", "entries": [], "tool_call_id": "", "has_calls": False, "has_results": False,
         "join_next": False, "fits": set(ALL_SHAPES), "pinned": m.get("pinned") is True, "id": gstr(m.get("id")),
         "has_time": isinstance(m.get("created_at"), str), "conv": gstr(m.get("conversation_id"))}
    st = {}
    state = {"parts": None, "texts": [], "outs": []}
    MEDIA[0] = 0

    def add(kind, cid, name, arg):
        if kind == "call":
            if cid and any(not r and e == cid for e, _, _, r in n["entries"]):
                n["has_calls"] = True
                return
            n["entries"].append((cid, name, arg, False))
            n["has_calls"] = True
        else:
            if cid and any(r and e == cid for e, _, _, r in n["entries"]):
                return
            n["entries"].append((cid, name, arg, True))
            n["has_results"] = True
            state["outs"].append(arg)

    def part(p):
        ty = p.get("type")
        if not isinstance(ty, str):
            if isinstance(p.get("text"), str):
                state["texts"].append(p["text"])
            return
        if ty not in PART:
            return  # a provider's own block: kept, not counted
        fits, kind = PART[ty]
        n["fits"] &= fits
        if kind in ("text", "refusal"):
            if isinstance(p.get(kind), str):
                state["texts"].append(p[kind])
        elif kind in ("[image]", "[document]", "[file]", "[audio]", "[media]"):
            state["texts"].append(kind)
            MEDIA[0] += 1
        elif ty in ("tool_use", "server_tool_use"):
            add("call", gstr(p.get("id")), gstr(p.get("name")), args_text(p.get("input")))
        elif ty == "tool_result":
            add("result", gstr(p.get("tool_use_id")), "", output_text(p.get("content")))
        elif ty == "tool-call":
            add("call", gstr(p.get("toolCallId")), gstr(p.get("toolName")), args_text(p["input"] if "input" in p else p.get("args")))
        elif ty == "tool-result":
            add("result", gstr(p.get("toolCallId")), gstr(p.get("toolName")), ai_sdk_output(p))
        elif ty == "tool_call":
            add("call", gstr(p.get("id")), gstr(p.get("name")), args_text(p.get("args")))

    def tool_call(c):
        if not isinstance(c, dict):
            add("call", "", "tool", cj(c))
            return
        fn = c.get("function") if isinstance(c.get("function"), dict) else {}
        name = fn["name"] if "name" in fn else c.get("name")
        args, has_args = fn.get("arguments"), "arguments" in fn
        if "function" in c:
            n["fits"] &= {CHAT, LC}
        elif "args" in c:
            n["fits"] &= {LC}
            args, has_args = c["args"], True
        if not has_args and "arguments" in c:
            args, has_args = c["arguments"], True
        if not has_args:
            args = c.get("input")
        add("call", gstr(c.get("id")), gstr(name), args_text(args))

    for k, v in m.items():
        if k == "role":
            if not isinstance(v, str):
                raise ShapeError("messages[%d].role" % i)
            role = {"developer": "system", "function": "tool"}.get(v, v)
            if role not in ("user", "assistant", "system", "tool"):
                raise ShapeError("messages[%d].role" % i)
            if v == "developer":
                n["fits"] &= {CHAT, RESP}
            if v == "function":
                n["fits"] &= {CHAT}
            if role == "tool":
                n["fits"] &= {CHAT, AISDK, LC}
            n["role"] = role
        elif k == "content":
            if isinstance(v, str):
                n["content"] = v
            elif v is None:
                n["content"] = ""
            elif isinstance(v, list):
                if state["parts"] is not None:
                    raise ShapeError("messages[%d].content" % i)
                state["texts"], state["outs"] = [], []
                for j, p in enumerate(v):
                    if isinstance(p, str):
                        state["texts"].append(p)
                    elif isinstance(p, dict):
                        part(p)
                    else:
                        raise ShapeError("messages[%d].content[%d]" % (i, j))
                n["content"] = "\n".join(state["outs"] + state["texts"])
                state["parts"] = n["content"]
            else:
                raise ShapeError("messages[%d].content" % i)
        elif k == "tool_calls":
            if isinstance(v, str):
                n["has_calls"] = n["has_calls"] or v != ""
            elif isinstance(v, dict):
                if v:
                    tool_call(v)
            elif isinstance(v, list):
                for c in v:
                    tool_call(c)
            elif v is not None and v is not False:
                n["has_calls"] = True
        elif k == "tool_call_id":
            if isinstance(v, str):
                n["tool_call_id"] = v
                n["fits"] &= {CHAT, LC}
        elif k in ("type", "call_id"):
            if isinstance(v, str):
                st[k] = v
            elif v is not None:
                raise ShapeError("messages[%d].%s" % (i, k))
        elif k == "name":
            if isinstance(v, str):
                st[k] = v
        elif k in ("arguments", "input", "output"):
            st[k] = v
    if state["parts"] is not None and n["content"] != state["parts"]:
        raise ShapeError("messages[%d].content" % i)

    def item_call(name):
        args = st["arguments"] if "arguments" in st else st.get("input")
        add("call", st.get("call_id", ""), name, args_text(args))

    def item_output():
        n["tool_call_id"] = st.get("call_id", "")
        n["content"] = output_text(st.get("output"))

    t = st.get("type")
    if t is not None:
        if t == "message":
            n["fits"] &= {RESP}
        elif t in ("function_call", "custom_tool_call"):
            n["fits"] &= {RESP}
            n["role"] = "assistant"
            item_call(st.get("name", ""))
        elif t in ("function_call_output", "custom_tool_call_output"):
            n["fits"] &= {RESP}
            n["role"] = "tool"
            item_output()
        elif t == "reasoning":
            n["fits"] &= {RESP}
            n["role"] = "assistant"
            n["join_next"] = True
        elif t in ("human", "ai", "system", "tool"):
            n["fits"] = {LC}  # a LangChain message's content may hold any provider's blocks
            n["role"] = {"human": "user", "ai": "assistant"}.get(t, t)
        elif n["role"] is None:  # another Responses item
            n["fits"] &= {RESP}
            if t.endswith("_output"):
                n["role"] = "tool"
                item_output()
            else:
                n["role"] = "assistant"
                if "call_id" in st:
                    item_call(st.get("name", t))
    if n["has_results"] and n["role"] == "user" and own_text(n) == "":
        n["role"] = "tool"
    if not n["fits"]:
        raise ShapeError("messages[%d]" % i)
    if n["role"] is None:
        raise ShapeError("messages[%d].role" % i)
    n["media"] = min(MEDIA[0], 255)
    return n


def own_text(n):
    """A message's own text: its content without the tool-result outputs it starts with."""
    if n["role"] == "tool" and not n["has_results"]:
        return ""
    if not n["has_results"]:
        return n["content"]
    off = sum(len(a.encode("utf-8")) + 1 for _, _, a, r in n["entries"] if r)
    b = n["content"].encode("utf-8")
    return b[off:].decode("utf-8") if off < len(b) else ""


def settle(msgs, forced=None):
    """Normalize a call's messages: one shape per call (ShapeError naming the
    first message that fits none of the shapes before it), the Anthropic
    clip-archive turn. Returns (normalized messages, shape)."""
    mask = {forced} if forced else set(ALL_SHAPES)
    out = []
    for i, m in enumerate(msgs):
        n = norm(m, i)
        if not (mask & n["fits"]):
            raise ShapeError("messages[%d]" % i)
        mask &= n["fits"]
        out.append(n)
    shape = CHAT if CHAT in mask else next(s for s in SHAPE_ORDER if s in mask)
    if out and is_archive_turn(out[0]):
        native = any(n["has_time"] or n["conv"] for n in out)
        if ANTH in mask and not native:
            shape = ANTH
        out[0]["role"] = "system"
    return out, shape


# A clip-archive written as a user turn (docs/spec.md#message-shapes): text
# alone, the whole header as buildClipArchive writes it, then a batch or the
# earliest-context section. The prefix alone is a user's message.
ARCHIVE_TURN = re.compile(r"\[Context Summary — [0-9]+ messages compressed across [0-9]+ compaction cycles?\]\n"
                          r"(\[Batch |## Earliest context\n)")


def is_archive_turn(n):
    return n["role"] == "user" and not n["has_calls"] and not n["has_results"] and ARCHIVE_TURN.match(n["content"]) is not None


def nmsgs(msgs):
    return settle(msgs)[0]


def text(n):
    return n["content"]


def has_calls(n):
    return n["has_calls"]


def message_runes(n):
    """What one message counts for the token estimate: its content plus each call's name and arguments."""
    return len(n["content"]) + sum(len(nm) + len(a) for _, nm, a, r in n["entries"] if not r)


# The conservative token estimator, a second implementation of the
# algorithm docs/spec.md#the-conservative-estimator documents (core's is
# core/tokens.go): one pass over the text counting events, each with a
# cost in thousandths of a token, the sum rounded up.
COST = dict(word=880, letter=100, case=1000, long=220, latin_word=2500, digits=1400, mixed=620, punct=570,
            punct_rep=100, space_num=1200, blanks=1390, breaks=790, control=1000, latin_x=1500, cyrillic=490,
            cyr_word=760, greek=870, greek_word=3470, hebrew=1380, arabic=960, sem_word=0, indic=1210, indic_word=570,
            thai=1210, han=1550, kana=1020, hangul=1840, cjk_punct=1000, emoji=3330, emoji_mod=3340, symbol=1000,
            byte=1000)
SCRIPT_RANGES = [  # (first, last, script) over the BMP, by blocks of 16 code points; later ranges win
    (0x0080, 0x00BF, "symbol"), (0x00C0, 0x02AF, "latin"), (0x02B0, 0x02FF, "symbol"), (0x0300, 0x036F, "latin"),
    (0x0370, 0x03FF, "greek"), (0x0400, 0x052F, "cyrillic"), (0x0590, 0x05FF, "hebrew"), (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"), (0x08A0, 0x08FF, "arabic"), (0x0900, 0x097F, "indic"), (0x0E00, 0x0E7F, "thai"),
    (0x1100, 0x11FF, "hangul"), (0x1C80, 0x1C8F, "cyrillic"), (0x1E00, 0x1EFF, "latin"), (0x1F00, 0x1FFF, "greek"),
    (0x2000, 0x2BFF, "symbol"), (0x2600, 0x27BF, "emoji"), (0x2B00, 0x2BFF, "emoji"), (0x2E80, 0x2FDF, "han"),
    (0x3000, 0x303F, "cjk_punct"), (0x3040, 0x30FF, "kana"), (0x3130, 0x318F, "hangul"), (0x31F0, 0x31FF, "kana"),
    (0x3200, 0x33FF, "cjk_punct"), (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xA960, 0xA97F, "hangul"),
    (0xAC00, 0xD7FF, "hangul"), (0xF900, 0xFAFF, "han"), (0xFE00, 0xFE0F, "emoji_mod"), (0xFE30, 0xFE4F, "cjk_punct"),
    (0xFF00, 0xFFEF, "cjk_punct")]


def script_of(cp):
    if cp < 0x10000:
        if cp in (0x200D, 0x20E3):
            return "emoji_mod"
        sc = "other"
        for lo, hi, name in SCRIPT_RANGES:
            if lo >> 4 <= cp >> 4 <= hi >> 4:
                sc = name
        return sc
    if 0x1F3FB <= cp <= 0x1F3FF or 0xE0000 <= cp <= 0xE007F:
        return "emoji_mod"
    if 0x1F000 <= cp <= 0x1FAFF:
        return "emoji"
    if 0x20000 <= cp <= 0x3FFFF:
        return "han"
    return "other"


WORD_EVENT = {"cyrillic": "cyr_word", "greek": "greek_word", "hebrew": "sem_word", "arabic": "sem_word", "indic": "indic_word"}


def conservative(text):
    ev = dict.fromkeys(COST, 0)
    w = {"letters": 0, "digits": 0, "in": False, "lower": False, "latin": False}

    def end_word():
        if not w["in"]:
            return
        if w["digits"] == 0:
            ev["word"] += 1
            ev["letter"] += w["letters"]
            ev["long"] += max(0, w["letters"] - 8)
            ev["latin_word"] += w["latin"]
        elif w["letters"] == 0:
            ev["digits"] += (w["digits"] + 2) // 3
        else:
            ev["mixed"] += w["letters"] + w["digits"]
        w.update(letters=0, digits=0, **{"in": False, "lower": False, "latin": False})

    word_script, blanks, breaks, prev = None, 0, False, None
    for ch in text:
        cp = ord(ch)
        if cp < 0x80:
            word_script = None
            spaced = blanks > 0
            if ch not in " \t":
                blanks = 0
            if ch not in "\n\r":
                breaks = False
            if ch.isascii() and ch.isalpha():
                if ch.isupper() and w["lower"]:
                    ev["case"] += 1
                w["letters"] += 1
                w["in"], w["lower"] = True, ch.islower()
            elif ch.isdigit():
                if not w["in"] and spaced:
                    ev["space_num"] += 1
                w["digits"] += 1
                w["in"], w["lower"] = True, False
            elif ch in " \t":
                end_word()
                blanks += 1
                if blanks == 2:
                    ev["blanks"] += 1
            elif ch in "\n\r":
                end_word()
                if not breaks:
                    ev["breaks"] += 1
                    breaks = True
            elif cp < 0x20 or cp == 0x7F:
                end_word()
                ev["control"] += 1
            else:
                end_word()
                ev["punct_rep" if prev == ch else "punct"] += 1
                prev = ch
                continue
            prev = None
            continue
        prev, blanks, breaks = None, 0, False
        sc = script_of(cp)
        if sc == "latin":
            w["letters"] += 1
            w["in"], w["lower"], w["latin"] = True, True, True
            ev["latin_x"] += 1
            continue
        end_word()
        new_word = sc != word_script
        word_script = sc
        if sc == "other":
            ev["byte"] += len(ch.encode("utf-8"))
            continue
        ev[sc] += 1
        if sc in WORD_EVENT and new_word:
            ev[WORD_EVENT[sc]] += 1
    end_word()
    return (sum(ev[k] * COST[k] for k in ev) + 999) // 1000


# Framing of a message, of each tool call and of each tool result.
FRAME_MESSAGE, FRAME_CALL, FRAME_RESULT = 4, 8, 4


def message_tokens(n, c):
    if c.get("token_estimator") == "chars4":
        return math.ceil(message_runes(n) / 4)
    t = conservative(n["content"]) + FRAME_MESSAGE + n["media"] * c.get("image_tokens", 1600)
    if n["tool_call_id"] and not n["has_results"]:
        t += FRAME_RESULT
    for _, nm, a, r in n["entries"]:
        t += FRAME_RESULT if r else conservative(nm) + conservative(a) + FRAME_CALL
    return t


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
    return m["role"] == "system" and text(m).startswith(PREFIX)


def pinned(m, c):
    return m["pinned"] or (c["pin_system"] and m["role"] == "system" and not is_clip(m))


def leaders(msgs, start):
    """Unit leader of every message at or after start (docs/spec.md#split: a tool call and
    everything answering it, in any shape): results join their call's unit by
    call id (a tool message without one joins the call it follows), a message
    with join_next takes the next one in, and a message answering calls of two
    units joins them, led by the earlier."""
    n = len(msgs)
    lead = list(range(n))

    def join(a, b):
        lo, hi = sorted((lead[a], lead[b]))
        if lo != hi:
            for i in range(start, n):
                if lead[i] == hi:
                    lead[i] = lo

    calls = {}
    for i in range(start, n):
        m = msgs[i]
        if i > start and msgs[i - 1]["join_next"]:
            join(i - 1, i)
        if m["role"] == "tool" and not m["has_results"]:
            tid = m["tool_call_id"]
            if tid:
                if tid in calls:
                    join(calls[tid], i)
            elif i > start:
                p = lead[i - 1]
                if msgs[p]["has_calls"] and (msgs[i - 1]["role"] == "tool" or p == i - 1):
                    join(p, i)
        for cid, _, _, r in m["entries"]:
            if r and cid and cid in calls:
                join(calls[cid], i)
        if m["has_calls"]:
            for cid, _, _, r in m["entries"]:
                if not r and cid:
                    calls[cid] = i
    return lead


def split(raw, c):
    msgs = nmsgs(raw)
    n = len(msgs)
    start, prior = 0, None
    if n and is_clip(msgs[0]):
        prior, start = raw[0], 1
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
    return {"to_compress": [raw[i] for i in comp], "to_keep": [raw[i] for i in keep], "prior_summary": prior}


def chunk(raw, c):
    """Chunks of the messages in order: a run of messages of one tool unit is never cut."""
    msgs = nmsgs(raw)
    lead = leaders(msgs, 0)
    size, max_tok = max(1, c["chunk_size"]), c["max_chunk_tokens"]
    chunks, cur, cur_tok, k = [], [], 0, 0
    while k < len(msgs):
        end = k + 1
        while end < len(msgs) and lead[end] == lead[k]:
            end += 1
        unit = list(range(k, end))
        unit_tok = sum(message_tokens(msgs[i], c) for i in unit)
        if cur and ((max_tok and cur_tok + unit_tok > max_tok) or (not max_tok and len(cur) + len(unit) > size)):
            chunks.append(cur)
            cur, cur_tok = [], 0
        cur += [raw[i] for i in unit]
        cur_tok += unit_tok
        k = end
    if cur:
        chunks.append(cur)
    return chunks


def estimate(raw, c=None):
    """What messages count (no overhead_tokens): chars4's one ceiling, or the sum of message_tokens."""
    c = c or {}
    if c.get("token_estimator") == "chars4":
        return math.ceil(sum(message_runes(m) for m in nmsgs(raw)) / 4)
    return sum(message_tokens(m, c) for m in nmsgs(raw))


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


HEADER_ARGS = 200  # code points of a call's arguments a result's header shows


def call_header(entry):
    """How a result's header shows its call: "name(arguments)", line breaks
    made spaces and the arguments middle-truncated to HEADER_ARGS; a bare
    name when only the result names its tool."""
    _, nm, a, is_result = entry
    if is_result:
        return nm
    a = a.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    return "%s(%s)" % (nm, clamp(a, HEADER_ARGS))


def find_call(msgs, i, cid, name):
    """The call a result in msgs[i] answers: the last one with its id made in
    a message before it (ids may be reused), else the first one made from
    msgs[i] on; the last such call of that message. Without one, the
    result's own tool name (None when it has none)."""
    if cid:
        at = [k for k, m in enumerate(msgs) for e in m["entries"] if not e[3] and e[0] == cid]
        if at:
            before = [k for k in at if k < i]
            k = before[-1] if before else at[0]
            return [e for e in msgs[k]["entries"] if not e[3] and e[0] == cid][-1]
    if name:
        return ("", name, "", True)
    return None


def header(call):
    return "[Tool result]: " if call is None else "[Tool result of %s]: " % call_header(call)


def render(msgs, i, mx):
    """How the summarizer sees msgs[i] (None: not shown): its tool results,
    each with a header naming its call (header), its text, its calls
    ("[Tool call]: name(args)"), each piece middle-truncated, joined with
    "\n"."""
    m = msgs[i]
    if m["role"] == "system":
        return None
    role = "assistant" if m["role"] == "assistant" else "user"
    own = own_text(m)
    if not m["has_results"] and not m["has_calls"]:
        if m["role"] == "tool":
            return role, header(find_call(msgs, i, m["tool_call_id"], "")) + clamp(m["content"], mx)
        return role, clamp(own, mx)
    pieces = []
    if m["has_results"]:
        pieces += [header(find_call(msgs, i, cid, nm)) + clamp(a, mx) for cid, nm, a, r in m["entries"] if r]
    elif m["role"] == "tool":
        pieces.append(header(find_call(msgs, i, m["tool_call_id"], "")) + clamp(m["content"], mx))
    if own:
        pieces.append(clamp(own, mx))
    pieces += ["[Tool call]: " + clamp("%s(%s)" % (nm, a), mx) for _, nm, a, r in m["entries"] if not r]
    return role, "\n".join(pieces)


def summ_request(system_prompt, previous, msgs, model, max_tokens, max_chars=20000):
    out = []
    if previous:
        out.append({"role": "system", "content": "Previous summary of conversation:\n" + previous})
    norm_msgs = nmsgs(msgs)
    for i in range(len(norm_msgs)):
        r = render(norm_msgs, i, max_chars)
        if r:
            out.append({"role": r[0], "content": r[1]})
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


def with_prepare_limit(export, inp, expected):
    """shouldCompact's answer also gives the soft threshold of compaction
    ahead of time, prepare_limit = floor(prepare_at x limit)
    (docs/spec.md#shouldcompact)."""
    if export != "shouldCompact" or not isinstance(expected, dict) or "limit" not in expected:
        return expected
    pa = ((inp or {}).get("config") or {}).get("prepare_at", 0.7)
    return dict(expected, prepare_limit=int(pa * expected["limit"]))


def vec(export, name, proves, input=None, expected=None, error=None, input_raw=None, expected_raw=None):
    expected = with_prepare_limit(export, input, expected)
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
    vec("score", name, proves, inp, {"scores": [score(m, i, len(msgs), c) for i, m in enumerate(nmsgs(msgs))]})


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
# The seeds' vectors count as the seeds do: token_estimator "chars4".
chunk_vec("max_chunk_tokens cuts by estimated tokens", ["context-compaction.AC1.2"],
          [msg(i, "user", "w" * (10 * (i + 1))) for i in range(6)], {"max_chunk_tokens": 20, "token_estimator": "chars4"})
chunk_vec("a message larger than max_chunk_tokens gets a chunk of its own", [],
          [msg(0, "user", "a" * 8), msg(1, "tool", "b" * 400, tool_call_id=None), msg(2, "user", "c" * 8)],
          {"max_chunk_tokens": 10, "token_estimator": "chars4"})
chunk_vec("max_chunk_tokens counts each message's conservative estimate and framing", ["docs/spec.md#counting-tokens-and-the-window"],
          [msg(i, "user", "我们明天在会议室讨论项目的预算问题。" * (i + 1)) for i in range(4)], {"max_chunk_tokens": 120})
chunk_vec("a tool call and its results are never cut apart", [],
          [msg(0, "user", "x"), msg(1, "user", "y")] + multi[1:4] + [msg(5, "user", "z")], {"chunk_size": 3})
vec("chunk", "chunk_size 0 is rejected, never looped on", [], {"messages": ten, "config": {"chunk_size": 0}},
    error=err("invalid_input", "config.chunk_size"))
vec("chunk", "max_chunk_tokens 0 is rejected", [], {"messages": ten, "config": {"max_chunk_tokens": 0}},
    error=err("invalid_input", "config.max_chunk_tokens"))
vec("chunk", "chunk_size must be a number", [], {"messages": ten, "config": {"chunk_size": "20"}},
    error=err("invalid_input", "config.chunk_size"))
# max_chunk_tokens "auto": chunks of what one summarization request holds
# (model_max_tokens less the prompt, the directive and the summaries a
# request carries), at least 1000 tokens; by chunk_size under the
# extractive summarizer.
vec("chunk", "max_chunk_tokens auto: a short history fits one request", ["docs/spec.md#config"],
    {"messages": ten, "config": {"max_chunk_tokens": "auto", "chunk_size": 3}}, {"chunks": [ten]})
vec("chunk", "max_chunk_tokens auto chunks by chunk_size under the extractive summarizer", ["docs/spec.md#config"],
    {"messages": ten, "config": {"max_chunk_tokens": "auto", "chunk_size": 3, "summarizer": "extractive"}},
    {"chunks": chunk(ten, cfg({"chunk_size": 3}))})
long_msgs = [msg(i, "user", "The quick brown fox jumps over the lazy dog. " * 40) for i in range(4)]
vec("chunk", "max_chunk_tokens auto is never below 1000 tokens", ["docs/spec.md#config"],
    {"messages": long_msgs, "config": {"max_chunk_tokens": "auto", "model_max_tokens": 10}},
    {"chunks": chunk(long_msgs, cfg({"max_chunk_tokens": 1000}))})
vec("chunk", "max_chunk_tokens is an integer, \"auto\" or null", [], {"messages": ten, "config": {"max_chunk_tokens": "big"}},
    error=err("invalid_input", "config.max_chunk_tokens"))

# ---------------------------------------------------------------- estimateTokens
C4 = {"token_estimator": "chars4"}
vec("estimateTokens", "chars4 text: ceil(chars / 4)", [], {"text": "abcde", "config": C4}, {"tokens": 2})
vec("estimateTokens", "chars4 text: empty", [], {"text": "", "config": C4}, {"tokens": 0})
vec("estimateTokens", "chars4 text: code points, not bytes", [], {"text": "日本語テキスト🙂", "config": C4}, {"tokens": 2})
vec("estimateTokens", "chars4 messages: one ceiling over all contents", [],
    {"messages": [msg(0, "user", "a"), msg(1, "assistant", "b"), msg(2, "user", "c")], "config": C4}, {"tokens": 1})
vec("estimateTokens", "chars4 messages: content arrays count their joined text", [],
    {"messages": [msg(0, "user", [{"type": "text", "text": "abcd"}, {"type": "text", "text": "efgh"}])], "config": C4}, {"tokens": 3})
vec("estimateTokens", "chars4 messages: an image is its placeholder's text", [],
    {"messages": [msg(0, "user", [{"type": "text", "text": "abcd"}, {"type": "image_url", "image_url": {"url": "x"}}])], "config": C4},
    {"tokens": 3})

# The conservative estimator (the default): texts of every kind, as the
# oracle's second implementation counts them.
TEXTS = [
    ("English prose", "The deploy failed because the configuration had a typo; we agreed to add validation before Friday."),
    ("English chat", "hey, can u check if the build's green? thx!! :)"),
    ("camelCase and snake_case code", "func (s *Store) writeRecall(ctx context.Context, msgID string) error {\n\treturn s.db.ExecContext(ctx, q, msg_id)\n}"),
    ("JSON tool output", '{"ImportPath":"net/http","Deps":["bufio","bytes","compress/gzip"],"Stale":false,"Size":123456}'),
    ("a log line with a hash, base64 and a uuid",
     "2026-02-28T10:00:00.123Z INFO request_id=3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 body=eyJ1c2VyIjoiYWRhIn0="),
    ("digits in groups of three", "Order 1234567 shipped 2026-02-28 for 1,240.50 EUR"),
    ("whitespace runs and line breaks", "a    b\t\tc\n\n\nd\r\n    e"),
    ("repeated punctuation", "=====\n-----\n...!!!???"),
    ("Chinese", "我们明天在会议室讨论项目的预算问题，请准时参加。"),
    ("Japanese", "明日の会議は午後三時からです。資料を準備してください。"),
    ("Korean", "내일 회의는 오후 세 시에 시작합니다. 자료를 준비해 주세요."),
    ("Russian", "Завтра в три часа состоится совещание по бюджету проекта."),
    ("Greek", "Η συνάντηση για τον προϋπολογισμό του έργου θα γίνει αύριο."),
    ("Arabic", "سيعقد الاجتماع غدا في الساعة الثالثة لمناقشة الميزانية."),
    ("Hebrew", "הפגישה על התקציב תתקיים מחר בשעה שלוש."),
    ("Hindi", "परियोजना के बजट पर बैठक कल तीन बजे होगी।"),
    ("Thai", "การประชุมเรื่องงบประมาณของโครงการจะจัดขึ้นพรุ่งนี้"),
    ("Latin with diacritics", "Größenänderung der Fenster: déjà vu, señor, Việt Nam"),
    ("emoji: pictographs, skin tones, ZWJ sequences, flags, keycaps",
     "ship it 🚀🎉 👍🏽 👩‍💻 🏳️‍🌈 🇫🇷 1️⃣ ❤️"),
    ("symbols and full-width punctuation", "→ ≥ ± © «quoted» — “curly” ［全角］！"),
    ("a script without costs of its own counts a token a byte", "ქართული ენა"),
]
for label, t in TEXTS:
    vec("estimateTokens", "conservative text: " + label, ["docs/spec.md#counting-tokens-and-the-window"], {"text": t}, {"tokens": conservative(t)})
vec("estimateTokens", "conservative text: empty", ["docs/spec.md#counting-tokens-and-the-window"], {"text": ""}, {"tokens": 0})
framed = [msg(0, "user", "Where is my order?"), call(1, "c1", "lookup_order", '{"order_id":"A-5000"}'),
          result(2, "c1", '{"status":"shipped","carrier":"DHL","eta":"2026-03-02"}')]
vec("estimateTokens", "conservative messages: text, tool calls and outputs, and per-message framing", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed}, {"tokens": estimate(framed)})
pictures = [msg(0, "user", [{"type": "text", "text": "What is in these?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                            {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}}])]
vec("estimateTokens", "an image counts image_tokens (default 1600), its placeholder stays in the text", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": pictures}, {"tokens": estimate(pictures)})
vec("estimateTokens", "image_tokens is configurable", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": pictures, "config": {"image_tokens": 765}}, {"tokens": estimate(pictures, {"image_tokens": 765})})
vec("estimateTokens", "overhead_tokens is not added: it is what hosts measure with this export", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "config": {"overhead_tokens": 900}}, {"tokens": estimate(framed)})
vec("estimateTokens", "token_estimator must be conservative or chars4", [], {"text": "a", "config": {"token_estimator": "words"}},
    error=err("invalid_input", "config.token_estimator"))
vec("estimateTokens", "image_tokens must be an integer >= 0", [], {"text": "a", "config": {"image_tokens": -1}},
    error=err("invalid_input", "config.image_tokens"))
vec("estimateTokens", "overhead_tokens must be an integer >= 0", [], {"text": "a", "config": {"overhead_tokens": 2.5}},
    error=err("invalid_input", "config.overhead_tokens"))
vec("estimateTokens", "text or messages is required", [], {}, error=err("invalid_input", "text"))
vec("estimateTokens", "text must be a string", [], {"text": 12}, error=err("invalid_input", "text"))

# ---------------------------------------------------------------- shouldCompact
over = {"model_max_tokens": 10, "context_budget": 0.5, "token_estimator": "chars4"}
vec("shouldCompact", "due when the estimate exceeds context_budget x model_max_tokens", ["context-compaction.AC1.1"],
    {"messages": [msg(0, "user", "x" * 24)], "config": over}, {"due": True, "tokens": 6, "limit": 5})
vec("shouldCompact", "not due at exactly the limit", ["context-compaction.AC1.1"],
    {"messages": [msg(0, "user", "x" * 20)], "config": over}, {"due": False, "tokens": 5, "limit": 5})
vec("shouldCompact", "defaults: 0.8 x 200000", ["context-compaction.AC1.1"],
    {"messages": [msg(0, "user", "hello")]}, {"due": False, "tokens": estimate([msg(0, "user", "hello")]), "limit": 160000})
zh = [msg(i, ("user", "assistant")[i % 2], "我们明天在会议室讨论项目的预算问题，请准时参加。") for i in range(40)]
zh_tok = estimate(zh)
vec("shouldCompact", "a Chinese conversation is due by the conservative count, not by chars / 4", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": zh, "config": {"model_max_tokens": 1000}}, {"due": zh_tok > 800, "tokens": zh_tok, "limit": 800})
vec("shouldCompact", "overhead_tokens is added to the count", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "config": {"overhead_tokens": 3000, "model_max_tokens": 4000}},
    {"due": estimate(framed) + 3000 > 3200, "tokens": estimate(framed) + 3000, "limit": 3200})
vec("shouldCompact", "usage: the provider's count of the first K messages plus the estimate of the rest, no overhead on top",
    ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "config": {"overhead_tokens": 3000}, "usage": {"input_tokens": 2500, "messages": 2}},
    {"due": False, "tokens": 2500 + estimate(framed[2:]), "limit": 160000})
vec("shouldCompact", "usage of the whole history is the provider's count", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "config": {"model_max_tokens": 3000}, "usage": {"input_tokens": 2500, "messages": 3}},
    {"due": True, "tokens": 2500, "limit": 2400})
vec("shouldCompact", "usage beyond the history is refused", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "usage": {"input_tokens": 2500, "messages": 4}}, error=err("invalid_input", "usage.messages"))
vec("shouldCompact", "usage with negative input_tokens is refused", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "usage": {"input_tokens": -1, "messages": 1}}, error=err("invalid_input", "usage.input_tokens"))
vec("shouldCompact", "usage must be an object", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "usage": 2500}, error=err("invalid_input", "usage"))
vec("split", "usage is read by split too", ["docs/spec.md#counting-tokens-and-the-window"],
    {"messages": framed, "usage": {"input_tokens": 2500, "messages": "2"}}, error=err("invalid_input", "usage.messages"))
vec("shouldCompact", "context_budget must be in (0, 1]", [], {"messages": [], "config": {"context_budget": 0}},
    error=err("invalid_input", "config.context_budget"))
vec("shouldCompact", "summarizer \"extractive\" is a valid config key", [],
    {"messages": [msg(0, "user", "hello")], "config": {"summarizer": "extractive"}},
    {"due": False, "tokens": estimate([msg(0, "user", "hello")]), "limit": 160000})
vec("shouldCompact", "summarizer must be \"llm\" or \"extractive\"", [], {"messages": [], "config": {"summarizer": "gpt"}},
    error=err("invalid_input", "config.summarizer"))
vec("shouldCompact", "prepare_limit is prepare_at x limit: the soft threshold of compaction ahead of time",
    ["docs/spec.md#compaction-ahead-of-time"],
    {"messages": [msg(0, "user", "hello")], "config": {"model_max_tokens": 1000, "prepare_at": 0.5}},
    {"due": False, "tokens": estimate([msg(0, "user", "hello")]), "limit": 800})
vec("shouldCompact", "prepare_at must be in (0, 1]", ["docs/spec.md#compaction-ahead-of-time"],
    {"messages": [], "config": {"prepare_at": 0}}, error=err("invalid_input", "config.prepare_at"))
vec("shouldCompact", "prepare_at must be a number", ["docs/spec.md#compaction-ahead-of-time"],
    {"messages": [], "config": {"prepare_at": "soon"}}, error=err("invalid_input", "config.prepare_at"))

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
vec("buildSummarizationRequest", "defaults: the spec's defaults with nothing set", [],
    {"messages": []}, summ_request(None, None, [], "", 1024))
huge = [msg(0, "tool", "abcdefghijklmnopqrstuvwxyz", tool_call_id="c"), msg(1, "user", "короткий")]
vec("buildSummarizationRequest", "each message is middle-truncated to max_message_chars", [],
    {"messages": huge, "model": "m", "max_tokens": 10, "config": {"max_message_chars": 10}},
    summ_request(None, None, huge, "m", 10, max_chars=10))
arr = [msg(0, "user", [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}])]
vec("buildSummarizationRequest", "content-part arrays are joined", [], {"messages": arr, "model": "m", "max_tokens": 5},
    summ_request(None, None, arr, "m", 5))
# Deviation (docs/spec.md#buildsummarizationrequest): a tool result
# names the call it answers, found by id among the messages (the nearest
# one before it when an id is reused), its arguments on one line and cut
# to 200 code points; a result whose call is not among them is as before,
# or names its tool when the result gives the name.
tools_conv = [msg(0, "user", "Book the cheapest flight."),
              call(1, "call_1", name="search_direct_flight", args='{"origin":"JFK","destination":"SEA"}'),
              result(2, "call_1", '[{"flight_number": "HAT069", "price": 121}]'),
              call(3, "call_1", name="calculate", args='{"expression":\n"2 * 11776.5"}'),
              result(4, "call_1", "23553.0"),
              call(5, "call_2", name="write_file", args='{"path":"notes.md","body":"' + "x" * 300 + '"}'),
              result(6, "call_2", "wrote 312 bytes"),
              result(7, "call_elsewhere", "a result whose call is in another chunk")]
vec("buildSummarizationRequest", "tool results name their calls", [],
    {"messages": tools_conv, "model": "m", "max_tokens": 100},
    summ_request(None, None, tools_conv, "m", 100))
named = [{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t9", "toolName": "weather",
                                       "output": {"type": "text", "value": "18C in Paris"}}]}]
vec("buildSummarizationRequest", "a result whose call is elsewhere names its tool when it gives the name", [],
    {"messages": named, "model": "m", "max_tokens": 100}, summ_request(None, None, named, "m", 100))
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
    """docs/spec.md#providerrequest, transcribed: the wire body each provider accepts."""
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
    "Tool call: lookup_order(ORD-5523109)\n"
    "Tool: order ORD-5523109: delivered by DHL on 2026-02-27")
ex_vec("a result is said with its call, once, and its JSON as facts", [
    {"role": "user", "content": "Where is order ORD-5523109?"},
    {"role": "assistant", "content": "Let me check.\n[Tool call]: lookup_order({\"order\":\"ORD-5523109\"})"},
    {"role": "user", "content": "[Tool result of lookup_order({\"order\":\"ORD-5523109\"})]: "
                                "{\"order\": \"ORD-5523109\", \"status\": \"delivered\", \"carrier\": \"DHL\", \"parcel\": \"00340434161094042557\"}"},
    {"role": "assistant", "content": "[Tool call]: calculate({\"expression\":\"2 * 11776.5\"})"},
    {"role": "user", "content": "[Tool result of calculate({\"expression\":\"2 * 11776.5\"})]: 23553.0"}],
    "User: Where is order ORD-5523109?\n"
    "Tool lookup_order(ORD-5523109): status: delivered; carrier: DHL; parcel: 00340434161094042557\n"
    "Tool calculate(2 * 11776.5): 23553.0")
ex_vec("only filler: the best sentence, never an empty summary", [
    {"role": "user", "content": "Thanks!"}], "User: Thanks!")


# ---------------------------------------------------------------- message shapes
# Histories in each shape of docs/spec.md#message-shapes. Their inputs are input_raw, compact
# (cj), so a tool input that is a JSON object counts as the text cj writes.
def raw_vec(export, name, proves, inp, expected=None, error=None):
    vec(export, name, proves, input_raw=cj(inp), expected=with_prepare_limit(export, inp, expected), error=error)


def shape_vecs(label, msgs, keeps=(), chunk_size=2, summarize=True, extra=None):
    """split (per keep_recent), score, chunk, estimateTokens, shouldCompact
    and buildSummarizationRequest on one history."""
    extra = extra or {}
    for k in keeps:
        over = {"keep_recent": k}
        raw_vec("split", "%s: keep_recent %d keeps every tool call with its results" % (label, k), ["docs/spec.md#message-shapes"],
                dict({"messages": msgs, "config": over}, **extra), split(msgs, cfg(over)))
    c = cfg()
    raw_vec("score", "%s: text, tool inputs and outputs as the shape has them" % label, ["docs/spec.md#message-shapes"],
            dict({"messages": msgs}, **extra), {"scores": [score(m, i, len(msgs), c) for i, m in enumerate(nmsgs(msgs))]})
    over = {"chunk_size": chunk_size}
    raw_vec("chunk", "%s: chunk_size %d never cuts a tool unit" % (label, chunk_size), ["docs/spec.md#message-shapes"],
            dict({"messages": msgs, "config": over}, **extra), {"chunks": chunk(msgs, cfg(over))})
    raw_vec("estimateTokens", "%s: text, tool inputs and tool outputs count" % label, ["docs/spec.md#message-shapes"],
            dict({"messages": msgs}, **extra), {"tokens": estimate(msgs)})
    tok = estimate(msgs)
    over = {"model_max_tokens": tok, "context_budget": 0.5}
    raw_vec("shouldCompact", "%s: due over the budget" % label, ["docs/spec.md#message-shapes"],
            dict({"messages": msgs, "config": over}, **extra), {"due": tok > int(0.5 * tok), "tokens": tok, "limit": int(0.5 * tok)})
    if summarize:
        raw_vec("buildSummarizationRequest", "%s: tool inputs and outputs rendered for the summarizer" % label, ["docs/spec.md#message-shapes"],
                dict({"messages": msgs, "model": "m", "max_tokens": 256, "config": {"max_message_chars": 60}}, **extra),
                summ_request(None, None, msgs, "m", 256, max_chars=60))


# Anthropic Messages: tool_use in assistant turns, tool_result
# blocks in the user turns after them (a parallel pair in one turn, text
# beside a result, a result whose call is gone), images and documents as
# placeholders, thinking counted as nothing. With keep_recent 3 and 5 the
# boundary falls on a result: it moves back to the call.
anthropic = [
    {"role": "user", "content": "Where is my order A-5000? It has not arrived after ten days."},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "I should look it up.", "signature": "sig"},
                                      {"type": "text", "text": "Let me look up that order."},
                                      {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": "A-5000"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                  "content": [{"type": "text", "text": "order A-5000: label created Monday, carrier DHL, warehouse Leipzig"}]}]},
    {"role": "user", "content": [{"type": "text", "text": "Here is the label they sent me, is that a bug?"},
                                 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Checking the carrier and the warehouse."},
                                      {"type": "tool_use", "id": "toolu_02", "name": "track", "input": {"carrier": "DHL", "ref": "A-5000"}},
                                      {"type": "tool_use", "id": "toolu_03", "name": "warehouse_status", "input": {"site": "Leipzig"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "no scan since Monday"},
                                 {"type": "tool_result", "tool_use_id": "toolu_03", "content": "error: parcel never left the dock", "is_error": True}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_04", "name": "reship", "input": {"order_id": "A-5000", "express": True}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_04", "content": "reshipped, tracking JD0001"},
                                 {"type": "text", "text": "Thanks! Can I get a refund if it is lost?"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Yes: if it is not delivered in five days you get a full refund."},
                                      {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "policy"}}]},
    {"role": "user", "content": "OK, thank you."},
]
shape_vecs("anthropic", anthropic, keeps=(3, 5, 0, 20))
clip_turn = {"role": "user", "content": "[Context Summary — 9 messages compressed across 1 compaction cycle]\n[Batch 1 — depth 0, 2026-02-28T10:00:00.000Z to 2026-02-28T10:09:00.000Z]\nThe order A-4999 was refunded."}
raw_vec("split", "anthropic: a leading clip-archive user turn is the prior summary", ["docs/spec.md#message-shapes", "context-compaction.AC1.6"],
        {"messages": [clip_turn] + anthropic[:6], "config": {"keep_recent": 2}}, split([clip_turn] + anthropic[:6], cfg({"keep_recent": 2})))
raw_vec("split", "anthropic: a clip-archive user turn that is not first is the user's", ["docs/spec.md#message-shapes"],
        {"messages": anthropic[:2] + [clip_turn], "config": {"keep_recent": 1}}, split(anthropic[:2] + [clip_turn], cfg({"keep_recent": 1})))
raw_vec("split", "anthropic text turns: the shape input makes a leading clip-archive turn the prior summary", ["docs/spec.md#message-shapes"],
        {"messages": [clip_turn, {"role": "assistant", "content": "ok"}], "shape": "anthropic", "config": {"keep_recent": 1}},
        split([clip_turn, {"role": "assistant", "content": "ok"}], cfg({"keep_recent": 1})))
# One user turn answering the calls of two assistant turns joins them into one unit.
joined = [{"role": "user", "content": "start"},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}]},
          {"role": "user", "content": "interrupting text"},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "b", "input": {}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                                       {"type": "tool_result", "tool_use_id": "t2", "content": "B"}]},
          {"role": "assistant", "content": "done"}, {"role": "user", "content": "bye"}]
for k in (1, 3):
    raw_vec("split", "anthropic: a turn answering two calls joins their units (keep_recent %d)" % k, ["docs/spec.md#message-shapes"],
            {"messages": joined, "config": {"keep_recent": k}}, split(joined, cfg({"keep_recent": k})))
raw_vec("chunk", "anthropic: joined units stay one run", ["docs/spec.md#message-shapes"],
        {"messages": joined, "config": {"chunk_size": 2}}, {"chunks": chunk(joined, cfg({"chunk_size": 2}))})

# OpenAI Responses input items: reasoning travels with the call after it.
responses = [
    {"role": "user", "content": "What is the weather in Paris, and should I take an umbrella?"},
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Answer in celsius."}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need the forecast."}], "encrypted_content": "gAAAA"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp_c\":18,\"rain\":0.7}"},
    {"type": "message", "role": "assistant", "id": "msg_1", "content": [{"type": "output_text", "text": "18 C with a 70% chance of rain: take an umbrella."}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}, {"type": "input_image", "image_url": "https://x/y.png"}]},
    {"type": "reasoning", "id": "rs_2", "summary": []},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather", "arguments": "{\"city\":\"Paris\",\"day\":1}"},
    {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "{\"temp_c\":15}"}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"role": "assistant", "content": "15 C tomorrow."},
]
shape_vecs("responses", responses, keeps=(3, 4, 9))

# Vercel AI SDK ModelMessages: tool-call and tool-result parts.
aisdk = [
    {"role": "system", "content": "You are a calculator."},
    {"role": "user", "content": [{"type": "text", "text": "What is 12 * 7 and 3 + 4?"}]},
    {"role": "assistant", "content": [{"type": "reasoning", "text": "Two calls."},
                                      {"type": "tool-call", "toolCallId": "tc_1", "toolName": "multiply", "input": {"a": 12, "b": 7}},
                                      {"type": "tool-call", "toolCallId": "tc_2", "toolName": "add", "args": {"a": 3, "b": 4}}]},
    {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "tc_1", "toolName": "multiply", "output": {"type": "json", "value": {"result": 84}}},
                                 {"type": "tool-result", "toolCallId": "tc_2", "toolName": "add", "result": 7}]},
    {"role": "assistant", "content": [{"type": "text", "text": "12 * 7 = 84 and 3 + 4 = 7."}]},
    {"role": "user", "content": [{"type": "text", "text": "Now read this file"}, {"type": "file", "data": "…", "mediaType": "application/pdf"}]},
    {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "tc_3", "toolName": "read_pdf", "input": {"page": 1}}]},
    {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "tc_3", "toolName": "read_pdf",
                                  "output": {"type": "content", "value": [{"type": "text", "text": "Invoice 2026-17: 1,240 EUR"}, {"type": "media", "data": "…", "mediaType": "image/png"}]}}]},
    {"role": "assistant", "content": "The invoice total is 1,240 EUR."},
]
shape_vecs("ai sdk", aisdk, keeps=(2, 5))

# LangChain message dicts: type human/ai/system/tool, tool_calls [{name, args, id}].
langchain = [
    {"type": "system", "content": "You are a research assistant.", "id": None},
    {"type": "human", "content": "Find the 2025 revenue of Acme.", "id": "h1", "additional_kwargs": {}, "response_metadata": {}},
    {"type": "ai", "content": "", "id": "a1", "tool_calls": [{"name": "search", "args": {"query": "Acme 2025 revenue"}, "id": "call_a", "type": "tool_call"}],
     "invalid_tool_calls": []},
    {"type": "tool", "content": "Acme reported revenue of 4.2B in 2025.", "tool_call_id": "call_a", "name": "search", "id": "t1"},
    {"type": "ai", "content": [{"type": "text", "text": "Let me confirm."}, {"type": "tool_use", "id": "call_b", "name": "search", "input": {"query": "Acme annual report"}}],
     "tool_calls": [{"name": "search", "args": {"query": "Acme annual report"}, "id": "call_b"}], "id": "a2"},
    {"type": "tool", "content": [{"type": "text", "text": "Annual report: revenue 4.2B, up 8%."}], "tool_call_id": "call_b", "id": "t2"},
    {"type": "ai", "content": "Acme's 2025 revenue was 4.2B (up 8%).", "id": "a3", "tool_calls": []},
    {"type": "human", "content": "Thanks!", "id": "h2"},
]
shape_vecs("langchain", langchain, keeps=(3, 4))

# OpenAI Chat: tool inputs count and are rendered beside the text.
chat = [msg(0, "user", "Deploy the fix?"),
        call(1, "call_d", name="deploy", args='{"env":"staging","version":"v2.13.2"}', content="Deploying to staging first."),
        result(2, "call_d", "deployed v2.13.2 to staging"),
        msg(3, "assistant", [{"type": "text", "text": "Staging is green."}, {"type": "refusal", "refusal": "I will not deploy to production myself."}]),
        msg(4, "user", [{"type": "text", "text": "ok"}, {"type": "input_audio", "input_audio": {"data": "…", "format": "wav"}}]),
        msg(5, "developer", "Always confirm before production.")]
shape_vecs("chat", chat, keeps=(4,))

# A clip-archive written as a user turn: what compress writes in every shape
# when the kept messages start inside a tool loop. First, with its whole
# header and a batch, it is the prior summary; the prefix alone is the user's.
clip_text = clip_turn["content"]
turn_heads = [("chat", {"role": "user", "content": clip_text}, [chat[1], chat[2], chat[3]]),
              ("responses", {"type": "message", "role": "user", "content": clip_text}, responses[2:6]),
              ("ai sdk", {"role": "user", "content": clip_text}, aisdk[1:4]),
              ("langchain", {"type": "human", "content": clip_text}, langchain[2:5])]
for label, head, rest in turn_heads:
    raw_vec("split", "%s: a leading clip-archive user turn (compacted mid tool loop) is the prior summary" % label,
            ["docs/spec.md#message-shapes"], {"messages": [head] + rest, "config": {"keep_recent": 1}},
            split([head] + rest, cfg({"keep_recent": 1})))
for label, content in [("the prefix alone", "[Context Summary — the refund of A-4999]"),
                       ("a header without a batch", "[Context Summary — 9 messages compressed across 1 compaction cycle]\nIs this right?")]:
    for shape_label, head, rest in [("anthropic", {"role": "user", "content": content}, anthropic[1:4]),
                                    ("langchain", {"type": "human", "content": content}, langchain[2:5])]:
        raw_vec("split", "%s: a first user turn with %s is the user's" % (shape_label, label), ["docs/spec.md#message-shapes"],
                {"messages": [head] + rest, "config": {"keep_recent": 1}}, split([head] + rest, cfg({"keep_recent": 1})))

# Shape errors: one shape per call, naming the message.
vec("split", "mixed shapes: an Anthropic turn after an OpenAI Chat tool call", ["docs/spec.md#message-shapes"],
    {"messages": [chat[1], anthropic[2]]}, error=err("invalid_input", "messages[1]"))
vec("score", "mixed shapes: a Responses item among AI SDK messages", ["docs/spec.md#message-shapes"],
    {"messages": [aisdk[2], aisdk[3], responses[3]]}, error=err("invalid_input", "messages[2]"))
vec("chunk", "the shape input must match every message", ["docs/spec.md#message-shapes"],
    {"messages": [{"role": "user", "content": "a"}, chat[2]], "shape": "anthropic"}, error=err("invalid_input", "messages[1]"))
vec("estimateTokens", "an unknown shape is refused", ["docs/spec.md#message-shapes"], {"messages": [], "shape": "gemini"},
    error=err("invalid_input", "shape"))
vec("shouldCompact", "a Responses message item needs a role", ["docs/spec.md#message-shapes"],
    {"messages": [{"type": "message", "content": "x"}]}, error=err("invalid_input", "messages[0].role"))
vec("buildSummarizationRequest", "a message mixing parts of two shapes", ["docs/spec.md#message-shapes"],
    {"messages": [{"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]},
    error=err("invalid_input", "messages[0]"))
vec("split", "a tool_result without its tool_use is its own unit", ["docs/spec.md#message-shapes"],
    {"messages": [anthropic[0], anthropic[2], anthropic[3]], "config": {"keep_recent": 1}},
    split([anthropic[0], anthropic[2], anthropic[3]], cfg({"keep_recent": 1})))
unknown = [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "some_future_block", "x": {"deep": [1, 2]}}]},
           {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]
raw_vec("estimateTokens", "unknown block types are kept and counted as nothing", ["docs/spec.md#message-shapes"], {"messages": unknown},
        {"tokens": estimate(unknown)})


# Derived ids (docs/spec.md#derived-ids: a message without an id gets a stable id): FNV-1a 128
# over the normalized content, then over that digest and the occurrence
# among identical messages; "d_" (or "clip_" for a clip-archive) and 24 hex
# digits. Checked by api's TestDerivedIDsFromPython (not an export).
def fnv128(data):
    h = 0x6c62272e07bb014262b821756295c58d
    for b in data:
        h ^= b
        h = (h * 0x0000000001000000000000000000013b) & ((1 << 128) - 1)
    return h.to_bytes(16, "big")


def derived_ids(conv, raw):
    msgs, _ = settle(raw)
    seen, out = {}, []
    for m in msgs:
        if m["id"]:
            out.append(m["id"])
            continue
        s = conv + "\0" + m["role"] + "\0" + m["content"]
        for cid, name, a, r in m["entries"]:
            s += "\0" + ("r" if r else "c") + "\0" + cid + "\0" + name + "\0" + a
        if m["tool_call_id"]:
            s += "\0t\0" + m["tool_call_id"]
        d = fnv128(s.encode("utf-8"))
        k = seen.get(d, 0)
        seen[d] = k + 1
        out.append(("clip_" if is_clip(m) else "d_") + fnv128(d + str(k).encode()).hex()[:24])
    return out


id_cases = []
for label, conv, hist in [("anthropic", "c1", [clip_turn] + anthropic), ("responses", "c1", responses), ("ai sdk", "c2", aisdk),
                          ("langchain", "c1", langchain),
                          ("identical messages, told apart by occurrence", "c1",
                           [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "sure"}, {"role": "user", "content": "ok"},
                            {"role": "user", "content": "ok", "id": "given"}, {"role": "user", "content": "ok"}])]:
    id_cases.append({"name": label, "conversation_id": conv, "history_raw": cj(hist), "ids": derived_ids(conv, hist)})
os.makedirs(os.path.join(OUT, "..", "shapes"), exist_ok=True)
with open(os.path.join(OUT, "..", "shapes", "derived-ids.json"), "w", encoding="utf-8") as f:
    json.dump({"about": "derived message ids computed by tools/vectors/gen_vectors.py", "cases": id_cases}, f, ensure_ascii=False, indent=1)
    f.write("\n")


# ---------------------------------------------------------------- searchQuery
# A second transcription of the query analysis (docs/spec.md#searchquery,
# docs/spec.md#search), from the descriptions, not from the Go code: words are runs
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
