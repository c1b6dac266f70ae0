"""clipfold in Pydantic AI agents (``pip install "clipfold[pydantic-ai]"``).

- :class:`ClipfoldHistory`: a history processor, ``(ctx, messages) ->
  messages``, run before every model request (tool loops included):
  ``Agent(model, capabilities=[ProcessHistory(history)])`` (Pydantic AI 2;
  in Pydantic AI 1, ``Agent(model, history_processors=[history])``). It
  counts the request as the model will and, when clipfold's budget says
  it is due, returns the compacted history: the clip-archive as a user
  turn, then the kept messages — the very objects the run held, tool calls
  with their results. Pydantic AI sends the model that list and keeps it
  as the run's history; what it left out went to recall storage. With
  ``ahead=True`` it compacts ahead of time
  (docs/spec.md#compaction-ahead-of-time): the compaction starts in the
  background and a later request's history has it applied.
- :func:`memory_read_tool`: a Pydantic AI ``Tool`` searching what was
  archived and what is still in the run's messages (docs/spec.md#search).

Nothing here re-implements clipfold. Pydantic AI's messages are turned
into a shape the plug-in reads with Pydantic AI's own serializer
(``ModelMessagesTypeAdapter``): each ``ModelRequest`` a user turn, each
``ModelResponse`` an assistant turn, with Anthropic's content blocks —
``ToolCallPart`` a ``tool_use`` block, ``ToolReturnPart`` and a tool's
``RetryPromptPart`` a ``tool_result`` block — and the request's
``SystemPromptPart``\\ s a system message of their own (pinned: never
summarized away, since Pydantic AI does not send them again). Each of them
carries the message's own serialization under ``"pydantic_ai"``, so what
recall storage keeps is the message itself. The plug-in splits, counts,
keeps tool calls with their results, summarizes and archives; what comes
back is mapped onto the messages that went in.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple, Union, cast

from pydantic_ai import RunContext, Tool
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse, UserPromptPart

from .compactor import DEFAULT_MEMORY_READ_TOKENS, Compactor
from .errors import ClipfoldError
from . import _check
from ._overhead import Overheads
from .store import StoreError, raw_json
from .types import AheadResult, CompactionResult, Config, ContextUsage

__all__ = ["ClipfoldHistory", "memory_read_tool", "to_clipfold", "tool_schemas"]

DEFAULT_CONVERSATION_ID = "default"
_MAX_CONVERSATIONS = 256  # conversations whose lists an adapter with ahead remembers
SHAPE = "anthropic"
"""The plug-in shape Pydantic AI messages are read in: a request is one
user turn (tool results and prompts together), as in Anthropic's API, and
the clip-archive a leading user turn — a first message every provider
accepts."""

_SYSTEM, _ARCHIVE, _BODY = "system", "archive", "body"
ConversationID = Union[None, str, Callable[[], str]]
JSONObject = Dict[str, Any]
Origin = Tuple[int, str, List[int]]
"""Where a plug-in message came from: the index of its Pydantic AI message,
which of its parts it holds (see :func:`_group`) and, for a body, how many
content blocks each of those parts made."""
ARCHIVE_MARK = "[Context Summary"  # how a clip-archive begins (docs/spec.md#split)


def _group(part: Any) -> str:
    """Which plug-in message of its request a part goes to: the system
    prompts (pinned), a clip-archive (Pydantic AI merges consecutive
    requests, so the archive may share a request with the next prompt;
    on its own, the plug-in knows it for the summary it is), the rest."""
    kind = part.get("part_kind") if isinstance(part, dict) else getattr(part, "part_kind", None)
    if kind == "system-prompt":
        return _SYSTEM
    content = part.get("content") if isinstance(part, dict) else getattr(part, "content", None)
    if kind == "user-prompt" and isinstance(content, str) and content.startswith(ARCHIVE_MARK):
        return _ARCHIVE
    return _BODY


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)


def _input(args: Any) -> Any:
    """A tool call's arguments as a tool_use input (Pydantic AI keeps them
    as a dict or as the model's JSON text)."""
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return {} if args is None else args


def _media(item: JSONObject) -> JSONObject:
    kind = "%s %s" % (item.get("kind") or "", item.get("media_type") or "")
    return {"type": "image"} if "image" in kind else {"type": "document"}


