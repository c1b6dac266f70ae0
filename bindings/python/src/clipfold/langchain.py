"""clipfold in LangChain v1 agents (``pip install "clipfold[langchain]"``).

- :class:`ClipfoldMiddleware`: an ``AgentMiddleware`` for
  ``create_agent(model, tools, middleware=[...])``, a drop-in for
  ``langchain.agents.middleware.SummarizationMiddleware`` (the same
  ``trigger``/``keep`` vocabulary): before every model call (tool loops
  included) it counts the request as the model will — the provider's
  usage of the last call, the system prompt and the tool schemas — and
  when due compacts the agent's messages with clipfold, sends the model
  the compacted list and replaces the state's as SummarizationMiddleware
  does (``RemoveMessage(REMOVE_ALL_MESSAGES)`` and the new list: the
  clip-archive, then the kept messages, the very objects the state held).
  With ``ahead=True`` it compacts ahead of time instead
  (docs/spec.md#compaction-ahead-of-time): the compaction starts in the
  background and a later model call applies it. The removed messages are
  not lost: they go to recall storage, searchable with
- :func:`memory_read_tool`: a LangChain tool that searches what was
  archived (docs/spec.md#search): summaries and the original messages.

Nothing here re-implements clipfold: the plug-in reads LangChain's message
dicts (``model_dump``), splits, keeps tool calls with their results,
summarizes and archives; this module speaks LangChain.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from . import _check
from ._messages import Prepared
from ._overhead import Overheads
from .compactor import DEFAULT_MEMORY_READ_TOKENS, Compactor
from .errors import ClipfoldError
from .store import StoreError
from .types import AheadResult, CompactionResult, Config, ContextUsage

__all__ = ["ChatModelLLM", "ClipfoldMiddleware", "ContextSize", "conversation_id_from_config", "memory_read_tool",
           "tool_schemas", "usage_from_messages"]

ContextSize = Tuple[str, Union[int, float]]
"""LangChain's ("tokens", n), ("messages", n) or ("fraction", f)."""

DEFAULT_CONVERSATION_ID = "default"
_DEFAULT_MESSAGES_TO_KEEP = 20  # SummarizationMiddleware's default keep


def conversation_id_from_config(default: str = DEFAULT_CONVERSATION_ID) -> str:
    """The conversation a LangGraph run belongs to: its ``thread_id``
    (``config={"configurable": {"thread_id": …}}``), else ``default``."""
    try:
        from langgraph.config import get_config
        cfg = get_config()
    except (ImportError, RuntimeError):
        return default
    tid = (cfg.get("configurable") or {}).get("thread_id")
    return str(tid) if tid not in (None, "") else default


def _conversation(conversation_id: Union[None, str, Callable[[], str]]) -> str:
    if callable(conversation_id):
        return str(conversation_id())
    return conversation_id or conversation_id_from_config()


