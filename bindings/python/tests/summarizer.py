"""An OpenAI-compatible summarizer on a real HTTP server, for tests: it
answers each chat completion after ``latency`` seconds (or when ``gate``
is set), with a short summary of what it was sent, cut at the request's
``max_tokens`` as a model would, and counts the requests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional


class Summarizer:
    def __init__(self, latency: float = 0.0, gated: bool = False) -> None:
        self.latency = latency
        self.gate: Optional[threading.Event] = threading.Event() if gated else None
        self.calls = 0
        self.answered = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with outer._lock:
                    outer.calls += 1
                    n = outer.calls
                if outer.gate is not None:
                    outer.gate.wait(30)
                if outer.latency:
                    threading.Event().wait(outer.latency)
                texts = [m.get("content") for m in body.get("messages", []) if isinstance(m.get("content"), str)
                         and m.get("role") != "system"]
                longest = max(texts, key=len) if texts else ""
                text = "Summary of %d request messages (answer %d): %s" % (len(body.get("messages", [])), n,
                                                                           " ".join(longest.split()[:24]))
                limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
                if limit and len(text) > 2 * limit:
                    text = text[:2 * limit]
                out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 100, "completion_tokens": 10}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                with outer._lock:
                    outer.answered += 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def release(self) -> None:
        if self.gate is not None:
            self.gate.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "Summarizer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
