"""clipfold inside real LangChain v1 and LangGraph agents (the framework
packages from PyPI, pinned in tests/requirements-frameworks.txt): a
multi-turn agent with tool calls, driven by LangChain's own fake chat model
(FakeMessagesListChatModel, scripted; a subclass adds bind_tools and
records each request), no network. Each test asserts that compaction
happened, that every request the model saw had its tool calls with their
results, that the archive is searchable (memory_read returns a fact of an
early, compacted turn) and that nothing is stored twice."""

import asyncio
import json
import re
import warnings
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest

# The frameworks are test requirements (run_tests.sh installs them): an
# ImportError fails the suite, it never skips.
import langchain  # noqa: E402
import langchain_core  # noqa: E402
import langgraph  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import Field  # noqa: E402

from clipfold import Compactor, SQLiteStore  # noqa: E402
from clipfold.langchain import ClipfoldMiddleware, memory_read_tool  # noqa: E402
from clipfold.langgraph import pre_model_hook  # noqa: E402

from conftest import REPO  # noqa: E402

README = REPO / "bindings" / "python" / "README.md"
CODENAME = "BLUE-HERON-7"


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's FakeMessagesListChatModel, plus bind_tools (the agent
    binds its tools; the script already holds the calls) and a record of
    every request."""

    requests: List[List[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "ScriptedChatModel":
        return self

    def _generate(self, messages: List[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> Any:
        self.requests.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


@tool
def lookup_notes(module: int) -> str:
    """Looks up the team's notes about a module."""
    extra = " The codename of the project is %s; keep it secret." % CODENAME if module == 0 else ""
    log = " ".join("[ingest-%d] %02d:%02d retry %d of %d scheduled after %d ms backoff" % (
        module, 10 + k, 7 * k % 60, k + 1, 10 + module, 100 * 2 ** k) for k in range(4))
    return ("Notes for module %d: the retry budget is %d attempts with exponential backoff, the owner is team %s, "
            "the last incident was a timeout in the ingest path.%s Recent log: %s" % (
                module, 10 + module, "abcdefgh"[module % 8], extra, log))


TURNS = 9


def script(turns: int = TURNS) -> List[AIMessage]:
    """Two model answers per turn: a tool call, then the reply; the last
    turn asks memory_read for the codename of turn 0."""
    out: List[AIMessage] = []
    for i in range(turns):
        out.append(AIMessage(content="", tool_calls=[{"name": "lookup_notes", "args": {"module": i},
                                                     "id": "call_notes_%d" % i, "type": "tool_call"}]))
        out.append(AIMessage(content="Module %d keeps a retry budget of %d attempts; team %s owns it." % (
            i, 10 + i, "abcdefgh"[i % 8])))
    out.append(AIMessage(content="", tool_calls=[{"name": "memory_read", "args": {
        "query": "what is the codename of the project?"}, "id": "call_memory", "type": "tool_call"}]))
    out.append(AIMessage(content="The codename is in the archive."))
    return out


def question(i: int, turns: int = TURNS) -> Dict[str, str]:
    if i == turns:
        return {"role": "user", "content": "What was the codename of the project again?"}
    return {"role": "user", "content": "Turn %d: what is the retry budget of module %d, and who owns it?" % (i, i)}


def assert_tool_pairs(request: Sequence[BaseMessage]) -> None:
    """A request a provider accepts: every tool result follows the call it
    answers, and every call has its result."""
    open_calls: Dict[str, int] = {}
    answered = set()
    for i, m in enumerate(request):
        if isinstance(m, AIMessage):
            for c in m.tool_calls:
                open_calls[c["id"]] = i
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in open_calls, "a tool result without its call: %r" % m
            answered.add(m.tool_call_id)
    assert set(open_calls) == answered, "a tool call without its result: %s" % (set(open_calls) - answered)


def recall_rows(store: SQLiteStore, conv: str) -> List[Any]:
    return store.connection.execute(
        "SELECT id, raw FROM recall WHERE conversation_id = ? AND content NOT LIKE '[Context Summary%'",
        (conv,)).fetchall()


