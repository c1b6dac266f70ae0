"""Where the plug-in and the SQL files come from (clipfold._locate): the
order of every source, with made-up checkouts and packages in tmp_path."""

import os
from pathlib import Path
from typing import Tuple

import pytest

import clipfold
from clipfold import _locate, _schema
from clipfold._locate import MODULE_LINE, checkout_root, locate_sql_dir, locate_wasm

REPO = Path(__file__).resolve().parents[3]


def write(p: Path, data: bytes = b"\0asm") -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def fake_checkout(root: Path) -> Tuple[Path, Path]:
    """A clipfold checkout with both builds and a package dir inside it."""
    write(root / "go.mod", (MODULE_LINE + "\n\ngo 1.26.0\n").encode())
    write(root / "build" / "clipfold.wasm")
    write(root / "embed" / "clipfold.wasm")
    pkg = root / "bindings" / "python" / "src" / "clipfold"
    write(pkg / "clipfold.wasm")
    return root, pkg


def test_wasm_order_in_a_checkout(tmp_path: Path) -> None:
    root, pkg = fake_checkout(tmp_path / "repo")
    assert checkout_root(pkg) == root
    env = write(tmp_path / "elsewhere.wasm")
    assert locate_wasm(None, str(env), root, pkg) == str(env)
    start = write(tmp_path / "other" / "build" / "clipfold.wasm")
    assert locate_wasm(tmp_path / "other" / "a" / "b", None, root, pkg) == str(start)
    assert locate_wasm(None, None, root, pkg) == str(root / "build" / "clipfold.wasm")
    (root / "build" / "clipfold.wasm").unlink()
    assert locate_wasm(None, None, root, pkg) == str(pkg / "clipfold.wasm")
    (pkg / "clipfold.wasm").unlink()
    assert locate_wasm(None, None, root, pkg) == str(root / "embed" / "clipfold.wasm")
    (root / "embed" / "clipfold.wasm").unlink()
    with pytest.raises(FileNotFoundError) as e:
        locate_wasm(tmp_path / "nowhere", None, root, pkg)
    assert "CLIPFOLD_WASM" in str(e.value) and "nowhere" in str(e.value)


def test_installed_package_ignores_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed (no checkout around the package): the bundled copy wins
    over a build/clipfold.wasm in the current directory; CLIPFOLD_WASM
    still wins over both."""
    pkg = tmp_path / "site-packages" / "clipfold"
    write(pkg / "clipfold.wasm")
    assert checkout_root(pkg) is None
    cwd = tmp_path / "project"
    decoy = write(cwd / "build" / "clipfold.wasm", b"not this one")
    write(cwd / "go.mod", (MODULE_LINE + "\n").encode())  # even a clipfold checkout as cwd
    monkeypatch.chdir(cwd)
    assert locate_wasm(None, None, None, pkg) == str(pkg / "clipfold.wasm")
    assert locate_wasm(None, str(decoy), None, pkg) == str(decoy)


def test_wasm_env_naming_no_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as e:
        locate_wasm(None, str(tmp_path / "missing.wasm"), None, tmp_path)
    assert "CLIPFOLD_WASM" in str(e.value) and "missing.wasm" in str(e.value)


def test_checkout_is_recognized_by_its_go_mod(tmp_path: Path) -> None:
    write(tmp_path / "go.mod", b"module example.com/other\n")
    assert checkout_root(tmp_path / "a" / "b") is None
    write(tmp_path / "x" / "go.mod", (MODULE_LINE + "\n").encode())
    assert checkout_root(tmp_path / "x" / "a" / "b") == tmp_path / "x"


def sql(d: Path) -> Path:
    write(d / "migrations" / "0001.sql", b"-- one\n")
    (d / "queries").mkdir(parents=True, exist_ok=True)
    return d


def test_sql_order(tmp_path: Path) -> None:
    root, pkg = fake_checkout(tmp_path / "repo")
    in_repo = sql(root / "hostfuncs" / "store" / "sqlite")
    bundled = sql(pkg / "sql")
    env = sql(tmp_path / "env")
    assert locate_sql_dir(str(env), root, pkg) == env
    assert locate_sql_dir(None, root, pkg) == in_repo
    assert locate_sql_dir(None, None, pkg) == bundled
    (bundled / "migrations" / "0001.sql").unlink()
    with pytest.raises(FileNotFoundError) as e:
        locate_sql_dir(None, None, pkg)
    assert "CLIPFOLD_SQL_DIR" in str(e.value)
    with pytest.raises(FileNotFoundError) as e:
        locate_sql_dir(str(tmp_path / "nothing"), root, pkg)
    assert "CLIPFOLD_SQL_DIR" in str(e.value) and "nothing" in str(e.value)


def test_this_repository_is_a_checkout() -> None:
    """The real go.mod is recognized: a package run from this tree (source,
    editable install, a virtualenv inside it) prefers the tree's build."""
    assert checkout_root(REPO / "bindings" / "python" / "src" / "clipfold") == REPO
    assert _locate.PACKAGE_DIR == Path(clipfold.__file__).resolve().parent


def test_this_suite_tests_the_build_under_test() -> None:
    """run_tests.sh sets CLIPFOLD_WASM (default: build/clipfold.wasm) and
    CLIPFOLD_SQL_DIR (the repository's), which win over everything."""
    assert os.environ.get("CLIPFOLD_WASM"), "run the suite with run_tests.sh (or set CLIPFOLD_WASM)"
    assert clipfold.find_wasm() == os.environ["CLIPFOLD_WASM"]
    assert os.environ.get("CLIPFOLD_SQL_DIR"), "run the suite with run_tests.sh (or set CLIPFOLD_SQL_DIR)"
    assert _schema.sql_dir() == Path(os.environ["CLIPFOLD_SQL_DIR"])
