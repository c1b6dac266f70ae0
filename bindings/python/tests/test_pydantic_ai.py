"""clipfold inside real Pydantic AI agents (the package from PyPI, pinned
in tests/requirements-frameworks.txt): a 55-turn agent with tool calls
driven by Pydantic AI's own FunctionModel, every request it receives
counted with the plug-in (and reported back as the provider's usage);
then the same agent through Pydantic AI's own OpenAI and Anthropic models
against a local HTTP server, to see what those providers are sent."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence, Set, Tuple

import pytest

# A test requirement (run_tests.sh installs it): an ImportError fails the suite, it never skips.
import pydantic_ai  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import (ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse,  # noqa: E402
                                  TextPart, ToolCallPart, ToolReturnPart, UserPromptPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402

from clipfold import Compactor, SQLiteStore  # noqa: E402
from clipfold.pydantic_ai import ClipfoldHistory, memory_read_tool, to_clipfold, tool_schemas  # noqa: E402

from conftest import REPO  # noqa: E402

CODENAME = "BLUE-HERON-7"
TURNS = 55
SYSTEM = "You are the team's assistant."
INSTRUCTIONS = "Answer in one sentence."
LIMIT = 4000  # model_max_tokens of these agents


def lookup_notes(module: int) -> str:
    """Looks up the team's notes about a module."""
    extra = " The codename of the project is %s; keep it secret." % CODENAME if module == 0 else ""
    log = " ".join("[ingest-%d] %02d:%02d retry %d of %d scheduled after %d ms backoff" % (
        module, 10 + k, 7 * k % 60, k + 1, 10 + module, 100 * 2 ** k) for k in range(6))
    return ("Notes for module %d: the retry budget is %d attempts with exponential backoff, the owner is team %s."
            "%s Recent log: %s" % (module, 10 + module, "abcdefgh"[module % 8], extra, log))


def question(i: int) -> str:
    if i == TURNS:
        return "What was the codename of the project again?"
    return "Turn %d: what is the retry budget of module %d, and who owns it?" % (i, i)


