"""After compaction the model's request starts with a user turn.

An agent compacted in the middle of a tool loop keeps messages that start
with an assistant turn making tool calls; the plug-in then writes the
clip-archive as a user turn (docs/spec.md#message-shapes), so the request
every adapter sends starts with one, as Gemini and other providers and
gateways require. Checked on the wire: each adapter drives a real agent
whose model is LangChain's own ChatOpenAI or ChatAnthropic, talking to a
local HTTP server that plays the provider (scripted tool calls, then an
answer) and keeps every request body — the providers' own message
conversion, checked against the providers' documented rules.
"""

import json
import sys
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

if sys.version_info < (3, 10):  # pragma: no cover - the frameworks need 3.10
    pytest.skip("LangChain 1.x needs Python 3.10", allow_module_level=True)

from langchain.agents import create_agent  # noqa: E402
from langchain_anthropic import ChatAnthropic  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from clipfold import Compactor  # noqa: E402
from clipfold.langchain import ClipfoldMiddleware  # noqa: E402
from clipfold.langgraph import pre_model_hook  # noqa: E402

STEPS = 10  # tool calls per question, one after the other


@tool
def read_file(path: str) -> str:
    """Reads a file of the repository."""
    body = " ".join("line %d of %s: retry budget %d, owner team-%s, timeout %d ms." % (k, path, 10 + k, path[-1], 100 * k)
                    for k in range(8))
    return "%s (%d bytes): %s" % (path, 40 * len(body), body)


