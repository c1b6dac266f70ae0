"""The window is a promise: the Python host counts what the model will
count. The provider's usage (``{"input_tokens": N, "messages": K}``) wins
over the estimate of the messages it counted, the system prompt and tool
schemas count as ``overhead_tokens``, and the LangChain middleware and the
LangGraph hook check before every model call, tool loops included — all
through the real plug-in, real LangChain/LangGraph agents driven by their
own fake chat model, and a real http.server for the LLM adapters."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from clipfold import AsyncCompactor, ClipfoldError, Compactor, OpenAICompatible, SQLiteStore
from clipfold.langchain import ClipfoldMiddleware, tool_schemas, usage_from_messages
from clipfold.langgraph import pre_model_hook
from clipfold.llm import usage_of

from test_langchain import ScriptedChatModel, assert_tool_pairs, compactions, recall_rows

SYSTEM = "You are the on-call assistant of the data platform team. Read logs with read_logs; answer briefly."
CALLS = 40


def chat() -> List[Dict[str, Any]]:
    return [{"id": "m0", "role": "user", "content": "Which regions does the checkout service run in?"},
            {"id": "m1", "role": "assistant", "content": "eu-west-1 and us-east-2; Priya is on call until Friday."},
            {"id": "m2", "role": "user", "content": "Then ask Priya about the failed deploy of build 4471."}]


def test_should_compact_honours_usage(pure: Compactor) -> None:
    msgs = chat()
    cfg = {"model_max_tokens": 1000, "overhead_tokens": 300}
    est = pure.estimate_tokens(msgs)
    plain = pure.should_compact(msgs, cfg)
    assert plain["tokens"] == est + 300 and not plain["due"]
    # The request that held the first two messages counted 790 tokens.
    counted = pure.should_compact(msgs, cfg, usage={"input_tokens": 790, "messages": 2})
    assert counted["tokens"] == 790 + pure.estimate_tokens(msgs[2:]) and counted["due"]
    assert counted["limit"] == 800


@pytest.mark.parametrize("usage,field", [
    ([790, 2], "usage"), ("790", "usage"), ({"messages": 2}, "usage.input_tokens"),
    ({"input_tokens": 790}, "usage.messages"), ({"input_tokens": -1, "messages": 2}, "usage.input_tokens"),
    ({"input_tokens": 1.5, "messages": 2}, "usage.input_tokens"), ({"input_tokens": True, "messages": 2}, "usage.input_tokens"),
    ({"input_tokens": 10, "messages": "all"}, "usage.messages"),
    ({"input_tokens": 10, "messages": 4}, "usage.messages"),  # beyond the history: the plug-in says so
])
def test_bad_usage_names_it(pure: Compactor, usage: Any, field: str) -> None:
    for call in (lambda: pure.should_compact(chat(), usage=usage),
                 lambda: pure.compress("bad-usage", chat(), caller_owned=True, usage=usage),
                 lambda: pure.compact_if_due("bad-usage", chat(), caller_owned=True, usage=usage)):
        with pytest.raises(ClipfoldError) as e:
            call()
        assert e.value.code == "invalid_input" and e.value.field == field, e.value
    # Refused before anything was stored.
    assert pure.store.active_rows("bad-usage") == []
    assert pure.store.connection.execute("SELECT COUNT(*) FROM recall WHERE conversation_id = 'bad-usage'").fetchone()[0] == 0


def test_overhead_tokens(pure: Compactor) -> None:
    tools = [{"type": "function", "function": {"name": "read_logs", "description": "Reads a shard's ingest logs.",
                                               "parameters": {"type": "object", "properties": {"shard": {"type": "integer"}}}}}]
    n = pure.overhead_tokens(SYSTEM, tools)
    assert n == pure.estimate_tokens([{"role": "system", "content": SYSTEM},
                                      {"role": "system", "content": json.dumps(tools, ensure_ascii=False,
                                                                              separators=(",", ":"))}])
    assert pure.overhead_tokens(SYSTEM) < n and pure.overhead_tokens() == 0 and pure.overhead_tokens(None, []) == 0
    assert pure.overhead_tokens(SYSTEM, config={"token_estimator": "chars4"}) == (len(SYSTEM) + 3) // 4
    with pytest.raises(ClipfoldError) as e:
        pure.overhead_tokens(42)  # type: ignore[arg-type]
    assert e.value.field == "system"
    with pytest.raises(ClipfoldError) as e:
        pure.overhead_tokens(SYSTEM, [float("nan")])
    assert e.value.field == "tools[0]"
    # overhead_tokens is added to every count without usage.
    msgs = chat()
    assert pure.should_compact(msgs, {"overhead_tokens": n})["tokens"] == pure.should_compact(msgs)["tokens"] + n


def long_chat(turns: int) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for i in range(turns):
        out += [{"id": "q%d" % i, "role": "user", "content": "Question %d: what did we decide about module %d?" % (i, i)},
                {"id": "a%d" % i, "role": "assistant",
                 "content": "Module %d keeps a retry budget of %d attempts; the owner is team %s." % (i, 10 + i, "abc"[i % 3])}]
    return out


@pytest.mark.parametrize("caller_owned", [True, False], ids=["caller-owned", "store-owned"])
def test_compress_and_compact_if_due_honour_usage(wasm: str, caller_owned: bool) -> None:
    cfg = {"model_max_tokens": 1000, "keep_recent": 4}
    msgs = long_chat(16)
    with Compactor(wasm, config=cfg) as c:
        est = c.estimate_tokens(msgs)
        assert est < 800
        r = c.compress("plain", msgs, caller_owned=caller_owned, only_if_due=True)
        assert not r["failed"] and r["messages_compressed"] == 0
        assert c.compact_if_due("plain", msgs, caller_owned=caller_owned) is None
        # The provider counted 300 tokens more than the estimate of what it
        # saw (a system prompt, say): over the 800-token budget.
        n = c.estimate_tokens(msgs[:-2]) + 300
        assert n + c.estimate_tokens(msgs[-2:]) > 800
        usage = {"input_tokens": n, "messages": len(msgs) - 2}
        r = c.compress("counted", msgs, caller_owned=caller_owned, only_if_due=True, usage=usage)
        assert not r["failed"] and r["messages_compressed"] > 0, r["failure_message"]
        assert r["tokens_estimate_before"] == n + c.estimate_tokens(msgs[-2:])
        assert r["tokens_estimate_after"] <= 800
        r2 = c.compact_if_due("counted-2", msgs, caller_owned=caller_owned, usage=usage)
        assert r2 is not None and not r2["failed"] and r2["messages_compressed"] > 0, r2 and r2["failure_message"]


def test_async_compactor_passes_usage(wasm: str) -> None:
    async def main() -> None:
        async with AsyncCompactor(wasm, config={"model_max_tokens": 1000}) as c:
            d = await c.should_compact(chat(), usage={"input_tokens": 900, "messages": 3})
            assert d["due"] and d["tokens"] == 900
            assert await c.overhead_tokens(SYSTEM) > 10
            msgs = long_chat(14)
            n = await c.estimate_tokens(msgs) + 200  # over the 800-token budget
            r = await c.compress("a", msgs, caller_owned=True, only_if_due=True,
                                 usage={"input_tokens": n, "messages": len(msgs)}, config={"keep_recent": 2})
            assert not r["failed"] and r["messages_compressed"] > 0, r["failure_message"]
            with pytest.raises(ClipfoldError) as e:
                await c.should_compact(chat(), usage={"input_tokens": 1, "messages": 9})
            assert e.value.field == "usage.messages"
    asyncio.run(main())


@pytest.fixture
def openai_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "Priya is on call."}}],
                               "usage": {"prompt_tokens": 900, "completion_tokens": 5, "total_tokens": 905}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield "http://127.0.0.1:%d" % httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_usage_of_an_adapters_answer(pure: Compactor, openai_server: str) -> None:
    """A host running its own loop with clipfold's LLM adapters passes
    each answer's usage: here an OpenAI-compatible server counts 900."""
    adapter = OpenAICompatible(openai_server, api_key="k", model="m")
    adapter.attach_plugin(pure._aux)
    history: List[Dict[str, Any]] = [{"role": "user", "content": "Who is on call?"}]
    resp = adapter.complete({"messages": history, "max_tokens": 20})
    usage = usage_of({"messages": history}, resp)
    assert usage == {"input_tokens": 900, "messages": 1}
    history.append({"role": "assistant", "content": resp["content"][0]["text"]})
    d = pure.should_compact(history, {"model_max_tokens": 1000}, usage=usage)
    assert d["due"] and d["tokens"] == 900 + pure.estimate_tokens(history[1:])
    assert usage_of({"messages": history}, {"error": {"code": "unavailable"}}) is None


