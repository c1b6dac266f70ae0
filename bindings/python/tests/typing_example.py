"""Type-checked by test_api.test_mypy_strict (never run): how user code
reads with clipfold's types."""

from typing import List

from clipfold import Anthropic, ClipfoldError, CompactionResult, Compactor, Message, OpenAICompatible, SplitResult


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
