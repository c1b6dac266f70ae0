"""clipfold inside the real OpenAI Agents SDK (openai-agents from PyPI,
pinned in tests/requirements-frameworks.txt): a 55-turn agent with tool
calls on a ClipfoldSession, driven by a fake Model implementing the SDK's
Model interface that counts each request it receives with the plug-in and
reports the count as the provider's usage; then the SDK's own Chat
Completions and Responses models against a local HTTP server, to see what
those APIs are sent."""

import asyncio
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

# A test requirement (run_tests.sh installs it): an ImportError fails the suite, it never skips.
import agents  # noqa: E402
from agents import Agent, RunConfig, Runner, function_tool  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from clipfold import Compactor, SQLiteStore  # noqa: E402
from clipfold.agents import ClipfoldSession, memory_read_tool, tool_schemas  # noqa: E402

import test_pydantic_ai as pydantic_ai_test  # noqa: E402
from test_pydantic_ai import ScriptedHTTP, assert_pinned, chat_completion, serve  # noqa: E402

CODENAME = "BLUE-HERON-7"
TURNS = 55
LIMIT = 4000
INSTRUCTIONS = "You are the team's assistant. Answer in one sentence."


lookup_notes = function_tool(pydantic_ai_test.lookup_notes)


def question(i: int) -> str:
    if i == TURNS:
        return "What was the codename of the project again?"
    return "Turn %d: what is the retry budget of module %d, and who owns it?" % (i, i)


def call(call_id: str, name: str, args: Dict[str, Any]) -> ResponseFunctionToolCall:
    # The SDK's placeholder id, as its Chat Completions model gives every item.
    return ResponseFunctionToolCall(type="function_call", call_id=call_id, name=name, arguments=json.dumps(args),
                                    id="__fake_id__", status="completed")


