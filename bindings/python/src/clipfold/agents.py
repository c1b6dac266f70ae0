"""clipfold in the OpenAI Agents SDK (``pip install "clipfold[agents]"``).

- :class:`ClipfoldSession`: a ``Session`` (``get_items``, ``add_items``,
  ``pop_item``, ``clear_session``) kept in clipfold's store, for
  ``Runner.run(agent, input, session=session)``. Its items are the SDK's
  Responses-shaped items, a shape the plug-in reads as they are: the store
  holds them as the conversation's active history, and each ``add_items``
  compacts it when clipfold's budget says it is due — the clip-archive
  first, then the newest items, function calls with their outputs — the
  items it removes moved to recall storage, searchable with
- :func:`memory_read_tool`: a ``FunctionTool`` searching what was archived
  and what the session holds (docs/spec.md#search).

The SDK reads a session once, when a run starts; within the run its tool
loop grows the model's input. ``session.call_model_input_filter``, given
to ``RunConfig(call_model_input_filter=…)``, keeps the window there too:
before every model call it counts the request as the model will (the
agent's instructions and tools as ``overhead_tokens``, the provider's
usage of the call before), compacts the session when due and sends the
model the session's view — what compaction left, and the items of the run
not yet added. With ``ahead=True`` the adapter compacts ahead of time
(docs/spec.md#compaction-ahead-of-time): the compaction starts in the
background and a later check applies it to the store.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence

from agents import FunctionTool, RunContextWrapper, function_tool
from agents.models.fake_id import FAKE_RESPONSES_ID
from agents.run_config import CallModelData, ModelInputData

from .compactor import DEFAULT_MEMORY_READ_TOKENS, Compactor
from .errors import ClipfoldError
from . import _check
from ._overhead import Overheads
from .store import StoreError, format_time, new_id, raw_json
from .types import AheadResult, CompactionResult, Config, ContextUsage
from .wire import strip

__all__ = ["ClipfoldSession", "memory_read_tool", "tool_schemas"]

JSONObject = Dict[str, Any]
SHAPE = "responses"
_CLIP = "clip_"  # the id of the clip-archive's row (docs/spec.md#derived-ids)
_PLACEHOLDER = "agents_sdk_id"
"""Where a stored item keeps the SDK's placeholder id (``__fake_id__``,
which the items of its Chat Completions models all carry): not under
``id``, which the plug-in reads as the message's id (unique), but given
back under it (the SDK's own converter wants an output message's id)."""


def _item(item: Any, field: str) -> JSONObject:
    """An item as the JSON object it is (the SDK's items are dicts; a
    pydantic model of the openai package is dumped)."""
    if isinstance(item, dict):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json", exclude_unset=True))
    raise ClipfoldError("invalid_input", "%s: must be a Responses input item (a dict), got %s" % (
        field, type(item).__name__), field)


def _presented(row_id: str, raw: str) -> JSONObject:
    """A stored item as the session gives it back: without the time it was
    added (the API takes no ``created_at``), and the clip-archive a user
    turn (``{"role": "user", "content": …}``), so the first item that is
    not a system message is a user turn whatever compaction kept."""
    d = json.loads(raw)
    if row_id.startswith(_CLIP):
        content = d.get("content")
        text = content if isinstance(content, str) else "\n".join(
            str(p.get("text") or "") for p in content or [] if isinstance(p, dict))
        return {"role": "user", "content": text}
    out = strip(d, ("created_at", _PLACEHOLDER))
    if _PLACEHOLDER in d:
        out["id"] = d[_PLACEHOLDER]
    return out


def _canonical(item: JSONObject) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def tool_schemas(tools: Sequence[Any]) -> List[JSONObject]:
    """An agent's tools as the schemas a provider is sent (a function
    tool's name, description and parameters; another tool its name), for
    :meth:`~clipfold.Compactor.overhead_tokens`."""
    out: List[JSONObject] = []
    for t in tools or []:
        schema = getattr(t, "params_json_schema", None)
        entry: JSONObject = {"name": str(getattr(t, "name", type(t).__name__))}
        if getattr(t, "description", None):
            entry["description"] = str(t.description)
        if isinstance(schema, dict):
            entry["parameters"] = schema
        out.append(entry)
    return out


class ClipfoldSession:
    """An Agents SDK session whose history clipfold compacts::

        session = ClipfoldSession("conversation-1", Compactor(store="agent.db"),
                                  config={"model_max_tokens": 100_000})
        result = await Runner.run(agent, "…", session=session,
                                  run_config=RunConfig(call_model_input_filter=session.call_model_input_filter))

    ``session_id`` is clipfold's conversation id. ``compactor``: its store
    keeps the items (pass one with a file store to keep them across
    processes; default in memory). ``config``: clipfold's
    ``[summarization]`` keys (``model_max_tokens``, ``keep_recent``, …).
    ``session_settings``: the SDK's ``SessionSettings`` (its ``limit``).

    ``add_items`` stores the items — each under its own ``id`` (``fc_…``,
    ``msg_…``) or, for one without (or with the SDK's placeholder
    ``__fake_id__``, or an id the session already holds), one the session
    gives it — and compacts when due. ``pop_item`` and ``clear_session``
    take items out of the history the session gives; they stay in recall
    storage, as everything compaction removes does: nothing is lost.
    ``last_result``: the last CompactionResult.

    ``ahead=True``: compaction ahead of time (:meth:`Compactor.compact_ahead`,
    store-owned; docs/spec.md#compaction-ahead-of-time). Over the soft
    threshold (``prepare_at`` of the budget, 0.7 by default) the
    compaction of the stored history starts in the background and
    ``add_items`` or the model call goes on; a later one that finds it done
    commits it to the store, the items added meanwhile after the
    clip-archive (an item it covered that ``pop_item`` or
    ``clear_session`` took out meanwhile drops it: nothing is lost). A
    check waits only when the history reaches the budget first, and then
    only for the rest of the work under way: what the model is sent fits
    the budget as without it. ``keep_recent`` as without it; a
    ``target_tokens`` is where the history lands once the compaction is
    applied, the items that came meanwhile included (the compaction itself
    goes that much lower). ``last_ahead``: the last check's
    :class:`~clipfold.types.AheadResult`.
    """

    session_settings: Any = None

    def __init__(self, session_id: str, compactor: Optional[Compactor] = None, *, config: Optional[Config] = None,
                 session_settings: Any = None, ahead: bool = False) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ClipfoldError("invalid_input", "session_id: must be a non-empty string, got %r" % (session_id,),
                                "session_id")
        self.ahead = _check.boolean(ahead, "ahead")
        self.last_ahead: Optional[AheadResult] = None
        self.session_id = session_id
        self.compactor = compactor if compactor is not None else Compactor()
        self.config: Config = dict(config or {})
        self.session_settings = session_settings
        self.last_result: Optional[CompactionResult] = None
        self._overhead: Optional[int] = None
        self._overheads = Overheads(self.compactor)
        # What the run's input holds of the adapter's items: what get_items
        # gave and those added since (as stored), and the ids of the view
        # the last model call was sent (for its usage).
        self._given: List[JSONObject] = []
        self._added: List[JSONObject] = []
        self._sent_ids: Optional[List[str]] = None
        self._sent_tokens: Optional[int] = None

    # ------------------------------------------------------------ Session
    def _rows(self) -> List[Any]:
        return self.compactor.store.active_rows(self.session_id)

    def items(self) -> List[JSONObject]:
        """The session's history as ``get_items`` gives it."""
        return [_presented(i, raw) for i, raw in self._rows()]

    async def get_items(self, limit: Optional[int] = None, wrapper: Any = None) -> List[Any]:
        items = await asyncio.to_thread(self.items)
        if limit is None:
            self._given, self._added = list(items), []
            return list(items)
        return items[-limit:] if limit > 0 else []

    def _append(self, items: Sequence[Any]) -> List[JSONObject]:
        """Stores items after the active history (see the class for their
        ids); returns them as the session gives them back."""
        objs = [_item(x, "items[%d]" % k) for k, x in enumerate(items)]
        for o in objs:
            if o.get("id") == FAKE_RESPONSES_ID:  # the SDK's placeholder, never an identity
                o[_PLACEHOLDER] = o.pop("id")
        own = [o["id"] for o in objs if isinstance(o.get("id"), str) and o["id"]]
        held = self.compactor.store.known_ids(self.session_id, own) if own else set()
        now = format_time(datetime.now(timezone.utc))
        rows = []
        decoded = self.compactor.decode_history(self.session_id, [{k: v for k, v in o.items() if k != "id"}
                                                                  for o in objs], shape=SHAPE)["messages"]
        for o, d in zip(objs, decoded):
            mid = o.get("id")
            if not isinstance(mid, str) or not mid or mid in held:
                o.pop("id", None)
                mid = new_id("item_")
            held.add(mid)
            stored = {**o, "created_at": now}
            rows.append((mid, d["role"], d["content"], now, raw_json(stored)))
        self.compactor.store.append_rows(self.session_id, rows)
        return [_presented("", raw_json(o)) for o in objs]

    def _record_usage(self, wrapper: Any) -> None:
        """Keeps the provider's count of the run's last model call (the
        run context's last request usage), for the view that call was sent."""
        entries = getattr(getattr(wrapper, "usage", None), "request_usage_entries", None)
        n = getattr(entries[-1], "input_tokens", None) if entries else None
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            self._sent_tokens = n

    def _usage(self) -> Optional[ContextUsage]:
        """That count, for the active history's first messages, while they
        are still the ones that call was sent."""
        if self._sent_ids is None or self._sent_tokens is None:
            return None
        if [i for i, _ in self._rows()][:len(self._sent_ids)] != self._sent_ids:
            return None
        return {"input_tokens": self._sent_tokens, "messages": len(self._sent_ids)}

    def compact(self, usage: Optional[ContextUsage] = None) -> Optional[CompactionResult]:
        """Compacts the session's history when clipfold's budget says it is
        due (with ``ahead``: applies or starts a compaction ahead of time);
        the CompactionResult, or None when nothing was due (or applied)."""
        cfg = self.config
        if self._overhead is not None and "overhead_tokens" not in cfg:
            cfg = {**cfg, "overhead_tokens": self._overhead}
        if self.ahead:
            a = self.compactor.compact_ahead(self.session_id, None, shape=SHAPE, config=cfg, usage=usage,
                                             target_share=0)
            self.last_ahead = a
            if a["compaction"] is None:
                return None
            r = a["compaction"]
        else:
            r = self.compactor.compress(self.session_id, None, only_if_due=True, shape=SHAPE, config=cfg, usage=usage)
        self.last_result = r
        return r if r["messages_compressed"] or r["failed"] else None

    async def add_items(self, items: List[Any], wrapper: Any = None) -> None:
        def run() -> None:
            self._record_usage(wrapper)
            self._added += self._append(items)
            self.compact(self._usage())
        await asyncio.to_thread(run)

    def _remove(self, ids: List[str]) -> None:
        if ids:
            self.compactor.store.commit({"conversation_id": self.session_id, "operation_id": new_id("op_"),
                                         "remove_message_ids": ids, "insert_message": None})

    async def pop_item(self, wrapper: Any = None) -> Optional[Any]:
        def run() -> Optional[JSONObject]:
            rows = self._rows()
            if not rows:
                return None
            self._remove([rows[-1][0]])
            return _presented(*rows[-1])
        return await asyncio.to_thread(run)

    async def clear_session(self, wrapper: Any = None) -> None:
        await asyncio.to_thread(lambda: self._remove([i for i, _ in self._rows()]))
        self._given, self._added = [], []

    # ------------------------------------------------------------ the run's model calls
    def _tail(self, items: List[Any]) -> Optional[List[Any]]:
        """The items of the input after what the adapter gave and was
        given (not added yet), or None when the input is not that."""
        known = self._given + self._added
        if len(items) < len(known):
            return None
        for k, (a, b) in enumerate(zip(items, known)):
            if _canonical(_item(a, "input[%d]" % k)) != _canonical(b):
                return None
        return items[len(known):]

    def filter_input(self, input: List[Any], instructions: Optional[str], tools: Sequence[Any] = ()) -> List[Any]:
        """The model input for a call of the adapter's run (see the
        module): the session's view, compacted first when due, then the
        run's items not added yet; the input as it is when it does not
        begin with what the adapter gave and was given."""
        self._overhead = self._overheads(instructions or None, tool_schemas(tools) or None, self.config)
        tail = self._tail(list(input))
        if tail is None:
            return list(input)
        self.compact(self._usage())
        rows = self._rows()
        self._sent_ids, self._sent_tokens = ([i for i, _ in rows] if not tail else None), None
        return [_presented(i, raw) for i, raw in rows] + tail

    async def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig(call_model_input_filter=session.call_model_input_filter)``:
        :meth:`filter_input` before every model call of the run."""
        model_data = data.model_data
        tools = list(getattr(data.agent, "tools", None) or [])
        view = await asyncio.to_thread(self.filter_input, list(model_data.input), model_data.instructions, tools)
        return ModelInputData(input=view, instructions=model_data.instructions)


def memory_read_tool(session: ClipfoldSession, *, limit: int = 10, max_tokens: int = DEFAULT_MEMORY_READ_TOKENS,
                     name: str = "memory_read") -> FunctionTool:
    """An Agents SDK function tool searching what clipfold archived of the
    session (docs/spec.md#search, the tool the clip-archive points to) and
    what the session still holds: ranked hits, within ``max_tokens``
    (default 1,000) counted as the window is; given an ``id``, that message
    or summary."""

    def read(query: str, id: str) -> str:
        try:
            return session.compactor.memory_read(query, conversation_id=session.session_id, limit=limit,
                                                 max_tokens=max_tokens, shape=SHAPE, id=id or None)["text"]
        except StoreError as e:  # not found
            return str(e)
        except ClipfoldError as e:
            return "memory_read failed: %s" % e

    async def memory_read(ctx: RunContextWrapper[Any], query: str = "", id: str = "") -> str:
        """Search this conversation's memory: the archived earlier part (summaries and the original messages that
        were compacted away; the context summary says what is searchable) and what is still in your context.

        Args:
            query: what to look for, in plain words, e.g. 'what did we decide about the retry budget'.
            id: the id of a hit to read in full (with a query, the part about it).
        """
        if not id and not query.strip():
            return "Give a query (what to look for, in plain words) or the id of a hit to read."
        return await asyncio.to_thread(read, query, id)

    return function_tool(memory_read, name_override=name)
