"""Where the plug-in and the store's SQL files come from.

An installed package carries both (``clipfold/clipfold.wasm``, the shipped
TinyGo build, and ``clipfold/sql/{migrations,queries}/*.sql``, the Go
store's files), copied in when the distribution was built. The order:

plug-in (:func:`find_wasm`)
  1. ``$CLIPFOLD_WASM`` (an error if it names no file);
  2. ``build/clipfold.wasm`` in ``start`` or one of its parents, when the
     caller passes ``start``;
  3. the checkout's ``build/clipfold.wasm`` when this package runs from a
     clipfold checkout (see :func:`checkout_root`);
  4. the bundled ``clipfold/clipfold.wasm``;
  5. the checkout's ``embed/clipfold.wasm``.

SQL (:func:`locate_sql_dir`)
  1. ``$CLIPFOLD_SQL_DIR`` (an error if it holds no ``migrations/0001.sql``);
  2. the checkout's ``hostfuncs/store/sqlite``;
  3. the bundled ``clipfold/sql``.

The current directory plays no part: a program that installed the wheel
gets the bundled plug-in wherever it runs, even in a directory that has a
``build/clipfold.wasm`` of its own (set ``CLIPFOLD_WASM`` to use that one).
In a checkout the test suite tests the build under test.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import List, Optional, Union

WASM_ENV = "CLIPFOLD_WASM"
SQL_DIR_ENV = "CLIPFOLD_SQL_DIR"
MODULE_LINE = "module github.com/clipfold/clipfold"
PACKAGE_DIR = Path(__file__).resolve().parent
REPO_SQL_SUBDIR = Path("hostfuncs") / "store" / "sqlite"

PathLike = Union[str, "os.PathLike[str]"]


def is_checkout(d: Path) -> bool:
    """Whether ``d`` is the root of a clipfold repository (its go.mod
    declares the clipfold module)."""
    try:
        with open(d / "go.mod", encoding="utf-8") as f:
            return f.readline().strip() == MODULE_LINE
    except OSError:
        return False


@functools.lru_cache(maxsize=None)
def checkout_root(package_dir: Path = PACKAGE_DIR) -> Optional[Path]:
    """The clipfold checkout this package's own files lie in — a source
    tree, an editable install, or a virtualenv made inside the checkout (as
    run_tests.sh does) — or None for a package installed anywhere else."""
    for d in package_dir.parents:
        if is_checkout(d):
            return d
    return None


def locate_wasm(start: Optional[PathLike], env: Optional[str], checkout: Optional[Path], package_dir: Path) -> str:
    """find_wasm's order, with its inputs explicit (see the module doc)."""
    if env:
        if not os.path.isfile(env):
            raise FileNotFoundError("clipfold: $%s is %r, which is not a file" % (WASM_ENV, env))
        return env
    tried: List[str] = []
    if start:
        d = Path(start).resolve()
        for c in [d, *d.parents]:
            p = c / "build" / "clipfold.wasm"
            if p.is_file():
                return str(p)
        tried.append("build/clipfold.wasm above %s" % d)
    candidates = []
    if checkout is not None:
        candidates.append(checkout / "build" / "clipfold.wasm")
    candidates.append(package_dir / "clipfold.wasm")
    if checkout is not None:
        candidates.append(checkout / "embed" / "clipfold.wasm")
    for p in candidates:
        if p.is_file():
            return str(p)
        tried.append(str(p))
    raise FileNotFoundError("clipfold: the plug-in was not found (tried %s): install the clipfold package from a "
                            "wheel or an sdist, which bundle it, run `make build` in a checkout, or set $%s"
                            % ("; ".join(tried), WASM_ENV))


def find_wasm(start: Optional[PathLike] = None) -> str:
    """The plug-in's path: ``$CLIPFOLD_WASM``, else ``build/clipfold.wasm``
    in ``start`` or a parent (when given), else the build of the checkout
    this package runs from, else the copy bundled in the package, else the
    checkout's ``embed/clipfold.wasm``. The current directory plays no part
    (see :mod:`clipfold._locate`)."""
    return locate_wasm(start, os.environ.get(WASM_ENV), checkout_root(), PACKAGE_DIR)


def _has_sql(d: Path) -> bool:
    return (d / "migrations" / "0001.sql").is_file() and (d / "queries").is_dir()


def locate_sql_dir(env: Optional[str], checkout: Optional[Path], package_dir: Path) -> Path:
    """The directory holding ``migrations/`` and ``queries/`` (see the module doc)."""
    if env:
        if not _has_sql(Path(env)):
            raise FileNotFoundError("clipfold: $%s is %r, which holds no migrations/0001.sql and queries/ "
                                    "(point it at hostfuncs/store/sqlite of a clipfold checkout)" % (SQL_DIR_ENV, env))
        return Path(env)
    candidates = []
    if checkout is not None:
        candidates.append(checkout / REPO_SQL_SUBDIR)
    candidates.append(package_dir / "sql")
    for c in candidates:
        if _has_sql(c):
            return c
    raise FileNotFoundError(
        "clipfold: the SQLite schema files (migrations/*.sql, queries/*.sql) were not found (tried %s): install the "
        "clipfold package from a wheel or an sdist, which bundle them, or set $%s to hostfuncs/store/sqlite of a "
        "clipfold checkout" % ("; ".join(str(c) for c in candidates), SQL_DIR_ENV))
