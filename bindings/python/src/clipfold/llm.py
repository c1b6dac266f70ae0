"""llm_complete adapters: OpenAI-compatible and Anthropic over HTTP
(standard library only), and the offline extractive summarizer (the
plug-in's own, through its ``extractiveSummary`` export).

Every adapter is a callable ``ModelRequest dict -> ModelResponse dict`` (also
``complete``, and ``await acomplete`` which runs it in a thread) that
answers a failure with SPEC §2's error object instead of raising:

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

The provider wire formats are those of core/provider.go. When the plug-in
has the ``providerRequest``/``providerResponse`` exports, a Compactor
attaches it and the adapters use the plug-in's translation (one
implementation for every host); otherwise the Python port below is used.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Tuple, Union

from .types import ErrorResponse, ModelRequest, ModelResponse

LLMResult = Union[ModelResponse, ErrorResponse, Dict[str, Any]]
LLMCallable = Callable[[ModelRequest], LLMResult]

CONTINUATION_PLACEHOLDER = "(conversation continues)"
DEFAULT_ANTHROPIC_MAX_TOKENS = 1024
ANTHROPIC_VERSION = "2023-06-01"
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "ollama": "/api/chat"}


class ExportCaller(Protocol):
    """What the adapters need from a plug-in: an export call, bytes to bytes."""

    def __call__(self, export: str, data: bytes) -> bytes: ...

    def has_export(self, export: str) -> bool: ...


def llm_error(code: str, message: str, retryable: bool) -> Dict[str, Any]:
    return {"error": {"code": code, "message": message, "retryable": retryable}}


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p)
                         for p in content if isinstance(p, str) or (isinstance(p, dict) and p.get("type") == "text"))
    return str(content)


# ---------------------------------------------------------------- wire: requests
def _blank(s: str) -> bool:
    return s.strip() == ""


def _chat_messages(req: Mapping[str, Any]) -> List[Dict[str, str]]:
    out: List[Dict[str, str]] = []
    system = req.get("system") or ""
    if not _blank(system):
        out.append({"role": "system", "content": system})
    for m in req.get("messages") or []:
        c = _text(m.get("content"))
        if not _blank(c):
            out.append({"role": m.get("role", "user"), "content": c})
    if not out:
        out.append({"role": "user", "content": CONTINUATION_PLACEHOLDER})
    return out


def _num(x: Any) -> Union[int, float]:
    f = float(x or 0)
    if f == math.trunc(f) and abs(f) < 1e15:
        return int(f)
    return f


def provider_request(provider: str, req: Mapping[str, Any]) -> Tuple[str, Dict[str, Any]]:
    """The provider's path and JSON body for a ModelRequest (Python port of
    core.ProviderRequest)."""
    for i, m in enumerate(req.get("messages") or []):
        if m.get("role") not in ("user", "assistant", "system"):
            raise ValueError("request.messages[%d].role: must be user, assistant or system, got %r" % (i, m.get("role")))
    model = req.get("model") or ""
    max_tokens = int(req.get("max_tokens") or 0)
    temperature = _num(req.get("temperature"))
    if provider == "anthropic":
        system = req.get("system") or ""
        if _blank(system):
            system = ""
        turns: List[Dict[str, str]] = []
        for m in req.get("messages") or []:
            c = _text(m.get("content"))
            if _blank(c):
                continue
            if m["role"] == "system":
                system = c if system == "" else system + "\n\n" + c
                continue
            if turns and turns[-1]["role"] == m["role"]:
                turns[-1]["content"] += "\n\n" + c
                continue
            turns.append({"role": m["role"], "content": c})
        if not turns or turns[0]["role"] != "user":
            turns.insert(0, {"role": "user", "content": CONTINUATION_PLACEHOLDER})
        if turns[-1]["role"] == "assistant":
            turns[-1]["content"] = turns[-1]["content"].rstrip(" \t\r\n")
        body: Dict[str, Any] = {"model": model, "max_tokens": max_tokens if max_tokens > 0 else DEFAULT_ANTHROPIC_MAX_TOKENS}
        if system:
            body["system"] = system
        body["messages"] = turns
        body["temperature"] = temperature
        return PATHS["anthropic"], body
    if provider == "openai":
        body = {"model": model, "messages": _chat_messages(req)}
        if max_tokens > 0:
            body["max_tokens"] = max_tokens
        body["temperature"] = temperature
        return PATHS["openai"], body
    if provider == "ollama":
        opts: Dict[str, Any] = {"temperature": temperature}
        if max_tokens > 0:
            opts["num_predict"] = max_tokens
        return PATHS["ollama"], {"model": model, "messages": _chat_messages(req), "stream": False, "options": opts}
    raise ValueError("provider: must be anthropic, openai or ollama, got %r" % provider)


# ---------------------------------------------------------------- wire: responses
_CONTEXT_PHRASES = ("prompt is too long", "context_length_exceeded", "maximum context length", "context length",
                    "context limit", "context size", "context window")


def classify(status: int, err_type: str, code: str, msg: str) -> Dict[str, Any]:
    """SPEC §2's error object for a failed provider response (port of
    core.classify)."""
    for k in (code, err_type):
        if k in ("rate_limit_error", "rate_limit_exceeded"):
            return llm_error("rate_limited", msg, True)
        if k == "insufficient_quota":
            return llm_error("rate_limited", msg, False)
        if k in ("overloaded_error", "api_error", "server_error"):
            return llm_error("unavailable", msg, True)
        if k == "timeout_error":
            return llm_error("timeout", msg, True)
        if k in ("authentication_error", "permission_error", "invalid_api_key", "billing_error"):
            return llm_error("auth", msg, False)
        if k in ("context_length_exceeded", "exceed_context_size_error", "request_too_large"):
            return llm_error("context_overflow", msg, False)
    if status == 429:
        return llm_error("rate_limited", msg, True)
    if status in (401, 403):
        return llm_error("auth", msg, False)
    if status in (408, 504):
        return llm_error("timeout", msg, True)
    low = msg.lower()
    if any(p in low for p in _CONTEXT_PHRASES) or status == 413:
        return llm_error("context_overflow", msg, False)
    if status >= 500:
        return llm_error("unavailable", msg, True)
    if status >= 400:
        return llm_error("invalid_request", msg, False)
    return llm_error("other", msg, False)


def _body_error(root: Any) -> Any:
    if not isinstance(root, dict):
        return None
    if "error" in root:
        return root["error"]
    if root.get("object") == "error" or root.get("type") == "error":
        return root
    return None


def _provider_error(status: int, root: Any, raw: bytes) -> Dict[str, Any]:
    err_type = code = msg = ""
    e = _body_error(root)
    if isinstance(e, str):
        msg = e
    elif isinstance(e, dict):
        msg = str(e.get("message") or "")
        err_type = str(e.get("type") or "")
        c = e.get("code")
        code = "" if c is None else str(c)
    if not msg and isinstance(root, dict):
        for k in ("message", "detail"):
            if isinstance(root.get(k), str) and root[k]:
                msg = root[k]
                break
    if not msg:
        msg = "HTTP %d" % status
        snippet = raw.decode("utf-8", "replace").strip()
        if snippet:
            msg += ": " + (snippet[:200] + "…" if len(snippet) > 200 else snippet)
    return classify(status, err_type, code, msg)


_FINISH = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
           "content_filter": "refusal"}


def provider_response(provider: str, status: int, body: bytes) -> Dict[str, Any]:
    """A ModelResponse, or SPEC's error object, from a provider's HTTP
    response (port of core.ProviderResponse). A 2xx body of the wrong shape
    is an ``other`` error."""
    try:
        root: Any = json.loads(body.decode("utf-8")) if body else None
        valid = body != b""
    except (ValueError, UnicodeDecodeError):
        root, valid = None, False
    if status < 200 or status > 299:
        return _provider_error(status, root if valid else None, body)
    if not valid or not isinstance(root, dict):
        return llm_error("other", "%s answered %d with a body that is not a JSON object" % (provider, status), False)
    e = _body_error(root)
    if e is not None:
        return _provider_error(status, root, body)
    try:
        if provider == "anthropic":
            blocks = [{"type": b["type"], "text": b["text"]} if b.get("type") == "text" else {"type": b["type"]}
                      for b in root["content"]]
            return {"content": blocks, "stop_reason": root.get("stop_reason") or "",
                    "usage": {"input_tokens": int((root.get("usage") or {}).get("input_tokens") or 0),
                              "output_tokens": int((root.get("usage") or {}).get("output_tokens") or 0)}}
        if provider == "openai":
            choice = root["choices"][0]
            text = _text(choice["message"].get("content"))
            usage = root.get("usage") or {}
            fr = choice.get("finish_reason") or ""
            return {"content": [{"type": "text", "text": text}], "stop_reason": _FINISH.get(fr, fr),
                    "usage": {"input_tokens": int(usage.get("prompt_tokens") or 0),
                              "output_tokens": int(usage.get("completion_tokens") or 0)}}
        msg = root["message"]
        dr = root.get("done_reason") or ("end_turn" if root.get("done") else "")
        return {"content": [{"type": "text", "text": _text(msg.get("content"))}], "stop_reason": _FINISH.get(dr, dr),
                "usage": {"input_tokens": int(root.get("prompt_eval_count") or 0),
                          "output_tokens": int(root.get("eval_count") or 0)}}
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as ex:
        return llm_error("other", "%s: malformed response body: %s" % (provider, ex), False)


# ---------------------------------------------------------------- HTTP adapters
class HTTPAdapter:
    """Shared HTTP plumbing; see OpenAICompatible and Anthropic."""

    provider = ""

    def __init__(self, base_url: str, api_key: Optional[str] = None, model: Optional[str] = None,
                 timeout: float = 120.0, headers: Optional[Mapping[str, str]] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = timeout
        self.extra_headers = dict(headers or {})
        self._plugin: Optional[ExportCaller] = None

    def attach_plugin(self, caller: ExportCaller) -> None:
        """Use the plug-in's providerRequest/providerResponse exports when it
        has them (a Compactor calls this)."""
        if caller.has_export("providerRequest") and caller.has_export("providerResponse"):
            self._plugin = caller

    def _headers(self) -> Dict[str, str]:
        raise NotImplementedError

    def url(self, path: str) -> str:
        base = self.base_url
        if base.endswith("/v1") and path.startswith("/v1/"):
            base = base[:-3]
        return base + path

    def _wire_request(self, req: Mapping[str, Any]) -> Tuple[str, Dict[str, Any]]:
        if self._plugin is not None:
            out = json.loads(self._plugin("providerRequest", json.dumps(
                {"provider": self.provider, "request": req}, ensure_ascii=False).encode("utf-8")))
            return str(out["url_path"]), dict(out["body"])
        return provider_request(self.provider, req)

    def _wire_response(self, status: int, body: bytes) -> Dict[str, Any]:
        if self._plugin is not None:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                text = body.decode("utf-8", "replace")
            try:
                out: Dict[str, Any] = json.loads(self._plugin("providerResponse", json.dumps(
                    {"provider": self.provider, "status": status, "body": text}, ensure_ascii=False).encode("utf-8")))
                return out
            except Exception as e:  # a malformed 2xx body
                return llm_error("other", "%s: %s" % (self.provider, e), False)
        return provider_response(self.provider, status, body)

    def __call__(self, request: ModelRequest) -> Dict[str, Any]:
        return self.complete(request)

    async def acomplete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        """:meth:`complete` for async code: the blocking request runs in a
        thread (``asyncio.to_thread``), never on the event loop. An
        AsyncCompactor does not need it: it calls ``complete`` in its worker
        thread."""
        return await asyncio.to_thread(self.complete, request)

    def complete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
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
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        http_req = urllib.request.Request(self.url(path), data=data, method="POST", headers=self._headers())
        try:
            with urllib.request.urlopen(http_req, timeout=timeout) as resp:
                status, raw = resp.status, resp.read()
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
        return await asyncio.to_thread(self.complete, request)

    def complete(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        if self._plugin is None:
            return llm_error("unavailable", "Extractive: no plug-in with the extractiveSummary export is attached "
                             "(a Compactor attaches its own)", False)
        out: Dict[str, Any] = json.loads(self._plugin("extractiveSummary", json.dumps(
            request, ensure_ascii=False).encode("utf-8")))
        return out