class Scripted:
    """The model: a tool call for each question (two at once every fifth
    turn), an answer after the results; memory_read for the codename.
    Each request is counted with the plug-in — the messages as the adapter
    sends them, the instructions and tool definitions as overhead — and
    the count is the response's usage, as a provider reports it."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        self.requests: List[Tuple[List[ModelMessage], int]] = []

    def count(self, messages: List[ModelMessage], info: AgentInfo) -> int:
        sent, _ = to_clipfold(messages)
        return self.compactor.estimate_tokens(sent) + self.compactor.overhead_tokens(
            info.instructions, tool_schemas(info.function_tools))

    def __call__(self, messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = self.count(messages, info)
        self.requests.append((list(messages), n))
        usage = RequestUsage(input_tokens=n, output_tokens=20)
        last = messages[-1]
        prompts = [p for p in last.parts if isinstance(p, UserPromptPart)]
        if prompts:
            q = str(prompts[-1].content)
            if "codename" in q:
                return ModelResponse(parts=[ToolCallPart("memory_read", {"query": "the codename of the project"},
                                                         tool_call_id="call_memory")], usage=usage)
            k = int(q.split()[1].rstrip(":")) if q.startswith("Turn") else 0
            calls = [ToolCallPart("lookup_notes", {"module": k}, tool_call_id="call_%d" % k)]
            if k % 5 == 4:
                calls.append(ToolCallPart("lookup_notes", {"module": k + 100}, tool_call_id="call_%d_b" % k))
            return ModelResponse(parts=[TextPart("Let me look that up."), *calls], usage=usage)
        results = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if results and results[0].tool_name == "memory_read":
            return ModelResponse(parts=[TextPart("From memory: %s" % str(results[0].content)[:40])], usage=usage)
        k = int(str(results[0].content).split()[3].rstrip(":")) if results else -1
        return ModelResponse(parts=[TextPart("Module %d keeps a retry budget of %d attempts." % (k, 10 + k))],
                             usage=usage)


def assert_request_ok(messages: Sequence[ModelMessage]) -> None:
    """What every provider accepts: the first message that is not only
    system prompts is a user turn, and every tool call has its result in
    the next request, every result its call."""
    first = next(m for m in messages if not (isinstance(m, ModelRequest) and
                                              all(p.part_kind == "system-prompt" for p in m.parts)))
    assert isinstance(first, ModelRequest) and any(isinstance(p, UserPromptPart) for p in first.parts), first
    for k, m in enumerate(messages):
        if isinstance(m, ModelResponse):
            calls = {p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)}
            if calls and k + 1 < len(messages):
                nxt = messages[k + 1]
                assert isinstance(nxt, ModelRequest)
                assert calls == {p.tool_call_id for p in nxt.parts if isinstance(p, ToolReturnPart)}, (m, nxt)
        else:
            returns = {p.tool_call_id for p in m.parts if isinstance(p, ToolReturnPart)}
            if returns:
                prev = messages[k - 1] if k else None
                assert isinstance(prev, ModelResponse), "a tool result without its call: %r" % m
                assert returns == {p.tool_call_id for p in prev.parts if isinstance(p, ToolCallPart)}


def part_dumps(m: Any) -> Set[str]:
    """The parts of a message (or of its JSON) as JSON text, but a clip-archive."""
    d = m if isinstance(m, dict) else ModelMessagesTypeAdapter.dump_python([m], mode="json")[0]
    return {json.dumps(p, sort_keys=True) for p in d["parts"]
            if not str(p.get("content")).startswith("[Context Summary")}


def is_archive(m: ModelMessage) -> bool:
    """Whether m holds the clip-archive (after the system prompts, in the request they lead)."""
    return isinstance(m, ModelRequest) and any(
        isinstance(p, UserPromptPart) and str(p.content).startswith("[Context Summary") for p in m.parts)


def recall_originals(store: SQLiteStore, conv: str) -> List[Dict[str, Any]]:
    """The Pydantic AI messages recall storage holds (each plug-in message carries its own)."""
    rows = store.connection.execute("SELECT raw FROM recall WHERE conversation_id = ?", (conv,)).fetchall()
    return [json.loads(r[0])["pydantic_ai"] for r in rows if "pydantic_ai" in json.loads(r[0])]


def compactions(store: SQLiteStore, conv: str) -> int:
    return int(store.connection.execute("SELECT COUNT(DISTINCT operation_id) FROM recall WHERE conversation_id = ?",
                                        (conv,)).fetchone()[0])


def assert_pinned(package: str) -> None:
    """The version installed is the one tests/requirements-frameworks.txt pins."""
    pins = dict(line.split("==") for line in
                (REPO / "bindings" / "python" / "tests" / "requirements-frameworks.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    from importlib.metadata import version
    assert version(package) == pins[package], package


def test_versions_proven() -> None:
    assert_pinned("pydantic-ai-slim")


def run_agent(history: ClipfoldHistory, model: Scripted, compactor: Compactor,
              conv: str) -> Tuple[List[ModelMessage], Set[str]]:
    """TURNS + 1 runs of an agent with the history processor, each given
    the last one's messages: the messages after the last, and every part
    the agent ever had (as JSON)."""
    agent = Agent(FunctionModel(model), system_prompt=SYSTEM, instructions=INSTRUCTIONS,
                  tools=[lookup_notes, memory_read_tool(compactor, max_tokens=400)],
                  capabilities=[ProcessHistory(history)])
    messages: List[ModelMessage] = []
    ever: Set[str] = set()
    for i in range(TURNS + 1):
        result = agent.run_sync(question(i), message_history=messages, conversation_id=conv)
        assert history.last_result is None or not history.last_result["failed"], history.last_result
        messages = result.all_messages()
        for m in messages:
            ever |= part_dumps(m)
    assert len(model.requests) == 2 * (TURNS + 1)
    return messages, ever


def assert_run_kept(store: SQLiteStore, conv: str, model: Scripted, messages: List[ModelMessage],
                    ever: Set[str]) -> None:
    """Every request within the window, tool pairs intact, a user turn
    first; the history the system prompt, the summary and the newest
    turns; memory_read found the codename of turn 0; every part the agent
    ever had in the context or in recall storage, once."""
    for req, n in model.requests:
        assert n <= LIMIT, "a request over the window: %d tokens" % n
        assert_request_ok(req)
    first = messages[0]
    assert isinstance(first, ModelRequest) and first.parts[0].part_kind == "system-prompt"
    assert is_archive(first) and sum(map(is_archive, messages)) == 1
    assert len(messages) < 4 * TURNS // 3
    # memory_read found the codename of turn 0, whose tool result left the context long ago.
    answer = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)
              and p.tool_call_id == "call_memory"]
    assert answer and CODENAME in str(answer[0].content), answer
    assert not any(isinstance(p, ToolReturnPart) and p.tool_call_id == "call_0" for m in messages for p in m.parts)
    # Nothing lost, nothing twice: every part the agent ever had is in the
    # context or in recall storage (as part of the message it was in: Pydantic AI
    # merges consecutive requests), and recall holds each message once.
    recalled = recall_originals(store, conv)
    assert len(recalled) == len({json.dumps(r, sort_keys=True) for r in recalled})
    kept = {p for m in messages for p in part_dumps(m)} | {p for r in recalled for p in part_dumps(r)}
    missing = [p for p in ever if p not in kept]
    assert missing == [], missing[:3]


def test_agent_with_clipfold_history(wasm: str, tmp_path: Path) -> None:
    """55 turns with tool calls (parallel ones too) in a 4,000-token
    window: every request within it, tool pairs intact, a user turn
    first; the summary in the history; memory_read finds the codename of
    turn 0; every message the agent ever had is in the context or in
    recall storage, once."""
    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Compactor(wasm, store=store, config={"max_summary_tokens": 120}) as compactor:
        history = ClipfoldHistory(compactor, config={"model_max_tokens": LIMIT})
        model = Scripted(compactor)
        messages, ever = run_agent(history, model, compactor, "conv-1")
        assert compactions(store, "conv-1") >= 3, "compaction happened, again and again"
        assert max(n for _, n in model.requests) > LIMIT // 2, "the window was used"
        assert_run_kept(store, "conv-1", model, messages, ever)


class Paced(Scripted):
    """Scripted, each model call first reported to a Pacer."""

    def __init__(self, compactor: Compactor, pace: Any) -> None:
        super().__init__(compactor)
        self.pace = pace

    def __call__(self, messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.pace.model_call()
        return super().__call__(messages, info)


@pytest.mark.parametrize("hold", [2, 4])
def test_agent_compacting_ahead_of_time(wasm: str, tmp_path: Path, hold: int) -> None:
    """ahead=True, 56 turns with tool calls: over the soft threshold the
    compaction starts in the background and the requests go on (the
    summarizer holds its request while the model is called, for ``hold``
    requests); a later request applies it, and none waits. Every request
    within the window, tool pairs intact, the summary in the history,
    nothing lost. Held longer, the history grows more meanwhile and the
    request that applies a compaction starts the next one: made of the
    list before, it is applied too, never dropped."""
    from clipfold import OpenAICompatible
    from pacing import Pacer
    from summarizer import Summarizer

    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Summarizer(gated=True) as s, Compactor(wasm, store=store, llm=OpenAICompatible(s.url, api_key="k", model="m"),
                                                config={"max_summary_tokens": 120}) as compactor, \
            Compactor(wasm) as counter:  # the model's count: its own plug-in, not the adapter's
        history = ClipfoldHistory(compactor, config={"model_max_tokens": LIMIT}, ahead=True)
        pace = Pacer(s, compactor, hold)
        model = Paced(counter, pace)
        messages, ever = run_agent(history, model, compactor, "ahead-1")
        assert len(pace.results) == len(model.requests)
        pace.assert_applied_in_the_background(at_least=3)
        assert history.last_ahead == pace.results[-1]
        assert not any(r["discarded"] for r in pace.results)
        if hold == 4:
            assert any(r["compaction"] is not None and r["started"] for r in pace.results)
        assert compactions(store, "ahead-1") == len(pace.applied)
        assert_run_kept(store, "ahead-1", model, messages, ever)


def test_async_run_and_rewritten_tool_results(wasm: str) -> None:
    """agent.run (asyncio) with tool results too large for the window:
    clipfold clears the oldest in place (the call keeps its result, a line
    naming where the output is kept), the model gets the cleared text, and
    the original is in recall."""
    import asyncio

    def big_tool(module: int) -> str:
        """Dumps a module's full log."""
        return ("%s " % CODENAME if module == 0 else "") + " ".join(
            "line %d of module %d: nothing unusual happened here" % (k, module) for k in range(120))

    with Compactor(wasm, config={"max_summary_tokens": 60}) as compactor:
        history = ClipfoldHistory(compactor, config={"model_max_tokens": 3000, "keep_recent": 40})
        seen: List[List[ModelMessage]] = []

        def fn(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            last = messages[-1]
            if any(isinstance(p, UserPromptPart) for p in last.parts):
                k = len(seen)
                return ModelResponse(parts=[ToolCallPart("big_tool", {"module": k}, tool_call_id="c%d" % k)])
            return ModelResponse(parts=[TextPart("ok")])

        agent = Agent(FunctionModel(fn), tools=[big_tool], capabilities=[ProcessHistory(history)])

        async def run() -> List[ModelMessage]:
            msgs: List[ModelMessage] = []
            for i in range(6):
                msgs = (await agent.run("look at module %d" % i, message_history=msgs,
                                        conversation_id="c-async")).all_messages()
            return msgs
        msgs = asyncio.run(run())
        cleared = [p for m in msgs for p in m.parts if isinstance(p, ToolReturnPart)
                   and "in recall storage as" in str(p.content)]
        assert cleared, [str(getattr(p, "content", ""))[:80] for m in msgs for p in m.parts]
        assert any("in recall storage as" in str(getattr(p, "content", "")) for m in seen[-1] for p in m.parts)
        for req in seen:
            assert_request_ok(req)
            assert compactor.estimate_tokens(to_clipfold(req)[0]) <= 3000
        assert compactor.store.recall_count("c-async") >= len(cleared)


def test_readme_example_runs(wasm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's example runs as written, `model` and `tools` standing
    for the reader's own; more turns of its agent compact into its store."""
    from test_langchain import readme_block
    monkeypatch.chdir(tmp_path)
    with Compactor(wasm) as counter:
        model = Scripted(counter)
        ns: Dict[str, Any] = {"model": FunctionModel(model), "tools": [lookup_notes]}
        exec(compile(readme_block("Use with Pydantic AI"), "README.md", "exec"), ns)  # noqa: S102
        agent, messages = ns["agent"], ns["messages"]
        for i in range(1, 10):
            messages = agent.run_sync(question(i), message_history=messages,
                                      conversation_id="conversation-1").all_messages()
        for req, n in model.requests:
            assert n <= 1000
            assert_request_ok(req)
    with SQLiteStore(str(tmp_path / "agent.db")) as store:
        assert compactions(store, "conversation-1") >= 1, "the example compacts"


class ScriptedHTTP(BaseHTTPRequestHandler):
    """A provider's HTTP API, scripted by answer(): each request body is
    kept in ``bodies``."""

    bodies: List[Dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        data, content_type = self.answer(body)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self, body: Dict[str, Any]) -> Tuple[bytes, str]:
        raise NotImplementedError


def serve(handler: Any) -> Iterator[str]:
    """A local server of handler (its bodies emptied): its base URL."""
    handler.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def chat_completion(body: Dict[str, Any], n: int, used: int, answered: bool) -> Dict[str, Any]:
    """An OpenAI chat completion: "Done." once the tools answered, else a call of lookup_notes."""
    msg: Dict[str, Any] = {"role": "assistant", "content": "Done."} if answered else {
        "role": "assistant", "content": None, "tool_calls": [{
            "id": "call_%d" % n, "type": "function",
            "function": {"name": "lookup_notes", "arguments": json.dumps({"module": n})}}]}
    return {"id": "chatcmpl-%d" % n, "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": msg, "finish_reason": "stop" if answered else "tool_calls"}],
            "usage": {"prompt_tokens": used, "completion_tokens": 5, "total_tokens": used + 5}}


