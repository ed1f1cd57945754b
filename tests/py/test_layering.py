"""The Python package keeps its floors: no import cycles, no import running up, one crossing into JS.

The floors are read from the table in ``py/webdlpack/README.md`` (their one
source); every import in every module (inside functions too) is read from its
AST. The checker itself is tested on small made-up graphs, so it is known to
catch what it is meant to catch.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "py/webdlpack"
README = PKG / "README.md"
ROOT_NAME = "webdlpack"
#: The one module that may talk to JavaScript (README: "The rule").
CROSSING = "webdlpack.bridge.js.calls"
#: Modules that exist only inside Pyodide: JavaScript itself.
JS_MODULES = ("webdlpack_js", "pyodide", "pyodide_js", "js")


@dataclass(frozen=True)
class Import:
    """One import statement: ``source`` imports ``target`` at ``line``."""

    source: str
    target: str
    line: int
    module_level: bool


def read_floors(readme: str) -> dict[str, int]:
    """``{package: floor}`` from the README's floor table (rows like ``| 0 | `core` | ... |``)."""
    floors = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\| (\d+) \| `([\w.]+)` \|", readme, flags=re.M)}
    assert floors, "README.md has no floor table"
    return floors


def module_name(path: Path) -> str:
    """``webdlpack.tensor.moves`` for ``py/webdlpack/tensor/moves.py`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(source: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of a relative import's base (``from ..core import x`` in ``webdlpack.api.y``)."""
    if level == 0:
        return module or ""
    base = source.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def read_imports(path: Path, known: set[str]) -> list[Import]:
    """Every import in the module at ``path``; ``from pkg import mod`` names ``pkg.mod`` when it is a module."""
    source = module_name(path)
    tree = ast.parse(path.read_text(), str(path))
    module_level = _module_level_nodes(tree)
    found: list[Import] = []
    for node in ast.walk(tree):
        top = id(node) in module_level
        if isinstance(node, ast.Import):
            found += [Import(source, alias.name, node.lineno, top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(source, path.name == "__init__.py", node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(source, sub if sub in known else base, node.lineno, top))
    return found


def _module_level_nodes(tree: ast.Module) -> set[int]:
    """Statements run when the module is imported: its body, and inside module-level if/try blocks."""
    seen: set[int] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        stmt = todo.pop()
        seen.add(id(stmt))
        if isinstance(stmt, ast.If):
            todo += stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            todo += stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]
    return seen


def floor_of(module: str, floors: dict[str, int]) -> int | None:
    """The floor of ``webdlpack.<package>...``; the package root is ``__init__``; None for a module on no floor."""
    if module == ROOT_NAME:
        return floors.get("__init__")
    parts = module.split(".")
    return floors.get(parts[1]) if len(parts) > 1 else None


def check(modules: set[str], imports: list[Import], floors: dict[str, int], crossing: str) -> list[str]:
    """Every broken rule, in words; empty when the package keeps its floors.

    Parameters
    ----------
    modules : set of str
        The package's modules (``webdlpack``, ``webdlpack.core.abi``, ...).
    imports : list of Import
        Every import those modules make.
    floors : dict
        ``{package: floor}``, the README's table.
    crossing : str
        The one module allowed to import JavaScript.
    """
    problems = [
        f"{m} is on no floor (put it in a floor's package)" for m in sorted(modules) if floor_of(m, floors) is None
    ]
    problems += [
        f"the README names floor {name!r}, which is not a package here"
        for name in floors
        if name != "__init__" and f"{ROOT_NAME}.{name}" not in modules
    ]
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for imp in imports:
        if imp.target.split(".")[0] in JS_MODULES and imp.source != crossing:
            problems.append(f"{imp.source}:{imp.line} imports {imp.target}; only {crossing} talks to JavaScript")
        if imp.target not in modules or imp.target == imp.source:
            continue
        edges[imp.source].add(imp.target)
        if not imp.module_level:
            problems.append(f"{imp.source}:{imp.line} imports {imp.target} inside a function or class")
        low, high = floor_of(imp.source, floors), floor_of(imp.target, floors)
        if low is not None and high is not None and high > low:
            problems.append(f"{imp.source}:{imp.line} (floor {low}) imports {imp.target} from floor {high} above it")
    problems += [f"import cycle among: {', '.join(group)}" for group in find_cycles(edges)]
    return problems


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import each other in a circle (strongly connected components, Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in edges.get(node, ()):
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def _package() -> tuple[set[str], list[Import], dict[str, int]]:
    paths = sorted(PKG.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    imports = [imp for p in paths for imp in read_imports(p, modules)]
    return modules, imports, read_floors(README.read_text())


def test_the_package_keeps_its_floors() -> None:
    modules, imports, floors = _package()
    assert check(modules, imports, floors, CROSSING) == []


def test_the_floor_table_is_in_order_and_covers_every_package() -> None:
    floors = read_floors(README.read_text())
    assert sorted(floors.values()) == list(range(len(floors))), floors
    packages = {p.parent.name for p in PKG.glob("*/__init__.py")}
    assert packages | {"__init__"} == set(floors), "every subpackage is a floor in README.md's table"
    assert max(floors, key=floors.__getitem__) == "__init__", "the package root is the top floor"


def test_the_readme_names_every_module() -> None:
    text = README.read_text()
    for path in sorted(PKG.rglob("*.py")):
        if path.name != "__init__.py":
            assert f"- `{path.name}`:" in text.split(f"`{path.parent.name}/`", 1)[1], (
                f"README.md has no line for {path.relative_to(PKG)}"
            )


def test_only_the_crossing_module_imports_javascript() -> None:
    modules, imports, _ = _package()
    assert CROSSING in modules
    js = {imp.source for imp in imports if imp.target.split(".")[0] in JS_MODULES}
    assert js == {CROSSING}


# -- the checker on made-up graphs ---------------------------------------------------------------
FLOORS = {"low": 0, "high": 1, "__init__": 2}
MODS = {"webdlpack", "webdlpack.low", "webdlpack.low.a", "webdlpack.low.b", "webdlpack.high", "webdlpack.high.c"}


def _imp(source: str, target: str, module_level: bool = True) -> Import:
    return Import(source, target, 1, module_level)


def test_checker_accepts_a_good_graph() -> None:
    good = [
        _imp("webdlpack.high.c", "webdlpack.low.a"),
        _imp("webdlpack.low.b", "webdlpack.low.a"),
        _imp("webdlpack", "webdlpack.high.c"),
        _imp("webdlpack.low.a", "typing"),
        _imp("webdlpack.low.a", "webdlpack_js"),
    ]
    assert check(MODS, good, FLOORS, "webdlpack.low.a") == []


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (_imp("webdlpack.low.a", "webdlpack.high.c"), "from floor 1 above it"),
        (_imp("webdlpack.high.c", "webdlpack.low.a", module_level=False), "inside a function"),
        (_imp("webdlpack.low.b", "webdlpack_js"), "only webdlpack.low.a talks to JavaScript"),
        (_imp("webdlpack.high.c", "pyodide.ffi"), "only webdlpack.low.a talks to JavaScript"),
    ],
)
def test_checker_catches_a_broken_rule(bad: Import, says: str) -> None:
    problems = check(MODS, [bad], FLOORS, "webdlpack.low.a")
    assert len(problems) == 1 and says in problems[0], problems


def test_checker_catches_a_cycle_on_one_floor() -> None:
    cycle = [_imp("webdlpack.low.a", "webdlpack.low.b"), _imp("webdlpack.low.b", "webdlpack.low.a")]
    assert check(MODS, cycle, FLOORS, "webdlpack.low.a") == ["import cycle among: webdlpack.low.a, webdlpack.low.b"]


def test_checker_catches_a_module_on_no_floor_and_a_floor_with_no_package() -> None:
    problems = check(MODS | {"webdlpack.stray"}, [], {**FLOORS, "gone": 3}, "webdlpack.low.a")
    assert problems == [
        "webdlpack.stray is on no floor (put it in a floor's package)",
        "the README names floor 'gone', which is not a package here",
    ]


def test_reader_sees_imports_inside_functions_and_resolves_relative_ones() -> None:
    modules, _, _ = _package()
    debug = {imp.target for imp in read_imports(PKG / "api" / "debug.py", modules) if imp.module_level}
    assert {"webdlpack.exchange.export", "webdlpack.exchange.owner", "webdlpack.bridge.gpu"} <= debug
    tree = ast.parse("import os\ndef f():\n    from ..core import abi\nif True:\n    from . import sibling\n")
    levels = _module_level_nodes(tree)
    kinds = {
        type(n).__name__ + str(n.lineno): id(n) in levels
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
    }
    assert kinds == {"Import1": True, "ImportFrom3": False, "ImportFrom5": True}
    assert _resolve("webdlpack.api.convert", False, 2, "core") == "webdlpack.core"
    assert _resolve("webdlpack.api", True, 1, None) == "webdlpack.api"
    assert _resolve("webdlpack.tensor.tensor", False, 1, "moves") == "webdlpack.tensor.moves"
