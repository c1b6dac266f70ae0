"""clipfold: LLM context compaction through its WebAssembly plug-in.

    from clipfold import Compactor
    with Compactor(store="chat.db") as c:
        result = c.compress("conversation-1", messages)

    async with AsyncCompactor(store="chat.db") as c:     # asyncio
        result = await c.compress("conversation-1", messages)
"""

from ._aio import AsyncCompactor
from .compactor import DEFAULT_TARGET_SHARE, Compactor, QueryAnalyzerPlugin, find_wasm, normalize_messages
from .errors import ClipfoldError
from .llm import Anthropic, Extractive, OpenAICompatible
from . import wire
from .store import ConflictError, NotFoundError, SQLiteStore, StoreError
from .types import (Batch, Block, CommitRequest, CompactionResult, Config, Message, ModelRequest, ModelResponse,
                    SearchHit, SearchQuery, ShouldCompactResult, SplitResult, StoredBlock, VersionInfo)

__version__ = "0.1.0"

__all__ = [
    "wire", "AsyncCompactor", "Compactor", "DEFAULT_TARGET_SHARE", "QueryAnalyzerPlugin", "find_wasm", "normalize_messages",
    "ClipfoldError",
    "Anthropic", "Extractive", "OpenAICompatible", "ConflictError", "NotFoundError", "SQLiteStore", "StoreError",
    "Batch", "Block", "CommitRequest", "CompactionResult", "Config", "Message", "ModelRequest", "ModelResponse",
    "SearchHit", "SearchQuery", "ShouldCompactResult", "SplitResult", "StoredBlock", "VersionInfo", "__version__",
]
