"""Compactor: the clipfold plug-in loaded with the Extism Python SDK."""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, cast

import extism

from ._host import HostContext, error_bytes, worker as _worker
from . import _check
from ._locate import WASM_ENV, find_wasm
from ._plugin import (ExportCaller as _ExportCaller, QueryAnalyzerPlugin, compile_plugin as _compile, export_caller,
                      search_query_input as _search_query_input)
from .errors import ClipfoldError
from .llm import Extractive, LLMCallable
from ._messages import Prepared, message_dict, same_messages
from .store import SQLiteStore, format_time, raw_json
from .types import (AheadResult, Batch, CompactionResult, Config, ContextUsage, MemoryRead, Message, ModelRequest,
                    ModelResponse, SearchHit, SearchQuery, ShouldCompactResult, SplitResult, VersionInfo)

MessageLike = Any
"""A message: a dict in any shape of docs/spec.md#message-shapes, or a LangChain message object."""

__all__ = ["Compactor", "DEFAULT_TARGET_SHARE", "QueryAnalyzerPlugin", "WASM_ENV", "find_wasm", "normalize_messages"]


_ahead_init = threading.Lock()


def _dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


DEFAULT_TARGET_SHARE = 0.8
DEFAULT_MEMORY_READ_TOKENS = 1000
"""memory_read's budget when none is given (the buildMemoryRead export's)."""
ACTIVE_INDEX_WINDOW = 65
"""How many messages before the appended ones the active history is
re-indexed over (SCHEMA.md, "messages"; core.ActiveIndexWindow): a
message's search text looks back 64 messages."""
"""The default target of :meth:`Compactor.compact_if_due`, a share of should_compact's limit."""


class _Held:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users = 0  # calls holding or waiting for the lock


class _ConversationLocks:
    """One lock per conversation id. A compaction holds its conversation's
    from reading the stored history to the commit, so compactions of one
    conversation on one Compactor run one after the other (each reads what
    the one before committed: none conflicts with another), while other
    conversations' run beside them. An entry lives while a call holds or
    waits for it."""

    def __init__(self) -> None:
        self._mu = threading.Lock()
        self._held: Dict[str, _Held] = {}

    @contextmanager
    def hold(self, conversation_id: str) -> Iterator[None]:
        with self._mu:
            h = self._held.get(conversation_id)
            if h is None:
                h = self._held[conversation_id] = _Held()
            h.users += 1
        try:
            with h.lock:
                yield
        finally:
            with self._mu:
                h.users -= 1
                if h.users == 0:
                    del self._held[conversation_id]


def _conversation_id(conversation_id: Any) -> str:
    if not isinstance(conversation_id, str) or not conversation_id:
        raise ClipfoldError("invalid_input", "conversation_id: must be a non-empty string", "conversation_id")
    return conversation_id


