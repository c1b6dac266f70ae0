"""AsyncCompactor: the Compactor's API for asyncio programs.

The Extism Python SDK is synchronous: a plug-in call holds its thread until
the export returns, host functions included. So an AsyncCompactor runs its
Compactor's calls in a worker thread of its own (one per instance), never
on the event loop:

- calls on one AsyncCompactor are serialized, in the order they were made
  (the worker is a single thread, and the Compactor's lock stays);
- calls on different AsyncCompactors run in parallel (the SDK releases the
  GIL while Wasm runs);
- an async LLM (an ``async def`` callable, or an object whose ``complete``
  is ``async def``, e.g. a wrapper around ``openai.AsyncOpenAI``) is
  awaited on the event loop that awaits the call, bounded by the request's
  ``timeout_ms``; a synchronous one (the built-in HTTP adapters) runs in
  the worker thread;
- ``search``, ``search_query``, ``read`` and ``recall`` run in the loop's
  default executor: they use the Compactor's second plug-in instance and
  the store, both safe to use beside a compaction under way.

Cancelling an ``await`` does not stop a plug-in call under way (Wasm cannot
be interrupted from Python): it runs to its end in the worker — a
compaction still commits or changes nothing, atomically — and the next
call waits for it.
"""

from __future__ import annotations

import asyncio
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Type, TypeVar, Union

from ._host import worker as _worker
from .compactor import DEFAULT_TARGET_SHARE, Compactor, MessageLike
from .errors import ClipfoldError
from .llm import LLMCallable
from .store import SQLiteStore
from .types import (AheadResult, Batch, CompactionResult, Config, ContextUsage, MemoryRead, Message, ModelRequest, ModelResponse,
                    SearchHit, SearchQuery, ShouldCompactResult, SplitResult, VersionInfo)

T = TypeVar("T")
A = TypeVar("A", bound="AsyncCompactor")

__all__ = ["AsyncCompactor"]


def _in_worker(loop: asyncio.AbstractEventLoop, fn: Callable[..., T], args: Sequence[Any],
               kwargs: Mapping[str, Any]) -> T:
    _worker.loop = loop
    try:
        return fn(*args, **kwargs)
    finally:
        _worker.loop = None


