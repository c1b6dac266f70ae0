"""The HTTP adapters keep the key and the conversation on the configured
host (real http.server instances on 127.0.0.1), and no URL they print keeps
a password or a key."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

from clipfold import Anthropic, OpenAICompatible
from clipfold._redact import redact

from conftest import REPO
from test_http import ANTHROPIC_OK, OPENAI_OK, REQUEST, openai_error

STATUSES = [301, 302, 303, 307, 308]


class Server:
    """A local server; ``answer(handler, method)`` answers each request.
    Counts connections (before any request is read) and requests."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler, str], None]) -> None:
        self.connections = 0
        self.requests: List[Tuple[str, str, Dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one(self, method: str) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                outer.requests.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                answer(self, method)

            def do_POST(self) -> None:  # noqa: N802
                self.handle_one("POST")

            def do_GET(self) -> None:  # noqa: N802
                self.handle_one("GET")

            def log_message(self, *args: Any) -> None:
                pass

        class Counting(ThreadingHTTPServer):
            def verify_request(self, request: Any, client_address: Any) -> bool:
                outer.connections += 1
                return True

        self.httpd = Counting(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(h: BaseHTTPRequestHandler, status: int, body: Any, headers: Dict[str, str] = {}) -> None:
    data = json.dumps(body).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    for k, v in headers.items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)


@pytest.fixture
def servers() -> Iterator[Callable[[Callable[[BaseHTTPRequestHandler, str], None]], Server]]:
    made: List[Server] = []

    def make(answer: Callable[[BaseHTTPRequestHandler, str], None]) -> Server:
        made.append(Server(answer))
        return made[-1]

    yield make
    for s in made:
        s.close()


def adapter(kind: str, base: str) -> Any:
    if kind == "openai":
        return OpenAICompatible(base, api_key="sk-secret", model="m")
    return Anthropic(base, api_key="sk-secret", model="m")


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("status", STATUSES)
def test_cross_host_redirect_is_refused(servers: Any, kind: str, status: int) -> None:
    ok = OPENAI_OK if kind == "openai" else ANTHROPIC_OK
    sink = servers(lambda h, method: reply(h, 200, ok))  # would answer like the provider
    redirector = servers(lambda h, method: reply(h, status, {}, {"Location": sink.url + h.path}))
    out = adapter(kind, redirector.url).complete(REQUEST)
    assert set(out) == {"error"}, "no summary: %r" % out
    err = out["error"]
    assert err["code"] == "other" and err["retryable"] is False, err
    assert redirector.url in err["message"] and sink.url in err["message"], err["message"]
    assert "sk-secret" not in err["message"]
    assert sink.connections == 0 and sink.requests == [], "the other host is never contacted"
    assert len(redirector.requests) == 1


@pytest.mark.parametrize("status", STATUSES)
def test_same_host_redirect(servers: Any, status: int) -> None:
    def answer(h: BaseHTTPRequestHandler, method: str) -> None:
        if h.path.startswith("/moved/"):
            reply(h, 200, ANTHROPIC_OK)
        else:
            reply(h, status, {}, {"Location": "/moved" + h.path + "?sig=s3cret"})

    srv = servers(answer)
    out = adapter("anthropic", srv.url).complete(REQUEST)
    if status in (307, 308):
        assert out["content"] == ANTHROPIC_OK["content"], out
        method, path, headers, body = srv.requests[1]
        assert (method, path) == ("POST", "/moved/v1/messages?sig=s3cret")
        assert headers["x-api-key"] == "sk-secret" and headers["anthropic-version"] == "2023-06-01"
        assert json.loads(body)["messages"] == REQUEST["messages"][1:]
    else:
        assert out["error"]["code"] == "other" and out["error"]["retryable"] is False, out
        msg = out["error"]["message"]
        assert srv.url + "/v1/messages" in msg and srv.url + "/moved/v1/messages?sig=xxxxx" in msg, msg
        assert "s3cret" not in msg
        assert len(srv.requests) == 1, "not followed"


def test_error_messages_are_redacted(servers: Any) -> None:
    srv = servers(lambda h, method: reply(h, 400, openai_error(
        "cannot fetch https://user:hunter2@files.example/doc?api_key=sk-9", "invalid_request_error", None)))
    out = OpenAICompatible(srv.url, api_key="k").complete(REQUEST)
    assert out["error"]["code"] == "invalid_request"
    assert out["error"]["message"].endswith("cannot fetch https://user:xxxxx@files.example/doc?api_key=xxxxx")


def test_redaction_vectors() -> None:
    """The cases every host's redaction passes (Go: internal/redact)."""
    vectors = json.loads((REPO / "testdata" / "redact" / "vectors.json").read_text("utf-8"))
    assert vectors["url"] and vectors["text"]
    for case in vectors["url"] + vectors["text"]:
        assert redact(case["in"]) == case["out"], case
        assert redact(redact(case["in"])) == case["out"], case
