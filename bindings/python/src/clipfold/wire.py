"""A compacted history back on the wire, per provider.

``compress`` returns the kept messages byte for byte as they were given and
the clip-archive rendered in the history's shape (docs/spec.md#message-shapes), so these
helpers are thin: they take off the fields only clipfold reads (a native
history's ``id``, ``conversation_id``, ``created_at``, ``pinned``: the
OpenAI API answers "Additional properties are not allowed ('id' was
unexpected)") and put the clip-archive where the provider wants it::

    r = compactor.compress("conv-1", history)
    client.chat.completions.create(model=..., messages=wire.openai_chat(r, system="You are …"))
    client.messages.create(model=..., max_tokens=1024, **wire.anthropic(r, system="You are …"))
    client.responses.create(model=..., **wire.responses(r, instructions="You are …"))

Each takes a CompactionResult (or a bare history list) and returns new
objects; the result is not changed. LangChain needs none of this: its chat
models write their own wire format from the messages ``compress`` returns.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["BOOKKEEPING", "anthropic", "openai_chat", "responses", "strip"]

BOOKKEEPING = ("id", "conversation_id", "created_at", "pinned")
"""Fields of clipfold's native Message that no provider's message takes."""

HistoryOrResult = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]


def _split(h: HistoryOrResult) -> Tuple[List[Mapping[str, Any]], Optional[str]]:
    if isinstance(h, Mapping):
        if not isinstance(h.get("history"), list):
            raise TypeError("expected a CompactionResult (with a history list) or a list of messages")
        archive = h.get("clip_archive")
        return list(h["history"]), archive if isinstance(archive, str) else None
    return list(h), None


def strip(message: Mapping[str, Any], fields: Sequence[str] = BOOKKEEPING) -> Dict[str, Any]:
    """A copy of message without clipfold's bookkeeping fields."""
    return {k: v for k, v in message.items() if k not in fields}


def _join(*parts: Optional[str]) -> Optional[str]:
    text = "\n\n".join(p for p in parts if p and p.strip())
    return text or None


def openai_chat(history: HistoryOrResult, *, system: Optional[str] = None) -> List[Dict[str, Any]]:
    """``messages`` for OpenAI Chat Completions (and compatible servers):
    ``system`` first (when given), the clip-archive where compress put it
    (a system message first), every message without clipfold's fields."""
    msgs, _ = _split(history)
    out = [{"role": "system", "content": system}] if system else []
    return out + [strip(m) for m in msgs]


def anthropic(history: HistoryOrResult, *, system: Optional[str] = None) -> Dict[str, Any]:
    """``system`` and ``messages`` for the Anthropic Messages API.

    The clip-archive goes into ``system`` (after the caller's ``system``),
    taken out of ``messages`` — the leading user turn the plug-in renders
    for an Anthropic history, or a system message of another shape —
    unless taking it out would leave ``messages`` starting with an
    assistant turn; then the leading user turn stays (the API wants a user
    turn first). Other system-role messages are lifted into ``system`` as
    providerRequest does (the Messages API has no system role)."""
    msgs, archive = _split(history)
    if msgs and archive is not None and msgs[0].get("content") == archive:
        rest = msgs[1:]
        first = next((m for m in rest if m.get("role") != "system"), None)
        if first is None or first.get("role") == "user":
            msgs = rest
        else:
            archive = None
            msgs = [{"role": "user", "content": msgs[0]["content"]}] + rest
    else:
        archive = None
    lifted = [m for m in msgs if m.get("role") == "system" and isinstance(m.get("content"), str)]
    out: Dict[str, Any] = {}
    s = _join(system, archive, *(m["content"] for m in lifted))
    if s is not None:
        out["system"] = s
    out["messages"] = [strip(m) for m in msgs if not any(m is x for x in lifted)]
    return out


def responses(history: HistoryOrResult, *, instructions: Optional[str] = None,
              archive_in_instructions: bool = False) -> Dict[str, Any]:
    """``input`` (and ``instructions``) for the OpenAI Responses API: the
    items without clipfold's fields (an item's own ``id`` — ``fc_…``,
    ``rs_…`` — is the API's and stays), the clip-archive the system
    message item compress put first, or, with
    ``archive_in_instructions``, appended to ``instructions``."""
    msgs, archive = _split(history)
    if archive_in_instructions and archive is not None and msgs and msgs[0].get("content") == archive:
        msgs = msgs[1:]
    else:
        archive = None
    out: Dict[str, Any] = {}
    text = _join(instructions, archive)
    if text is not None:
        out["instructions"] = text
    out["input"] = [strip(m, ("conversation_id", "created_at", "pinned")) for m in msgs]
    return out
