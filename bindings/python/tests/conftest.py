import os
from pathlib import Path
from typing import Iterator

import pytest

import clipfold

REPO = Path(__file__).resolve().parents[3]


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
    """Skips a test whose export the built plug-in does not have yet."""
    if not c.has_export(export):
        pytest.skip("the plug-in at %s has no %r export yet (re-run `make build`)" % (c.wasm_path, export))