def compactions(store: SQLiteStore, conv: str) -> int:
    """How many compactions committed (each writes recall rows under its operation id)."""
    return int(store.connection.execute("SELECT COUNT(DISTINCT operation_id) FROM recall WHERE conversation_id = ?",
                                        (conv,)).fetchone()[0])


def all_state_messages(agent: Any, config: Dict[str, Any]) -> Dict[str, BaseMessage]:
    """Every message the graph's state ever held, by id (the checkpoints)."""
    seen: Dict[str, BaseMessage] = {}
    for snap in agent.get_state_history(config):
        for m in snap.values.get("messages", []):
            seen.setdefault(m.id, m)
    return seen


def test_versions_proven() -> None:
    """The versions these tests ran with are the pinned ones."""
    pins = dict(line.split("==") for line in
                (REPO / "bindings" / "python" / "tests" / "requirements-frameworks.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    from importlib.metadata import version
    for pkg in ("langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint"):
        assert version(pkg) == pins[pkg], pkg


@pytest.mark.parametrize("trigger,keep", [(("messages", 12), ("messages", 6)), (("tokens", 600), ("tokens", 400)),
                                          (None, ("messages", 6))],
                         ids=["messages", "tokens", "clipfold-budget"])
def test_create_agent_with_clipfold_middleware(wasm: str, tmp_path: Path, trigger: Any, keep: Any) -> None:
    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Compactor(wasm, store=store) as compactor:
        model = ScriptedChatModel(responses=script())
        # chars4: LangChain's ("tokens", N) triggers count about 4 characters a token too.
        config_keys: Dict[str, Any] = {"max_summary_tokens": 80, "token_estimator": "chars4"}
        if trigger is None:
            config_keys.update(model_max_tokens=1600, context_budget=0.5)
        mw = ClipfoldMiddleware(trigger=trigger, keep=keep, compactor=compactor, config=config_keys)
        agent = create_agent(model, tools=[lookup_notes, memory_read_tool(compactor)], middleware=[mw],
                             system_prompt="You are the team's assistant.", checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "thread-1"}}
        for i in range(TURNS + 1):
            out = agent.invoke({"messages": [question(i)]}, cfg)
            assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].content
            assert mw.last_result is None or not mw.last_result["failed"], {k: v for k, v in mw.last_result.items() if k != "history"}
        assert compactions(store, "thread-1") >= 2, "compaction happened, more than once"
        assert len(model.requests) == 2 * (TURNS + 1)
        for req in model.requests:
            assert isinstance(req[0], SystemMessage) and req[0].content == "You are the team's assistant."
            assert_tool_pairs(req)
        # The state after the run: [clip-archive, …kept], the archive a
        # system message, or a human one when the kept messages start with a
        # tool call (the model's request starts with a user turn).
        final = agent.get_state(cfg).values["messages"]
        archives = [m for m in final if str(m.content).startswith("[Context Summary")]
        assert len(archives) == 1 and final[0] is archives[0]
        assert isinstance(archives[0], HumanMessage if isinstance(final[1], (AIMessage, ToolMessage)) else SystemMessage)
        assert len(final) < 4 * (TURNS + 1)
        # memory_read found the codename of turn 0, which is no longer in the state.
        answer = [m for m in final if isinstance(m, ToolMessage) and m.tool_call_id == "call_memory"]
        assert answer and CODENAME in str(answer[0].content), answer
        assert not any(CODENAME in str(m.content) for m in final if m is not answer[0])
        # Nothing lost, nothing twice: each message that left the state is
        # in recall once, under its LangChain id, exactly as the state held it;
        # so is the original of each one still there replaced to fit the
        # window (a tool result cleared: same id, its original in recall).
        ever = all_state_messages(agent, cfg)
        left = {mid: m for mid, m in ever.items() if mid not in {x.id for x in final}
                and not str(m.content).startswith("[Context Summary")}
        replaced = {m.id for m in final if "in recall storage as" in str(m.content) and m.id not in left}
        rows = recall_rows(store, "thread-1")
        assert sorted(r[0] for r in rows) == sorted(set(left) | replaced)
        assert len({r[1] for r in rows}) == len(rows)
        for mid, m in left.items():
            assert json.loads(store.connection.execute("SELECT raw FROM recall WHERE id = ?", (mid,)).fetchone()[0]) \
                == m.model_dump(mode="json")
        assert store.active_rows("thread-1") == [], "caller-owned: the state keeps the messages, not the store"


