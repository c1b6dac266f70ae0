"""clipfold in LangGraph agents (``pip install "clipfold[langchain]"``).

:func:`pre_model_hook` builds the ``pre_model_hook`` of
``create_react_agent(model, tools, pre_model_hook=...)`` that keeps the
graph's full message list and gives the model a compacted view of it
(``llm_input_messages``): the resend-everything pattern of docs/spec.md#who-owns-the-history. Every
model call sends clipfold the whole list (caller-owned); clipfold lists
what it archived before, leaves out the messages its summaries already
cover, compacts the rest when due, and answers the same view for the same
list — the current clip-archive and the uncovered messages, the very
objects the state holds, tool calls with their results. The messages it
removes go to recall storage once each, searchable with
:func:`clipfold.langchain.memory_read_tool`.

Each call counts the request as the model will: the provider's usage of
the last model call (the ``usage_metadata["input_tokens"]`` of its answer,
for the view that call was sent), the estimate of what came after it, and
without usage the system prompt and tool schemas given to
:func:`pre_model_hook` (a pre-model hook does not see them).

With ``ahead=True`` the hook compacts ahead of time
(docs/spec.md#compaction-ahead-of-time): the compaction starts in the
background, and a later model call's view has it applied.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage

from . import _check
from .compactor import Compactor
from .langchain import ChatModelLLM, ContextSize, _conversation, _Overhead, _Policy
from .types import AheadResult, CompactionResult, Config, ContextUsage

__all__ = ["ClipfoldHook", "pre_model_hook"]


class ClipfoldHook:
    """The pre-model hook (a callable ``state -> {"llm_input_messages": …}``);
    :func:`pre_model_hook` makes one. ``last_result`` is the last
    CompactionResult (None before the first compaction due: a turn under
    the budget runs none); with ``ahead``, ``last_ahead`` the last call's
    :class:`~clipfold.types.AheadResult`."""

    _MAX_REMEMBERED = 256  # conversations whose last view is remembered

    def __init__(self, compactor: Compactor, policy: _Policy,
                 conversation_id: Union[None, str, Callable[[], str]], system: Optional[str] = None,
                 tools: Sequence[Any] = (), ahead: bool = False) -> None:
        self.compactor = compactor
        self.ahead = _check.boolean(ahead, "ahead")
        self.last_ahead: Optional[AheadResult] = None
        self.policy = policy
        self.conversation_id = conversation_id
        self.system = system
        self.tools = list(tools)
        self.last_result: Optional[CompactionResult] = None
        self._overhead = _Overhead(compactor)
        # Per conversation: the view the last call sent, the state's length
        # then and the id of its last message.
        self._sent: "OrderedDict[str, Tuple[List[Any], int, Optional[str]]]" = OrderedDict()

    def _history(self, conv: str, messages: List[Any]) -> Tuple[List[Any], Optional[ContextUsage]]:
        """What to compact, and the provider's usage for it: the view the
        last model call was sent and what the state gained since (the
        answer first, its usage counting that view), when this hook made
        that view; else the state's whole list, without usage."""
        prev = self._sent.get(conv)
        if prev is None:
            return messages, None
        view, n, last_id = prev
        if not 0 < n < len(messages) or getattr(messages[n - 1], "id", None) != last_id:
            return messages, None
        new = messages[n:]
        answer = new[0]
        usage: Optional[ContextUsage] = None
        if isinstance(answer, AIMessage) and answer.usage_metadata:
            tokens = answer.usage_metadata.get("input_tokens")
            if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
                usage = {"input_tokens": tokens, "messages": len(view)}
        return view + new, usage

    def __call__(self, state: Any) -> Dict[str, Any]:
        messages = list(state["messages"] if isinstance(state, dict) else state.messages)
        conv = _conversation(self.conversation_id)
        history, usage = self._history(conv, messages)
        cfg = self.policy.request_config(self._overhead(self.system, self.tools, self.policy.config))
        if self.ahead:
            # keep as without ahead: target_share 0 compacts to keep_recent,
            # or to the target_tokens of a keep in tokens.
            a = self.compactor.compact_ahead(conv, history, caller_owned=True, config=cfg, usage=usage, target_share=0)
            self.last_ahead = a
            if a["compaction"] is not None:
                self.last_result = a["compaction"]
            view = list(a["history"])
        # count_context pays for the messages new since the last turn only;
        # compress, which reads the whole view, runs when it is due.
        elif self.compactor.count_context(conv, history, usage=usage, config=cfg)["due"]:
            r = self.compactor.compress(conv, history, caller_owned=True, only_if_due=True, config=cfg, usage=usage)
            self.last_result = r
            # A failed compaction returns the view it was given: still the
            # messages to send (nothing lost, nothing summarized twice).
            view = list(r["history"])
        else:
            view = list(history)
        self._sent[conv] = (view, len(messages), getattr(messages[-1], "id", None) if messages else None)
        self._sent.move_to_end(conv)
        while len(self._sent) > self._MAX_REMEMBERED:
            self._sent.popitem(last=False)
        return {"llm_input_messages": view}


def pre_model_hook(compactor: Optional[Compactor] = None, *, model: Union[None, str, BaseChatModel] = None,
                   keep: ContextSize = ("messages", 20), config: Optional[Config] = None,
                   conversation_id: Union[None, str, Callable[[], str]] = None, system: Optional[str] = None,
                   tools: Sequence[Any] = (), ahead: bool = False) -> ClipfoldHook:
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
    ``thread_id``. ``system`` and ``tools``: the agent's system prompt
    (``prompt``) and tools, counted as ``overhead_tokens`` until the
    model's usage counts them.

    ``ahead=True``: compaction ahead of time (:meth:`Compactor.compact_ahead`,
    docs/spec.md#compaction-ahead-of-time). Over the soft threshold
    (``prepare_at`` of the budget, 0.7 by default) the compaction of the
    view starts in the background and the hook returns the view as it is;
    a later call that finds it done gives the model the compacted view
    (the messages that came meanwhile after the clip-archive). A call
    waits only when the view reaches the budget first, and then only for
    the rest of the work under way: what the model gets fits the budget
    as without it. ``keep`` as without it; a keep in tokens is where the
    view lands once the compaction is applied, the messages that came
    meanwhile included (the compaction itself goes that much lower)."""
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model
        model = init_chat_model(model)
    if compactor is None:
        compactor = Compactor(llm=ChatModelLLM(model) if model is not None else None)
    return ClipfoldHook(compactor, _Policy(compactor, model, None, keep, None, config), conversation_id, system, tools,
                        ahead)
