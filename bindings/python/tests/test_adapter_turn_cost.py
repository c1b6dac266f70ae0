"""The adapters' per-turn check pays for the new messages only: the
LangChain middleware and the LangGraph pre_model_hook hand the plug-in the
turn's new message alone, at 2,000 messages as at 100, and run compress
(which reads the whole history) only when the history is due."""

from __future__ import annotations

from typing import Any, Dict, List

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from clipfold import Compactor
from clipfold.langchain import ClipfoldMiddleware
from clipfold.langgraph import pre_model_hook

BIG = {"model_max_tokens": 1_000_000}


def history(n: int) -> List[BaseMessage]:
    return [HumanMessage("question %d: what is the retry budget of module %d?" % (i, i), id="h%d" % i) if i % 2 == 0
            else AIMessage("Module %d keeps a retry budget of %d." % (i, i + 10), id="a%d" % i) for i in range(n)]


class Recorder:
    """Wraps a Compactor's second instance and its compress: what each turn
    hands the plug-in to count, and whether compress ran."""

    def __init__(self, c: Compactor) -> None:
        self.c, self.real_aux, self.real_compress = c, c._aux, c.compress
        self.counted: List[int] = []
        self.compressed = 0

        def aux(export: str, data: bytes) -> Any:
            if export == "estimateTokens":
                self.counted.append(len(data))
            return self.real_aux(export, data)

        def compress(*a: Any, **kw: Any) -> Any:
            self.compressed += 1
            return self.real_compress(*a, **kw)

        c._aux = aux  # type: ignore[method-assign]
        c.compress = compress  # type: ignore[method-assign]

    def restore(self) -> None:
        self.c._aux = self.real_aux  # type: ignore[method-assign]
        self.c.compress = self.real_compress  # type: ignore[method-assign]



def run_turns(c: Compactor, step: Any) -> Dict[int, List[int]]:
    per_turn: Dict[int, List[int]] = {}
    rec = Recorder(c)
    try:
        for n in (100, 2_000):
            lst = history(n)
            step(lst)
            rec.counted.clear()
            for i in range(20):
                lst = lst + [HumanMessage("and module %d?" % (i % 10), id="new-%d" % i)]
                step(lst)
            per_turn[n] = list(rec.counted)
        assert rec.compressed == 0, "compress ran although nothing was due"
    finally:
        rec.restore()
    return per_turn


def test_middleware_counts_the_new_messages_only(wasm: str) -> None:
    with Compactor(wasm) as c:
        mw = ClipfoldMiddleware(compactor=c, config=BIG)
        per_turn = run_turns(c, lambda lst: mw.compact(lst, "mw"))
        assert len(per_turn[100]) == 20 and per_turn[2_000] == per_turn[100], per_turn
        assert max(per_turn[100]) < 600, per_turn[100]


def test_pre_model_hook_counts_the_new_messages_only(wasm: str) -> None:
    with Compactor(wasm) as c:
        hook = pre_model_hook(c, config=BIG, conversation_id="hook")
        seen: List[int] = []

        def step(lst: List[BaseMessage]) -> None:
            out = hook({"messages": lst})["llm_input_messages"]
            assert out == lst, "not due: the messages as they are"
            seen.append(len(out))

        per_turn = run_turns(c, step)
        assert len(per_turn[100]) == 20 and per_turn[2_000] == per_turn[100], per_turn
        assert max(per_turn[100]) < 600, per_turn[100]


def test_still_compacts_when_due(wasm: str) -> None:
    """The count decides as should_compact does: over the limit, compress
    runs and the view shrinks."""
    with Compactor(wasm) as c:
        hook = pre_model_hook(c, config={"model_max_tokens": 3000, "keep_recent": 4}, conversation_id="due")
        lst = history(200)
        assert c.should_compact(lst, {"model_max_tokens": 3000})["due"]
        out = hook({"messages": lst})["llm_input_messages"]
        assert len(out) < len(lst) and "[Context Summary" in str(out[0].content)
        assert hook.last_result is not None and hook.last_result["messages_compressed"] > 0