def test_middleware_store_owned_and_async(wasm: str, tmp_path: Path) -> None:
    """caller_owned=False (the store keeps the active history too) and the
    async path (ainvoke: abefore_model) behave the same."""
    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Compactor(wasm, store=store) as compactor:
        model = ScriptedChatModel(responses=script())
        mw = ClipfoldMiddleware(trigger=("messages", 12), keep=("messages", 6), compactor=compactor,
                                caller_owned=False)
        agent = create_agent(model, tools=[lookup_notes, memory_read_tool(compactor)], middleware=[mw],
                             checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "t-async"}}

        async def run() -> None:
            for i in range(TURNS + 1):
                await agent.ainvoke({"messages": [question(i)]}, cfg)
        asyncio.run(run())
        for req in model.requests:
            assert_tool_pairs(req)
        assert compactions(store, "t-async") >= 2
        final = agent.get_state(cfg).values["messages"]
        answer = [m for m in final if isinstance(m, ToolMessage) and m.tool_call_id == "call_memory"]
        assert answer and CODENAME in str(answer[0].content)
        ever = all_state_messages(agent, cfg)
        final_ids = {m.id for m in final}
        left = {mid for mid, m in ever.items() if mid not in final_ids
                and not str(m.content).startswith("[Context Summary")}
        assert sorted(r[0] for r in recall_rows(store, "t-async")) == sorted(left)
        # The store's active history is the state as of the last
        # compaction, message for message, the clip-archive under one id.
        active = store.active_rows("t-async")
        assert [mid for mid, _ in active] == [m.id for m in final[:len(active)]]
        assert final[0].id.startswith("clip_")


def test_create_react_agent_with_pre_model_hook(wasm: str, tmp_path: Path) -> None:
    from langgraph.prebuilt import create_react_agent
    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Compactor(wasm, store=store) as compactor:
        model = ScriptedChatModel(responses=script())
        hook = pre_model_hook(compactor, keep=("messages", 6),
                              config={"model_max_tokens": 1600, "context_budget": 0.5, "max_summary_tokens": 80})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # LangGraph 1.x points to langchain's create_agent
            agent = create_react_agent(model, [lookup_notes, memory_read_tool(compactor)], pre_model_hook=hook,
                                       checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "graph-1"}}
        for i in range(TURNS + 1):
            if i % 2:  # the async graph runs the (synchronous) hook too
                asyncio.run(agent.ainvoke({"messages": [question(i)]}, cfg))
            else:
                agent.invoke({"messages": [question(i)]}, cfg)
            r = hook.last_result
            assert r is None or not r["failed"], r
        assert compactions(store, "graph-1") >= 2
        state = agent.get_state(cfg).values["messages"]
        assert len(state) == 4 * (TURNS + 1), "the graph keeps every message (resend pattern)"
        assert len(model.requests[-1]) < len(state) / 2, "the model sees the compacted view"
        for req in model.requests:
            assert_tool_pairs(req)
        answer = [m for m in state if isinstance(m, ToolMessage) and m.tool_call_id == "call_memory"]
        assert answer and CODENAME in str(answer[0].content)
        # The view is the same for the same list: calling the hook again
        # (outside a run: the thread named) changes nothing, writes nothing.
        hook.conversation_id = "graph-1"
        before = store.dump()
        again = hook({"messages": state})["llm_input_messages"]
        assert store.dump() == before
        # ... and it is the view the model saw last, plus the answer it gave.
        last = model.requests[-1]
        assert [m.id for m in again] == [m.id for m in last] + [state[-1].id]
        assert again[-1] is state[-1]
        # Each message outside the last view is in recall once; none twice.
        shown = {m.id for m in again}
        rows = recall_rows(store, "graph-1")
        assert sorted(r[0] for r in rows) == sorted(m.id for m in state if m.id not in shown)


