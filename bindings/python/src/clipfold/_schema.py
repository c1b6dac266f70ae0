"""The SQLite schema and queries shared with the Go store.

The Go store (hostfuncs/store/sqlite) keeps its migration steps and the
queries both hosts run as plain .sql files; this module reads the very same
files, so no SQL is copied between languages. They are found, in order:

1. in this package's data, ``clipfold/sql/migrations/*.sql`` and
   ``clipfold/sql/queries/*.sql`` (where a package build puts a copy of
   hostfuncs/store/sqlite/migrations and .../queries);
2. in the directory ``$CLIPFOLD_SQL_DIR`` (holding ``migrations/`` and
   ``queries/``);
3. in a clipfold repository: ``hostfuncs/store/sqlite`` under this file's
   directory or the current directory, or one of their parents (a checkout,
   or a test run from one).

``migrations/NNNN.sql`` is schema version NNNN; its first line is ``-- ``
and the step's name, the rest its SQL.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Dict, List, Optional, Tuple

SQL_DIR_ENV = "CLIPFOLD_SQL_DIR"
_REPO_SUBDIR = Path("hostfuncs") / "store" / "sqlite"

_lock = threading.Lock()
_cache: Dict[str, object] = {}


def sql_dir() -> Path:
    """The directory holding ``migrations/`` and ``queries/`` (see the module doc)."""
    with _lock:
        found = _cache.get("dir")
        if isinstance(found, Path):
            return found
        tried: List[str] = []
        candidates: List[Path] = [Path(__file__).resolve().parent / "sql"]
        env = os.environ.get(SQL_DIR_ENV)
        if env:
            candidates.append(Path(env))
        for origin in (Path(__file__).resolve().parent, Path.cwd().resolve()):
            for d in [origin, *origin.parents]:
                candidates.append(d / _REPO_SUBDIR)
        for c in candidates:
            if (c / "migrations" / "0001.sql").is_file() and (c / "queries").is_dir():
                _cache["dir"] = c
                return c
            tried.append(str(c))
        raise FileNotFoundError(
            "clipfold: the SQLite schema files (migrations/*.sql, queries/*.sql) were not found: not in the package "
            "(clipfold/sql), not in $%s, not in a clipfold checkout above %s or %s. Set %s to "
            "hostfuncs/store/sqlite of a clipfold checkout." % (SQL_DIR_ENV, Path(__file__).resolve().parent, Path.cwd(),
                                                               SQL_DIR_ENV))


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