class Compactor:
    """clipfold through its WebAssembly plug-in.

    ``llm``: what answers ``llm_complete`` — a callable taking a ModelRequest
    dict and returning a ModelResponse dict or ``{"error": {...}}``, or an
    object with such a ``complete`` method (see :mod:`clipfold.llm`:
    ``OpenAICompatible``, ``Anthropic``, ``Extractive``). Default: offline —
    ``Extractive``; while it is the LLM, ``compress`` calls get
    ``summarizer: "extractive"`` (unless a config or ``manifest_config``
    sets ``summarizer``), so the plug-in summarizes itself, with dated
    lines and ``method: "extractive"`` batches, and never calls
    ``llm_complete``.

    ``store``: an :class:`~clipfold.store.SQLiteStore`, a path to open one
    at, or None for an in-memory one. It answers ``memory_list`` and
    ``compaction_commit``.

    ``config``: ``[summarization]`` keys sent with every call (a call's own
    ``config`` overrides them). ``manifest_config``: plug-in-wide defaults
    in the Extism manifest (values turned into strings).

    An instance keeps the per-conversation circuit breaker between calls.
    Threads may share one: plug-in calls are serialized by a lock, and the
    compactions of one conversation run one after the other, each reading
    the stored history the one before committed, so they never conflict.
    A compaction another process committed first is a result with
    ``failure_code: "commit_conflict"`` (it does not count toward the
    breaker). Use one Compactor per thread for parallel plug-in calls.
    """

    def __init__(self, wasm_path: Optional[Union[str, "os.PathLike[str]"]] = None, *,
                 llm: Optional[Union[LLMCallable, Any]] = None,
                 store: Optional[Union[SQLiteStore, str, "os.PathLike[str]"]] = None,
                 config: Optional[Config] = None,
                 manifest_config: Optional[Mapping[str, Any]] = None,
                 wasm: Optional[bytes] = None) -> None:
        _check.mapping(config, "config", "a dict of [summarization] keys")
        _check.json_text(config, "config")  # a NaN is named here, not read as an invalid token later
        _check.mapping(manifest_config, "manifest_config")
        if store is not None and not isinstance(store, SQLiteStore):
            _check.path_like(store, "store")
        if wasm is None:
            self.wasm_path: Optional[str] = os.fspath(wasm_path) if wasm_path else find_wasm()
            with open(self.wasm_path, "rb") as f:
                wasm = f.read()
        else:
            self.wasm_path = None
        self._compiled = _compile(wasm)
        mc = None
        if manifest_config:
            mc = {k: (json.dumps(v) if isinstance(v, bool) else _dumps(v) if isinstance(v, (list, dict)) else str(v))
                  for k, v in manifest_config.items()}
        self._manifest_config = mc
        self._plugin: Any = extism.Plugin(self._compiled, config=mc)
        self._lock = threading.RLock()
        self._busy = False
        self._conversations = _ConversationLocks()
        self._owns_store = not isinstance(store, SQLiteStore)
        self.store: SQLiteStore = store if isinstance(store, SQLiteStore) else SQLiteStore(store or ":memory:")
        self.config: Config = dict(config or {})
        self._aux = _ExportCaller(lambda: extism.Plugin(self._compiled, config=mc))
        if self.store.query_analyzer is None:
            self.store.query_analyzer = self.search_query
        if self.store.plugin is None:
            self.store.plugin = self._aux
        self.llm: Any = Extractive() if llm is None or (isinstance(llm, str) and llm == "extractive") else llm
        attach = getattr(self.llm, "attach_plugin", None)
        if callable(attach):
            attach(self._aux)
        self._exports: Dict[str, bool] = {}
        self._ahead: Any = None  # compact_ahead's state (clipfold._ahead.Ahead), made on first use

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Releases the plug-in instances (and the store, when this
        Compactor opened it)."""
        with self._lock:
            if self._plugin is not None:
                self._plugin.__del__()
                self._plugin = None
            self._aux.close()
            if self._owns_store:
                self.store.close()

    def __enter__(self) -> "Compactor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ low level
    def has_export(self, export: str) -> bool:
        """Whether the loaded plug-in exports ``export``."""
        if export not in self._exports:
            with self._lock:
                self._exports[export] = bool(self._plugin.function_exists(export))
        return self._exports[export]

    def _llm_complete(self, data: bytes) -> bytes:
        try:
            req = json.loads(data)
        except ValueError as e:
            return error_bytes("invalid_request", "llm_complete: input is not JSON: %s" % e)
        fn = self.llm.complete if hasattr(self.llm, "complete") else self.llm
        out = fn(req)
        if _isawaitable(out):  # an async LLM: awaited on the caller's event loop (see _await_llm)
            try:
                out = _await_llm(out, req.get("timeout_ms") if isinstance(req, dict) else None)
            except _LLMTimeout as e:
                return error_bytes("timeout", str(e), True)
        if isinstance(out, (bytes, bytearray)):
            return bytes(out)
        if isinstance(out, str):  # plain text: a successful completion
            out = {"content": [{"type": "text", "text": out}], "stop_reason": "end_turn"}
        if not isinstance(out, dict):
            return error_bytes("other", "llm_complete: the LLM returned %s, not a dict" % type(out).__name__)
        return _dumps(out).encode("utf-8")

    def _memory_list(self, data: bytes) -> bytes:
        return _dumps(self.store.host_memory_list(json.loads(data))).encode("utf-8")

    def _compaction_commit(self, data: bytes) -> bytes:
        return _dumps(self.store.host_compaction_commit(data)).encode("utf-8")

    def host_handlers(self) -> Dict[str, Callable[[bytes], bytes]]:
        """The host functions' handlers (bytes in, bytes out); override or
        wrap them to inject faults."""
        return {"llm_complete": self._llm_complete, "memory_list": self._memory_list,
                "compaction_commit": self._compaction_commit}

    def call(self, export: str, data: Union[bytes, str, Mapping[str, Any]],
             handlers: Optional[Dict[str, Callable[[bytes], bytes]]] = None) -> bytes:
        """Calls an export with raw input (bytes, text, or a dict to encode)
        and returns its raw output. A failure the export reports raises
        ClipfoldError with the export's error code."""
        if isinstance(data, Mapping):
            data = _check.json_text(data, "")
        if isinstance(data, str):
            data = data.encode("utf-8")
        with self._lock:
            if self._plugin is None:
                raise ClipfoldError("internal", "the Compactor is closed")
            if self._busy:
                raise ClipfoldError("internal", "re-entrant call: an LLM or store callback called the Compactor "
                                    "that is calling it")
            self._busy = True
            try:
                ctx = HostContext(handlers if handlers is not None else self.host_handlers())
                return bytes(self._plugin.call(export, data, host_context=ctx))
            except extism.Error as e:
                raise ClipfoldError.from_plugin_error(str(e)) from None
            finally:
                self._busy = False

    def _json(self, export: str, payload: Dict[str, Any]) -> Any:
        """A pure export's answer, from the second instance: no compaction
        occupies it (one under way in the background holds the first while
        it waits for its summarizer), so a count or a score never waits for
        one."""
        data = _check.json_text({k: v for k, v in payload.items() if v is not None}, "").encode("utf-8")
        if self._plugin is None:
            raise ClipfoldError("internal", "the Compactor is closed")
        return json.loads(self._aux(export, data))

    def _config(self, config: Optional[Config]) -> Optional[Config]:
        _check.mapping(config, "config", "a dict of [summarization] keys")
        if not self.config and not config:
            return None
        c = dict(self.config)
        c.update(config or {})
        return c

    # ------------------------------------------------------------ pure exports
    def score(self, messages: Sequence[MessageLike], config: Optional[Config] = None) -> List[float]:
        """Importance score of each message (docs/spec.md#score)."""
        out = self._json("score", {"messages": _plain(messages), "config": self._config(config)})
        return [float(x) for x in out["scores"]]

    def split(self, messages: Sequence[MessageLike], config: Optional[Config] = None) -> SplitResult:
        """to_compress (score order), to_keep, prior_summary."""
        return cast(SplitResult, self._json("split", {"messages": _plain(messages), "config": self._config(config)}))

    def chunk(self, messages: Sequence[MessageLike], config: Optional[Config] = None) -> List[List[Message]]:
        out = self._json("chunk", {"messages": _plain(messages), "config": self._config(config)})
        return cast(List[List[Message]], out["chunks"])

    def should_compact(self, messages: Sequence[MessageLike], config: Optional[Config] = None, *,
                       usage: Optional[ContextUsage] = None) -> ShouldCompactResult:
        """Whether ``messages`` are over the budget (``context_budget`` ×
        ``model_max_tokens``): the check before each model call.

        ``usage``: the provider's count of the last model call,
        ``{"input_tokens": N, "messages": K}`` — the request held the first
        K messages (with the system prompt and tools) and counted N. Those
        count N, only the rest is estimated, and ``overhead_tokens`` is not
        added. Without it every message is estimated and ``overhead_tokens``
        (see :meth:`overhead_tokens`) added."""
        return cast(ShouldCompactResult,
                    self._json("shouldCompact", {"messages": _plain(messages), "config": self._config(config),
                                                 "usage": _check.usage(usage)}))

    def estimate_tokens(self, text_or_messages: Union[str, Sequence[MessageLike]],
                        config: Optional[Config] = None) -> int:
        """The plug-in's estimate of a text, or of messages (tool calls and
        results, ``image_tokens`` per image, per-message framing), under the
        config's ``token_estimator`` (``config`` laid over this Compactor's)."""
        if isinstance(text_or_messages, str):
            out = self._json("estimateTokens", {"text": text_or_messages, "config": self._config(config)})
        else:
            out = self._json("estimateTokens", {"messages": _plain(text_or_messages), "config": self._config(config)})
        return int(out["tokens"])

    def overhead_tokens(self, system: Optional[str] = None, tools: Any = None, config: Optional[Config] = None) -> int:
        """What a model request sends beside its messages: the system prompt
        and the tool schemas (``tools``: any JSON value, such as the
        provider's tools list), as the plug-in's estimateTokens export counts
        them under this Compactor's config (``config`` laid over it: its
        ``token_estimator``). Pass it as the config key ``overhead_tokens``
        for counts made without the provider's usage (before the first
        model call)."""
        _check.optional_string(system, "system")
        parts: List[Dict[str, str]] = []
        if system:
            parts.append({"role": "system", "content": system})
        if tools is not None:
            text = _check.json_text(tools, "tools")
            if text not in ("[]", "{}", "null"):
                parts.append({"role": "system", "content": text})
        if not parts:
            return 0
        return int(self._json("estimateTokens", {"messages": parts, "config": self._config(config)})["tokens"])

    def build_summarization_request(self, messages: Sequence[MessageLike], previous_summary: Optional[str] = None,
                                    system_prompt: Optional[str] = None, model: Optional[str] = None,
                                    max_tokens: Optional[int] = None) -> ModelRequest:
        return cast(ModelRequest, self._json("buildSummarizationRequest", {
            "messages": _plain(messages), "previous_summary": previous_summary, "system_prompt": system_prompt,
            "model": model, "max_tokens": max_tokens}))

    def build_resummarization_request(self, batch_contents: Sequence[str], system_prompt: Optional[str] = None,
                                      model: Optional[str] = None, max_tokens: Optional[int] = None) -> ModelRequest:
        return cast(ModelRequest, self._json("buildResummarizationRequest", {
            "batch_contents": list(batch_contents), "system_prompt": system_prompt, "model": model,
            "max_tokens": max_tokens}))

    def build_clip_archive(self, batches: Sequence[Batch], total_messages_compressed: Optional[int] = None,
                           config: Optional[Config] = None) -> str:
        """The clip-archive text (seed 004's format)."""
        out = self._json("buildClipArchive", {"batches": list(batches), "config": self._config(config),
                                              "total_messages_compressed": total_messages_compressed})
        return str(out["content"])

    def provider_request(self, provider: str, request: ModelRequest) -> Dict[str, Any]:
        """{"url_path", "body"}: the provider's wire request (needs the export)."""
        return cast(Dict[str, Any], self._json("providerRequest", {"provider": provider, "request": request}))

    def provider_response(self, provider: str, status: int, body: Union[str, Mapping[str, Any]]) -> ModelResponse:
        return cast(ModelResponse, self._json("providerResponse", {"provider": provider, "status": status,
                                                                   "body": body}))

    def version(self) -> VersionInfo:
        return cast(VersionInfo, self._json("version", {}))

    # ------------------------------------------------------------ search
    def search_query(self, query: str, language: Optional[str] = None) -> SearchQuery:
        """The searchQuery export: a natural-language query analysed for the
        stores ({"terms", "fts5", "tsquery"}; empty strings: nothing to
        search for). Runs on a second instance, so it may be called while
        a compress is under way."""
        return cast(SearchQuery, json.loads(self._aux("searchQuery", _search_query_input(query, language))))

    def search(self, query: str, conversation_id: str = "", limit: int = 20,
               in_context: Optional[Sequence[Any]] = None, shape: Optional[str] = None) -> List[SearchHit]:
        """Ranked search of this Compactor's store (see SQLiteStore.search),
        the query analysed by this plug-in: what compaction archived and
        what is still in the context (hits with ``in_context`` True).

        ``in_context``: the messages in the model's context when the caller
        keeps them (caller-owned; any shape, LangChain objects too, as for
        :meth:`compress`): decoded by the plug-in with what the index holds
        for each and ranked with the store's documents for this search only
        (``conversation_id`` required). A store-owned conversation's active
        history is searched without it."""
        _check.string(conversation_id, "conversation_id")
        _check.whole_number(limit, "limit")
        rows = self._context_rows(conversation_id, in_context, shape) if in_context is not None else None
        return self.store.search_fts5(self.search_query(query)["fts5"], conversation_id, limit, rows)

    def _context_rows(self, conversation_id: str, messages: Sequence[Any], shape: Optional[str]) -> List[Dict[str, Any]]:
        """The caller's in-context messages as the store's search indexes
        them: the decodeHistory export with search_text."""
        if not conversation_id:
            raise _check.invalid("conversation_id", "a search with in_context messages needs the conversation they "
                                                    "are the context of")
        return list(self._decode(conversation_id, Prepared(messages, "in_context"), shape, search_text=True)["messages"])

    def build_memory_read(self, query: str, hits: Sequence[Mapping[str, Any]],
                          max_tokens: Optional[int] = None, by_id: bool = False) -> MemoryRead:
        """The buildMemoryRead export: ``hits`` (a search's, best first) as
        the answer of a memory_read tool call, within ``max_tokens``
        (default 1,000; at least 150) counted as the window is: ``{"text",
        "tokens", "whole", "passage", "left_out"}`` — whole hits first,
        then the best passage of the next, then what was left out and how to
        read it. ``by_id``: records the agent asked for by id (one over the
        budget is shown as its passage about ``query``)."""
        _check.string(query, "query")
        payload: Dict[str, Any] = {"query": query, "hits": list(hits)}
        if max_tokens is not None:
            payload["max_tokens"] = _check.whole_number(max_tokens, "max_tokens")
        if _check.boolean(by_id, "by_id"):
            payload["by_id"] = True
        cfg = self._config(None)
        if cfg is not None:
            payload["config"] = cfg
        return cast(MemoryRead, json.loads(self._aux("buildMemoryRead", _dumps(payload).encode("utf-8"))))

    def memory_read(self, query: str = "", conversation_id: str = "", limit: int = 20, max_tokens: Optional[int] = None,
                    in_context: Optional[Sequence[Any]] = None, shape: Optional[str] = None,
                    id: Optional[str] = None) -> MemoryRead:
        """What a memory_read tool call returns, within ``max_tokens``
        (default 1,000), as :meth:`build_memory_read` words it: the hits of
        :meth:`search` for ``query``; or, given an ``id``, that recalled
        message (its JSON as given) or archived summary (NotFoundError when
        neither exists), its passage about ``query`` when it is over the
        budget."""
        if id:
            rec = self.store.read(_check.string(id, "id"), conversation_id)
            hit: Dict[str, Any]
            if rec["kind"] == "message":
                m = rec["message"]
                hit = {"kind": "message", "id": id, "role": str(m.get("role") or ""),
                       "created_at": m.get("created_at") if isinstance(m.get("created_at"), str) else None,
                       "text": json.dumps(m, ensure_ascii=False)}
            else:
                b, meta = rec["block"], rec["block"].get("batch")
                hit = {"kind": "batch", "id": b["id"], "created_at": b["created_at"],
                       "text": meta["summary"] if meta else b["content"]}
                if meta:
                    hit.update(start_time=meta["start_time"], end_time=meta["end_time"],
                               source_message_ids=meta["source_message_ids"])
            return self.build_memory_read(query, [hit], max_tokens, by_id=True)
        return self.build_memory_read(query, self.search(query, conversation_id, limit, in_context, shape), max_tokens)

    # ------------------------------------------------------------ compress
    def _compress_config(self, config: Optional[Config]) -> Optional[Config]:
        """The config of a compress call. While the LLM is the offline
        ``Extractive`` (and neither the config nor the manifest chooses a
        summarizer), ``summarizer: "extractive"``: the plug-in summarizes
        itself, with dated lines and "extractive" batches, whichever host
        runs it. With a model summarizing, ``max_chunk_tokens: "auto"``
        unless ``chunk_size`` or ``max_chunk_tokens`` is set: chunks of what
        one summarization request holds."""
        cfg = self._config(config)
        set_here = {**(self._manifest_config or {}), **(cfg or {})}
        if isinstance(self.llm, Extractive):
            if "summarizer" not in set_here:
                cfg = dict(cfg or {})
                cfg["summarizer"] = "extractive"
        elif "chunk_size" not in set_here and "max_chunk_tokens" not in set_here:
            # A model summarizes: each request holds as much as it can, so a
            # compaction makes few calls (one after the other: each folds in
            # the summary before it).
            cfg = dict(cfg or {})
            cfg["max_chunk_tokens"] = "auto"
        return cfg

    def compress(self, conversation_id: str, history: Optional[Sequence[Any]] = None, *,
                 caller_owned: bool = False, only_if_due: bool = False, shape: Optional[str] = None,
                 config: Optional[Config] = None, dry_run: bool = False,
                 now: Optional[Union[str, datetime]] = None, operation_id: Optional[str] = None,
                 usage: Optional[ContextUsage] = None) -> CompactionResult:
        """Compacts a conversation (docs/spec.md#compress) and returns the CompactionResult,
        as the Go host's ``Compactor.Compress`` does.

        ``history``: the messages, in any shape of docs/spec.md#message-shapes (OpenAI Chat,
        Anthropic, OpenAI Responses, AI SDK, LangChain dicts) as dicts, or
        LangChain message objects. They are sent as they are: a message
        without an ``id`` gets the plug-in's derived id, one without
        ``created_at`` is dated at the compaction's ``now``, and the result's
        ``history`` holds the kept messages exactly as given (for LangChain
        objects, the very objects; the clip-archive a new message of the
        history's shape; its text is also ``result["clip_archive"]``).

        By default the store owns the history (docs/spec.md#who-owns-the-history, ``history_owner``
        "store"): the messages of ``history`` the store holds nowhere yet
        (neither active nor in recall; ids as the plug-in's
        ``decodeHistory`` export gives them) are appended to its active
        history, and the store's active history is compacted and returned
        — what the caller sent, less what earlier compactions moved to
        recall, behind their clip-archive. ``history=None`` compacts the
        store's active history.

        ``caller_owned=True``: the caller keeps the messages (LangChain,
        LangGraph, the provider SDKs); nothing of the list is stored, the
        removed messages are written to recall once each, by id, and the
        result's history is the compacted view to send to the model. Either
        pattern works: replace the list with the result's history and
        append to it, or send the whole list every turn (the same list gives
        the same view, nothing is summarized twice).

        ``only_if_due``: compact only when the history (caller-owned: its
        compacted view) is over the budget, as ``should_compact`` says — for
        a call on every turn. ``usage``: the provider's count of the last
        model call (see :meth:`should_compact`), for the first
        ``usage["messages"]`` messages of the history compacted: the
        caller's list when it owns it; else the store's active history (the
        caller's list when it sends back the result's history with the new
        messages appended). ``shape`` names the shape when the messages
        cannot tell (``"anthropic"`` for Anthropic text turns): chat,
        anthropic, responses, ai_sdk, langchain.

        A compaction that fails is not an exception: the result has
        ``failed: True``, a ``failure_code`` and the history unchanged.
        ClipfoldError is raised only for invalid input.

        Threads compacting the same conversation on this Compactor take
        turns (see the class); one that another process beat to the commit
        gets ``failure_code: "commit_conflict"``."""
        with self._conversations.hold(_conversation_id(conversation_id)):
            prepared, payload, _ = self._compress_payload(conversation_id, history, caller_owned, only_if_due, shape,
                                                          config, dry_run, now, operation_id, usage)
            result = cast(CompactionResult, json.loads(self.call("compress", payload)))
        if prepared is not None:
            result["history"] = prepared.restore(result["history"], self._ids_of(conversation_id, shape))
        return result

    def _ids_of(self, conversation_id: str, shape: Optional[str]) -> Callable[[List[Any]], List[str]]:
        def ids(history: List[Any]) -> List[str]:
            return [str(m["id"]) for m in self._decode(conversation_id, Prepared(history, "history"), shape)["messages"]]
        return ids

    def _compress_payload(self, conversation_id: str, history: Optional[Sequence[Any]], caller_owned: bool,
                          only_if_due: bool, shape: Optional[str], config: Optional[Config], dry_run: bool,
                          now: Optional[Union[str, datetime]], operation_id: Optional[str],
                          usage: Optional[ContextUsage]) -> Tuple[Optional[Prepared], str, List[str]]:
        """compress's input (JSON text), the Prepared history (None for the
        store's) and the JSON text of each message sent. Called holding the
        conversation's lock: what it reads is what the compaction commits
        against."""
        _check.boolean(caller_owned, "caller_owned")
        _check.boolean(only_if_due, "only_if_due")
        _check.boolean(dry_run, "dry_run")
        _check.optional_string(shape, "shape")
        _check.optional_string(operation_id, "operation_id")
        if now is not None and not isinstance(now, (str, datetime)):
            raise _check.invalid("now", "must be an RFC 3339 string or a datetime, got %s" % _check.describe(now))
        usage_dict = _check.usage(usage)
        cfg = self._compress_config(config)
        cfg_text = _check.json_text(cfg, "config") if cfg is not None else None  # checked before anything is stored
        prepared = Prepared(history, "history") if history is not None else None
        parts = ['{"conversation_id":', _dumps(conversation_id)]
        if caller_owned:
            if prepared is None:
                raise ClipfoldError("invalid_input", "history: a caller-owned compaction needs the caller's messages",
                                    "history")
            sent = prepared.raws
            parts += [',"history_owner":"caller","history":', prepared.array()]
        else:
            appended = self._sync(conversation_id, prepared, shape) if prepared is not None else 0
            rows = self.store.active_rows(conversation_id)
            self._index_active(conversation_id, rows, appended, shape)
            sent = [r[1] for r in rows]
            parts += [',"history":[', ",".join(sent), '],"history_ids":', _dumps([r[0] for r in rows])]
        if shape is not None:
            parts += [',"shape":', _dumps(shape)]
        if only_if_due:
            parts.append(',"only_if_due":true')
        if cfg_text is not None:
            parts += [',"config":', cfg_text]
        if dry_run:
            parts.append(',"dry_run":true')
        if now is not None:
            parts += [',"now":', _dumps(format_time(now) if isinstance(now, datetime) else now)]
        if operation_id is not None:
            parts += [',"operation_id":', _dumps(operation_id)]
        if usage_dict is not None:
            parts += [',"usage":', _dumps(usage_dict)]
        parts.append("}")
        return prepared, "".join(parts), sent

    def decode_history(self, conversation_id: str, history: Sequence[Any],
                       shape: Optional[str] = None) -> Dict[str, Any]:
        """The plug-in's decodeHistory export: ``{"shape", "messages": [{"id",
        "role", "content", "created_at"}]}``, one entry per message — the id
        given or derived (as compress derives it), clipfold's reading of the
        role, the text a store keeps, the time or None."""
        return self._decode(conversation_id, Prepared(history, "history"), shape)

    def _decode(self, conversation_id: str, prepared: Prepared, shape: Optional[str],
                search_text: bool = False) -> Dict[str, Any]:
        payload = '{"conversation_id":' + _dumps(conversation_id) + ',"history":' + prepared.array()
        if shape is not None:
            payload += ',"shape":' + _dumps(shape)
        if search_text:
            payload += ',"search_text":true'
        if self._plugin is None:
            raise ClipfoldError("internal", "the Compactor is closed")
        # On the second instance: a compaction of another conversation may
        # be running on the first, and this one need not wait to sync.
        return cast(Dict[str, Any], json.loads(self._aux("decodeHistory", (payload + "}").encode("utf-8"))))

    def _sync(self, conversation_id: str, prepared: Prepared, shape: Optional[str]) -> int:
        """Appends the messages the conversation holds nowhere (neither in
        its active history nor in its recall: ids are the caller's, unique
        within a conversation only), under the ids the plug-in's
        decodeHistory export gives them, in one store transaction
        (``append_new_rows``, as the Go host's sync): another process
        storing the same new messages at once appends each once, and
        neither fails. Returns how many it appended."""
        decoded = self._decode(conversation_id, prepared, shape)["messages"]
        appended = self.store.append_new_rows(conversation_id, [(d["id"], d["role"], d["content"], d["created_at"] or "",
                                                                 raw) for d, raw in zip(decoded, prepared.raws)])
        return len(appended)

    def _index_active(self, conversation_id: str, rows: Sequence[Tuple[str, str]], appended: int,
                      shape: Optional[str]) -> None:
        """Gives the active messages what the search index holds for them
        after ``appended`` of them were appended (SCHEMA.md, "messages"):
        the decodeHistory export's search_text over the stored active
        history's last ``appended + ACTIVE_INDEX_WINDOW`` messages, for the
        appended ones and the one before them, matched by position."""
        if appended <= 0 or not rows:
            return
        n = len(rows)
        index_from = max(0, n - appended - 1)
        window = rows[max(0, n - appended - ACTIVE_INDEX_WINDOW):]
        payload = '{"conversation_id":' + _dumps(conversation_id) + ',"history":[' + ",".join(r[1] for r in window) + "]"
        if shape is not None:
            payload += ',"shape":' + _dumps(shape)
        decoded = json.loads(self._aux("decodeHistory", (payload + ',"search_text":true}').encode("utf-8")))["messages"]
        first = n - len(window)
        texts = {rows[k][0]: decoded[k - first].get("search_text") for k in range(index_from, n)}
        # A plug-in older than decodeHistory's search_text gives none: the
        # messages stay indexed by their text.
        self.store.index_active(conversation_id, {k: v for k, v in texts.items() if isinstance(v, str)})

    def compact_if_due(self, conversation_id: str, history: Optional[Sequence[Any]] = None, *,
                       target_share: float = DEFAULT_TARGET_SHARE, config: Optional[Config] = None,
                       **compress_options: Any) -> Optional[CompactionResult]:
        """The agent loop's helper: compacts when the history is due (as
        ``should_compact`` says; a caller-owned one: its compacted view), and
        then to a target, not to ``keep_recent``: the history ends near
        ``target_share`` of the limit (default 0.8), with as many of the
        newest messages as fit kept verbatim (contiguous, tool calls with
        their results, pinned messages always) and only the older rest
        summarized — ``target_tokens`` = ⌊target_share × limit⌋. An explicit
        ``target_tokens`` in the config wins; ``target_share=0`` compacts to
        ``keep_recent``.

        ``history``: as for :meth:`compress` (None: the store's).
        ``compress_options`` go to :meth:`compress` (``caller_owned``,
        ``shape``, ``dry_run``, ``now``, ``operation_id``, ``usage``). Returns None when
        nothing changed — not due, and the history to send is the one given
        — else the CompactionResult (a failed compaction is a result, not an
        exception; a caller-owned list sent whole gets its compacted view
        back even when nothing new was due)."""
        if isinstance(target_share, bool) or not isinstance(target_share, (int, float)) \
                or not 0 <= target_share <= 1:
            raise _check.invalid("target_share", "must be a number in [0, 1], got %s" % _check.describe(target_share))
        compress_options.pop("only_if_due", None)
        cfg = self._config(config)
        over = dict(config or {})
        if target_share > 0 and "target_tokens" not in (cfg or {}):
            payload = '{"messages":[]' + (',"config":' + _check.json_text(cfg, "config") if cfg is not None else "") + "}"
            limit = int(json.loads(self._aux("shouldCompact", payload.encode("utf-8")))["limit"])
            over["target_tokens"] = max(1, int(target_share * limit))
        caller_owned = compress_options.pop("caller_owned", False)
        shape = compress_options.pop("shape", None)
        dry_run = compress_options.pop("dry_run", False)
        now = compress_options.pop("now", None)
        operation_id = compress_options.pop("operation_id", None)
        usage = compress_options.pop("usage", None)
        if compress_options:
            raise TypeError("compact_if_due: unexpected option(s) %s" % ", ".join(sorted(compress_options)))
        with self._conversations.hold(_conversation_id(conversation_id)):
            prepared, payload, sent = self._compress_payload(conversation_id, history, caller_owned, True, shape,
                                                             over or None, dry_run, now, operation_id, usage)
            result = cast(CompactionResult, json.loads(self.call("compress", payload)))
        if not result["failed"] and result["messages_compressed"] == 0 and same_messages(
                result["history"], [raw_json(json.loads(r)) for r in sent]):
            return None
        if prepared is not None:
            result["history"] = prepared.restore(result["history"], self._ids_of(conversation_id, shape))
        return result


    # ------------------------------------------------------------ the agent loop, ahead of time
    def _ahead_state(self) -> Any:
        # Not under self._lock: a compaction under way holds that one.
        with _ahead_init:
            if self._ahead is None:
                from ._ahead import Ahead
                self._ahead = Ahead(self)
            return self._ahead

    def compact_ahead(self, conversation_id: str, history: Optional[Sequence[Any]] = None, *,
                      caller_owned: bool = False, shape: Optional[str] = None, config: Optional[Config] = None,
                      usage: Optional[ContextUsage] = None, target_share: float = DEFAULT_TARGET_SHARE,
                      now: Optional[Union[str, datetime]] = None) -> AheadResult:
        """The agent loop's check before each model call, with compaction
        ahead of time (docs/spec.md#compaction-ahead-of-time): the agent
        never waits for a summarizer before the history reaches the limit.

        It counts the history as the model will see it, paying only for
        the messages new since the last call (see :meth:`count_context`).
        Over ``prepare_at`` of the limit (config, default 0.7), or sooner
        when the history grows fast enough to reach the limit before a
        compaction would be done, a compaction of the history as it is starts in a thread of its own — a dry run
        on this Compactor's first plug-in instance — and the call returns at
        once. A later call that finds it done applies it in one store
        commit: ``result["history"]`` is then the new clip-archive, the kept
        messages, and every message that came after the list it compacted,
        untouched. If the history changed under it (a message it summarized
        edited or removed, another compaction committed first) it is
        dropped (``result["discarded"]`` says why) and nothing is lost.
        Only when the history reaches the limit first does the call wait —
        for the rest of the work under way, or, with none, for a compaction
        run then (as :meth:`compact_if_due`).

        ``history``: as for :meth:`compress`. A caller-owned list is what
        the last call returned with what followed it appended, or the
        caller's whole list resent every turn. ``target_share``: as for
        :meth:`compact_if_due`; a compaction prepared ahead of time targets
        that share less the distance between the thresholds, so it frees as
        much as the one at the limit would: no more compactions, and no more
        summarizer calls, than without it. ``usage``: the provider's count
        of the last model call, for the first ``usage["messages"]``
        messages of what the model was sent (the history returned, then
        what followed it).

        Returns an :class:`~clipfold.types.AheadResult`. Thread-safe; the
        calls of one conversation take turns. An :class:`AsyncCompactor`
        runs it in its worker; the compaction under way has a thread of its
        own either way."""
        _conversation_id(conversation_id)
        _check.boolean(caller_owned, "caller_owned")
        _check.optional_string(shape, "shape")
        if isinstance(target_share, bool) or not isinstance(target_share, (int, float)) \
                or not 0 <= target_share <= 1:
            raise _check.invalid("target_share", "must be a number in [0, 1], got %s" % _check.describe(target_share))
        if now is not None and not isinstance(now, (str, datetime)):
            raise _check.invalid("now", "must be an RFC 3339 string or a datetime, got %s" % _check.describe(now))
        usage_dict = cast(Optional[ContextUsage], _check.usage(usage))
        return cast(AheadResult, self._ahead_state().turn(conversation_id, history, caller_owned, shape, config,
                                                          usage_dict, float(target_share), now))

    def count_context(self, key: str, messages: Sequence[MessageLike], *, usage: Optional[ContextUsage] = None,
                      config: Optional[Config] = None, shape: Optional[str] = None) -> ShouldCompactResult:
        """:meth:`should_compact`'s answer (with ``prepare_limit``), paying
        only for the messages new since the last call with the same
        ``key``: a history's count is the sum of its messages' counts, so
        a list that continues the last one (the same first message and the
        same message at the last one's end) adds the plug-in's count of its
        new messages alone; with ``usage``, the provider's count plus that
        of the messages after the ones it covered. Every count is the
        plug-in's (estimateTokens, on the second instance: a compaction
        under way never delays it). Under ``token_estimator: "chars4"`` the
        whole list is counted. Messages are taken as unchanged once counted,
        as agent frameworks keep them."""
        _check.string(key, "key")
        return cast(ShouldCompactResult, self._ahead_state().counter.count(key, messages, _check.usage(usage), config,
                                                                           _check.optional_string(shape, "shape")))