AHEAD_TURNS = 47
AHEAD_LIMIT = 4000  # model_max_tokens of the agents compacting ahead of time


class PacedChatModel(ScriptedChatModel):
    """ScriptedChatModel, each request first reported to a Pacer."""

    pace: Any = None

    def _generate(self, messages: List[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> Any:
        self.pace.model_call()
        return super()._generate(messages, stop, run_manager, **kwargs)


def ahead_compactor(wasm: str, store: SQLiteStore, s: Any) -> Compactor:
    from clipfold import OpenAICompatible
    return Compactor(wasm, store=store, llm=OpenAICompatible(s.url, api_key="k", model="m"),
                     config={"max_summary_tokens": 80})


def assert_within(requests: Sequence[Sequence[BaseMessage]], tools: Sequence[Any], limit: int) -> None:
    """Every request, counted by a plug-in of its own (its messages and
    the tools' schemas), within limit, tool pairs intact."""
    from clipfold.langchain import tool_schemas
    with Compactor() as counter:
        overhead = counter.overhead_tokens(None, tool_schemas(tools))
        for req in requests:
            assert_tool_pairs(req)
            n = counter.estimate_tokens(req) + overhead
            assert n <= limit, "a request over the window: %d tokens" % n


@pytest.mark.parametrize("caller_owned", [True, False], ids=["caller-owned", "store-owned-async"])
def test_middleware_compacting_ahead_of_time(wasm: str, tmp_path: Path, caller_owned: bool) -> None:
    """ahead=True, 48 turns with tool calls: over the soft threshold of
    clipfold's budget the compaction starts in the background and the
    model calls go on while the summarizer holds its request; a later call
    applies it and replaces the state; no call waits. Every request within
    the window, tool pairs intact, the state [clip-archive, …kept],
    nothing lost."""
    from pacing import Pacer
    from summarizer import Summarizer

    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Summarizer(gated=True) as s, ahead_compactor(wasm, store, s) as compactor:
        pace = Pacer(s, compactor)
        model = PacedChatModel(responses=script(AHEAD_TURNS), pace=pace)
        mw = ClipfoldMiddleware(keep=("messages", 6), compactor=compactor, caller_owned=caller_owned,
                                config={"model_max_tokens": AHEAD_LIMIT}, ahead=True)
        tools = [lookup_notes, memory_read_tool(compactor)]
        agent = create_agent(model, tools=tools, middleware=[mw], system_prompt="You are the team's assistant.",
                             checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "ahead-1"}}

        async def run() -> None:
            for i in range(AHEAD_TURNS + 1):
                await agent.ainvoke({"messages": [question(i, AHEAD_TURNS)]}, cfg)
        if caller_owned:
            for i in range(AHEAD_TURNS + 1):
                agent.invoke({"messages": [question(i, AHEAD_TURNS)]}, cfg)
        else:
            asyncio.run(run())
        assert len(model.requests) == 2 * (AHEAD_TURNS + 1)
        pace.assert_applied_in_the_background(at_least=3)
        assert compactions(store, "ahead-1") == len(pace.applied)
        assert mw.last_ahead == pace.results[-1] and mw.last_result is not None
        assert_within(model.requests, tools, AHEAD_LIMIT)
        final = agent.get_state(cfg).values["messages"]
        archives = [m for m in final if str(m.content).startswith("[Context Summary")]
        assert len(archives) == 1 and final[0] is archives[0]
        assert len(final) < 2 * AHEAD_TURNS
        answer = [m for m in final if isinstance(m, ToolMessage) and m.tool_call_id == "call_memory"]
        assert answer and CODENAME in str(answer[0].content), answer
        # Nothing lost, nothing twice.
        ever = all_state_messages(agent, cfg)
        left = {mid for mid, m in ever.items() if mid not in {x.id for x in final}
                and not str(m.content).startswith("[Context Summary")}
        replaced = {m.id for m in final if "in recall storage as" in str(m.content) and m.id not in left}
        rows = recall_rows(store, "ahead-1")
        assert sorted(r[0] for r in rows) == sorted(left | replaced)
        if not caller_owned:
            active = store.active_rows("ahead-1")
            assert [mid for mid, _ in active] == [m.id for m in final[:len(active)]]


def test_middleware_ahead_with_a_met_trigger_compacts_at_once(wasm: str, tmp_path: Path) -> None:
    """ahead=True with a trigger: the met trigger compacts before the call,
    as without ahead (every summarizer call made inside the check), and
    compaction ahead of time, which prepares for clipfold's budget, never
    starts: the history stays far under it."""
    from summarizer import Summarizer

    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Summarizer() as s, ahead_compactor(wasm, store, s) as compactor:
        results: List[Any] = []
        real_ahead = compactor.compact_ahead

        def recording(*a: Any, **kw: Any) -> Any:
            results.append(real_ahead(*a, **kw))
            return results[-1]
        compactor.compact_ahead = recording  # type: ignore[method-assign]
        model = ScriptedChatModel(responses=script(20))
        mw = ClipfoldMiddleware(trigger=("messages", 16), keep=("messages", 6), compactor=compactor,
                                config={"model_max_tokens": AHEAD_LIMIT}, ahead=True)
        in_checks: List[int] = []
        real_compact = mw.compact

        def compact(*a: Any, **kw: Any) -> Any:
            before = s.calls
            out = real_compact(*a, **kw)
            in_checks.append(s.calls - before)
            return out
        mw.compact = compact  # type: ignore[method-assign]
        agent = create_agent(model, tools=[lookup_notes, memory_read_tool(compactor)], middleware=[mw],
                             checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "trig"}}
        for i in range(21):
            agent.invoke({"messages": [question(i, 20)]}, cfg)
        assert compactions(store, "trig") >= 4
        assert s.calls > 0 and sum(in_checks) == s.calls, "every summarizer call made inside a check"
        assert results and not any(r["started"] or r["compaction"] for r in results)
        assert max(r["tokens"] for r in results) < results[0]["prepare_limit"]
        for req in model.requests:
            assert_tool_pairs(req)


