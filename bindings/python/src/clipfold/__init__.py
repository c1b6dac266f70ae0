"""clipfold: LLM context compaction through its WebAssembly plug-in.

    from clipfold import Compactor
    with Compactor(store="chat.db") as c:
        result = c.compress("conversation-1", messages)

    async with AsyncCompactor(store="chat.db") as c:     # asyncio
        result = await c.compress("conversation-1", messages)
"""

from typing import TYPE_CHECKING, Any

from .compactor import (DEFAULT_MEMORY_READ_TOKENS, DEFAULT_TARGET_SHARE, Compactor, QueryAnalyzerPlugin, find_wasm,
                        normalize_messages)
from .errors import ClipfoldError
from .llm import Anthropic, Extractive, OpenAICompatible
from . import wire
from .store import AmbiguousIDError, ConflictError, DuplicateIDError, NotFoundError, SQLiteStore, StoreError
from .types import (AheadResult, Batch, Block, CommitRequest, CompactionResult, Config, ContextUsage, MemoryRead, Message,
                    ModelRequest, ModelResponse, SearchHit, SearchQuery, ShouldCompactResult, SplitResult, StoredBlock,
                    VersionInfo)

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ._aio import AsyncCompactor


def __getattr__(name: str) -> Any:
    # AsyncCompactor is imported on first use: its module imports asyncio,
    # a large share of `import clipfold`, which synchronous programs skip.
    if name == "AsyncCompactor":
        from ._aio import AsyncCompactor

        globals()["AsyncCompactor"] = AsyncCompactor
        return AsyncCompactor
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = [
    "wire", "AsyncCompactor", "Compactor", "DEFAULT_MEMORY_READ_TOKENS", "DEFAULT_TARGET_SHARE", "QueryAnalyzerPlugin", "find_wasm", "normalize_messages",
    "ClipfoldError",
    "Anthropic", "Extractive", "OpenAICompatible", "AmbiguousIDError", "ConflictError", "DuplicateIDError",
    "NotFoundError", "SQLiteStore", "StoreError",
    "AheadResult", "Batch", "Block", "CommitRequest", "CompactionResult", "Config", "ContextUsage", "MemoryRead", "Message",
    "ModelRequest",
    "ModelResponse", "SearchHit", "SearchQuery", "ShouldCompactResult", "SplitResult", "StoredBlock", "VersionInfo", "__version__",
]
