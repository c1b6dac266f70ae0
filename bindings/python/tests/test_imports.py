"""The package's modules import one another without a cycle: every
import between them (at the top of a module or inside a function, but not
under ``if TYPE_CHECKING:``) goes one way, so each module can be read, and
loaded, after the ones it uses."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import clipfold

PACKAGE = Path(clipfold.__file__).resolve().parent


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports(path: Path) -> Set[str]:
    """The package modules path imports (``from .x import …``, ``from . import x``)."""
    out: Set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for n in child.orelse:
                    visit(n)
                continue
            if isinstance(child, ast.ImportFrom) and child.level == 1:
                if child.module:
                    out.add(child.module.split(".")[0])
                else:
                    out.update(a.name for a in child.names)
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return out


def graph() -> Dict[str, Set[str]]:
    mods = {p.stem for p in PACKAGE.glob("*.py")}
    return {p.stem: imports(p) & mods - {p.stem} for p in PACKAGE.glob("*.py") if p.stem != "__init__"}


def test_no_import_cycle() -> None:
    g = graph()
    assert "compactor" in g and "store" in g and "_plugin" in g, sorted(g)
    state: Dict[str, int] = {}
    path: List[str] = []

    def walk(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(g.get(m, ())):
            if d == "__init__":
                continue
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(d):] + [d]))
            if d not in state:
                walk(d)
        path.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            walk(m)


def test_the_checker_sees_a_cycle(tmp_path: Path) -> None:
    """The rule on two small modules: a lazy import inside a function is
    an edge, one under TYPE_CHECKING is not."""
    (tmp_path / "a.py").write_text("def f():\n    from .b import x\n", "utf-8")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n", "utf-8")
    assert imports(tmp_path / "a.py") == {"b"} and imports(tmp_path / "b.py") == set()
    (tmp_path / "b.py").write_text("from . import a\n", "utf-8")
    assert imports(tmp_path / "b.py") == {"a"}