def test_pre_model_hook_compacting_ahead_of_time(wasm: str, tmp_path: Path) -> None:
    """ahead=True, 48 turns: the graph keeps every message, the model gets
    the view; the compaction of the view starts in the background and a
    later call's view has it applied; no call waits. Every request within
    the window, tool pairs intact, everything out of the last view in
    recall once."""
    from langgraph.prebuilt import create_react_agent
    from pacing import Pacer
    from summarizer import Summarizer

    store = SQLiteStore(str(tmp_path / "agent.db"))
    with Summarizer(gated=True) as s, ahead_compactor(wasm, store, s) as compactor:
        pace = Pacer(s, compactor)
        model = PacedChatModel(responses=script(AHEAD_TURNS), pace=pace)
        tools = [lookup_notes, memory_read_tool(compactor)]
        hook = pre_model_hook(compactor, keep=("messages", 6), config={"model_max_tokens": AHEAD_LIMIT},
                              tools=tools, ahead=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            agent = create_react_agent(model, tools, pre_model_hook=hook, checkpointer=InMemorySaver())
        cfg: Dict[str, Any] = {"configurable": {"thread_id": "graph-ahead"}}
        for i in range(AHEAD_TURNS + 1):
            agent.invoke({"messages": [question(i, AHEAD_TURNS)]}, cfg)
        assert len(model.requests) == 2 * (AHEAD_TURNS + 1) == len(pace.results)
        pace.assert_applied_in_the_background(at_least=3)
        assert hook.last_ahead == pace.results[-1]
        assert compactions(store, "graph-ahead") == len(pace.applied)
        assert_within(model.requests, tools, AHEAD_LIMIT)
        state = agent.get_state(cfg).values["messages"]
        assert len(state) == 4 * (AHEAD_TURNS + 1), "the graph keeps every message"
        last = model.requests[-1]
        assert str(last[0].content).startswith("[Context Summary") and len(last) < len(state) / 2
        answer = [m for m in state if isinstance(m, ToolMessage) and m.tool_call_id == "call_memory"]
        assert answer and CODENAME in str(answer[0].content)
        shown = {m.id for m in last} | {state[-1].id}
        rows = recall_rows(store, "graph-ahead")
        assert len({r[0] for r in rows}) == len(rows)
        assert {m.id for m in state if m.id not in shown} <= {r[0] for r in rows}


def test_ahead_is_a_bool(wasm: str) -> None:
    from clipfold import ClipfoldError
    with Compactor(wasm) as c:
        for make in (lambda: ClipfoldMiddleware(compactor=c, ahead="yes"),  # type: ignore[arg-type]
                     lambda: pre_model_hook(c, ahead=1)):  # type: ignore[arg-type]
            with pytest.raises(ClipfoldError, match="ahead: must be True or False") as e:
                make()
            assert e.value.field == "ahead"


def test_memory_read_tool_reads_by_id(wasm: str) -> None:
    with Compactor(wasm, config={"keep_recent": 2, "max_summary_tokens": 40}) as c:
        msgs = [HumanMessage("Remember: the deploy window is Tuesday 14:00 UTC. " + "Context. " * 30, id="h1"),
                AIMessage("Noted, Tuesday 14:00 UTC.", id="a1")] + \
            [HumanMessage("filler question %d about something else entirely. " % i * 5, id="h%d" % (i + 2))
             for i in range(8)]
        r = c.compress("conv", msgs, caller_owned=True)
        assert not r["failed"] and r["messages_compressed"] > 0
        assert isinstance(r["history"][0], SystemMessage) and r["history"][-1] is msgs[-1]
        t = memory_read_tool(c, conversation_id="conv")
        found = t.invoke({"query": "when is the deploy window?"})
        assert "Tuesday 14:00 UTC" in found and "] message h1 · " in found
        assert "Tuesday 14:00" in t.invoke({"id": "h1"})
        assert "no recalled message" in t.invoke({"id": "nope"})
        assert t.invoke({"query": "zebra quantum"}) == 'Nothing matches "zebra quantum".'
        assert memory_read_tool(c, conversation_id="other").invoke({"query": "deploy window"}) == \
            'Nothing matches "deploy window".'


def test_memory_read_fits_its_budget(wasm: str) -> None:
    """A tool output of thousands of tokens compacted away: memory_read's
    answer (a search, or a read by id) stays within max_tokens, counted by
    the plug-in's estimateTokens, with the passage holding the asked-for
    order and how to see the rest."""
    rows = ",".join('{"order":%d,"status":"delivered","note":"nothing unusual"}' % (1000 + i) if i != 150 else
                    '{"order":4471,"status":"lost in transit","carrier":"Pelican Post"}' for i in range(300))
    with Compactor(wasm, config={"keep_recent": 2, "max_summary_tokens": 40}) as c:
        msgs: List[BaseMessage] = [
            HumanMessage("list my orders", id="u1"),
            AIMessage("", id="a1", tool_calls=[{"name": "list_orders", "args": {"customer": 77}, "id": "c1", "type": "tool_call"}]),
            ToolMessage("[" + rows + "]", tool_call_id="c1", id="t1"),
        ] + [HumanMessage("filler question %d about something else entirely. " % i * 5, id="h%d" % i) for i in range(8)]
        assert c.estimate_tokens(str(msgs[2].content)) > 3000
        r = c.compress("conv", msgs, caller_owned=True)
        assert not r["failed"] and r["messages_compressed"] > 0
        for budget in (300, 1000):
            t = memory_read_tool(c, conversation_id="conv", max_tokens=budget)
            for args in ({"query": "what happened to order 4471 with Pelican Post?"}, {"id": "t1", "query": "Pelican Post"}):
                out = t.invoke(args)
                assert c.estimate_tokens(out) <= budget, (budget, args, out)
                assert "Pelican Post" in out and "a passage" in out, out
            assert "ask again with this id and a query" in t.invoke({"id": "t1", "query": "Pelican Post"})
        assert c.estimate_tokens(memory_read_tool(c, conversation_id="conv").invoke({"id": "t1"})) <= 1000


def test_memory_read_finds_what_is_in_the_agents_context(wasm: str) -> None:
    """In an agent, memory_read also searches the messages of the state
    (caller-owned: the store never holds them): a tool result still in the
    context is a hit "in your context"."""
    with Compactor(wasm) as compactor:
        model = ScriptedChatModel(responses=[
            AIMessage(content="", tool_calls=[{"name": "lookup_notes", "args": {"module": 3}, "id": "call_3", "type": "tool_call"}]),
            AIMessage(content="", tool_calls=[{"name": "memory_read", "args": {"query": "retry budget of module 3"},
                                               "id": "call_mr", "type": "tool_call"}]),
            AIMessage(content="Thirteen attempts."),
        ])
        mw = ClipfoldMiddleware(compactor=compactor)
        agent = create_agent(model, tools=[lookup_notes, memory_read_tool(compactor)], middleware=[mw],
                             checkpointer=InMemorySaver())
        out = agent.invoke({"messages": [{"role": "user", "content": "What is module 3's retry budget?"}]},
                           {"configurable": {"thread_id": "ctx-1"}})
        answer = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "call_mr"]
        assert answer and "in your context" in str(answer[0].content), answer
        assert "retry budget is 13 attempts" in str(answer[0].content)
        assert compactor.store.search("retry budget", "ctx-1") == [], "the store holds none of it"


