"""Messages on their way to the plug-in and back.

The plug-in reads every message shape of docs/spec.md#message-shapes (OpenAI Chat, Anthropic,
OpenAI Responses, AI SDK, LangChain dicts) and returns the messages it
keeps byte for byte, so the host only has to turn what it is given into
JSON text and the result back into what it was given:

- a dict (any ``Mapping``) is sent as its JSON (compact, non-ASCII as is:
  :func:`clipfold.store.raw_json`), nothing added or changed;
- a LangChain message object (``langchain_core.messages.BaseMessage``) is
  sent as LangChain's own serialization of it, ``model_dump(mode="json")``
  (the dict ``message_to_dict`` puts under ``"data"``: ``type``,
  ``content``, ``tool_calls``, ``tool_call_id``, ``id``, …), the LangChain
  dict shape the plug-in reads; what comes back is the very object that
  was given, and a message the plug-in made (the clip-archive) or the
  store held is rebuilt with LangChain's ``messages_from_dict``.

LangChain is imported only when a message is not a mapping: ``import
clipfold`` never needs it.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Sequence

from ._check import invalid, non_json_number
from .errors import ClipfoldError
from .store import raw_json


def _langchain_base() -> Any:
    try:
        from langchain_core.messages import BaseMessage
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return BaseMessage


def is_langchain_message(m: Any) -> bool:
    """Whether m is a LangChain message object (without importing LangChain
    unless m might be one)."""
    if not type(m).__module__.startswith("langchain") or isinstance(m, Mapping):
        return False
    base = _langchain_base()
    return base is not None and isinstance(m, base)


def message_dict(m: Any, field: str = "messages[0]") -> Dict[str, Any]:
    """The plain JSON object the plug-in reads for one message: a mapping
    as it is (copied), a LangChain message as LangChain's dict of it."""
    if type(m) is dict or isinstance(m, Mapping):  # a dict first: Mapping's check is slow
        return dict(m)
    if is_langchain_message(m):
        try:
            d = m.model_dump(mode="json")
        except Exception as e:  # pydantic cannot serialize a field
            raise ClipfoldError("invalid_input", "%s: this LangChain message cannot be written as JSON: %s" % (field, e),
                                field) from None
        return dict(d)
    raise ClipfoldError("invalid_input", "%s: must be a dict or a LangChain message, got %s" % (field, type(m).__name__),
                        field)


def from_dict(d: Mapping[str, Any]) -> Any:
    """A LangChain message object from a message dict the plug-in returned
    or the store held: LangChain's ``messages_from_dict`` for its own dict
    shape (``type``), ``convert_to_messages`` for a role-keyed one."""
    from langchain_core.messages import convert_to_messages, messages_from_dict
    if isinstance(d.get("type"), str) and "role" not in d:
        return messages_from_dict([{"type": d["type"], "data": dict(d)}])[0]
    return convert_to_messages([dict(d)])[0]


class Prepared:
    """A list of messages made ready for the plug-in: ``raws`` the JSON text
    of each, sent as is; :meth:`restore` turns a returned history back into
    the caller's kind of messages."""

    def __init__(self, messages: Sequence[Any], field: str = "messages") -> None:
        if type(messages) is not list and (isinstance(messages, (str, bytes, Mapping))
                                           or not isinstance(messages, Sequence)):
            raise ClipfoldError("invalid_input", "%s: must be a list of messages, got %s" % (field, type(messages).__name__),
                                field)
        self.originals: List[Any] = list(messages)
        self.langchain = False
        self.raws: List[str] = []
        for i, m in enumerate(self.originals):
            f = "%s[%d]" % (field, i)
            if type(m) is not dict and not isinstance(m, Mapping):
                self.langchain = self.langchain or is_langchain_message(m)
            d = message_dict(m, f)
            try:
                self.raws.append(raw_json(d))
            except (TypeError, ValueError) as e:
                found = non_json_number(d, f)
                if found is not None:  # NaN or ±Infinity: name the very field
                    raise invalid(found[0], "%r is not a JSON number" % found[1]) from None
                raise ClipfoldError("invalid_input", "%s: is not JSON: %s" % (f, e), f) from None

    def array(self) -> str:
        return "[" + ",".join(self.raws) + "]"

    def restore(self, history: Sequence[Mapping[str, Any]],
                ids: Optional[Callable[[List[Mapping[str, Any]]], List[str]]] = None) -> List[Any]:
        """The returned history in the caller's kind: for LangChain input,
        each message that came back is the object the caller gave (matched
        by its JSON, in order), any other (the clip-archive, a message of
        the store's) a new LangChain message whose ``id`` is the one clipfold
        keeps it under (``ids(history)``: the decodeHistory export's, given
        or derived — for a clip-archive the id of its rendered form), so a
        framework that stores the list and sends it back sends the same
        message; for dicts, the JSON objects as returned."""
        if not self.langchain:
            return list(history)
        index: Dict[str, Deque[int]] = collections.defaultdict(collections.deque)
        for i, r in enumerate(self.raws):
            index[r].append(i)
        out: List[Any] = []
        fresh: List[int] = []
        for item in history:
            q: Optional[Deque[int]] = index.get(raw_json(item))
            if q:
                out.append(self.originals[q.popleft()])
            else:
                fresh.append(len(out))
                out.append(from_dict(item))
        if fresh and ids is not None:
            known = ids(list(history))
            for i in fresh:
                if getattr(out[i], "id", None) is None:
                    out[i].id = known[i]
        return out


def same_messages(history: Sequence[Mapping[str, Any]], raws: Sequence[str]) -> bool:
    """Whether a returned history is exactly the messages sent (as JSON)."""
    return len(history) == len(raws) and all(raw_json(h) == r for h, r in zip(history, raws))

