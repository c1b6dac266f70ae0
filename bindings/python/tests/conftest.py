import os
from pathlib import Path
from typing import Iterator

import pytest

import clipfold

REPO = Path(__file__).resolve().parents[3]


def pytest_report_header() -> str:
    try:
        wasm = clipfold.find_wasm(REPO)
    except FileNotFoundError as e:
        wasm = "not found (%s)" % e
    return "clipfold plug-in: %s; SQL: $CLIPFOLD_SQL_DIR=%s" % (wasm, os.environ.get("CLIPFOLD_SQL_DIR", "(unset)"))


def wasm_path() -> str:
    return clipfold.find_wasm(REPO)


@pytest.fixture(scope="session")
def wasm() -> str:
    try:
        return wasm_path()
    except FileNotFoundError as e:
        pytest.fail(str(e) + " (run `make build`)")


@pytest.fixture(scope="session")
def pure(wasm: str) -> Iterator[clipfold.Compactor]:
    """One Compactor for the pure exports."""
    with clipfold.Compactor(wasm) as c:
        yield c


def require_export(c: clipfold.Compactor, export: str) -> None:
    """Fails a test whose export the plug-in under test does not have: a
    build that lost an export must turn its tests red, never skip them."""
    if not c.has_export(export):
        pytest.fail("the plug-in at %s does not export %r: the build lost an export "
                    "(rebuild with `make build`; if it is still missing, the plug-in is broken)" % (c.wasm_path, export))
