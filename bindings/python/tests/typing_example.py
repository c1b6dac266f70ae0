"""Type-checked by test_api.test_mypy_strict (never run): how user code
reads with clipfold's types."""

from typing import Any, Dict, List, Optional

from clipfold import (Anthropic, AsyncCompactor, ClipfoldError, CompactionResult, Compactor, Message, ModelRequest,
                      OpenAICompatible, SearchHit, SplitResult)


def compact(history: List[Message]) -> List[Message]:
    llm = OpenAICompatible("http://127.0.0.1:8080", api_key="k", model="m")
    with Compactor(llm=llm, store="chat.db", config={"keep_recent": 4}) as c:
        split: SplitResult = c.split(history)
        print(len(split["to_compress"]), c.score(history)[0] + 1.0)
        result: CompactionResult = c.compress("c1", history)
        if result["failed"]:
            print(result["failure_code"], result["failure_message"])
        return result["history"]


def check(c: Compactor) -> str:
    try:
        return c.version()["version"]
    except ClipfoldError as e:
        return e.code + (e.field or "")


_ = Anthropic(api_key="x")


async def my_llm(request: ModelRequest) -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": "summary of %d messages" % len(request["messages"])}]}


async def compact_async(history: List[Message]) -> Optional[CompactionResult]:
    async with AsyncCompactor(llm=my_llm, store="chat.db") as c:
        split: SplitResult = await c.split(history)
        scores: List[float] = await c.score(history)
        print(len(split["to_keep"]), scores[0] + 1.0, (await c.should_compact(history))["due"])
        hits: List[SearchHit] = await c.search("what did we decide?", conversation_id="c1")
        print(hits[0]["score"] + 1.0 if hits else 0.0)
        reply: Dict[str, Any] = await OpenAICompatible("http://127.0.0.1:8080").acomplete({"messages": []})
        print(reply)
        return await c.compact_if_due("c1", history, target_share=0.5)


async def opened() -> str:
    c = await AsyncCompactor.open(store=None)
    try:
        return (await c.version())["version"]
    finally:
        await c.close()