# ------------------------------------------------------------ agents


@tool
def read_logs(shard: int) -> str:
    """Reads the ingest logs of one shard over the last day."""
    return "\n".join("2026-03-0%d 02:%02d shard-%02d ingest: upstream timeout after %ds (attempt %d/3), request %08x"
                     % (1 + k % 3, 7 * k % 60, shard, 30 + k, k % 3 + 1, 0x5EED0000 + shard * 97 + k)
                     for k in range(8))


def loop_script(calls: int) -> List[AIMessage]:
    """One tool call per model call, then the answer."""
    out = [AIMessage(content="", tool_calls=[{"name": "read_logs", "args": {"shard": i}, "id": "call_%02d" % i,
                                              "type": "tool_call"}]) for i in range(calls)]
    return out + [AIMessage(content="Every shard times out against the upstream since March 1st.")]


class UsageChatModel(ScriptedChatModel):
    """Reports usage_metadata as a provider does: input_tokens, here a
    fixed count larger than any estimate of the request."""

    input_tokens: int = 0

    def _generate(self, messages: List[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        out = super()._generate(messages, stop, run_manager, **kwargs)
        msg = out.generations[0].message
        msg.usage_metadata = {"input_tokens": self.input_tokens, "output_tokens": 8, "total_tokens": self.input_tokens + 8}
        return out


WINDOW = {"model_max_tokens": 3000, "max_summary_tokens": 80}


def request_tokens(c: Compactor, request: Sequence[BaseMessage], tools: Sequence[Any]) -> int:
    """What a request the model received counts, by the plug-in's estimate:
    its messages, the system prompt and the tool schemas."""
    system = [m for m in request if isinstance(m, SystemMessage) and m.content == SYSTEM]
    rest = [m for m in request if not (isinstance(m, SystemMessage) and m.content == SYSTEM)]
    return c.estimate_tokens(rest) + c.overhead_tokens(SYSTEM if system else None, tool_schemas(tools))


def first_compacted(requests: Sequence[Sequence[BaseMessage]]) -> Optional[int]:
    for i, req in enumerate(requests):
        # The clip-archive: in the system message, or the user turn first.
        if any("[Context Summary" in str(m.content) for m in req):
            return i
    return None


def run_loop_agent(wasm: str, tmp_path: Path, model: ScriptedChatModel, ainvoke: bool = False,
                   keep: int = 6) -> Dict[str, Any]:
    store = SQLiteStore(str(tmp_path / ("agent-%s.db" % type(model).__name__)))
    c = Compactor(wasm, store=store)
    mw = ClipfoldMiddleware(compactor=c, keep=("messages", keep), config=WINDOW)
    agent = create_agent(model, tools=[read_logs], middleware=[mw], system_prompt=SYSTEM, checkpointer=InMemorySaver())
    cfg: Dict[str, Any] = {"configurable": {"thread_id": "loop"}, "recursion_limit": 200}
    q = {"messages": [HumanMessage("The nightly export failed. Read the logs of all %d shards; which time out?" % CALLS)]}
    out = asyncio.run(agent.ainvoke(q, cfg)) if ainvoke else agent.invoke(q, cfg)
    return {"out": out, "c": c, "store": store, "agent": agent, "cfg": cfg, "mw": mw}


@pytest.mark.parametrize("ainvoke", [False, True], ids=["invoke", "ainvoke"])
def test_middleware_compacts_inside_a_tool_loop(wasm: str, tmp_path: Path, ainvoke: bool) -> None:
    """One user message and 40 tool calls with a 3,000-token window:
    compacted inside the loop, no request the model receives over the
    window (counted with the plug-in's estimate, system prompt and tools
    included), tool calls with their results, nothing lost."""
    model = ScriptedChatModel(responses=loop_script(CALLS))
    run = run_loop_agent(wasm, tmp_path, model, ainvoke)
    c, store = run["c"], run["store"]
    try:
        assert len(model.requests) == CALLS + 1
        assert compactions(store, "loop") >= 2, "compacted more than once in one agent run"
        counts = [request_tokens(c, req, [read_logs]) for req in model.requests]
        assert max(counts) <= WINDOW["model_max_tokens"], counts
        assert max(counts) <= 0.8 * WINDOW["model_max_tokens"], counts  # the budget, not only the window
        for req in model.requests:
            assert_tool_pairs(req)
        final = run["agent"].get_state(run["cfg"]).values["messages"]
        assert isinstance(final[-1], AIMessage) and "March 1st" in str(final[-1].content)
        ever = {}
        for snap in run["agent"].get_state_history(run["cfg"]):
            for m in snap.values.get("messages", []):
                ever.setdefault(m.id, m)
        left = {mid for mid, m in ever.items() if mid not in {x.id for x in final}
                and not str(m.content).startswith("[Context Summary")}
        assert sorted(r[0] for r in recall_rows(store, "loop")) == sorted(left), "each removed message in recall once"
    finally:
        c.close()
        store.close()


def test_middleware_honours_the_providers_usage(wasm: str, tmp_path: Path) -> None:
    """A model reporting more input tokens than the estimate makes
    compaction due earlier: its count wins for what it saw."""
    plain = ScriptedChatModel(responses=loop_script(5))
    counted = UsageChatModel(responses=loop_script(5), input_tokens=2300)
    for model in (plain, counted):
        run = run_loop_agent(wasm, tmp_path, model, keep=2)
        run["c"].close()
        run["store"].close()
    assert first_compacted(plain.requests) is None, "5 calls fit the window by the estimate"
    at = first_compacted(counted.requests)
    assert at is not None and at <= 2, "due at the call after the first 2,300-token answer (%s)" % at
    # usage_from_messages: the last answer's count, for the messages before it.
    msgs = [HumanMessage("hi"), AIMessage("a", usage_metadata={"input_tokens": 50, "output_tokens": 1, "total_tokens": 51}),
            HumanMessage("more")]
    assert usage_from_messages(msgs) == {"input_tokens": 50, "messages": 1}
    assert usage_from_messages(msgs + [AIMessage("b")]) is None, "only the last answer's usage counts"


def test_middleware_counts_the_system_prompt_and_tools(wasm: str) -> None:
    """The request's system prompt and tool schemas are overhead_tokens:
    a history that fits alone is due once they are counted."""
    with Compactor(wasm) as c:
        mw = ClipfoldMiddleware(compactor=c, keep=("messages", 2),
                                config={"model_max_tokens": 900, "max_summary_tokens": 60})
        msgs = [HumanMessage("Question %d: what is the retry budget of module %d, who owns it, and when did it last "
                             "fail in production?" % (i, i), id="h%d" % i) if i % 2 == 0
                else AIMessage("Module %d keeps a retry budget of %d attempts with exponential backoff; team %s owns "
                               "it and it last failed on March %d." % (i, 10 + i, "abcde"[i % 5], i), id="a%d" % i)
                for i in range(14)]
        assert mw.compact(msgs, "sys") is None, "fits without the system prompt and tools"
        long_system = SYSTEM + " Always cite the runbook section and the ticket number. " * 8
        new = mw.compact(msgs, "sys", system=long_system, tools=[read_logs])
        assert new is not None and mw.last_result is not None and not mw.last_result["failed"]
        overhead = c.overhead_tokens(long_system, tool_schemas([read_logs]))
        assert mw.last_result["tokens_estimate_before"] == c.estimate_tokens(msgs) + overhead


def test_pre_model_hook_in_a_tool_loop_with_usage(wasm: str, tmp_path: Path) -> None:
    """LangGraph's pre_model_hook: the same tool loop compacts inside the
    run with no view over the window, and a model's usage (of the view it
    was sent) makes compaction due earlier."""
    from langgraph.prebuilt import create_react_agent
    import warnings

    def run(model: ScriptedChatModel, calls: int) -> Any:
        store = SQLiteStore(str(tmp_path / ("graph-%s-%d.db" % (type(model).__name__, calls))))
        c = Compactor(wasm, store=store)
        hook = pre_model_hook(c, keep=("messages", 6 if calls == CALLS else 2), config=WINDOW, system=SYSTEM,
                              tools=[read_logs])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            agent = create_react_agent(model, [read_logs], pre_model_hook=hook, prompt=SYSTEM,
                                       checkpointer=InMemorySaver())
        agent.invoke({"messages": [HumanMessage("Read the logs of every shard.")]},
                     {"configurable": {"thread_id": "g"}, "recursion_limit": 200})
        return c, store, hook

    model = ScriptedChatModel(responses=loop_script(CALLS))
    c, store, hook = run(model, CALLS)
    try:
        assert compactions(store, "g") >= 2
        counts = [request_tokens(c, req, [read_logs]) for req in model.requests]
        assert max(counts) <= 0.8 * WINDOW["model_max_tokens"], counts
        for req in model.requests:
            assert_tool_pairs(req)
        assert hook.last_result is not None and not hook.last_result["failed"]
    finally:
        c.close()
        store.close()
    plain, counted = ScriptedChatModel(responses=loop_script(5)), UsageChatModel(responses=loop_script(5),
                                                                                 input_tokens=2300)
    for m in (plain, counted):
        c, store, _ = run(m, 5)
        c.close()
        store.close()
    assert first_compacted(plain.requests) is None
    at = first_compacted(counted.requests)
    assert at is not None and at <= 2, at


def test_readme_example_runs(wasm: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's "Counting what the model counts" example runs as written."""
    import re

    from conftest import REPO

    text = (REPO / "bindings" / "python" / "README.md").read_text(encoding="utf-8")
    sec = text.split("### Counting what the model counts\n", 1)
    assert len(sec) == 2, "README has no section 'Counting what the model counts'"
    m = re.search(r"```python\n(.*?)```", sec[1], re.S)
    assert m, "no python example in it"
    monkeypatch.setenv("CLIPFOLD_WASM", wasm)
    exec(compile(m.group(1), "README.md", "exec"), {})  # noqa: S102
    assert capsys.readouterr().out.strip() == "True True"