class Provider:
    """A local server playing OpenAI Chat Completions or the Anthropic
    Messages API: for each question, STEPS tool calls one after the other,
    then an answer; every request body is kept."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.bodies: List[Dict[str, Any]] = []
        self.calls = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                out = json.dumps(provider.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self.bodies.append(body)
        # The last message says whether a tool result came in: count the
        # loop's steps from the requests themselves.
        last = body["messages"][-1]
        results = last.get("role") == "tool" or (
            isinstance(last.get("content"), list) and any(b.get("type") == "tool_result" for b in last["content"]))
        self.calls = self.calls + 1 if results else 0
        tokens = len(json.dumps(body)) // 4  # the provider's count, about right
        n = len(self.bodies)
        if self.calls < STEPS:
            path = "src/module_%d.py" % n
            if self.kind == "openai":
                msg: Dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_%d" % n, "type": "function",
                     "function": {"name": "read_file", "arguments": json.dumps({"path": path})}}]}
                return self._openai(msg, "tool_calls", tokens)
            return self._anthropic([{"type": "tool_use", "id": "toolu_%d" % n, "name": "read_file",
                                     "input": {"path": path}}], "tool_use", tokens)
        text = "All %d files read: every module keeps a retry budget." % STEPS
        if self.kind == "openai":
            return self._openai({"role": "assistant", "content": text}, "stop", tokens)
        return self._anthropic([{"type": "text", "text": text}], "end_turn", tokens)

    def _openai(self, msg: Dict[str, Any], finish: str, tokens: int) -> Dict[str, Any]:
        return {"id": "chatcmpl-%d" % len(self.bodies), "object": "chat.completion", "created": 0, "model": "gpt-4o",
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20}}

    def _anthropic(self, content: List[Dict[str, Any]], stop: str, tokens: int) -> Dict[str, Any]:
        return {"id": "msg_%d" % len(self.bodies), "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": tokens, "output_tokens": 20}}

    def model(self) -> Any:
        if self.kind == "openai":
            return ChatOpenAI(model="gpt-4o", api_key="sk-test", base_url=self.url + "/v1", max_retries=0)  # type: ignore[arg-type]
        return ChatAnthropic(model="claude-sonnet-5-5", api_key="sk-ant-test", base_url=self.url,  # type: ignore[arg-type,call-arg]
                             max_retries=0)


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: Any) -> Iterator[Provider]:
    p = Provider(request.param)
    yield p
    p.close()


def check_openai(body: Dict[str, Any]) -> None:
    """OpenAI Chat Completions: the first message that is not a system (or
    developer) message is the user's; an assistant message with tool_calls
    is followed at once by one tool message for each call, and a tool
    message answers a call of the assistant message before its run."""
    msgs = body["messages"]
    first = next(m for m in msgs if m["role"] not in ("system", "developer"))
    assert first["role"] == "user", "the first turn is %s: %s" % (first["role"], json.dumps(msgs)[:600])
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m["role"] != "tool", "a tool message not right after its call: %s" % m
        if m["role"] == "assistant" and m.get("tool_calls"):
            want = {c["id"] for c in m["tool_calls"]}
            got = set()
            i += 1
            while i < len(msgs) and msgs[i]["role"] == "tool":
                assert msgs[i]["tool_call_id"] in want, msgs[i]
                got.add(msgs[i]["tool_call_id"])
                i += 1
            assert got == want, "calls without their results: %s" % (want - got)
            continue
        i += 1


def check_anthropic(body: Dict[str, Any]) -> None:
    """The Messages API: no system role in messages; the first message is a
    user turn that is not made of tool results; user and assistant turns
    alternate; an assistant turn with tool_use blocks is followed by a user
    turn that starts with a tool_result for each of them, and a
    tool_result answers a tool_use of the assistant turn just before."""
    msgs = body["messages"]
    assert all(m["role"] in ("user", "assistant") for m in msgs), [m["role"] for m in msgs]
    assert msgs[0]["role"] == "user", "the first turn is %s: %s" % (msgs[0]["role"], json.dumps(msgs)[:600])

    def blocks(m: Dict[str, Any]) -> List[Dict[str, Any]]:
        c = m["content"]
        return [{"type": "text", "text": c}] if isinstance(c, str) else c

    assert any(b["type"] != "tool_result" for b in blocks(msgs[0])), "the first turn is tool results alone"
    for prev, m in zip(msgs, msgs[1:]):
        assert prev["role"] != m["role"], "two %s turns in a row" % m["role"]
    for i, m in enumerate(msgs):
        results = [b for b in blocks(m) if b["type"] == "tool_result"]
        uses = {b["id"] for b in blocks(msgs[i - 1]) if b["type"] == "tool_use"} if i > 0 else set()
        for r in results:
            assert r["tool_use_id"] in uses, "a tool_result not right after its tool_use: %s" % r
        if m["role"] == "assistant":
            mine = [b["id"] for b in blocks(m) if b["type"] == "tool_use"]
            if mine:
                assert i + 1 < len(msgs), "a tool_use without its result"
                nxt = blocks(msgs[i + 1])
                lead = [b["tool_use_id"] for b in nxt[:len(mine)] if b["type"] == "tool_result"]
                assert sorted(lead) == sorted(mine), "the next turn does not start with the results: %s" % nxt


CHECKS: Dict[str, Callable[[Dict[str, Any]], None]] = {"openai": check_openai, "anthropic": check_anthropic}


def archived_first(provider: Provider) -> List[int]:
    """The requests whose first turn is the clip-archive, followed by a tool call."""
    out = []
    for n, body in enumerate(provider.bodies):
        msgs = [m for m in body["messages"] if m["role"] not in ("system", "developer")]
        c = msgs[0]["content"]
        text = c if isinstance(c, str) else " ".join(b.get("text", "") for b in c)
        if text.startswith("[Context Summary") and len(msgs) > 1 and msgs[1]["role"] == "assistant":
            out.append(n)
    return out


def run_agent(invoke: Callable[[Dict[str, Any]], Any]) -> None:
    for q in ("Read the ten modules and tell me their retry budgets.", "Now read them again: did anything change?"):
        invoke({"messages": [{"role": "user", "content": q}]})


@pytest.mark.parametrize("caller_owned", [True, False], ids=["caller-owned", "store-owned"])
def test_middleware_requests_start_with_a_user_turn(wasm: str, provider: Provider, caller_owned: bool) -> None:
    with Compactor(wasm) as compactor:
        mw = ClipfoldMiddleware(trigger=("messages", 8), keep=("messages", 3), compactor=compactor,
                                caller_owned=caller_owned, config={"max_summary_tokens": 80})
        agent = create_agent(provider.model(), tools=[read_file], middleware=[mw],
                             system_prompt="You are the team's assistant.", checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "loop-" + provider.kind}}
        run_agent(lambda x: agent.invoke(x, cfg))
        assert len(provider.bodies) == 2 * (STEPS + 1)
        for body in provider.bodies:
            CHECKS[provider.kind](body)
        assert len(archived_first(provider)) >= 2, "compactions in the middle of the tool loop"
        # The state holds the clip-archive as a user turn (LangChain's human
        # message) while the kept messages start with a tool call; the next
        # compaction read it as the prior one: one clip-archive, first.
        state = agent.get_state(cfg).values["messages"]
        archives = [m for m in state if str(m.content).startswith("[Context Summary")]
        assert len(archives) == 1 and state[0] is archives[0]


def test_pre_model_hook_requests_start_with_a_user_turn(wasm: str, provider: Provider) -> None:
    from langgraph.prebuilt import create_react_agent
    with Compactor(wasm) as compactor:
        hook = pre_model_hook(compactor, keep=("messages", 3),
                              config={"model_max_tokens": 1600, "context_budget": 0.5, "max_summary_tokens": 80})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # LangGraph 1.x points to langchain's create_agent
            agent = create_react_agent(provider.model(), [read_file], pre_model_hook=hook,
                                       prompt="You are the team's assistant.", checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "hook-" + provider.kind}}
        run_agent(lambda x: agent.invoke(x, cfg))
        assert len(provider.bodies) == 2 * (STEPS + 1)
        for body in provider.bodies:
            CHECKS[provider.kind](body)
        assert len(archived_first(provider)) >= 2, "compactions in the middle of the tool loop"
        # The view starts with the clip-archive as a human message when a
        # tool call follows it.
        r = hook.last_result
        assert r is not None and not r["failed"]
        hook.conversation_id = cfg["configurable"]["thread_id"]
        view = hook({"messages": agent.get_state(cfg).values["messages"]})["llm_input_messages"]
        assert str(view[0].content).startswith("[Context Summary")
        if view[1].type != "human":
            assert isinstance(view[0], HumanMessage)