def say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(type="message", id="__fake_id__", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


class FakeModel(Model):
    """The SDK's Model interface, scripted: a tool call for each question
    (two at once every fifth turn), "Done." after the results (the same
    words every time), memory_read for the codename. Each request is
    counted with the plug-in (its items, the instructions and tools) and
    the count is the response's usage."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        self.requests: List[Any] = []

    async def get_response(self, system_instructions: Optional[str], input: Any, model_settings: Any, tools: Any,
                           output_schema: Any, handoffs: Any, tracing: Any, **kwargs: Any) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        n = self.compactor.estimate_tokens(items) + self.compactor.overhead_tokens(system_instructions,
                                                                                  tool_schemas(tools))
        self.requests.append((items, n))
        last = items[-1]
        if last.get("role") == "user":
            q = str(last["content"])
            if "codename" in q:
                out: List[Any] = [call("call_memory", "memory_read", {"query": "the codename of the project"})]
            else:
                k = int(q.split()[1].rstrip(":")) if q.startswith("Turn") else 0
                out = [call("call_%d" % k, "lookup_notes", {"module": k})]
                if k % 5 == 4:
                    out.append(call("call_%d_b" % k, "lookup_notes", {"module": k + 100}))
        else:
            out = [say("Done.")]
        return ModelResponse(output=out, usage=Usage(requests=1, input_tokens=n, output_tokens=5, total_tokens=n + 5),
                             response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def assert_request_ok(items: List[Dict[str, Any]]) -> None:
    """A user turn first (after system messages); every function call's
    output follows it, every output has its call."""
    first = next(i for i in items if i.get("role") != "system")
    assert first.get("role") == "user" and first.get("type", "message") == "message", first
    calls: Dict[str, int] = {}
    for k, i in enumerate(items):
        if i.get("type") == "function_call":
            calls[i["call_id"]] = k
        if i.get("type") == "function_call_output":
            assert calls.get(i["call_id"], k) < k, "an output without its call: %r" % i
    answered = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    pending = set(calls) - answered
    assert not pending or items[-1].get("type") == "function_call", "a call without its output: %s" % pending


def test_versions_proven() -> None:
    assert_pinned("openai-agents")


def run_agent(session: ClipfoldSession, model: FakeModel) -> List[str]:
    """TURNS + 1 runs with tool calls on the session, the model input
    filtered by it; each item added, as JSON without its id."""
    agent = Agent(name="assistant", instructions=INSTRUCTIONS, model=model,
                  tools=[lookup_notes, memory_read_tool(session, max_tokens=400)])
    run_config = RunConfig(call_model_input_filter=session.call_model_input_filter, tracing_disabled=True)
    added: List[str] = []
    add = session.add_items

    async def recording_add(items: List[Any], wrapper: Any = None) -> None:
        added.extend(json.dumps({k: v for k, v in i.items() if k != "id"}, sort_keys=True) for i in items)
        await add(items, wrapper=wrapper)
    session.add_items = recording_add  # type: ignore[method-assign]

    async def run() -> None:
        for i in range(TURNS + 1):
            result = await Runner.run(agent, question(i), session=session, run_config=run_config)
            assert result.final_output == "Done."
            assert session.last_result is None or not session.last_result["failed"], session.last_result
    asyncio.run(run())
    assert len(model.requests) == 2 * (TURNS + 1)
    return added


def assert_run_kept(store: SQLiteStore, session: ClipfoldSession, model: FakeModel, added: List[str]) -> int:
    """Every request within the window, tool pairs intact, a user turn
    first; the summary first in the session, once; memory_read found the
    codename of turn 0; every item added in the session or in recall
    storage, once. Returns how many compactions committed."""
    conv = session.session_id
    for items, n in model.requests:
        assert n <= LIMIT, "a request over the window: %d tokens" % n
        assert_request_ok(items)
    items = asyncio.run(session.get_items())
    assert str(items[0]["content"]).startswith("[Context Summary") and items[0]["role"] == "user"
    assert sum(str(i.get("content")).startswith("[Context Summary") for i in items) == 1
    answer = [i for i in items if i.get("type") == "function_call_output" and i["call_id"] == "call_memory"]
    assert answer and CODENAME in answer[0]["output"], answer
    assert not any(i.get("call_id") == "call_0" for i in items)
    rows = store.connection.execute("SELECT id, raw, operation_id FROM recall WHERE conversation_id = ?",
                                    (conv,)).fetchall()
    recalled = [json.dumps({k: v for k, v in json.loads(r[1]).items() if k not in ("id", "created_at", "agents_sdk_id")},
                           sort_keys=True) for r in rows]
    held = [json.dumps({k: v for k, v in i.items() if k != "id"}, sort_keys=True) for i in items]
    assert len({r[0] for r in rows}) == len(rows)
    missing = [a for a in added if a not in recalled and a not in held]
    assert missing == [], missing[:3]

    def summaries(xs: List[str]) -> int:
        return sum('"[Context Summary' in x for x in xs)
    assert len(added) == len(recalled) - summaries(recalled) + len(held) - summaries(held), "each item once"
    assert len(items) < 4 * TURNS // 3
    return len({r[2] for r in rows})


def test_agent_with_clipfold_session(wasm: str, tmp_path: Path) -> None:
    """55 runs with tool calls on one session, the model input filtered
    by the session: every request within the window, tool pairs intact, a
    user turn first; the summary in the session; memory_read finds the
    codename of turn 0; every item ever added is in the session or in
    recall storage, once."""
    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Compactor(wasm, store=store, config={"max_summary_tokens": 120}) as compactor:
        session = ClipfoldSession("conv-1", compactor, config={"model_max_tokens": LIMIT})
        model = FakeModel(compactor)
        added = run_agent(session, model)
        assert assert_run_kept(store, session, model, added) >= 3, "compaction happened, again and again"
        assert max(n for _, n in model.requests) > LIMIT // 2, "the window was used"


class PacedModel(FakeModel):
    """FakeModel, each request first reported to a Pacer."""

    def __init__(self, compactor: Compactor, pace: Any) -> None:
        super().__init__(compactor)
        self.pace = pace

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.pace.model_call()
        return await super().get_response(*args, **kwargs)


def test_session_compacting_ahead_of_time(wasm: str, tmp_path: Path) -> None:
    """ahead=True, 56 runs with tool calls on one session: the compaction
    of the stored history starts in the background (at add_items or before
    a model call) and the run goes on while the summarizer holds its
    request; a later check commits it, the items added meanwhile after the
    clip-archive; no check waits. Every request within the window, tool
    pairs intact, every item added in the session or in recall, once."""
    from clipfold import OpenAICompatible
    from pacing import Pacer
    from summarizer import Summarizer

    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Summarizer(gated=True) as s, Compactor(wasm, store=store, llm=OpenAICompatible(s.url, api_key="k", model="m"),
                                                config={"max_summary_tokens": 120}) as compactor, \
            Compactor(wasm) as counter:  # the model's count: its own plug-in, not the adapter's
        session = ClipfoldSession("ahead-1", compactor, config={"model_max_tokens": LIMIT}, ahead=True)
        pace = Pacer(s, compactor)
        model = PacedModel(counter, pace)
        added = run_agent(session, model)
        pace.assert_applied_in_the_background(at_least=3)
        assert session.last_ahead == pace.results[-1]
        assert assert_run_kept(store, session, model, added) == len(pace.applied)
    with pytest.raises(Exception, match="ahead: must be True or False"):
        ClipfoldSession("s", ahead="no")  # type: ignore[arg-type]


def test_session_protocol(wasm: str) -> None:
    """get_items (with a limit), pop_item, clear_session: what leaves the
    session stays in recall; the SDK sees a Session."""
    from agents.memory import Session
    with Compactor(wasm) as compactor:
        s = ClipfoldSession("s", compactor)
        assert isinstance(s, Session)

        async def run() -> None:
            await s.add_items([{"role": "user", "content": "continue"}, {"role": "user", "content": "continue"},
                               {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}",
                                "id": "fc_1"}])
            await s.add_items([{"type": "function_call_output", "call_id": "c1", "output": "ok"}])
            assert [i.get("content", i.get("type")) for i in await s.get_items()] == [
                "continue", "continue", "function_call", "function_call_output"]
            assert (await s.get_items(limit=1)) == [{"type": "function_call_output", "call_id": "c1", "output": "ok"}]
            assert (await s.pop_item()) == {"type": "function_call_output", "call_id": "c1", "output": "ok"}
            assert len(await s.get_items()) == 3
            await s.clear_session()
            assert await s.get_items() == [] and await s.pop_item() is None
        asyncio.run(run())
        assert compactor.store.recall_count("s") == 4
        assert compactor.store.recall("fc_1", "s")["name"] == "f"
        with pytest.raises(Exception, match="session_id"):
            ClipfoldSession("", compactor)


def test_readme_example_runs(wasm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's example runs as written, `model` and `tools` standing
    for the reader's own; more runs on its session compact into its store."""
    from test_langchain import readme_block
    monkeypatch.chdir(tmp_path)
    with Compactor(wasm) as counter:
        model = FakeModel(counter)
        ns: Dict[str, Any] = {"model": model, "tools": [lookup_notes]}
        exec(compile(readme_block("Use with the OpenAI Agents SDK"), "README.md", "exec"), ns)  # noqa: S102
        agent, session, run_config = ns["agent"], ns["session"], ns["run_config"]
        for i in range(1, 10):
            assert agents.Runner.run_sync(agent, question(i), session=session, run_config=run_config).final_output \
                == "Done."
        for items, n in model.requests:
            assert n <= 1000
            assert_request_ok(items)
    with SQLiteStore(str(tmp_path / "agent.db")) as store:
        assert store.recall_count("conversation-1") > 0, "the example compacts"


class FakeOpenAI(ScriptedHTTP):
    """OpenAI's Chat Completions and Responses APIs, scripted: a tool call
    for a user question, "Done." after tool results, a usage of about a
    third of the request's characters."""

    def answer(self, body: Dict[str, Any]) -> Tuple[bytes, str]:
        n = len(type(self).bodies)
        used = len(json.dumps(body)) // 3
        if self.path.endswith("/responses"):
            last = body["input"][-1]
            answered = last.get("type") == "function_call_output"
            item: Dict[str, Any] = {"type": "message", "id": "msg_%d" % n, "role": "assistant", "status": "completed",
                                    "content": [{"type": "output_text", "text": "Done.", "annotations": []}]} \
                if answered else {"type": "function_call", "id": "fc_%d" % n, "call_id": "call_%d" % n,
                                  "name": "lookup_notes", "arguments": json.dumps({"module": n}), "status": "completed"}
            out: Dict[str, Any] = {"id": "resp_%d" % n, "object": "response", "created_at": 1, "model": body["model"],
                                   "status": "completed", "output": [item], "parallel_tool_calls": True,
                                   "tool_choice": "auto", "tools": [],
                                   "usage": {"input_tokens": used, "output_tokens": 5, "total_tokens": used + 5,
                                             "input_tokens_details": {"cached_tokens": 0},
                                             "output_tokens_details": {"reasoning_tokens": 0}}}
        else:
            out = chat_completion(body, n, used, body["messages"][-1].get("role") == "tool")
        return json.dumps(out).encode(), "application/json"


@pytest.fixture
def openai_server() -> Iterator[str]:
    for url in serve(FakeOpenAI):
        yield url + "/v1"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_what_openai_is_sent(wasm: str, openai_server: str, api: str) -> None:
    """The SDK's own OpenAI models send the session's compacted history:
    a user turn first (after the system message: what Anthropic wants of
    the Chat messages LiteLLM converts), each tool call answered, no
    clipfold field, the summary first once compaction happened."""
    from openai import AsyncOpenAI
    from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel
    client = AsyncOpenAI(base_url=openai_server, api_key="test")
    model: Any = OpenAIChatCompletionsModel("gpt-4o", client) if api == "chat" else \
        OpenAIResponsesModel("gpt-4o", client)
    with Compactor(wasm, config={"max_summary_tokens": 60}) as compactor:
        session = ClipfoldSession("http-1", compactor, config={"model_max_tokens": 1500, "keep_recent": 4})
        agent = Agent(name="assistant", instructions=INSTRUCTIONS, model=model, tools=[lookup_notes])
        run_config = RunConfig(call_model_input_filter=session.call_model_input_filter, tracing_disabled=True)

        async def run() -> None:
            for i in range(12):
                assert (await Runner.run(agent, question(i), session=session, run_config=run_config)).final_output \
                    == "Done."
        asyncio.run(run())
    bodies = FakeOpenAI.bodies
    assert len(bodies) == 24
    summarized = 0
    for body in bodies:
        items = body["messages"] if api == "chat" else body["input"]
        assert "created_at" not in json.dumps(items)
        if api == "chat":
            assert items[0] == {"role": "system", "content": INSTRUCTIONS}
            items = items[1:]
            for k, m in enumerate(items):
                for c in m.get("tool_calls") or []:
                    assert any(x.get("tool_call_id") == c["id"] for x in items[k + 1:]), (c, items)
        else:
            assert body["instructions"] == INSTRUCTIONS
            assert_request_ok(items)
        assert items[0]["role"] == "user", items[0]
        summarized += "[Context Summary" in json.dumps(items[0])
    assert summarized >= 4, "the later requests begin with the summary"
    assert agents is not None
