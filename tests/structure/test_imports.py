"""The package has no import circle between its parts, and each part imports on its own.

Two checks: (1) every subpackage and top-level module is imported first, alone, in a fresh
interpreter (an import circle that a lazy import hides shows up as an ImportError there only for the
first-imported side, so each one is tried first); (2) a static graph of every ``import`` statement
in the package, module-level and inside functions alike (parsed with :mod:`ast`), has no cycle
between the package's parts (``mixed``, ``scale``, ``significance``, ``study``, ``resampling``,
``cli``, ...) nor between the modules of one part.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mixeval"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """Absolute names a ``from ... import ...`` statement refers to (module or module.attribute)."""
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        if not is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" for a in node.names] + [base]


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (for annotations only, never run)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def import_graph() -> dict[str, set[str]]:
    """``module -> modules of mixeval it imports`` (any import statement anywhere in the file but under
    ``if TYPE_CHECKING:``)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_blocks(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _resolve(module, is_package, node)
            else:
                continue
            for t in targets:
                # the longest known module the name belongs to ("mixeval.mixed.lmer" -> "mixeval.mixed")
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t and t != module:
                    graph[module].add(t)
    return graph


def part_of(module: str) -> str:
    """The part a module belongs to: ``mixeval.mixed._fit -> mixed``, ``mixeval.study -> study``."""
    parts = module.split(".")
    return parts[1].lstrip("_") if len(parts) > 1 else "__init__"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph (a list of nodes, first repeated last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Imports between parts; the package's ``__init__`` (which gathers everything) is left out."""
    parts: dict[str, set[str]] = {}
    for module, targets in graph.items():
        src = part_of(module)
        if src == "__init__":
            continue
        for t in targets:
            dst = part_of(t)
            if dst not in (src, "__init__"):
                parts.setdefault(src, set()).add(dst)
    return parts


def test_no_circle_between_parts():
    cycle = find_cycle(part_graph(import_graph()))
    assert cycle is None, "import circle between parts of mixeval: " + " -> ".join(cycle)


def test_no_circle_between_modules_of_a_part():
    graph = import_graph()
    for part in {part_of(m) for m in graph}:
        # inside one part; a package's __init__ gathers its modules, so it is left out as a source
        sub = {m: {t for t in ts if part_of(t) == part and not t.endswith(f"mixeval.{part}")}
               for m, ts in graph.items() if part_of(m) == part and m != f"mixeval.{part}"}
        cycle = find_cycle(sub)
        assert cycle is None, f"import circle inside mixeval.{part}: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_planted_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def _parts() -> list[str]:
    names = [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
    names += [p.parent.name for p in PACKAGE.glob("*/__init__.py")]
    return sorted(f"mixeval.{n}" for n in names)


@pytest.mark.parametrize("module", _parts())
def test_each_part_imports_alone_in_a_fresh_interpreter(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=PACKAGE.parent,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
