"""clipfold: LLM context compaction through its WebAssembly plug-in.

    from clipfold import Compactor
    with Compactor(store="chat.db") as c:
        result = c.compress("conversation-1", messages)
"""

from .compactor import DEFAULT_TARGET_SHARE, Compactor, find_wasm, normalize_messages
from .errors import ClipfoldError
from .llm import Anthropic, Extractive, OpenAICompatible
from .store import ConflictError, SQLiteStore, StoreError
from .types import (Batch, Block, CommitRequest, CompactionResult, Config, Message, ModelRequest, ModelResponse,
                    ShouldCompactResult, SplitResult, VersionInfo)

__version__ = "0.1.0"

__all__ = [
    "Compactor", "DEFAULT_TARGET_SHARE", "find_wasm", "normalize_messages", "ClipfoldError", "Anthropic", "Extractive",
    "OpenAICompatible", "ConflictError", "SQLiteStore", "StoreError", "Batch", "Block", "CommitRequest",
    "CompactionResult", "Config", "Message", "ModelRequest", "ModelResponse", "ShouldCompactResult", "SplitResult",
    "VersionInfo", "__version__",
]
