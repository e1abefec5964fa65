"""Every hard dependency in pyproject.toml is imported by the package (``pip install mixeval`` pulls
nothing that mixeval does not use)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: distribution name -> module name, where they differ
MODULE_OF = {"scikit-learn": "sklearn", "pyyaml": "yaml"}

def hard_dependencies() -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        tomllib = pytest.importorskip("tomli")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].strip().lower() for d in project["dependencies"]]


def imported_modules() -> set[str]:
    """Top-level names of every module imported anywhere in the package (also inside functions)."""
    names: set[str] = set()
    for path in (ROOT / "mixeval").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_every_hard_dependency_is_imported():
    imported = imported_modules()
    unused = [d for d in hard_dependencies() if MODULE_OF.get(d, d.replace("-", "_")) not in imported]
    assert unused == [], (
        f"hard dependencies that mixeval never imports: {unused}; drop them or make them extras")


def test_the_check_sees_the_imports_it_should():
    imported = imported_modules()
    assert {"numpy", "scipy", "pandas", "statsmodels", "formulaic"} <= imported
    assert "mixeval" not in hard_dependencies()
