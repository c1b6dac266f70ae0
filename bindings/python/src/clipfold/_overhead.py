"""The overhead_tokens of an agent's model requests, for the framework
adapters (LangChain, LangGraph, Pydantic AI, the Agents SDK).

An agent sends the same system prompt and tools request after request, so
each adapter asks the plug-in (:meth:`Compactor.overhead_tokens`) once per
system prompt and tool set, not before every model call.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Optional

from .types import Config

if TYPE_CHECKING:
    from .compactor import Compactor

__all__ = ["Overheads"]


class Overheads:
    """``(system, tools, config) -> overhead_tokens``, remembered for the
    few system prompts and tool sets (JSON values: the schemas a provider
    is sent) an agent sends, per ``token_estimator``."""

    _MAX = 64

    def __init__(self, compactor: "Compactor") -> None:
        self.compactor = compactor
        self.seen: Dict[str, int] = {}

    def __call__(self, system: Optional[str], tools: Any, config: Optional[Config]) -> int:
        key = json.dumps([system or "", tools, (config or {}).get("token_estimator")], sort_keys=True, default=str)
        n = self.seen.get(key)
        if n is None:
            if len(self.seen) >= self._MAX:
                self.seen.clear()
            n = self.seen[key] = self.compactor.overhead_tokens(system, json.loads(json.dumps(tools, default=str)),
                                                                config)
        return n
