"""The gates (issue 41): ruff and mypy configured in pyproject.toml and run by CI before the tests, a pre-commit
configuration running the same two checks, ``py.typed`` shipped, and the public API typed with the real result
types (a fitted model is a ``MixedResult``, not an ``object``)."""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import mixeval

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def _section(name: str) -> str:
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[)", PYPROJECT + "\n[", re.M | re.S)
    assert match, f"pyproject.toml has no [{name}]"
    return match.group(1)


def test_ruff_and_mypy_are_configured():
    lint = _section("tool.ruff.lint")
    for family in ("E", "F", "W", "B", "I", "UP"):
        assert f'"{family}"' in lint.split("ignore")[0], family
    for ignored in re.findall(r'^\s*"(\w+)",\s*(#.*)?$', lint.split("ignore = [", 1)[1].split("]", 1)[0], re.M):
        assert ignored[1].strip("# "), f"{ignored[0]} is ignored without a reason"
    mypy = _section("tool.mypy")
    for option in ('packages = ["mixeval"]', "warn_unused_ignores = true", "check_untyped_defs = true"):
        assert option in mypy, option


def test_ci_runs_both_gates_before_the_tests_and_pre_commit_runs_them_too():
    ci = (ROOT / ".ci" / "run").read_text()
    ruff, mypy, tests = (ci.index("python3 -m ruff check mixeval"), ci.index("python3 -m mypy mixeval"),
                         ci.index("\npython3 -m pytest -q"))
    assert ruff < tests and mypy < tests
    hooks = (ROOT / ".pre-commit-config.yaml").read_text()
    assert "ruff check mixeval" in hooks and "mypy mixeval" in hooks
    lint_extra = re.search(r"^lint = \[(.*)\]$", PYPROJECT, re.M)
    assert lint_extra and "ruff==" in lint_extra.group(1) and "mypy==" in lint_extra.group(1)


def test_py_typed_is_shipped():
    assert (Path(mixeval.__file__).parent / "py.typed").is_file()
    assert '"py.typed"' in _section("tool.setuptools.package-data")


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is in the lint extra")
def test_ruff_passes_with_the_projects_configuration():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "mixeval"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]


def test_annotations_resolve():
    from mixeval.formula._formula import response_values

    hints = typing.get_type_hints(response_values)  # numpy was used in the annotations without being imported
    assert "return" in hints


PUBLIC = ["emmeans", "pairwise", "contrast", "emtrends", "joint_tests", "emmeans_response", "pairwise_ratios",
          "pairwise_differences", "plot_emmeans", "plot_trends"]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_significance_functions_take_a_mixed_result(name):
    import mixeval.significance as sig

    parameter = inspect.signature(getattr(sig, name)).parameters["fit"]
    assert parameter.annotation == "MixedResult", (name, parameter.annotation)


def test_study_fit_is_a_mixed_result():
    from mixeval.study import Study

    assert typing.get_type_hints(Study.fit.func)["return"].__name__ == "MixedResult"
