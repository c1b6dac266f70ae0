"""clipfold in LangGraph agents (``pip install "clipfold[langchain]"``).

:func:`pre_model_hook` builds the ``pre_model_hook`` of
``create_react_agent(model, tools, pre_model_hook=...)`` that keeps the
graph's full message list and gives the model a compacted view of it
(``llm_input_messages``): the resend-everything pattern of SPEC §4. Every
model call sends clipfold the whole list (caller-owned); clipfold lists
what it archived before, leaves out the messages its summaries already
cover, compacts the rest when due, and answers the same view for the same
list — the current clip-archive and the uncovered messages, the very
objects the state holds, tool calls with their results. The messages it
removes go to recall storage once each, searchable with
:func:`clipfold.langchain.memory_read_tool`.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Union

from langchain_core.language_models import BaseChatModel

from .compactor import Compactor
from .langchain import ChatModelLLM, ContextSize, _conversation, _Policy
from .types import CompactionResult, Config

__all__ = ["ClipfoldHook", "pre_model_hook"]


class ClipfoldHook:
    """The pre-model hook (a callable ``state -> {"llm_input_messages": …}``);
    :func:`pre_model_hook` makes one. ``last_result`` is the last
    CompactionResult."""

    def __init__(self, compactor: Compactor, policy: _Policy,
                 conversation_id: Union[None, str, Callable[[], str]]) -> None:
        self.compactor = compactor
        self.policy = policy
        self.conversation_id = conversation_id
        self.last_result: Optional[CompactionResult] = None

    def __call__(self, state: Any) -> Dict[str, Any]:
        messages = list(state["messages"] if isinstance(state, dict) else state.messages)
        r = self.compactor.compress(_conversation(self.conversation_id), messages, caller_owned=True,
                                    only_if_due=True, config=self.policy.config)
        self.last_result = r
        # A failed compaction returns the view it was given: still the
        # messages to send (nothing lost, nothing summarized twice).
        return {"llm_input_messages": list(r["history"])}


def pre_model_hook(compactor: Optional[Compactor] = None, *, model: Union[None, str, BaseChatModel] = None,
                   keep: ContextSize = ("messages", 20), config: Optional[Config] = None,
                   conversation_id: Union[None, str, Callable[[], str]] = None) -> ClipfoldHook:
    """A ``pre_model_hook`` for ``create_react_agent``::

        hook = pre_model_hook(Compactor(store="agent.db"), config={"model_max_tokens": 100_000})
        agent = create_react_agent(model, tools, pre_model_hook=hook, checkpointer=InMemorySaver())

    It compacts when clipfold's budget says the view is due
    (``context_budget`` × ``model_max_tokens``; ``model_max_tokens`` is the
    ``model``'s profile ``max_input_tokens`` unless the config sets it).
    ``keep``: ``("messages", n)`` (clipfold's ``keep_recent``, default 20),
    ``("tokens", n)`` or ``("fraction", f)`` (its ``target_tokens``), as
    :class:`~clipfold.langchain.ClipfoldMiddleware` reads it. ``model``: the
    chat model that writes summaries (default: clipfold's offline
    extractive summarizer) — used only when no ``compactor`` is given.
    ``conversation_id``: a string or a callable; default the run's
    ``thread_id``."""
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model
        model = init_chat_model(model)
    if compactor is None:
        compactor = Compactor(llm=ChatModelLLM(model) if model is not None else None)
    return ClipfoldHook(compactor, _Policy(compactor, model, None, keep, None, config), conversation_id)