def _blocks(part: JSONObject, response: bool) -> List[JSONObject]:
    """The content blocks of one part (by its ``part_kind``): a tool call
    or its result paired by ``tool_call_id``; a tool the provider ran
    (``builtin-…``), answered in the same response, as text; a user
    prompt's items as text, image or document blocks."""
    kind = str(part.get("part_kind") or "")
    call_id = part.get("tool_call_id")
    if call_id and not kind.startswith("builtin") and part.get("tool_name") is not None:
        if response:
            return [{"type": "tool_use", "id": call_id, "name": part["tool_name"], "input": _input(part.get("args"))}]
        if "content" in part:
            return [{"type": "tool_result", "tool_use_id": call_id, "content": _text(part.get("content"))}]
    if kind == "thinking":
        return [{"type": "thinking", "thinking": str(part.get("content") or "")}]
    if kind == "user-prompt" and isinstance(part.get("content"), list):
        return [{"type": "text", "text": c} if isinstance(c, str) else _media(c) if isinstance(c, dict) else
                {"type": "text", "text": _text(c)} for c in part["content"]]
    if kind == "file":
        return [_media(part.get("content") or {})]
    if kind.startswith("builtin") and part.get("tool_name") is not None:
        what = part.get("content") if "content" in part else part.get("args")
        return [{"type": "text", "text": "%s: %s" % (part["tool_name"], _text(what))}]
    if part.get("content") is not None:
        return [{"type": "text", "text": _text(part["content"])}]
    return []


def _message_id(d: JSONObject) -> str:
    """The id of a Pydantic AI message (which has none) for the plug-in: a
    digest of its serialization, times included. A derived id
    (docs/spec.md#derived-ids) would be the same for two messages that say the same
    ("Done."), and a later one taken for the earlier one archived."""
    return "pai_" + hashlib.sha256(raw_json(d).encode("utf-8")).hexdigest()[:24]


