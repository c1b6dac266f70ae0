"""The three host functions of docs/spec.md#host-functions, registered once with the Extism SDK.

The SDK keeps host functions in a process-wide registry (``extism.host_fn``),
so clipfold registers ``llm_complete``, ``memory_list`` and
``compaction_commit`` exactly once and routes each call to the Python
objects of the plug-in call that made it, passed as the call's
``host_context``. A host function never raises into the plug-in: any
exception becomes an ``{"error": …}`` object.
"""

from __future__ import annotations

import json
import threading
import traceback
from typing import Any, Callable, Dict, List, Optional

import extism
from extism import CurrentPlugin, Val, ValType

NAMESPACE = "extism:host/user"
HOST_FUNCTION_NAMES = ("llm_complete", "memory_list", "compaction_commit")

Handler = Callable[[bytes], bytes]

worker = threading.local()
"""Per thread: the event loop an AsyncCompactor call came from (``loop``),
set while the call runs in the AsyncCompactor's worker thread: a host
function calling an async LLM awaits it on that loop."""


def error_bytes(code: str, message: str, retryable: bool = False) -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "retryable": retryable}},
                      ensure_ascii=False).encode("utf-8")


class HostContext:
    """What one plug-in call's host functions answer with: a handler per
    function name, bytes in, bytes out."""

    def __init__(self, handlers: Dict[str, Handler]) -> None:
        self.handlers = handlers
        #: the last exception a handler raised (turned into an error object)
        self.last_exception: Optional[BaseException] = None

    def dispatch(self, name: str, data: bytes) -> bytes:
        h = self.handlers.get(name)
        if h is None:
            return error_bytes("unavailable", "this host provides no %s" % name)
        try:
            return h(data)
        except Exception as e:  # never into the plug-in
            self.last_exception = e
            return error_bytes("other", "%s: host raised %s: %s" % (name, type(e).__name__, e))


def _make(name: str) -> Any:
    def fn(plugin: CurrentPlugin, inputs: List[Val], outputs: List[Val], *user_data: Any) -> None:
        try:
            ctx = plugin.host_context()
            data = plugin.input_bytes(inputs[0])
            if isinstance(ctx, HostContext):
                out = ctx.dispatch(name, data)
            else:
                out = error_bytes("unavailable", "this host provides no %s" % name)
        except BaseException as e:  # noqa: BLE001 - nothing may cross into the plug-in
            out = error_bytes("other", "%s: %s" % (name, "".join(traceback.format_exception_only(type(e), e)).strip()))
        plugin.return_bytes(outputs[0], out)

    fn.__name__ = name
    return extism.host_fn(name=name, namespace=NAMESPACE, signature=([ValType.I64], [ValType.I64]))(fn)


_FUNCTIONS: Optional[List[Any]] = None


def host_functions() -> List[Any]:
    """The three extism Functions (created on first use, shared by every
    plug-in of the process)."""
    global _FUNCTIONS
    if _FUNCTIONS is None:
        _FUNCTIONS = [_make(n) for n in HOST_FUNCTION_NAMES]
    return _FUNCTIONS
