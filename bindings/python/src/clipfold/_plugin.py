"""The plug-in's machine code, compiled once per module, and its exports on
an instance of their own: what the Compactor, the store and the LLM
adapters call. It imports nothing else of the package, so that none of
those modules imports another to reach the plug-in."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from typing import Any, Callable, Dict, Optional, Union, cast

import extism

from . import _check
from ._host import HostContext, host_functions
from .errors import ClipfoldError
from .types import SearchQuery

_compiled_lock = threading.Lock()
_compiled: Dict[str, Any] = {}


def compile_plugin(wasm: bytes) -> Any:
    """One CompiledPlugin per module content, shared by every Compactor
    (Extism caches the machine code on disk too, so only the first process
    pays the full compilation)."""
    key = hashlib.sha256(wasm).hexdigest()
    with _compiled_lock:
        c = _compiled.get(key)
        if c is None:
            c = extism.extism.CompiledPlugin(wasm, True, host_functions())
            _compiled[key] = c
        return c


class ExportCaller:
    """Calls exports of a separate plug-in instance (used by the LLM
    adapters from inside a host function, where the main instance is busy)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._plugin: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._plugin is None:
            self._plugin = self._make()
        return self._plugin

    def has_export(self, export: str) -> bool:
        with self._lock:
            return bool(self._get().function_exists(export))

    def __call__(self, export: str, data: bytes) -> bytes:
        with self._lock:
            try:
                return bytes(self._get().call(export, data, host_context=HostContext({})))
            except extism.Error as e:
                raise ClipfoldError.from_plugin_error(str(e)) from None

    def close(self) -> None:
        with self._lock:
            if self._plugin is not None:
                self._plugin.__del__()
                self._plugin = None


def export_caller(wasm_path: Union[str, "os.PathLike[str]"]) -> ExportCaller:
    """The exports of a plug-in on an instance of its own, as a callable
    ``caller(export, bytes) -> bytes`` (what the LLM adapters use)."""
    with open(os.fspath(wasm_path), "rb") as f:
        compiled = compile_plugin(f.read())
    return ExportCaller(lambda: extism.Plugin(compiled))


class QueryAnalyzerPlugin:
    """The plug-in's searchQuery export as a callable, on an instance of its
    own: ``analyzer(query) -> {"terms", "fts5", "tsquery"}``. What an
    SQLiteStore made without a Compactor analyses its queries with."""

    def __init__(self, wasm_path: Union[str, "os.PathLike[str]"]) -> None:
        self._caller = export_caller(wasm_path)

    def __call__(self, query: str, language: Optional[str] = None) -> SearchQuery:
        return cast(SearchQuery, json.loads(self._caller("searchQuery", search_query_input(query, language))))


def search_query_input(query: Any, language: Any) -> bytes:
    """The searchQuery export's input, in ASCII JSON: any str, lone
    surrogates included, reaches the plug-in as valid JSON."""
    payload: Dict[str, Any] = {"query": _check.string(query, "query")}
    if _check.optional_string(language, "language") is not None:
        payload["language"] = language
    return json.dumps(payload).encode("ascii")
