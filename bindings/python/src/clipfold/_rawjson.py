"""Exact byte spans of JSON values, for byte-for-byte comparisons.

Python's ``json`` module parses into objects and loses the bytes a value was
written with. Go's ``json.RawMessage`` keeps them, and the conformance
vectors (and the "returned byte-for-byte as received" guarantee) depend on
that, so this module finds where a value starts and ends in the text.
"""

from __future__ import annotations

import json
import re
from typing import Dict, List, Tuple

_WS = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


def _skip_ws(s: str, i: int) -> int:
    m = _WS.match(s, i)
    return m.end() if m else i


def value_end(s: str, i: int) -> int:
    """Returns the index just past the JSON value starting at s[i]."""
    i = _skip_ws(s, i)
    c = s[i : i + 1]
    if c == "{":
        i = _skip_ws(s, i + 1)
        if s[i : i + 1] == "}":
            return i + 1
        while True:
            _, i = json.decoder.scanstring(s, _skip_ws(s, i) + 1)  # type: ignore[attr-defined]
            i = _skip_ws(s, i)
            if s[i : i + 1] != ":":
                raise ValueError("expected ':' at %d" % i)
            i = _skip_ws(s, value_end(s, i + 1))
            if s[i : i + 1] == "}":
                return i + 1
            if s[i : i + 1] != ",":
                raise ValueError("expected ',' or '}' at %d" % i)
            i += 1
    if c == "[":
        i = _skip_ws(s, i + 1)
        if s[i : i + 1] == "]":
            return i + 1
        while True:
            i = _skip_ws(s, value_end(s, i))
            if s[i : i + 1] == "]":
                return i + 1
            if s[i : i + 1] != ",":
                raise ValueError("expected ',' or ']' at %d" % i)
            i += 1
    if c == '"':
        _, end = json.decoder.scanstring(s, i + 1)  # type: ignore[attr-defined]
        return int(end)
    _, end = _decoder.raw_decode(s, i)
    return int(end)


def object_members(s: str, i: int = 0) -> Dict[str, Tuple[int, int]]:
    """Maps each key of the object at s[i] to its value's (start, end) span;
    a repeated key keeps its last span, as Go's decoder does."""
    i = _skip_ws(s, i)
    if s[i : i + 1] != "{":
        raise ValueError("not an object at %d" % i)
    out: Dict[str, Tuple[int, int]] = {}
    i = _skip_ws(s, i + 1)
    if s[i : i + 1] == "}":
        return out
    while True:
        key, i = json.decoder.scanstring(s, _skip_ws(s, i) + 1)  # type: ignore[attr-defined]
        i = _skip_ws(s, i)
        if s[i : i + 1] != ":":
            raise ValueError("expected ':' at %d" % i)
        start = _skip_ws(s, i + 1)
        end = value_end(s, start)
        out[key] = (start, end)
        i = _skip_ws(s, end)
        if s[i : i + 1] == "}":
            return out
        if s[i : i + 1] != ",":
            raise ValueError("expected ',' or '}' at %d" % i)
        i += 1


def array_items(s: str, i: int = 0) -> List[Tuple[int, int]]:
    """The (start, end) span of every element of the array at s[i]."""
    i = _skip_ws(s, i)
    if s[i : i + 1] != "[":
        raise ValueError("not an array at %d" % i)
    out: List[Tuple[int, int]] = []
    i = _skip_ws(s, i + 1)
    if s[i : i + 1] == "]":
        return out
    while True:
        start = _skip_ws(s, i)
        end = value_end(s, start)
        out.append((start, end))
        i = _skip_ws(s, end)
        if s[i : i + 1] == "]":
            return out
        if s[i : i + 1] != ",":
            raise ValueError("expected ',' or ']' at %d" % i)
        i += 1


def raw_field(s: str, key: str) -> str:
    """The exact text of the top-level object's member ``key``."""
    start, end = object_members(s)[key]
    return s[start:end]


def raw_items(s: str) -> List[str]:
    """The exact text of each element of the array s."""
    return [s[a:b] for a, b in array_items(s)]