def test_middleware_validates_like_summarization_middleware() -> None:
    for bad in (("fraction", 1.5), ("messages", 0), ("bogus", 3), ("messages", 2.5)):
        with pytest.raises(ValueError):
            ClipfoldMiddleware(trigger=bad)
    with pytest.raises(ValueError, match="profile"):
        ClipfoldMiddleware(trigger=("fraction", 0.5))
    m = ClipfoldMiddleware(ScriptedChatModel(responses=[AIMessage(content="summary")],
                                             profile={"max_input_tokens": 1000}),
                           trigger=[{"tokens": 100, "messages": 3}, ("fraction", 0.9)], keep=("fraction", 0.3))
    assert m.policy.config == {"target_tokens": 300, "model_max_tokens": 1000}
    short = [HumanMessage("hi")] * 2
    assert m.policy.due(short) is False
    long = [HumanMessage("a long message about many things " * 20)] * 3
    assert m.policy.due(long) is True


def readme_block(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    sec = text.split("## " + heading, 1)
    assert len(sec) == 2, "README has no section %r" % heading
    m = re.search(r"```python\n(.*?)```", sec[1], re.S)
    assert m, "no python example under %r" % heading
    code = m.group(1)
    assert len(code.strip().splitlines()) <= 14, "the example stays short"
    return code


@pytest.mark.parametrize("heading", ["Use with LangChain", "Use with LangGraph"])
def test_readme_examples_run(wasm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, heading: str) -> None:
    """Each README example runs as written, with `model` and `tools`
    standing for the reader's own."""
    monkeypatch.chdir(tmp_path)
    model = ScriptedChatModel(responses=script())
    ns: Dict[str, Any] = {"model": model, "tools": [lookup_notes]}
    exec(compile(readme_block(heading), str(README), "exec"), ns)  # noqa: S102
    agent, config = ns["agent"], ns["config"]
    for i in range(1, TURNS + 1):
        agent.invoke({"messages": [question(i)]}, config)
    for req in model.requests:
        assert_tool_pairs(req)
    state = agent.get_state(config).values["messages"]
    answer = [m for m in state if isinstance(m, ToolMessage) and m.tool_call_id == "call_memory"]
    assert answer and CODENAME in str(answer[0].content)
    with SQLiteStore(str(tmp_path / "agent.db")) as store:
        assert compactions(store, "conversation-1") >= 1, "the example compacts"
    assert Compactor is not None and langchain and langchain_core and langgraph
