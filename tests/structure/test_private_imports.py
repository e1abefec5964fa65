"""No package of mixeval imports another package's private modules or names (issues 39 and 41).

A package (``mixed``, ``significance``, ``resampling``, ...) offers other packages its public ``__init__`` and, for
building blocks, its ``engine`` module; what starts with ``_`` is its own. The top-level modules (``study.py``,
``reliability.py``, ...) form the root package, whose private helpers (``mixeval._validation``, ``mixeval._random``,
...) every package shares. Every ``import`` statement is read with :mod:`ast`, inside functions too, relative
imports resolved.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mixeval"


def _owner(package: Path, parts: list[str]) -> str | None:
    """The subpackage ``mixeval.<parts[1]>`` names (None: the root package's top-level modules and helpers)."""
    return parts[1] if len(parts) > 2 and (package / parts[1]).is_dir() else None


def private_imports(package: Path = PACKAGE) -> list[str]:
    """``"path:line imports mixeval.pkg._private"`` for every import of another package's private module or name."""
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = list(path.relative_to(package).with_suffix("").parts)
        here = ["mixeval", *rel]
        if rel[-1] == "__init__":
            here = here[:-1]
            container = here
        else:
            container = here[:-1]
        owner = _owner(package, here + ["x"]) if rel[-1] == "__init__" else _owner(package, here)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name.split(".") for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module.split(".") if node.module else []
                if node.level:
                    base = container[:len(container) - node.level + 1] + base
                targets = [[*base, a.name] for a in node.names]
            else:
                continue
            for target in targets:
                if target[0] != "mixeval" or len(target) < 3:
                    continue
                theirs = _owner(package, target)
                if theirs is None or theirs == owner:
                    continue
                if any(s.startswith("_") and not s.startswith("__") for s in target[2:]):
                    found.append((str(path.relative_to(package.parent)), node.lineno, ".".join(target)))
    return [f"{path}:{line} imports {target}" for path, line, target in sorted(found)]


def test_no_package_imports_another_packages_private_modules():
    found = private_imports()
    assert not found, ("import these from the owner's public __init__ or its engine module (or give them a public "
                       "name there):\n" + "\n".join(found))


def test_the_check_finds_planted_private_imports(tmp_path):
    root = tmp_path / "mixeval"
    for name in ("mixed", "significance"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
    (root / "mixed" / "_fit.py").write_text("from ._design import Design\nfrom .engine import ReTerm\n")
    (root / "significance" / "_ddf.py").write_text(
        "from ..mixed._design import Design\nfrom ..mixed import _fit\nfrom ..mixed.engine import ReTerm\n"
        "from .._validation import require_level\n"
        "def f():\n    import mixeval.mixed._clmm\n    from mixeval.mixed.engine import _start\n")
    (root / "study.py").write_text("from .significance._ddf import canonical_df\nfrom ._validation import x\n")
    (root / "significance" / "__init__.py").write_text("from ..mixed._blas import single_threaded_blas\n")
    found = private_imports(root)
    assert found == [
        "mixeval/significance/__init__.py:1 imports mixeval.mixed._blas.single_threaded_blas",
        "mixeval/significance/_ddf.py:1 imports mixeval.mixed._design.Design",
        "mixeval/significance/_ddf.py:2 imports mixeval.mixed._fit",
        "mixeval/significance/_ddf.py:6 imports mixeval.mixed._clmm",
        "mixeval/significance/_ddf.py:7 imports mixeval.mixed.engine._start",
        "mixeval/study.py:1 imports mixeval.significance._ddf.canonical_df",
    ]
