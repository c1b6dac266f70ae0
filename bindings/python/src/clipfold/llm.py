"""llm_complete adapters: OpenAI-compatible and Anthropic over HTTP
(standard library only), and the offline extractive summarizer (the
plug-in's own, through its ``extractiveSummary`` export).

Every adapter is a callable ``ModelRequest dict -> ModelResponse dict`` (also
``complete``, and ``await acomplete`` which runs it in a thread) that
answers a failure with an LLM error object
(docs/spec.md#model-requests-and-responses) instead of raising:

====================================  ==================  =========
what happened                         code                retryable
====================================  ==================  =========
HTTP 429 (quota exhausted: no retry)  rate_limited        yes
HTTP 5xx, 529 (overloaded)            unavailable         yes
HTTP 401 / 403                        auth                no
prompt too long / 413                 context_overflow    no
other 4xx                             invalid_request     no
socket timeout, 408, 504              timeout             yes
connection refused / reset            unavailable         yes
====================================  ==================  =========

The request's ``timeout_ms`` (the time left before the compaction's
deadline) caps the HTTP timeout.

The key and the conversation never leave the configured host: a redirect
to another origin (scheme, host or port) is an ``other`` error naming both
hosts, not retried, and the other host is never contacted; on the same
origin a 307 or 308 is followed (method, body and headers kept) and a 301,
302 or 303 (which would resend the POST as a bodiless GET) is an error
too. URLs in error messages keep no password and no key-like query
parameter (``clipfold._redact``).

The provider wire formats are the plug-in's (core/provider.go): the
adapters build each request body and read each response with its
``providerRequest``/``providerResponse`` exports — one implementation for
every host, none in Python. A Compactor attaches its own plug-in; an
adapter used alone loads the plug-in ``find_wasm`` finds on its first call
(one instance shared by the process).
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any, Callable, Dict, Mapping, Optional, Protocol, Tuple, Union

from ._redact import redact
from ._locate import find_wasm
from ._plugin import export_caller
from .errors import ClipfoldError
from .types import ContextUsage, ErrorResponse, ModelRequest, ModelResponse

LLMResult = Union[ModelResponse, ErrorResponse, Dict[str, Any]]
LLMCallable = Callable[[ModelRequest], LLMResult]

ANTHROPIC_VERSION = "2023-06-01"


class ExportCaller(Protocol):
    """What the adapters need from a plug-in: an export call, bytes to bytes."""

    def __call__(self, export: str, data: bytes) -> bytes: ...

    def has_export(self, export: str) -> bool: ...


def usage_of(request: Mapping[str, Any], response: Mapping[str, Any]) -> Optional[ContextUsage]:
    """The provider's count of a model call made with these adapters, as
    :meth:`Compactor.should_compact` and ``compress`` take it: the input
    tokens of ``response`` for the messages ``request`` held. For a host
    that runs its agent loop with these adapters and keeps the request's
    messages as its history. None when the response has no usage (an
    error, or a provider that reports none)."""
    usage = response.get("usage")
    n = usage.get("input_tokens") if isinstance(usage, Mapping) else None
    if "error" in response or isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        return None
    return {"input_tokens": n, "messages": len(request.get("messages") or [])}


def llm_error(code: str, message: str, retryable: bool) -> Dict[str, Any]:
    return {"error": {"code": code, "message": message, "retryable": retryable}}


_default_lock = threading.Lock()
_default_exports: Optional[ExportCaller] = None


def default_exports() -> ExportCaller:
    """The exports of one shared instance of the plug-in ``find_wasm`` finds:
    what an adapter that no Compactor attached translates with."""
    global _default_exports
    with _default_lock:
        if _default_exports is None:
            _default_exports = export_caller(find_wasm())
        return _default_exports


# ---------------------------------------------------------------- redirects
class _RedirectRefused(Exception):
    """A redirect the adapter will not follow; the message says why."""


def _origin(url: str) -> Tuple[str, str, Optional[int]]:
    from urllib.parse import urlsplit

    u = urlsplit(url)
    scheme = u.scheme.lower()
    try:
        port = u.port
    except ValueError:
        port = None
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, (u.hostname or "").lower(), port


def _origin_text(url: str) -> str:
    from urllib.parse import urlsplit

    u = urlsplit(url)
    return "%s://%s" % (u.scheme, u.netloc.rpartition("@")[2])


_opener_lock = threading.Lock()
_opener: Any = None


def _same_host_opener() -> Any:
    """An urllib opener (the default handlers, proxies included) whose
    redirects stay on the request's origin and keep its method and body.
    urllib's own would resend every header, the key among them, to any
    host on a 301, 302 or 303, as a GET."""
    global _opener
    with _opener_lock:
        if _opener is not None:
            return _opener
        import urllib.request

        class SameHostRedirects(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                                 newurl: str) -> Any:
                old = req.full_url
                fp.close()
                if _origin(old) != _origin(newurl):
                    raise _RedirectRefused(
                        "the server at %s redirected (HTTP %d) to another host, %s: refused, so that neither the "
                        "API key nor the request leaves %s; set base_url to the server that answers"
                        % (redact(_origin_text(old)), code, redact(_origin_text(newurl)), redact(_origin_text(old))))
                if code not in (307, 308):
                    raise _RedirectRefused(
                        "%s redirected (HTTP %d) to %s: refused, because following it would resend the POST as a "
                        "GET without its body; set base_url to the address that answers"
                        % (redact(old), code, redact(newurl)))
                hdrs = dict(req.header_items())
                return urllib.request.Request(newurl, data=req.data, headers=hdrs, method=req.get_method(),
                                              origin_req_host=req.origin_req_host, unverifiable=True)

        _opener = urllib.request.build_opener(SameHostRedirects)
        return _opener


# ---------------------------------------------------------------- HTTP adapters
class HTTPAdapter:
    """Shared HTTP plumbing; see OpenAICompatible and Anthropic."""

    provider = ""

    def __init__(self, base_url: str, api_key: Optional[str] = None, model: Optional[str] = None,
                 timeout: float = 120.0, headers: Optional[Mapping[str, str]] = None) -> None:
        if not isinstance(base_url, str):
            raise ClipfoldError("invalid_input", "base_url: must be an http:// or https:// URL, got %s"
                                % type(base_url).__name__, "base_url")
        origin = _origin(base_url) if "://" in base_url else ("", "", None)
        if origin[0] not in ("http", "https") or not origin[1]:
            raise ClipfoldError("invalid_input", "base_url: %r must be an http:// or https:// URL with a host"
                                % redact(base_url), "base_url")
        if api_key is not None and not isinstance(api_key, str):
            raise ClipfoldError("invalid_input", "api_key: must be a string or None, got %s"
                                % type(api_key).__name__, "api_key")
        if model is not None and not isinstance(model, str):
            raise ClipfoldError("invalid_input", "model: must be a string or None, got %s"
                                % type(model).__name__, "model")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ClipfoldError("invalid_input", "timeout: must be a number of seconds > 0, got %r" % (timeout,),
                                "timeout")
        if headers is not None and (not isinstance(headers, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in headers.items())):
            raise ClipfoldError("invalid_input", "headers: must map header names to string values", "headers")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = float(timeout)
        self.extra_headers = dict(headers or {})
        self._plugin: Optional[ExportCaller] = None

    def attach_plugin(self, caller: ExportCaller) -> None:
        """Translate with this plug-in's providerRequest/providerResponse
        exports (a Compactor attaches its own)."""
        self._plugin = caller

    def _exports(self) -> ExportCaller:
        if self._plugin is None:
            self._plugin = default_exports()
        return self._plugin

    def _headers(self) -> Dict[str, str]:
        raise NotImplementedError

    def url(self, path: str) -> str:
        base = self.base_url
        if base.endswith("/v1") and path.startswith("/v1/"):
            base = base[:-3]
        return base + path

    def _wire_request(self, req: Mapping[str, Any]) -> Tuple[str, Dict[str, Any]]:
        out = json.loads(self._exports()("providerRequest", json.dumps(
            {"provider": self.provider, "request": req}, ensure_ascii=False).encode("utf-8")))
        return str(out["url_path"]), dict(out["body"])

    def _wire_response(self, status: int, body: bytes) -> Dict[str, Any]:
        text = body.decode("utf-8", "replace")
        try:
            out: Dict[str, Any] = json.loads(self._exports()("providerResponse", json.dumps(
                {"provider": self.provider, "status": status, "body": text}, ensure_ascii=False).encode("utf-8")))
            return out
        except Exception as e:  # a malformed 2xx body
            return llm_error("other", "%s: %s" % (self.provider, e), False)

    def __call__(self, request: ModelRequest) -> Dict[str, Any]:
        return self.complete(request)

    async def acomplete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        """:meth:`complete` for async code: the blocking request runs in a
        thread (``asyncio.to_thread``), never on the event loop. An
        AsyncCompactor does not need it: it calls ``complete`` in its worker
        thread."""
        import asyncio  # here, not at import: see compactor._await_llm

        return await asyncio.to_thread(self.complete, request)

    def complete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        out = self._complete(request)
        err = out.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            err["message"] = redact(err["message"])  # a URL in it keeps no password, no key
        return out

    def _complete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        req = dict(request)
        if not req.get("model") and self.model:
            req["model"] = self.model
        timeout = self.timeout
        if req.get("timeout_ms") is not None:
            left = float(req["timeout_ms"]) / 1000.0
            if left <= 0:
                return llm_error("timeout", "no time left before the compaction's deadline", True)
            timeout = min(timeout, left)
        try:
            path, body = self._wire_request(req)
        except Exception as e:
            return llm_error("invalid_request", str(e), False)
        # urllib.request (with http.client and ssl) is imported by the first
        # request, not by `import clipfold`: most programs never make one.
        import urllib.error
        import urllib.request

        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        http_req = urllib.request.Request(self.url(path), data=data, method="POST", headers=self._headers())
        try:
            with _same_host_opener().open(http_req, timeout=timeout) as resp:
                status, raw = resp.status, resp.read()
        except _RedirectRefused as e:
            return llm_error("other", "%s: %s" % (self.provider, e), False)
        except urllib.error.HTTPError as e:
            try:
                raw = e.read()
            except Exception:
                raw = b""
            return self._wire_response(e.code, raw)
        except (socket.timeout, TimeoutError):
            return llm_error("timeout", "%s: no answer within %.3f s" % (self.provider, timeout), True)
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                return llm_error("timeout", "%s: no answer within %.3f s" % (self.provider, timeout), True)
            return llm_error("unavailable", "%s: %s" % (self.provider, e.reason), True)
        except (ConnectionError, OSError) as e:
            return llm_error("unavailable", "%s: %s" % (self.provider, e), True)
        return self._wire_response(status, raw)


class OpenAICompatible(HTTPAdapter):
    """POST {base_url}/v1/chat/completions with ``Authorization: Bearer``.
    ``base_url`` may end in /v1 or not."""

    provider = "openai"

    def __init__(self, base_url: str = "https://api.openai.com", api_key: Optional[str] = None,
                 model: Optional[str] = None, timeout: float = 120.0,
                 headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(base_url, api_key, model, timeout, headers)

    def _headers(self) -> Dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        h.update(self.extra_headers)
        return h


class Anthropic(HTTPAdapter):
    """POST {base_url}/v1/messages with ``x-api-key`` and
    ``anthropic-version: 2023-06-01``; system-role messages are lifted into
    ``system``."""

    provider = "anthropic"

    def __init__(self, base_url: str = "https://api.anthropic.com", api_key: Optional[str] = None,
                 model: Optional[str] = None, timeout: float = 120.0,
                 headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(base_url, api_key, model, timeout, headers)

    def _headers(self) -> Dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json",
             "anthropic-version": ANTHROPIC_VERSION}
        if self.api_key:
            h["x-api-key"] = self.api_key
        h.update(self.extra_headers)
        return h


# ---------------------------------------------------------------- extractive
class Extractive:
    """The offline summarizer as an LLM-shaped adapter. clipfold's
    extractive summarizer lives in the plug-in, once for every host: a
    Compactor created without an ``llm`` (or with ``"extractive"`` or an
    ``Extractive``) sets the config key ``summarizer: "extractive"``, so
    ``compress`` summarizes inside the plug-in from the messages themselves
    (dated lines, batches marked ``method: "extractive"``) and never calls
    ``llm_complete``. This adapter answers a ModelRequest with the plug-in's
    ``extractiveSummary`` export (when a call sets ``summarizer: "llm"``, or
    to use the summarizer elsewhere); there is no Python copy of the
    summarizer. Unattached, it answers a non-retryable ``unavailable``
    error, so a compaction fails safely instead."""

    def __init__(self) -> None:
        self._plugin: Optional[ExportCaller] = None

    def attach_plugin(self, caller: ExportCaller) -> None:
        if caller.has_export("extractiveSummary"):
            self._plugin = caller

    @property
    def uses_plugin(self) -> bool:
        return self._plugin is not None

    def __call__(self, request: ModelRequest) -> Dict[str, Any]:
        return self.complete(request)

    async def acomplete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        """:meth:`complete` for async code, in a thread."""
        import asyncio  # here, not at import: see compactor._await_llm

        return await asyncio.to_thread(self.complete, request)

    def complete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        if self._plugin is None:
            return llm_error("unavailable", "Extractive: no plug-in with the extractiveSummary export is attached "
                             "(a Compactor attaches its own)", False)
        out: Dict[str, Any] = json.loads(self._plugin("extractiveSummary", json.dumps(
            request, ensure_ascii=False).encode("utf-8")))
        return out
