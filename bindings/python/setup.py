"""Build hook: bundles the plug-in, the store's SQL and the license.

Everything else about the package is in pyproject.toml. The files below are
not committed under bindings/python: each lives once in the repository and
is copied in when a distribution is built from a clipfold checkout

    embed/clipfold.wasm                       -> src/clipfold/clipfold.wasm
    hostfuncs/store/sqlite/migrations/*.sql   -> src/clipfold/sql/migrations/
    hostfuncs/store/sqlite/queries/*.sql      -> src/clipfold/sql/queries/
    LICENSE                                   -> LICENSE

(the copies are git-ignored). The sdist carries the copies, so a wheel
built from the sdist, where there is no checkout around, is the same wheel.
Every .sql file present is bundled (a glob), so a new migration step ships
without touching this file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict, List

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PKG = HERE / "src" / "clipfold"
REPO = HERE.parent.parent
SQL_SUBDIRS = ("migrations", "queries")
MODULE_LINE = "module github.com/clipfold/clipfold"


def _in_checkout() -> bool:
    """Whether this directory is bindings/python of a clipfold checkout (and
    not an unpacked sdist, which has no repository around it)."""
    go_mod = REPO / "go.mod"
    try:
        first = go_mod.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError):
        return False
    return first == MODULE_LINE and (REPO / "embed" / "clipfold.wasm").is_file()


def _checkout_files() -> Dict[Path, Path]:
    """destination (under HERE) -> source in the repository."""
    files = {PKG / "clipfold.wasm": REPO / "embed" / "clipfold.wasm", HERE / "LICENSE": REPO / "LICENSE"}
    for sub in SQL_SUBDIRS:
        for f in sorted((REPO / "hostfuncs" / "store" / "sqlite" / sub).glob("*.sql")):
            files[PKG / "sql" / sub / f.name] = f
    return files


def _sync_from_checkout() -> None:
    """Makes the copies under src/clipfold (and LICENSE) exactly the
    repository's files: changed ones rewritten, removed ones deleted."""
    files = _checkout_files()
    for sub in SQL_SUBDIRS:
        d = PKG / "sql" / sub
        if d.is_dir():
            for f in d.iterdir():
                if f not in files:
                    f.unlink()
    for dst, src in files.items():
        data = src.read_bytes()
        if not dst.is_file() or dst.read_bytes() != data:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)


def _check_bundle() -> None:
    """Outside a checkout (an unpacked sdist) the copies must be there."""
    missing: List[str] = [str(p.relative_to(HERE)) for p in (PKG / "clipfold.wasm", HERE / "LICENSE",
                                                            PKG / "sql" / "migrations" / "0001.sql")
                          if not p.is_file()]
    if missing:
        raise SystemExit("clipfold: cannot build: %s missing. Build from a clipfold checkout (pip install "
                         "./bindings/python) or from the sdist, which carries them." % ", ".join(missing))


if _in_checkout():
    _sync_from_checkout()
else:
    _check_bundle()


class BuildPy(build_py):
    """build_py that first drops what a previous build left in
    build/lib/clipfold: setuptools only adds to it, so a module or .sql
    file removed from the repository would otherwise still ship."""

    def run(self) -> None:
        shutil.rmtree(Path(self.build_lib) / "clipfold", ignore_errors=True)
        super().run()


setup(cmdclass={"build_py": BuildPy})
