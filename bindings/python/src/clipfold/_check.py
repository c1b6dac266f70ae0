"""Checks of the public API's arguments: a wrong type is a
:class:`~clipfold.errors.ClipfoldError` (``invalid_input``) naming the
argument, never a bare ValueError or TypeError from deep inside, and never
a value silently coerced (``caller_owned="no"`` is not true; a float NaN is
not JSON)."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .errors import ClipfoldError


def invalid(field: str, what: str) -> ClipfoldError:
    """An ``invalid_input`` error naming ``field``."""
    return ClipfoldError("invalid_input", "%s: %s" % (field, what), field)


def describe(v: Any) -> str:
    """How a value reads in an error message."""
    if v is None or isinstance(v, (bool, int, float)):
        return repr(v)
    if isinstance(v, str):
        return repr(v if len(v) <= 40 else v[:40] + "…")
    return "a %s" % type(v).__name__


def mapping(v: Any, field: str, what: str = "a dict") -> Optional[Mapping[str, Any]]:
    """``v`` when it is a mapping (or None); else an error naming ``field``."""
    if v is not None and not isinstance(v, Mapping):
        raise invalid(field, "must be %s or None, got %s" % (what, describe(v)))
    return v


def string(v: Any, field: str) -> str:
    if not isinstance(v, str):
        raise invalid(field, "must be a string, got %s" % describe(v))
    return v


def optional_string(v: Any, field: str) -> Optional[str]:
    return None if v is None else string(v, field)


def boolean(v: Any, field: str) -> bool:
    """True or False only: ``"no"`` is not read as true."""
    if not isinstance(v, bool):
        raise invalid(field, "must be True or False, got %s" % describe(v))
    return v


def whole_number(v: Any, field: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise invalid(field, "must be a whole number, got %s" % describe(v))
    return v


def path_like(v: Any, field: str) -> None:
    if not isinstance(v, (str, os.PathLike)):
        raise invalid(field, "must be a path, got %s" % describe(v))


def non_json_number(value: Any, root: str) -> Optional[Tuple[str, float]]:
    """The path (``history[1].content``) and value of the first number in
    ``value`` that JSON cannot hold (NaN, ±Infinity), or None."""
    stack: List[Tuple[Any, str]] = [(value, root)]
    while stack:
        v, path = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return path or "input", v
        if isinstance(v, Mapping):
            items = [(x, "%s.%s" % (path, k) if path else str(k)) for k, x in v.items()]
        elif isinstance(v, (list, tuple)):
            items = [(x, "%s[%d]" % (path, i)) for i, x in enumerate(v)]
        else:
            continue
        stack.extend(reversed(items))  # depth first, in order
    return None


def json_text(value: Any, root: str) -> str:
    """Compact JSON of ``value`` (non-ASCII as is); a number JSON cannot
    hold is an error naming where it is, not the invalid token ``NaN``."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        found = non_json_number(value, root)
        if found is None:
            raise
        raise invalid(found[0], "%r is not a JSON number" % found[1]) from None


def usage(v: Any) -> Optional[Dict[str, int]]:
    """``usage`` (the provider's count of the last model call): None, or a
    mapping of ``input_tokens`` and ``messages``, whole numbers ≥ 0; else
    an error naming the argument or its key. Whether ``messages`` is within
    the history is the plug-in's to say (``usage.messages``)."""
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise invalid("usage", "must be a dict {\"input_tokens\": N, \"messages\": K} or None, got %s" % describe(v))
    out: Dict[str, int] = {}
    for key in ("input_tokens", "messages"):
        if key not in v:
            raise invalid("usage.%s" % key, "is required")
        n = v[key]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise invalid("usage.%s" % key, "must be a whole number ≥ 0, got %s" % describe(n))
        out[key] = n
    return out  # other keys (output_tokens, …) are not the plug-in's