class ChatModelLLM:
    """A LangChain chat model as clipfold's LLM (``llm_complete``): the
    ModelRequest's ``system`` and messages become LangChain messages, the
    model's text the summary. A failure is an LLM error object
    (docs/spec.md#model-requests-and-responses)
    (retryable, except a context overflow), never an exception."""

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model

    def __call__(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        return self.complete(request)

    def complete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        msgs: List[BaseMessage] = []
        if request.get("system"):
            msgs.append(SystemMessage(content=request["system"]))
        for m in request.get("messages") or []:
            role, content = m.get("role"), m.get("content") or ""
            msgs.append(AIMessage(content=content) if role == "assistant" else
                        SystemMessage(content=content) if role == "system" else HumanMessage(content=content))
        try:
            out = self.model.invoke(msgs)
        except Exception as e:  # noqa: BLE001 - reported to the plug-in, which fails safe
            overflow = type(e).__name__ == "ContextOverflowError"
            return {"error": {"code": "context_overflow" if overflow else "unavailable",
                              "message": "%s: %s" % (type(e).__name__, e), "retryable": not overflow}}
        usage = getattr(out, "usage_metadata", None) or {}
        return {"content": [{"type": "text", "text": out.text if isinstance(out, BaseMessage) else str(out)}],
                "stop_reason": "end_turn", "usage": {"input_tokens": int(usage.get("input_tokens") or 0),
                                                     "output_tokens": int(usage.get("output_tokens") or 0)}}


def usage_from_messages(messages: Sequence[Any]) -> Optional[ContextUsage]:
    """The provider's count of the last model call, read from the
    messages: the last ``AIMessage`` (the answer to that call) and its
    ``usage_metadata["input_tokens"]``, for the messages before it (what
    that call was sent: the agent appends the answer to the list it sent).
    None when the last answer carries no usage. An earlier answer's usage
    is not used: a compaction since may have changed what came before it."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AIMessage):
            n = m.usage_metadata.get("input_tokens") if m.usage_metadata else None
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                return {"input_tokens": n, "messages": i}
            return None
    return None


def tool_schemas(tools: Sequence[Any]) -> List[Any]:
    """The tools of a model request as the JSON schemas a provider is sent
    (LangChain's ``convert_to_openai_tool``; a dict as it is), for
    :meth:`~clipfold.Compactor.overhead_tokens`."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out: List[Any] = []
    for t in tools or []:
        if isinstance(t, Mapping):
            out.append(dict(t))
            continue
        try:
            out.append(convert_to_openai_tool(t))
        except Exception:  # noqa: BLE001 - a tool LangChain cannot describe still costs its name
            out.append({"name": str(getattr(t, "name", t)), "description": str(getattr(t, "description", ""))})
    return out


class _Overhead(Overheads):
    """The overhead_tokens of model requests (system prompt and LangChain
    tools, as the schemas a provider is sent), remembered."""

    def __call__(self, system: Optional[str], tools: Sequence[Any], config: Optional[Config]) -> int:
        return super().__call__(system, tool_schemas(tools), config)


def _max_input_tokens(model: Optional[BaseChatModel]) -> Optional[int]:
    profile = getattr(model, "profile", None) if model is not None else None
    n = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _check_size(size: Any, name: str) -> ContextSize:
    """SummarizationMiddleware's validation of a ContextSize."""
    if not isinstance(size, tuple) or len(size) != 2:
        raise ValueError("%s must be a (kind, value) tuple such as ('messages', 20), got %r" % (name, size))
    kind, value = size
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s value must be a number, got %r" % (name, value))
    if kind == "fraction":
        if not 0 < value <= 1:
            raise ValueError("Fractional %s values must be between 0 and 1, got %s." % (name, value))
    elif kind in ("tokens", "messages"):
        if value <= 0 or (kind == "messages" and not isinstance(value, int)):
            raise ValueError("%s thresholds must be integers greater than 0, got %s." % (name, value))
    else:
        raise ValueError("Unsupported context size type %s for %s." % (kind, name))
    return (kind, value)


def _trigger_clauses(trigger: Any) -> List[Dict[str, Union[int, float]]]:
    """SummarizationMiddleware's trigger forms as clauses: a tuple, a dict
    (every threshold met: AND) or a list of either (any: OR)."""
    if trigger is None:
        return []
    items = trigger if isinstance(trigger, list) else [trigger]
    out = []
    for item in items:
        if isinstance(item, tuple):
            kind, value = _check_size(item, "trigger")
            out.append({kind: value})
        elif isinstance(item, Mapping):
            if not item:
                raise ValueError("trigger clause must specify at least one of 'tokens', 'messages', 'fraction'")
            out.append({k: _check_size((k, v), "trigger")[1] for k, v in item.items()})
        else:
            raise TypeError("Unsupported trigger item type: %s" % type(item))
    return out


class _Policy:
    """LangChain's trigger/keep vocabulary read onto clipfold's config."""

    def __init__(self, compactor: Compactor, model: Optional[BaseChatModel], trigger: Any, keep: Any,
                 token_counter: Optional[Callable[[Sequence[BaseMessage]], int]], config: Optional[Config]) -> None:
        self.compactor = compactor
        self.max_input = _max_input_tokens(model)
        self.clauses = _trigger_clauses(trigger)
        self.keep = _check_size(keep, "keep")
        self.token_counter = token_counter
        needs_profile = any("fraction" in c for c in self.clauses) or self.keep[0] == "fraction"
        if needs_profile and self.max_input is None:
            raise ValueError("Model profile information is required to use fractional token limits: pass a model "
                             "whose profile has max_input_tokens, or use absolute token counts")
        cfg: Config = dict(config or {})
        kind, value = self.keep
        # keep ("tokens", n) counts the messages, as SummarizationMiddleware
        # does: the target of a request grows by what it sends beside them.
        self.keeps_tokens = kind != "messages" and "target_tokens" not in cfg
        if kind == "messages":
            cfg.setdefault("keep_recent", int(value))
        else:
            cfg.setdefault("target_tokens", max(1, int(value if kind == "tokens" else value * (self.max_input or 0))))
        if self.max_input is not None:
            cfg.setdefault("model_max_tokens", self.max_input)
        self.config = cfg

    def request_config(self, overhead: int) -> Config:
        """The config of a request that sends overhead tokens beside its
        messages (system prompt, tool schemas): overhead_tokens, unless the
        config sets it, and a keep in tokens that many more."""
        if "overhead_tokens" in self.config:
            return self.config
        cfg = {**self.config, "overhead_tokens": overhead}
        if self.keeps_tokens:
            cfg["target_tokens"] += overhead
        return cfg

    def tokens(self, messages: Sequence[BaseMessage], key: str) -> int:
        """The messages' tokens (without the system prompt and tools, as
        SummarizationMiddleware counts): the token_counter's, else the
        plug-in's estimate, made by count_context (under ``key``: the
        messages new since the last call only, and never behind a
        compaction under way)."""
        if self.token_counter is not None:
            return int(self.token_counter(messages))
        return int(self.compactor.count_context(key, messages, config={**self.config, "overhead_tokens": 0})["tokens"])

    def due(self, messages: Sequence[BaseMessage], key: str = "") -> Optional[bool]:
        """Whether a trigger is met (SummarizationMiddleware's rule: a
        threshold is met at or above it); None when no trigger is set
        (then clipfold's own budget decides: only_if_due). ``key``: the
        conversation's, for the count."""
        if not self.clauses:
            return None
        total: Optional[int] = None
        for clause in self.clauses:
            met = True
            for kind, value in clause.items():
                if kind == "messages":
                    met = len(messages) >= value
                else:
                    if total is None:
                        total = self.tokens(messages, "trigger\x00" + key)
                    limit = value if kind == "tokens" else max(1, int((self.max_input or 0) * value))
                    met = total >= limit
                if not met:
                    break
            if met:
                return True
        return False


class ClipfoldMiddleware(AgentMiddleware):
    """Context compaction for ``create_agent``, a drop-in for
    ``SummarizationMiddleware``::

        agent = create_agent(model, tools, middleware=[
            ClipfoldMiddleware(trigger=("tokens", 4000), keep=("messages", 20))])

    ``model`` (optional, a chat model or a model string for
    ``init_chat_model``): the model that writes summaries, as for
    SummarizationMiddleware, and whose profile (``max_input_tokens``)
    fractional limits and clipfold's budget use. Without it clipfold
    summarizes offline (its extractive summarizer). ``trigger``: when to
    compact — ``("tokens", n)``, ``("messages", n)``, ``("fraction", f)``,
    a dict of them (all met) or a list (any met), as SummarizationMiddleware
    reads it; None (the default) leaves it to clipfold's own budget
    (``context_budget`` × ``model_max_tokens``: compaction when due).
    ``keep``: what stays verbatim — ``("messages", n)`` is clipfold's
    ``keep_recent`` (default 20), ``("tokens", n)`` / ``("fraction", f)``
    its ``target_tokens`` (the whole compacted history, clip-archive
    included, fits n). Tokens are clipfold's estimate unless
    ``token_counter`` is given.

    The window is kept whatever the trigger: before every model call (the
    agent's tool loops included) clipfold also counts the request as the
    model will — the provider's usage of the last call (the last
    ``AIMessage``'s ``usage_metadata["input_tokens"]`` for the messages
    before it), the estimate of the messages after it, and without usage
    the request's system prompt and tool schemas (``overhead_tokens``) —
    and compacts when that is over ``context_budget`` ×
    ``model_max_tokens``.

    clipfold's own: ``compactor`` (a :class:`~clipfold.Compactor`; by
    default one with an in-memory store — pass one with a file store to keep
    the archive), ``config`` (``[summarization]`` keys), ``conversation_id``
    (a string or a callable; default: the run's ``thread_id``),
    ``caller_owned`` (default True: the agent's state owns the messages; the
    store keeps the archive and each removed message once), and
    ``memory_read=True`` to register :func:`memory_read_tool` with the agent.

    ``ahead=True``: compaction ahead of time (:meth:`Compactor.compact_ahead`,
    docs/spec.md#compaction-ahead-of-time). Over the soft threshold
    (``prepare_at`` of clipfold's budget, 0.7 by default) the compaction
    starts in the background and the model call goes on with the messages
    as they are; a later model call that finds it done applies it (the
    messages that came meanwhile after the clip-archive) and replaces the
    state as above. A call waits only when the request reaches clipfold's
    budget first, and then only for the rest of the work under way: what
    the model is sent fits the budget as without it. ``keep`` as without
    it; a keep in tokens is where the history lands once the compaction is
    applied, the messages that came meanwhile included (the compaction
    itself goes that much lower). A met ``trigger`` still compacts at once,
    before the call: it says when to compact, and compaction ahead of time
    prepares for clipfold's budget alone (leave it None for no wait).
    ``last_ahead``: the last call's :class:`~clipfold.types.AheadResult`
    (``waited_ms``: how long it waited).

    The compacted state is ``[clip-archive, …kept]``: the clip-archive a
    ``SystemMessage`` (LangChain's dict shape, as the plug-in renders it),
    the kept messages the very objects the state held, tool calls always
    with their results. A compaction that fails changes nothing (the
    result's ``failure_code`` is kept in ``last_result``).
    """

    def __init__(self, model: Union[None, str, BaseChatModel] = None, *, trigger: Any = None,
                 keep: ContextSize = ("messages", _DEFAULT_MESSAGES_TO_KEEP),
                 token_counter: Optional[Callable[[Sequence[BaseMessage]], int]] = None,
                 compactor: Optional[Compactor] = None, config: Optional[Config] = None,
                 conversation_id: Union[None, str, Callable[[], str]] = None, caller_owned: bool = True,
                 memory_read: bool = False, ahead: bool = False) -> None:
        super().__init__()
        self.ahead = _check.boolean(ahead, "ahead")
        if isinstance(model, str):
            from langchain.chat_models import init_chat_model
            model = init_chat_model(model)
        self.model = model
        if compactor is None:
            compactor = Compactor(llm=ChatModelLLM(model) if model is not None else None)
        self.compactor = compactor
        self.policy = _Policy(compactor, model, trigger, keep, token_counter, config)
        self.conversation_id = conversation_id
        self.caller_owned = caller_owned
        self.last_result: Optional[CompactionResult] = None
        self.last_ahead: Optional[AheadResult] = None
        self.tools = [memory_read_tool(compactor, conversation_id=conversation_id)] if memory_read else []
        self._overhead = _Overhead(compactor)

    @property
    def name(self) -> str:
        return "ClipfoldMiddleware"

    def compact(self, messages: Sequence[BaseMessage], conversation_id: Optional[str] = None, *,
                system: Optional[str] = None, tools: Sequence[Any] = ()) -> Optional[List[Any]]:
        """The compacted messages, or None when nothing changes (not due,
        nothing to compress, or a compaction that failed safely).
        ``system`` and ``tools``: the model request's system prompt and
        tools, counted as ``overhead_tokens``."""
        cfg = self.policy.request_config(self._overhead(system, tools, self.policy.config))
        usage = usage_from_messages(messages)
        conv = conversation_id or _conversation(self.conversation_id)
        due = self.policy.due(messages, conv)
        if self.ahead and due is not True:
            return self._compact_ahead(conv, messages, cfg, usage)
        # count_context: the turn pays for its new messages only.
        if due is not True and not self.compactor.count_context(conv, messages, usage=usage, config=cfg)["due"]:
            return None  # neither the trigger nor clipfold's budget
        r = self.compactor.compress(conv, list(messages), caller_owned=self.caller_owned, only_if_due=due is not True,
                                    config=cfg, usage=usage)
        self.last_result = r
        if r["failed"] or r["messages_compressed"] == 0:
            return None
        return list(r["history"])

    def _compact_ahead(self, conv: str, messages: Sequence[BaseMessage], cfg: Config,
                       usage: Optional[ContextUsage]) -> Optional[List[Any]]:
        """compact, with ahead and no trigger met (see the class)."""
        c = self.compactor
        r = c.compact_ahead(conv, list(messages) if self.caller_owned else messages, caller_owned=self.caller_owned,
                            config=cfg, usage=usage, target_share=0)
        self.last_ahead = r
        comp = r["compaction"]
        if comp is not None:
            self.last_result = comp
        if comp is None or comp["failed"] or comp["messages_compressed"] == 0:
            return None
        if self.caller_owned:
            return list(r["history"])
        # The store's messages: the state's objects, and the clip-archive a new one.
        return Prepared(messages).restore(r["history"], c._ids_of(conv, None))

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        new = self.compact(request.messages, system=_text(request.system_message), tools=request.tools)
        if new is None:
            return handler(request)
        return _replacing_state(new, handler(request.override(messages=new)))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        # The plug-in call blocks (Extism is synchronous): off the event loop.
        conv = _conversation(self.conversation_id)
        new = await asyncio.to_thread(self.compact, request.messages, conv, system=_text(request.system_message),
                                      tools=request.tools)
        if new is None:
            return await handler(request)
        return _replacing_state(new, await handler(request.override(messages=new)))


def _text(message: Optional[BaseMessage]) -> Optional[str]:
    return message.text if message is not None else None


def _replacing_state(new: List[Any], response: Any) -> ExtendedModelResponse[Any]:
    """The model's response to the compacted request, and the state
    update that replaces the agent's messages with the compacted list and
    the response (the answer follows what the model was sent, so its
    usage counts those messages)."""
    if not isinstance(response, ModelResponse):
        response = ModelResponse(result=[response])
    return ExtendedModelResponse(model_response=response, command=Command(update={
        "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new, *response.result]}))


def memory_read_tool(compactor: Compactor, *, conversation_id: Union[None, str, Callable[[], str]] = None,
                     limit: int = 10, max_tokens: int = DEFAULT_MEMORY_READ_TOKENS,
                     name: str = "memory_read") -> BaseTool:
    """A LangChain tool searching what clipfold archived
    (memory_read, docs/spec.md#search: the tool the clip-archive points to) and what is still
    in the agent's context: the summaries and the original messages of the
    conversation (``conversation_id``; default the run's ``thread_id``;
    ``""`` every conversation), ranked, best first, and the messages of the
    agent's state (the caller-owned context, ranked with them for the call;
    hits "in your context"). The answer fits ``max_tokens`` (default 1,000,
    counted as the window is, by the plug-in's buildMemoryRead): whole hits
    first, then the best passage of the next, then what was left out and
    how to read it. Given an ``id`` instead, it reads that message or
    summary, within the same budget (its passage about ``query`` when it
    is longer)."""

    def memory_read(query: str = "", id: str = "", runtime: ToolRuntime = None) -> str:  # type: ignore[assignment]
        conv = "" if conversation_id == "" else _conversation(conversation_id)
        if not id and not query.strip():
            return "Give a query (what to look for, in plain words) or the id of a hit to read."
        state = getattr(runtime, "state", None)
        in_context = state.get("messages") if conv and isinstance(state, Mapping) else None
        try:
            return compactor.memory_read(query, conversation_id=conv, limit=limit, max_tokens=max_tokens,
                                         in_context=in_context, id=id or None)["text"]
        except StoreError as e:  # not found, or an id of several conversations
            return str(e)
        except ClipfoldError as e:
            return "memory_read failed: %s" % e

    return StructuredTool.from_function(
        memory_read, name=name,
        description="Search this conversation's memory: the archived earlier part (summaries and the original "
                    "messages that were compacted away; the context summary says what is searchable) and what is "
                    "still in your context. Ask in plain words, e.g. query='what did we decide about the retry "
                    "budget'; or pass the id of a hit to read it (with a query, the part about it).")
