"""Typed shapes of clipfold's wire types (docs/spec.md#wire-types,
docs/spec.md#compactionresult), as TypedDicts.

They describe the plain dicts the API takes and returns; nothing is
converted, so every message keeps its unknown fields.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Union

if sys.version_info >= (3, 11):
    from typing import Literal, NotRequired, TypedDict
else:  # pragma: no cover
    from typing_extensions import Literal, NotRequired, TypedDict

Role = Literal["user", "assistant", "system", "tool"]


class ContentPart(TypedDict, total=False):
    type: str
    text: str


Content = Union[str, List[ContentPart], List[Dict[str, Any]], None]


class Message(TypedDict, total=False):
    """A conversation message; OpenAI-style dicts fit as they are."""

    id: str
    conversation_id: str
    role: Role
    content: Content
    tool_calls: Any
    tool_call_id: str
    created_at: str
    pinned: bool
    name: str


class Batch(TypedDict):
    """One summary (docs/spec.md#batch)."""

    content: str
    depth: int
    start_time: str
    end_time: str
    message_count: int
    source_message_ids: List[str]
    operation_id: NotRequired[str]
    method: NotRequired[str]


class ModelMessage(TypedDict):
    role: str
    content: Union[str, List[ContentPart]]


class ModelRequest(TypedDict, total=False):
    system: str
    messages: List[ModelMessage]
    model: str
    max_tokens: int
    temperature: float
    timeout_ms: int


class Usage(TypedDict, total=False):
    input_tokens: int
    output_tokens: int


class ModelResponse(TypedDict, total=False):
    content: List[ContentPart]
    stop_reason: str
    usage: Usage


class HostError(TypedDict, total=False):
    code: str
    message: str
    retryable: bool


class ErrorResponse(TypedDict):
    error: HostError


class SplitResult(TypedDict):
    to_compress: List[Message]
    to_keep: List[Message]
    prior_summary: Optional[Message]


class ShouldCompactResult(TypedDict):
    due: bool
    tokens: int
    limit: int
    #: the soft threshold, ⌊prepare_at × limit⌋: over it a compaction is
    #: prepared ahead of time (docs/spec.md#compaction-ahead-of-time)
    prepare_limit: NotRequired[int]


class ContextUsage(TypedDict):
    """The provider's count of the last model call (docs/spec.md#counting-tokens-and-the-window):
    ``input_tokens`` for a request that held the first
    ``messages`` messages of the history now checked or compacted (system
    prompt and tools included). Those messages count ``input_tokens``;
    only the rest is estimated."""

    input_tokens: int
    messages: int


class VersionInfo(TypedDict):
    version: str
    abi: int


class ArchiveWrite(TypedDict, total=False):
    label: str
    content: str
    tier: str
    reason: str


class CommitRequest(TypedDict, total=False):
    conversation_id: str
    operation_id: str
    archive_writes: List[ArchiveWrite]
    archive_deletes: List[str]
    remove_message_ids: List[str]
    #: None when the commit summarized nothing and only replaces messages
    insert_message: Optional[Message]
    search_text: Dict[str, str]
    insert_raw: Dict[str, Any]
    history_owner: str
    recall_writes: List["RecallWrite"]
    replace_messages: List["ReplaceMessage"]


class ReplaceMessage(TypedDict, total=False):
    """One kept message a store-owned commit replaces in place (a tool
    result cleared, a message truncated): ``id`` moves to recall storage
    (an original recall already holds stays), and its row takes ``new_id``,
    ``role``, ``content`` and ``message``, at the same position and time."""

    id: str
    new_id: str
    role: Role
    content: str
    message: Dict[str, Any]


class RecallWrite(TypedDict, total=False):
    """One removed message of a caller-owned commit (``history_owner``
    "caller"): written to recall storage once per id."""

    id: str
    role: Role
    content: str
    created_at: Optional[str]
    search_text: str
    message: Dict[str, Any]


class SearchQuery(TypedDict):
    """What the searchQuery export returns."""

    terms: List[str]
    fts5: str
    tsquery: str


class SearchHit(TypedDict):
    """One hit of ``SQLiteStore.search``; depth, method, message_count and
    source_message_ids are None for messages. ``in_context``: a message
    still in the context (the active history, or a search's
    ``in_context``), not in recall storage."""

    kind: str
    id: str
    conversation_id: str
    start_time: str
    end_time: str
    score: float
    snippet: str
    text: str
    role: str
    label: str
    created_at: str
    operation_id: str
    in_context: bool
    depth: Optional[int]
    method: Optional[str]
    message_count: Optional[int]
    source_message_ids: Optional[List[str]]


class MemoryRead(TypedDict):
    """The buildMemoryRead export's answer (a memory_read tool call):
    ``text`` for the model, its estimated ``tokens`` (within the budget),
    and the ids of the hits shown ``whole``, in part (``passage``, None
    for none) and ``left_out``."""

    text: str
    tokens: int
    whole: List[str]
    passage: Optional[str]
    left_out: List[str]


class BatchMeta(TypedDict):
    depth: int
    start_time: str
    end_time: str
    message_count: int
    source_message_ids: List[str]
    method: str
    operation_id: str
    summary: str


class StoredBlock(TypedDict):
    """An archival block read by id (``SQLiteStore.block``)."""

    id: str
    tier: str
    label: str
    content: str
    conversation_id: str
    reason: str
    operation_id: str
    created_at: str
    batch: Optional[BatchMeta]


class Block(TypedDict):
    id: str
    label: str
    content: str


class CompactionResult(TypedDict):
    """What ``compress`` returns (docs/spec.md#compactionresult)."""

    history: List[Message]
    batches_created: int
    messages_compressed: int
    tokens_estimate_before: int
    tokens_estimate_after: int
    failed: bool
    failure_code: Optional[str]
    failure_message: Optional[str]
    operation_id: str
    llm_calls: int
    batches: List[Batch]
    warnings: List[str]
    consecutive_failures: int
    #: kept messages replaced to fit the window: tool results cleared to one
    #: line naming the tool, its arguments and the recall id of the full
    #: output, messages middle-truncated (each original in recall storage)
    tool_results_cleared: int
    messages_truncated: int
    commit: NotRequired[CommitRequest]


class AheadResult(TypedDict):
    """What :meth:`Compactor.compact_ahead` did before a model call
    (docs/spec.md#compaction-ahead-of-time)."""

    #: what to send the model: the messages given (caller-owned: their
    #: compacted view; store-owned: the store's active history), compacted
    #: when a compaction was applied
    history: List[Any]
    #: shouldCompact's count of ``history`` and its thresholds
    tokens: int
    limit: int
    prepare_limit: int
    #: the compaction applied at this call (prepared in the background, or
    #: run now at the limit), None when none was
    compaction: Optional[CompactionResult]
    #: ``compaction`` was prepared in the background
    prepared: bool
    #: how long this call waited for a compaction (the rest of one under
    #: way, or one run at the limit), in milliseconds
    waited_ms: float
    #: a compaction started in the background at this call
    started: bool
    #: why a prepared compaction was dropped (the history changed under it,
    #: another compaction won, it had nothing to apply), None when none was
    discarded: Optional[str]


class ProviderWireRequest(TypedDict):
    url_path: str
    body: Dict[str, Any]


Config = Dict[str, Any]

__all__ = [
    "Role", "ContentPart", "Content", "Message", "Batch", "ModelMessage", "ModelRequest", "Usage",
    "ModelResponse", "HostError", "ErrorResponse", "SplitResult", "ShouldCompactResult", "ContextUsage",
    "VersionInfo", "ArchiveWrite", "CommitRequest", "RecallWrite", "ReplaceMessage", "Block", "CompactionResult", "ProviderWireRequest", "Config", "SearchQuery",
    "SearchHit", "BatchMeta", "StoredBlock",
]