def to_clipfold(messages: Sequence[ModelMessage]) -> Tuple[List[JSONObject], List[Origin]]:
    """Pydantic AI messages as the plug-in's messages (Anthropic blocks;
    see the module), and where each came from."""
    out: List[JSONObject] = []
    origin: List[Origin] = []
    for i, d in enumerate(ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")):
        parts = d.get("parts") or []
        created = d.get("timestamp") or next((p["timestamp"] for p in parts if p.get("timestamp")), None)
        extra: JSONObject = {"created_at": created} if created else {}
        extra["pydantic_ai"] = d
        mid = _message_id(d)
        if d.get("kind") == "response":
            made = [_blocks(p, True) for p in parts]
            out.append({"id": mid, "role": "assistant", "content": [b for bs in made for b in bs], **extra})
            origin.append((i, _BODY, [len(bs) for bs in made]))
            continue
        groups = [_group(p) for p in parts]
        system = [str(p.get("content") or "") for p, g in zip(parts, groups) if g == _SYSTEM]
        if system:
            out.append({"id": mid + "_system", "role": "system", "content": "\n\n".join(system), **extra})
            origin.append((i, _SYSTEM, []))
        for p, g in zip(parts, groups):
            if g == _ARCHIVE:
                out.append({"role": "user", "content": [{"type": "text", "text": p["content"]}], **extra})
                origin.append((i, _ARCHIVE, []))
        if _BODY in groups or not parts:
            made = [_blocks(p, False) for p, g in zip(parts, groups) if g == _BODY]
            out.append({"id": mid, "role": "user", "content": [b for bs in made for b in bs], **extra})
            origin.append((i, _BODY, [len(bs) for bs in made]))
    return out, origin


def _rewritten(message: Any, counts: List[int], sent: JSONObject, got: JSONObject) -> Any:
    """message with what the plug-in rewrote in its body (a tool result
    cleared to the line naming where its output is kept, a text
    middle-truncated): the blocks each part made, against the ones sent,
    give the part's new content."""
    blocks, before = list(got.get("content") or []), list(sent.get("content") or [])
    body = iter(counts)
    at = 0
    parts = []
    for part in message.parts:
        if isinstance(message, ModelRequest) and _group(part) != _BODY:
            parts.append(part)
            continue
        n = next(body)
        mine, old = blocks[at:at + n], before[at:at + n]
        at += n
        if mine != old:
            texts = [b.get("content") if b.get("type") == "tool_result" else b.get("text") for b in mine]
            content = getattr(part, "content", None)
            if isinstance(content, list):
                content = [t if isinstance(c, str) and isinstance(t, str) else c for c, t in zip(content, texts)]
            elif texts and isinstance(texts[0], str):
                content = texts[0]
            part = dataclasses.replace(part, content=content)
        parts.append(part)
    return dataclasses.replace(message, parts=parts)


def _archive_request(item: JSONObject, conversation_id: Optional[str]) -> ModelRequest:
    content = item.get("content")
    text = content if isinstance(content, str) else "\n".join(
        str(b.get("text") or "") for b in content or [] if isinstance(b, dict))
    req = ModelRequest(parts=[UserPromptPart(content=text)])
    if conversation_id and hasattr(req, "conversation_id"):
        req.conversation_id = conversation_id
    return req


def from_clipfold(history: Sequence[JSONObject], messages: Sequence[ModelMessage], sent: Sequence[JSONObject],
                  origin: Sequence[Origin], conversation_id: Optional[str] = None) -> List[ModelMessage]:
    """The compacted history as Pydantic AI messages: a message that came
    back whole is the very object given; one of which only some plug-in
    messages came back (its system prompts stayed, the rest was
    summarized; an old clip-archive was replaced) keeps those parts; one
    the plug-in rewrote gets the new contents; the clip-archive is a new
    ``ModelRequest`` holding it as a ``UserPromptPart`` (or that part,
    after the system prompts of the request that leads the history)."""
    index: Dict[str, Deque[int]] = collections.defaultdict(collections.deque)
    by_original: Dict[Tuple[str, str], Deque[int]] = collections.defaultdict(collections.deque)
    for j, d in enumerate(sent):
        index[raw_json(d)].append(j)
        by_original[(raw_json(d["pydantic_ai"]), origin[j][1])].append(j)
    order: List[Union[int, JSONObject]] = []  # a message's index, or the clip-archive
    back: Dict[int, Dict[str, Tuple[int, JSONObject]]] = collections.defaultdict(dict)
    for item in history:
        q = index.get(raw_json(item))
        if not q and isinstance(item.get("pydantic_ai"), dict):  # rewritten in place: its original rides along
            q = by_original.get((raw_json(item["pydantic_ai"]), _BODY))
        if not q:
            order.append(item)
            continue
        j = q.popleft()
        i, group, _ = origin[j]
        if i not in back:
            order.append(i)
        back[i][group] = (j, item)
    groups = collections.defaultdict(set)
    for i, group, _ in origin:
        groups[i].add(group)
    out: List[ModelMessage] = []
    for entry in order:
        if not isinstance(entry, int):
            out.append(_archive_request(entry, conversation_id))
            continue
        m: Any = messages[entry]
        got = back[entry]
        if _BODY in got and raw_json(got[_BODY][1]) != raw_json(sent[got[_BODY][0]]):
            j, item = got[_BODY]
            m = _rewritten(m, origin[j][2], sent[j], item)
        if set(got) != groups[entry]:
            m = dataclasses.replace(m, parts=[p for p in m.parts if _group(p) in got])
        out.append(m)
    if len(out) > 1 and not isinstance(order[0], int) and isinstance(out[1], ModelRequest):
        # The plug-in puts the clip-archive first; it goes after the system
        # prompts that lead the history, in their request (Pydantic AI merges
        # consecutive requests into one itself).
        first = out[1]
        lead = next((k for k, p in enumerate(first.parts) if _group(p) != _SYSTEM), len(first.parts))
        if lead:
            out[:2] = [dataclasses.replace(first, parts=[*first.parts[:lead], *out[0].parts, *first.parts[lead:]])]
    return out


def usage_of(messages: Sequence[ModelMessage], origin: Sequence[Origin]) -> Optional[ContextUsage]:
    """The provider's count of the last model request, from its answer:
    the last ``ModelResponse``'s ``usage.input_tokens``, for the messages
    before it (Pydantic AI sends the processed history and appends the
    answer to it). None when that answer carries no count."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, ModelResponse):
            n = getattr(m.usage, "input_tokens", None)
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                return {"input_tokens": n, "messages": sum(1 for k, _, _ in origin if k < i)}
            return None
    return None


def tool_schemas(tool_defs: Sequence[Any]) -> List[Dict[str, Any]]:
    """Pydantic AI ``ToolDefinition``\\ s as the schemas a provider is sent,
    for :meth:`~clipfold.Compactor.overhead_tokens`."""
    return [{"name": t.name, "description": t.description or "", "parameters": t.parameters_json_schema}
            for t in tool_defs]


def _conversation(conversation_id: ConversationID, ctx: Any) -> str:
    if callable(conversation_id):
        return str(conversation_id())
    if conversation_id:
        return conversation_id
    return str(getattr(ctx, "conversation_id", None) or DEFAULT_CONVERSATION_ID)


def _tool_defs(ctx: Any) -> List[Any]:
    manager = getattr(ctx, "tool_manager", None)
    try:
        return list(manager.tool_defs) if manager is not None else []
    except (ValueError, AttributeError):  # not prepared for this step
        return []


class ClipfoldHistory:
    """A Pydantic AI history processor that compacts with clipfold::

        history = ClipfoldHistory(Compactor(store="agent.db"), config={"model_max_tokens": 100_000})
        agent = Agent(model, capabilities=[ProcessHistory(history)])   # Pydantic AI 1: history_processors=[history]

    Before every model request it counts the request as the model will —
    the last answer's ``usage.input_tokens`` for the messages before it,
    the estimate of the rest, and without usage the request's instructions
    and tool definitions as ``overhead_tokens`` — and compacts when that is
    over clipfold's budget (``context_budget`` × ``model_max_tokens``).
    ``config``: clipfold's ``[summarization]`` keys (``keep_recent``,
    ``target_tokens``, …). ``conversation_id``: a string or a callable;
    default the run's ``conversation_id`` (Pydantic AI 2) — pass one to keep
    a conversation's archive across message histories. ``tools``: tool
    schemas to count when the run context does not list them (Pydantic AI 1).
    ``last_result``: the last CompactionResult (None before the first
    compaction due: a request under the budget runs none; a failed
    compaction changes nothing, its ``failure_code`` says why).

    ``ahead=True``: compaction ahead of time (:meth:`Compactor.compact_ahead`,
    docs/spec.md#compaction-ahead-of-time). Over the soft threshold
    (``prepare_at`` of the budget, 0.7 by default) the compaction starts in
    the background and the request goes on with the history as it is; a
    later request that finds it done returns the compacted history (the
    messages that came meanwhile after the clip-archive). A request waits
    only when it reaches the budget first, and then only for the rest of
    the work under way: what the model is sent fits the budget as without
    it. ``keep_recent`` as without it; a ``target_tokens`` is where the
    history lands once the compaction is applied, the messages that came
    meanwhile included (the compaction itself goes that much lower).
    ``last_ahead``: the last request's :class:`~clipfold.types.AheadResult`."""

    def __init__(self, compactor: Optional[Compactor] = None, *, config: Optional[Config] = None,
                 conversation_id: ConversationID = None, tools: Sequence[Any] = (), ahead: bool = False) -> None:
        self.ahead = _check.boolean(ahead, "ahead")
        self.last_ahead: Optional[AheadResult] = None
        self.compactor = compactor if compactor is not None else Compactor()
        self.config: Config = dict(config or {})
        self.conversation_id = conversation_id
        self.tools = list(tools)
        self.last_result: Optional[CompactionResult] = None
        self._overheads = Overheads(self.compactor)
        # With ahead, per conversation: the messages the plug-in was last
        # given (see _ahead) and the list returned to Pydantic AI.
        self._lists: "collections.OrderedDict[str, Tuple[List[ModelMessage], List[ModelMessage]]]" = \
            collections.OrderedDict()

    def _overhead(self, ctx: Any, messages: Sequence[ModelMessage]) -> int:
        last = next((m for m in reversed(messages) if isinstance(m, ModelRequest)), None)
        instructions = getattr(last, "instructions", None) if last is not None else None
        tools = tool_schemas(_tool_defs(ctx)) or self.tools
        return self._overheads(instructions or None, tools or None, self.config)

    def __call__(self, ctx: RunContext[Any], messages: List[ModelMessage]) -> List[ModelMessage]:
        conv = _conversation(self.conversation_id, ctx)
        cfg = self.config if "overhead_tokens" in self.config else \
            {**self.config, "overhead_tokens": self._overhead(ctx, messages)}
        if self.ahead:
            return self._ahead(conv, ctx, messages, cfg)
        sent, origin = to_clipfold(messages)
        usage = usage_of(messages, origin)
        # count_context pays for the messages new since the last request
        # only; compress, which reads them all, runs when it is due.
        if not self.compactor.count_context(conv, sent, usage=usage, config=cfg, shape=SHAPE)["due"]:
            return messages
        r = self.compactor.compress(conv, sent, caller_owned=True, only_if_due=True, shape=SHAPE, config=cfg,
                                    usage=usage)
        self.last_result = r
        if r["failed"] or (r["messages_compressed"] == 0 and len(r["history"]) == len(sent)
                           and all(raw_json(a) == raw_json(b) for a, b in zip(r["history"], sent))):
            return messages
        return from_clipfold(cast(List[JSONObject], r["history"]), messages, sent, origin,
                             getattr(ctx, "conversation_id", None))

    def _ahead(self, conv: str, ctx: Any, messages: List[ModelMessage], cfg: Config) -> List[ModelMessage]:
        """The history processor with ahead (see the class).

        The messages go back as they are unless a compaction was applied:
        the view compact_ahead keeps renders the clip-archive as the
        plug-in does, the messages as Pydantic AI holds it (in the request
        of the system prompts), and a new list every request would be a
        history that changed under the compaction under way. After one was
        applied, compact_ahead knows the compacted list from the next
        request on; but a compaction it started at the same request (still
        over the soft threshold) was made of the list before, so until it
        is applied the adapter gives it that list and what came after
        (the messages it was made from, resent: its view is the same)."""
        full, resent = messages, False
        known = self._lists.get(conv)
        if known is not None and known[0] is not known[1]:
            base, returned = known
            n = len(returned)
            if len(messages) >= n and all(a is b for a, b in zip(messages, returned)):
                full, resent = base + messages[n:], True
        sent, origin = to_clipfold(full)
        # A usage counts what the model was sent: the list returned, not the one resent.
        usage = None if resent else usage_of(full, origin)
        a = self.compactor.compact_ahead(conv, sent, caller_owned=True, shape=SHAPE, config=cfg, usage=usage,
                                         target_share=0)
        self.last_ahead = a
        r = a["compaction"]
        out, base = messages, full if resent else messages
        if r is not None:
            self.last_result = r
            if not r["failed"]:
                out = from_clipfold(cast(List[JSONObject], a["history"]), full, sent, origin,
                                    getattr(ctx, "conversation_id", None))
                base = full if a["started"] else out
        self._lists[conv] = (base, out)
        self._lists.move_to_end(conv)
        while len(self._lists) > _MAX_CONVERSATIONS:
            self._lists.popitem(last=False)
        return out


def memory_read_tool(compactor: Compactor, *, conversation_id: ConversationID = None, limit: int = 10,
                     max_tokens: int = DEFAULT_MEMORY_READ_TOKENS, name: str = "memory_read") -> Tool[Any]:
    """A Pydantic AI tool searching what clipfold archived
    (docs/spec.md#search, the tool the clip-archive points to) and what is still
    in the run's messages (``ctx.messages``, ranked with the archive for the
    call; hits "in your context"): ranked hits of the conversation
    (``conversation_id``, as for :class:`ClipfoldHistory`; ``""`` every
    conversation), within ``max_tokens`` (default 1,000) counted as the
    window is. Given an ``id``, it reads that message or summary."""

    def memory_read(ctx: RunContext[Any], query: str = "", id: str = "") -> str:
        """Search this conversation's memory: the archived earlier part (summaries and the original messages that
        were compacted away; the context summary says what is searchable) and what is still in your context.

        Args:
            query: what to look for, in plain words, e.g. 'what did we decide about the retry budget'.
            id: the id of a hit to read in full (with a query, the part about it).
        """
        conv = "" if conversation_id == "" else _conversation(conversation_id, ctx)
        if not id and not query.strip():
            return "Give a query (what to look for, in plain words) or the id of a hit to read."
        in_context = to_clipfold(ctx.messages)[0] if conv and ctx.messages else None
        try:
            return compactor.memory_read(query, conversation_id=conv, limit=limit, max_tokens=max_tokens,
                                         in_context=in_context, shape=SHAPE, id=id or None)["text"]
        except StoreError as e:  # not found, or an id of several conversations
            return str(e)
        except ClipfoldError as e:
            return "memory_read failed: %s" % e

    return Tool(memory_read, takes_ctx=True, name=name)