class AsyncCompactor:
    """clipfold for asyncio: the surface of :class:`~clipfold.Compactor`
    (same arguments, same results, same errors), every method a coroutine.

    ::

        async with AsyncCompactor(store="chat.db") as c:
            result = await c.compact_if_due("conversation-1", history)
            hits = await c.search("what did we decide about the parser?")

    The constructor loads the plug-in in the calling thread, as
    ``Compactor`` does (the module is compiled once per process and cached
    on disk by Extism); ``await AsyncCompactor.open(...)`` does that in a
    thread instead. ``AsyncCompactor.wrap(compactor)`` wraps an existing
    Compactor. ``llm`` may be a synchronous adapter (``OpenAICompatible``,
    ``Anthropic``, any callable) or an async one (``async def llm(request)``
    returning a ModelResponse dict): see :mod:`clipfold._aio`.
    """

    def __init__(self, wasm_path: Optional[Union[str, "os.PathLike[str]"]] = None, *,
                 llm: Optional[Union[LLMCallable, Any]] = None,
                 store: Optional[Union[SQLiteStore, str, "os.PathLike[str]"]] = None,
                 config: Optional[Config] = None,
                 manifest_config: Optional[Mapping[str, Any]] = None,
                 wasm: Optional[bytes] = None) -> None:
        self._setup(Compactor(wasm_path, llm=llm, store=store, config=config, manifest_config=manifest_config,
                              wasm=wasm))

    def _setup(self, compactor: Compactor) -> None:
        self._c = compactor
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clipfold")
        self._closed = False

    @classmethod
    async def open(cls: Type[A], wasm_path: Optional[Union[str, "os.PathLike[str]"]] = None, *,
                   llm: Optional[Union[LLMCallable, Any]] = None,
                   store: Optional[Union[SQLiteStore, str, "os.PathLike[str]"]] = None,
                   config: Optional[Config] = None,
                   manifest_config: Optional[Mapping[str, Any]] = None,
                   wasm: Optional[bytes] = None) -> A:
        """An AsyncCompactor whose plug-in (and store) were loaded in a
        thread, so the event loop never waits for a compilation."""
        c = await asyncio.get_running_loop().run_in_executor(None, functools.partial(
            Compactor, wasm_path, llm=llm, store=store, config=config, manifest_config=manifest_config, wasm=wasm))
        return cls.wrap(c)

    @classmethod
    def wrap(cls: Type[A], compactor: Compactor) -> A:
        """An AsyncCompactor over an existing Compactor (closing it closes
        the Compactor)."""
        self = cls.__new__(cls)
        self._setup(compactor)
        return self

    # ------------------------------------------------------------ attributes
    @property
    def compactor(self) -> Compactor:
        """The synchronous Compactor underneath."""
        return self._c

    @property
    def store(self) -> SQLiteStore:
        """The store (a synchronous :class:`~clipfold.SQLiteStore`; ``read``
        and ``recall`` are also here as coroutines)."""
        return self._c.store

    @property
    def config(self) -> Config:
        return self._c.config

    @property
    def llm(self) -> Any:
        return self._c.llm

    @property
    def wasm_path(self) -> Optional[str]:
        return self._c.wasm_path

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------ plumbing
    def _check_open(self) -> None:
        if self._closed:
            raise ClipfoldError("internal", "the AsyncCompactor is closed")

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(*args, **kwargs) in this instance's worker thread, after every
        call made before it."""
        self._check_open()
        loop = asyncio.get_running_loop()
        try:
            fut = loop.run_in_executor(self._executor, _in_worker, loop, fn, args, kwargs)
        except RuntimeError:  # the executor was shut down under us
            raise ClipfoldError("internal", "the AsyncCompactor is closed") from None
        return await fut

    async def _run_aside(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(*args, **kwargs) in the loop's default executor (searches and
        store reads, which may run beside a compaction)."""
        self._check_open()
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))

    # ------------------------------------------------------------ lifecycle
    async def close(self) -> None:
        """Releases the plug-in instances (and the store, when the Compactor
        opened it) once the calls already made have finished. Idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._c.close)
        finally:
            self._executor.shutdown(wait=False)

    async def __aenter__(self: A) -> A:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ low level
    async def has_export(self, export: str) -> bool:
        return await self._run(self._c.has_export, export)

    async def call(self, export: str, data: Union[bytes, str, Mapping[str, Any]],
                   handlers: Optional[Dict[str, Callable[[bytes], bytes]]] = None) -> bytes:
        """Calls an export with raw input; see :meth:`Compactor.call`."""
        return await self._run(self._c.call, export, data, handlers)

    # ------------------------------------------------------------ pure exports
    async def score(self, messages: Sequence[MessageLike], config: Optional[Config] = None) -> List[float]:
        return await self._run(self._c.score, messages, config)

    async def split(self, messages: Sequence[MessageLike], config: Optional[Config] = None) -> SplitResult:
        return await self._run(self._c.split, messages, config)

    async def chunk(self, messages: Sequence[MessageLike], config: Optional[Config] = None) -> List[List[Message]]:
        return await self._run(self._c.chunk, messages, config)

    async def should_compact(self, messages: Sequence[MessageLike], config: Optional[Config] = None, *,
                             usage: Optional[ContextUsage] = None) -> ShouldCompactResult:
        """See :meth:`Compactor.should_compact` (``usage``: the provider's
        count of the last model call)."""
        return await self._run(self._c.should_compact, messages, config, usage=usage)

    async def estimate_tokens(self, text_or_messages: Union[str, Sequence[MessageLike]],
                              config: Optional[Config] = None) -> int:
        return await self._run(self._c.estimate_tokens, text_or_messages, config)

    async def overhead_tokens(self, system: Optional[str] = None, tools: Any = None,
                              config: Optional[Config] = None) -> int:
        """The system prompt's and the tool schemas' tokens (see
        :meth:`Compactor.overhead_tokens`)."""
        return await self._run(self._c.overhead_tokens, system, tools, config)

    async def build_summarization_request(self, messages: Sequence[MessageLike],
                                          previous_summary: Optional[str] = None,
                                          system_prompt: Optional[str] = None, model: Optional[str] = None,
                                          max_tokens: Optional[int] = None) -> ModelRequest:
        return await self._run(self._c.build_summarization_request, messages, previous_summary, system_prompt, model,
                               max_tokens)

    async def build_resummarization_request(self, batch_contents: Sequence[str], system_prompt: Optional[str] = None,
                                            model: Optional[str] = None,
                                            max_tokens: Optional[int] = None) -> ModelRequest:
        return await self._run(self._c.build_resummarization_request, batch_contents, system_prompt, model,
                               max_tokens)

    async def build_clip_archive(self, batches: Sequence[Batch], total_messages_compressed: Optional[int] = None,
                                 config: Optional[Config] = None) -> str:
        return await self._run(self._c.build_clip_archive, batches, total_messages_compressed, config)

    async def provider_request(self, provider: str, request: ModelRequest) -> Dict[str, Any]:
        return await self._run(self._c.provider_request, provider, request)

    async def provider_response(self, provider: str, status: int,
                                body: Union[str, Mapping[str, Any]]) -> ModelResponse:
        return await self._run(self._c.provider_response, provider, status, body)

    async def version(self) -> VersionInfo:
        return await self._run(self._c.version)

    # ------------------------------------------------------------ search
    async def search_query(self, query: str, language: Optional[str] = None) -> SearchQuery:
        """The searchQuery export (on the second instance: may run while a
        compaction is under way)."""
        return await self._run_aside(self._c.search_query, query, language)

    async def search(self, query: str, conversation_id: str = "", limit: int = 20,
                     in_context: Optional[Sequence[MessageLike]] = None, shape: Optional[str] = None) -> List[SearchHit]:
        """Ranked search of the store, the query asked in plain language,
        the caller's in-context messages ranked with it (see
        :meth:`Compactor.search`)."""
        return await self._run_aside(self._c.search, query, conversation_id, limit, in_context, shape)

    async def build_memory_read(self, query: str, hits: Sequence[Mapping[str, Any]],
                                max_tokens: Optional[int] = None, by_id: bool = False) -> MemoryRead:
        """The buildMemoryRead export (see :meth:`Compactor.build_memory_read`)."""
        return await self._run_aside(self._c.build_memory_read, query, hits, max_tokens, by_id)

    async def memory_read(self, query: str = "", conversation_id: str = "", limit: int = 20,
                          max_tokens: Optional[int] = None, in_context: Optional[Sequence[MessageLike]] = None,
                          shape: Optional[str] = None, id: Optional[str] = None) -> MemoryRead:
        """A memory_read tool call's answer within ``max_tokens`` (see
        :meth:`Compactor.memory_read`)."""
        return await self._run_aside(self._c.memory_read, query, conversation_id, limit, max_tokens, in_context, shape,
                                     id)

    async def read(self, record_id: str, conversation_id: str = "") -> Dict[str, Any]:
        """Any search hit in full: a removed message as it was (the
        conversation's; see SQLiteStore.recall without one), or a batch."""
        return await self._run_aside(self._c.store.read, record_id, conversation_id)

    async def recall(self, message_id: str, conversation_id: str = "") -> Message:
        """A message a compaction removed, as it was (see SQLiteStore.recall)."""
        return await self._run_aside(self._c.store.recall, message_id, conversation_id)

    # ------------------------------------------------------------ compress
    async def compress(self, conversation_id: str, history: Optional[Sequence[MessageLike]] = None, *,
                       caller_owned: bool = False, only_if_due: bool = False, shape: Optional[str] = None,
                       config: Optional[Config] = None, dry_run: bool = False,
                       now: Optional[Union[str, datetime]] = None, operation_id: Optional[str] = None,
                       usage: Optional[ContextUsage] = None) -> CompactionResult:
        """Compacts a conversation (see :meth:`Compactor.compress`, the same
        options): a failed compaction is a result with ``failed: True``, the
        history unchanged."""
        return await self._run(self._c.compress, conversation_id, history, caller_owned=caller_owned,
                               only_if_due=only_if_due, shape=shape, config=config, dry_run=dry_run, now=now,
                               operation_id=operation_id, usage=usage)

    async def decode_history(self, conversation_id: str, history: Sequence[MessageLike],
                             shape: Optional[str] = None) -> Dict[str, Any]:
        """The decodeHistory export (see :meth:`Compactor.decode_history`)."""
        return await self._run(self._c.decode_history, conversation_id, history, shape)

    async def compact_if_due(self, conversation_id: str, history: Optional[Sequence[MessageLike]] = None, *,
                             target_share: float = DEFAULT_TARGET_SHARE, config: Optional[Config] = None,
                             **compress_options: Any) -> Optional[CompactionResult]:
        """The agent loop's helper (see :meth:`Compactor.compact_if_due`):
        None when nothing changed, else the CompactionResult. The check and the
        compaction are one call in the worker: nothing runs between them on
        this instance."""
        return await self._run(self._c.compact_if_due, conversation_id, history, target_share=target_share,
                               config=config, **compress_options)

    async def compact_ahead(self, conversation_id: str, history: Optional[Sequence[MessageLike]] = None, *,
                            caller_owned: bool = False, shape: Optional[str] = None, config: Optional[Config] = None,
                            usage: Optional[ContextUsage] = None, target_share: float = DEFAULT_TARGET_SHARE,
                            now: Optional[Union[str, datetime]] = None) -> AheadResult:
        """The agent loop's check with compaction ahead of time (see
        :meth:`Compactor.compact_ahead`). The compaction prepared in the
        background runs in a thread of its own, not in this instance's
        worker (an async LLM is awaited on this event loop), so the calls
        of later turns never queue behind it."""
        return await self._run(self._c.compact_ahead, conversation_id, history, caller_owned=caller_owned,
                               shape=shape, config=config, usage=usage, target_share=target_share, now=now)

    async def count_context(self, key: str, messages: Sequence[MessageLike], *,
                            usage: Optional[ContextUsage] = None, config: Optional[Config] = None,
                            shape: Optional[str] = None) -> ShouldCompactResult:
        """should_compact's answer counting only what is new since the last
        call with ``key`` (see :meth:`Compactor.count_context`); on the
        second plug-in instance, in the loop's default executor: it never
        waits for a compaction."""
        return await self._run_aside(self._c.count_context, key, messages, usage=usage, config=config, shape=shape)
