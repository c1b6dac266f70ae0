"""The HTTP adapters against a local http.server speaking the real OpenAI
and Anthropic wire formats (127.0.0.1 only)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import clipfold
from clipfold import Anthropic, Compactor, OpenAICompatible

from conftest import require_export

OPENAI_OK = {
    "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1772272800, "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "The user fixed the parser bug.",
                                         "refusal": None}, "logprobs": None, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
    "system_fingerprint": "fp_0123456789"}
ANTHROPIC_OK = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "The user fixed the parser bug."}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 9}}


def openai_error(message: str, type_: str, code: Any) -> Dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def anthropic_error(type_: str, message: str) -> Dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}}


class Recorder:
    def __init__(self) -> None:
        self.requests: List[Tuple[str, Dict[str, str], Any]] = []
        self.status = 200
        self.body: Any = OPENAI_OK
        self.delay = 0.0


@pytest.fixture
def server() -> Iterator[Tuple[str, Recorder]]:
    rec = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n))
            rec.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if rec.delay:
                time.sleep(rec.delay)
            data = rec.body if isinstance(rec.body, bytes) else json.dumps(rec.body).encode()
            try:
                self.send_response(rec.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield "http://127.0.0.1:%d" % httpd.server_address[1], rec
    finally:
        httpd.shutdown()
        httpd.server_close()


REQUEST = {"system": "You summarize.", "model": "", "max_tokens": 256, "temperature": 0, "timeout_ms": 5000,
           "messages": [{"role": "system", "content": "Previous summary of conversation:\nearlier"},
                        {"role": "user", "content": "fix the bug?"},
                        {"role": "assistant", "content": "fixed"},
                        {"role": "user", "content": "Summarize the conversation above."}]}


@pytest.fixture(params=["attached", "alone"])
def wire(request: Any, pure: Compactor) -> Any:
    """The adapters translate with the plug-in's providerRequest/
    providerResponse exports: a Compactor's (attached), or, used alone, the
    process-wide instance of the plug-in find_wasm finds. There is no
    Python copy of the wire formats."""
    require_export(pure, "providerRequest")
    require_export(pure, "providerResponse")
    return pure._aux if request.param == "attached" else None


def make(kind: str, base: str, wire: Any, **kw: Any) -> Any:
    a = OpenAICompatible(base, api_key="sk-test", model="gpt-4o-mini", **kw) if kind == "openai" \
        else Anthropic(base, api_key="sk-ant-test", model="claude-sonnet-4-5", **kw)
    if wire is not None:
        a.attach_plugin(wire)
    else:
        assert a._plugin is None
    return a


def test_openai_request_and_response(server: Tuple[str, Recorder], wire: Any) -> None:
    base, rec = server
    adapter = make("openai", base + "/v1", wire)
    out = adapter.complete(REQUEST)
    assert adapter._plugin is (wire or clipfold.llm.default_exports())
    assert out == {"content": [{"type": "text", "text": "The user fixed the parser bug."}], "stop_reason": "end_turn",
                   "usage": {"input_tokens": 120, "output_tokens": 9}}
    path, headers, body = rec.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["content-type"] == "application/json"
    assert body["model"] == "gpt-4o-mini" and body["max_tokens"] == 256 and body["temperature"] == 0
    assert body["messages"] == [{"role": "system", "content": "You summarize."}] + REQUEST["messages"]


def test_anthropic_request_and_response(server: Tuple[str, Recorder], wire: Any) -> None:
    base, rec = server
    rec.body = ANTHROPIC_OK
    out = make("anthropic", base, wire).complete(REQUEST)
    assert out["content"] == [{"type": "text", "text": "The user fixed the parser bug."}]
    assert out["stop_reason"] == "end_turn" and out["usage"] == {"input_tokens": 120, "output_tokens": 9}
    path, headers, body = rec.requests[0]
    assert path == "/v1/messages"
    assert headers["x-api-key"] == "sk-ant-test" and headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert body["system"] == "You summarize.\n\nPrevious summary of conversation:\nearlier"
    assert body["messages"] == REQUEST["messages"][1:]
    assert body["model"] == "claude-sonnet-4-5" and body["max_tokens"] == 256


def test_anthropic_first_turn_is_user(server: Tuple[str, Recorder], wire: Any) -> None:
    base, rec = server
    rec.body = ANTHROPIC_OK
    make("anthropic", base, wire).complete({"messages": [{"role": "assistant", "content": "hello"},
                                                         {"role": "user", "content": ""},
                                                         {"role": "user", "content": "go"}]})
    body = rec.requests[0][2]
    assert body["messages"][0] == {"role": "user", "content": "(conversation continues)"}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["max_tokens"] == 1024 and "system" not in body


ERRORS = [
    ("openai", 429, openai_error("Rate limit reached for gpt-4o-mini", "requests", "rate_limit_exceeded"), "rate_limited", True),
    ("openai", 429, openai_error("You exceeded your current quota", "insufficient_quota", "insufficient_quota"), "rate_limited", False),
    ("openai", 500, openai_error("The server had an error", "server_error", None), "unavailable", True),
    ("openai", 503, b"<html>Service Unavailable</html>", "unavailable", True),
    ("openai", 401, openai_error("Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key"), "auth", False),
    ("openai", 400, openai_error("This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
                                 "invalid_request_error", "context_length_exceeded"), "context_overflow", False),
    ("openai", 400, openai_error("Invalid value for 'temperature'", "invalid_request_error", None), "invalid_request", False),
    ("anthropic", 529, anthropic_error("overloaded_error", "Overloaded"), "unavailable", True),
    ("anthropic", 429, anthropic_error("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), "rate_limited", True),
    ("anthropic", 403, anthropic_error("permission_error", "Your API key does not have permission"), "auth", False),
    ("anthropic", 401, anthropic_error("authentication_error", "invalid x-api-key"), "auth", False),
    ("anthropic", 400, anthropic_error("invalid_request_error", "prompt is too long: 201234 tokens > 200000 maximum"), "context_overflow", False),
    ("anthropic", 500, anthropic_error("api_error", "Internal server error"), "unavailable", True),
]


@pytest.mark.parametrize("kind,status,body,code,retryable", ERRORS,
                         ids=["%s-%d-%s" % (k, s, c) for k, s, _, c, _ in ERRORS])
def test_errors_are_mapped(server: Tuple[str, Recorder], wire: Any, kind: str, status: int, body: Any,
                           code: str, retryable: bool) -> None:
    base, rec = server
    rec.status, rec.body = status, body
    out = make(kind, base, wire).complete(REQUEST)
    assert set(out) == {"error"}
    assert out["error"]["code"] == code and out["error"]["retryable"] is retryable, out
    assert out["error"]["message"]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_timeout_honours_timeout_ms(server: Tuple[str, Recorder], kind: str) -> None:
    base, rec = server
    rec.delay = 1.5
    start = time.monotonic()
    out = make(kind, base, None, timeout=30).complete(dict(REQUEST, timeout_ms=200))
    assert time.monotonic() - start < 1.2
    assert out["error"]["code"] == "timeout" and out["error"]["retryable"] is True
    assert make(kind, base, None).complete(dict(REQUEST, timeout_ms=0))["error"]["code"] == "timeout"


def test_connection_refused_is_unavailable() -> None:
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    out = OpenAICompatible("http://127.0.0.1:%d" % port).complete(REQUEST)
    assert out["error"]["code"] == "unavailable" and out["error"]["retryable"] is True


def test_compress_through_openai_adapter(server: Tuple[str, Recorder], wasm: str) -> None:
    base, rec = server
    from test_compress import CONFIG, build_conversation
    with Compactor(wasm, llm=OpenAICompatible(base, api_key="k", model="m"), config=CONFIG) as c:
        require_export(c, "compress")
        r = c.compress("c1", build_conversation(30))
        assert not r["failed"], r
        assert r["llm_calls"] == len(rec.requests) == 3
        for path, headers, body in rec.requests:
            assert path == "/v1/chat/completions" and body["model"] == "m"
            assert body["messages"][0]["role"] == "system"
        assert "The user fixed the parser bug." in r["history"][0]["content"]


def test_compress_maps_http_failure(server: Tuple[str, Recorder], wasm: str) -> None:
    base, rec = server
    rec.status, rec.body = 401, anthropic_error("authentication_error", "invalid x-api-key")
    from test_compress import CONFIG, build_conversation
    with Compactor(wasm, llm=Anthropic(base, api_key="bad"), config=CONFIG) as c:
        require_export(c, "compress")
        history = build_conversation(30)
        r = c.compress("c1", history)
        assert r["failed"] and r["failure_code"] == "llm_failed"
        assert len(rec.requests) == 1  # auth is not retried
        assert r["history"] == history


def test_no_python_copy_of_the_wire_formats() -> None:
    """The providerRequest/providerResponse exports are the only
    implementation (the Python port of core/provider.go is gone)."""
    for name in ("provider_request", "provider_response", "classify"):
        assert not hasattr(clipfold.llm, name), name
