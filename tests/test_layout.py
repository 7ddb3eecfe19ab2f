"""The package layout stays navigable: every package docstring lists its
modules, no module grows past 400 lines, and importing gov never walks an
import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "governance"
MAX_LINES = 400


def _packages() -> list[Path]:
    return sorted(init.parent for init in PACKAGE.rglob("__init__.py"))


def _docstring(init: Path) -> str:
    return ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""


@pytest.mark.parametrize(
    "package", _packages(), ids=lambda p: p.relative_to(PACKAGE.parent).as_posix()
)
def test_package_docstring_lists_its_modules(package: Path) -> None:
    doc = _docstring(package / "__init__.py")
    assert doc, f"{package / '__init__.py'} has no docstring"
    children = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    children += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    missing = sorted(name for name in children if f"`{name}`" not in doc)
    assert not missing, f"{package.name}/__init__.py docstring does not list: {', '.join(missing)}"


def test_no_module_exceeds_the_line_budget() -> None:
    sizes = {
        path.relative_to(PACKAGE.parent).as_posix(): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in PACKAGE.rglob("*.py")
    }
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them by responsibility): {over}"
    assert len(sizes) > 50  # the walk found the package


def test_no_runtime_import_cycle() -> None:
    """Imports that run (type-checking-only imports excluded) form no cycle,
    at module level or through function-level imports."""
    graph = grimp.build_graph("governance", exclude_type_checking_imports=True, cache_dir=None)
    cycles = _cycles({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})
    assert not cycles, f"import cycles: {cycles}"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
