"""The SQLite schema and queries shared with the Go store.

The Go store (hostfuncs/store/sqlite) keeps its migration steps and the
queries both hosts run as plain .sql files; this module reads the very same
files, so no SQL is copied between languages. They are found (see
:mod:`clipfold._locate`) in ``$CLIPFOLD_SQL_DIR``, else in the clipfold
checkout this package runs from (``hostfuncs/store/sqlite``), else in the
package data ``clipfold/sql/{migrations,queries}/*.sql`` that a
distribution build copies in from the repository.

``migrations/NNNN.sql`` is schema version NNNN; its first line is ``-- ``
and the step's name, the rest its SQL.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ._locate import PACKAGE_DIR, SQL_DIR_ENV, checkout_root, locate_sql_dir

_lock = threading.Lock()
_cache: Dict[str, object] = {}


def sql_dir() -> Path:
    """The directory holding ``migrations/`` and ``queries/`` (see the module
    doc); looked up once per process."""
    with _lock:
        found = _cache.get("dir")
        if isinstance(found, Path):
            return found
        d = locate_sql_dir(os.environ.get(SQL_DIR_ENV), checkout_root(), PACKAGE_DIR)
        _cache["dir"] = d
        return d


def migrations() -> List[Tuple[int, str, str]]:
    """Every schema step as (version, name, sql), in version order."""
    d = sql_dir()
    out: List[Tuple[int, str, str]] = []
    for f in sorted((d / "migrations").glob("*.sql")):
        try:
            version = int(f.stem)
        except ValueError:
            raise ValueError("clipfold: migration %s: the file name must be the version number" % f) from None
        text = f.read_bytes().decode("utf-8")
        first, sep, sql = text.partition("\n")
        if not sep or not first.startswith("-- "):
            raise ValueError("clipfold: migration %s: the first line must be '-- ' and the step's name" % f)
        out.append((version, first[3:], sql))
    out.sort()
    if [v for v, _, _ in out] != list(range(1, len(out) + 1)):
        raise ValueError("clipfold: migration versions in %s must be 1, 2, 3, …" % (d / "migrations"))
    return out


def query(name: str) -> str:
    """A shared query's SQL (queries/NAME.sql)."""
    with _lock:
        cached: Optional[object] = _cache.get("q:" + name)
    if isinstance(cached, str):
        return cached
    text = (sql_dir() / "queries" / (name + ".sql")).read_bytes().decode("utf-8")
    with _lock:
        _cache["q:" + name] = text
    return text