class _LLMTimeout(Exception):
    pass


async def _as_coroutine(aw: Awaitable[Any]) -> Any:
    return await aw


def _isawaitable(x: Any) -> bool:
    """inspect.isawaitable, with inspect (and the ast and tokenize modules
    it imports) loaded only for answers that are not plain values."""
    if isinstance(x, (dict, list, str, bytes)) or x is None:
        return False
    import inspect

    return inspect.isawaitable(x)


def _await_llm(aw: Awaitable[Any], timeout_ms: Any) -> Any:
    """The result of an awaitable an async LLM returned, from inside a
    plug-in call (a host function: it must answer synchronously).

    Under an AsyncCompactor the call runs in its worker thread: the
    awaitable is scheduled on the event loop that awaits the call and this
    thread waits for it. Under a plain Compactor in a thread with no running
    event loop it runs in a fresh one (``asyncio.run``). Either way the
    request's ``timeout_ms`` (the time left before the compaction's
    deadline) bounds it: past that it is cancelled and the answer is a
    retryable ``timeout``."""
    # Imported here: only async LLMs need them, and asyncio alone is a large
    # share of `import clipfold` (the Python cold start).
    import asyncio
    import concurrent.futures
    import inspect

    timeout: Optional[float] = None
    if isinstance(timeout_ms, (int, float)) and not isinstance(timeout_ms, bool):
        timeout = max(float(timeout_ms), 0.0) / 1000.0
    msg = "llm: no answer within %s s (the request's timeout_ms)" % timeout
    loop: Optional[asyncio.AbstractEventLoop] = getattr(_worker, "loop", None)
    if loop is not None:
        fut = asyncio.run_coroutine_threadsafe(_as_coroutine(aw), loop)
        try:
            return fut.result(timeout)
        except (concurrent.futures.TimeoutError, asyncio.TimeoutError):
            fut.cancel()
            raise _LLMTimeout(msg) from None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        try:
            return asyncio.run(asyncio.wait_for(_as_coroutine(aw), timeout))
        except asyncio.TimeoutError:
            raise _LLMTimeout(msg) from None
    if inspect.iscoroutine(aw):
        aw.close()  # never awaited: no "coroutine was never awaited" warning
    raise RuntimeError("the llm is async and this thread runs an event loop that a synchronous Compactor call "
                       "blocks: use AsyncCompactor (await c.compress(...))")


def _plain(messages: Sequence[Any]) -> List[Dict[str, Any]]:
    return normalize_messages(messages)


def normalize_messages(messages: Sequence[Any]) -> List[Dict[str, Any]]:
    """The plain message dicts the plug-in reads: dicts as they are (copied),
    LangChain message objects as LangChain's dict of them (see
    :mod:`clipfold._messages`). Nothing is added: ids, times and
    ``content: None`` are the plug-in's to read."""
    p = Prepared(messages)
    return [message_dict(m, "messages[%d]" % i) for i, m in enumerate(p.originals)]
