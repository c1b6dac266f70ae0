"""Every conformance vector of testdata/vectors, with harness/vectors.go's
semantics: the input bytes (input_raw, or `input` written as JSON),
expected compared as JSON with numbers within a relative 1e-9,
expected_raw byte for byte, error by code and field prefix.

`input` is sent as the json module writes it (compact), not as the file
spells it (the Go and Node runners send the file's own bytes): the same
JSON value, which is all an `input` vector fixes. A vector whose bytes
matter — a duplicate key, a number spelled out of range, whitespace an
`expected_raw` depends on — carries them in `input_raw`; load_vectors
checks that every other `input` survives being written again."""

import glob
import json
import math
import os
from typing import Any, List, Optional, Tuple

import pytest

from clipfold import ClipfoldError

from conftest import REPO

VECTOR_DIR = REPO / "testdata" / "vectors"


def _strict_object(pairs: List[Tuple[str, Any]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key among %s: put such an input in input_raw" % keys)
    return dict(pairs)


def _finite(x: float) -> float:
    v = float(x)
    if math.isinf(v):
        raise ValueError("number %s is out of range: put such an input in input_raw" % x)
    return v


def load_vectors() -> List[Tuple[str, str, dict, bytes]]:
    out = []
    for f in sorted(glob.glob(str(VECTOR_DIR / "*.json"))):
        doc = json.loads(open(f, encoding="utf-8").read(), object_pairs_hook=_strict_object, parse_float=_finite)
        for v in doc["vectors"]:
            if v.get("input_raw") is not None:
                data = v["input_raw"].encode("utf-8")
            else:
                assert v.get("expected_raw") is None, "%s: %s: expected_raw needs input_raw" % (f, v["name"])
                data = json.dumps(v["input"], ensure_ascii=False, separators=(",", ":"),
                                  allow_nan=False).encode("utf-8") if "input" in v else b""
            out.append((os.path.basename(f), doc["export"], v, data))
    return out


VECTORS = load_vectors()


def test_there_are_vectors() -> None:
    assert len(VECTORS) >= 100, "expected the conformance vectors in %s" % VECTOR_DIR


def is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def json_equal(a: Any, b: Any, path: str = "$") -> Optional[str]:
    """None when equal, else the first differing path (harness jsonEqual)."""
    if is_num(b):
        if not is_num(a):
            return path
        af, bf = float(a), float(b)
        if af == bf or abs(af - bf) <= 1e-9 * max(1.0, abs(bf)):
            return None
        return path
    if isinstance(b, dict):
        if not isinstance(a, dict) or len(a) != len(b):
            return path
        for k, x in b.items():
            if k not in a:
                return path + "." + k
            p = json_equal(a[k], x, path + "." + k)
            if p:
                return p
        return None
    if isinstance(b, list):
        if not isinstance(a, list) or len(a) != len(b):
            return path
        for i, x in enumerate(b):
            p = json_equal(a[i], x, "%s[%d]" % (path, i))
            if p:
                return p
        return None
    if type(a) is not type(b) or a != b:
        return path
    return None


def test_json_equal_semantics() -> None:
    assert json_equal({"a": 1}, {"a": 1.0 + 1e-12}) is None
    assert json_equal({"a": True}, {"a": 1}) == "$.a"
    assert json_equal([1, 2], [1]) == "$"
    assert json_equal({"a": 1, "b": 2}, {"a": 1}) == "$"


@pytest.mark.parametrize("file,export,vector,data", VECTORS,
                         ids=["%s:%s" % (f, v["name"]) for f, _, v, _ in VECTORS])
def test_vector(pure: Any, file: str, export: str, vector: dict, data: bytes) -> None:
    try:
        out, err = pure.call(export, data), None
    except ClipfoldError as e:
        out, err = None, e
    if vector.get("error") is not None:
        want = vector["error"]
        assert err is not None, "expected error %s at %r, got output %s" % (want["code"], want.get("field"), out[:2000])
        assert err.code == want["code"], "expected error code %s, got %s" % (want["code"], err)
        if want.get("field"):
            assert err.message.startswith(want["field"] + ": "), \
                "expected the error to name field %r first, got %r" % (want["field"], err.message)
        return
    assert err is None, "unexpected error: %s" % err
    if vector.get("expected_raw") is not None:
        assert out == vector["expected_raw"].encode("utf-8"), "output differs byte-for-byte"
        return
    got = json.loads(out.decode("utf-8", "replace"))
    p = json_equal(got, vector["expected"])
    assert p is None, "output differs at %s\n got: %s\nwant: %s" % (p, json.dumps(got)[:2000],
                                                                    json.dumps(vector["expected"])[:2000])