class FakeProvider(ScriptedHTTP):
    """OpenAI Chat Completions and Anthropic Messages, scripted: a tool
    call for a user question, a reply after tool results, the usage about
    a third of the request's characters."""

    def answer(self, body: Dict[str, Any]) -> Tuple[bytes, str]:
        anthropic = "/messages" in self.path
        last = body["messages"][-1]
        content = last.get("content")
        answered = last.get("role") == "tool" or (isinstance(content, list) and any(
            b.get("type") == "tool_result" for b in content))
        n = len(type(self).bodies)
        used = len(json.dumps(body)) // 3  # a provider's count of the request, about
        if anthropic:
            block = {"type": "text", "text": "Done."} if answered else {
                "type": "tool_use", "id": "toolu_%d" % n, "name": "lookup_notes", "input": {"module": n}}
            out: Dict[str, Any] = {"id": "msg_%d" % n, "type": "message", "role": "assistant", "model": body["model"],
                                   "content": [block], "stop_reason": "end_turn" if answered else "tool_use",
                                   "stop_sequence": None, "usage": {"input_tokens": used, "output_tokens": 5}}
        else:
            out = chat_completion(body, n, used, answered)
        if body.get("stream"):  # Anthropic's server-sent events
            block = out["content"][0]
            start = dict(block, input={}) if block["type"] == "tool_use" else dict(block, text="")
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])} \
                if block["type"] == "tool_use" else {"type": "text_delta", "text": block["text"]}
            events = [("message_start", {"message": dict(out, content=[], stop_reason=None)}),
                      ("content_block_start", {"index": 0, "content_block": start}),
                      ("content_block_delta", {"index": 0, "delta": delta}),
                      ("content_block_stop", {"index": 0}),
                      ("message_delta", {"delta": {"stop_reason": out["stop_reason"], "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}),
                      ("message_stop", {})]
            data = "".join("event: %s\ndata: %s\n\n" % (e, json.dumps(dict(d, type=e))) for e, d in events).encode()
            return data, "text/event-stream"
        return json.dumps(out).encode(), "application/json"


@pytest.fixture
def provider() -> Iterator[str]:
    yield from serve(FakeProvider)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_what_openai_and_anthropic_are_sent(wasm: str, provider: str, kind: str) -> None:
    """Pydantic AI's own OpenAI and Anthropic models write the compacted
    history: every request begins with a user turn (after system
    messages), each tool call is answered in the next message, and the
    summary is what comes first once compaction happened."""
    if kind == "openai":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        model: Any = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=provider + "/v1", api_key="test"))
    else:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
        model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(api_key="test", base_url=provider))
    with Compactor(wasm, config={"max_summary_tokens": 60}) as compactor:
        history = ClipfoldHistory(compactor, config={"model_max_tokens": 1500, "keep_recent": 4})
        agent = Agent(model, system_prompt=SYSTEM, tools=[lookup_notes], capabilities=[ProcessHistory(history)])
        msgs: List[ModelMessage] = []
        for i in range(12):
            msgs = agent.run_sync(question(i), message_history=msgs).all_messages()
        bodies = FakeProvider.bodies
        assert len(bodies) == 24
        summarized = 0
        for body in bodies:
            turns = body["messages"]
            if kind == "anthropic":
                assert SYSTEM in json.dumps(body.get("system"))
            else:
                assert turns[0] == {"role": "system", "content": SYSTEM}
                turns = [t for t in turns if t["role"] != "system"]
            assert turns[0]["role"] == "user", turns[0]
            text = json.dumps(turns[0]["content"])
            summarized += "[Context Summary" in text
            for k, t in enumerate(turns):
                if kind == "openai" and t.get("tool_calls"):
                    ids = {c["id"] for c in t["tool_calls"]}
                    assert ids == {x["tool_call_id"] for x in turns[k + 1:k + 1 + len(ids)] if x["role"] == "tool"}
                if kind == "anthropic" and t["role"] == "assistant" and isinstance(t["content"], list):
                    ids = {b["id"] for b in t["content"] if b["type"] == "tool_use"}
                    if ids:
                        got = {b.get("tool_use_id") for b in turns[k + 1]["content"] if isinstance(b, dict)}
                        assert ids <= got, (t, turns[k + 1])
        assert summarized >= 4, "the later requests begin with the summary"
    assert pydantic_ai is not None
