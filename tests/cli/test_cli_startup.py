"""The command line starts without importing the heavy modules, its command table is complete, and every
sub-package is reachable from ``import mixeval``."""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mixeval.cli import COMMANDS, command_modules

ROOT = Path(__file__).resolve().parents[2]


def test_listing_matches_what_the_modules_register():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    registered = {}
    for name in command_modules():
        before = len(sub._choices_actions)
        importlib.import_module(f"mixeval.cli.{name}").register(sub)
        for action in sub._choices_actions[before:]:
            registered[action.dest] = (name, action.help)
    assert registered == {name: (row.module, row.help) for name, row in COMMANDS.items()}


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split())


def test_help_imports_no_heavy_module():
    loaded = _modules_after(
        "from mixeval.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert not {"numpy", "pandas", "scipy", "matplotlib", "mixeval.mixed"} & loaded


def test_import_mixeval_is_lazy_and_names_resolve():
    loaded = _modules_after("import mixeval")
    assert not {"numpy", "pandas", "scipy"} & loaded
    import mixeval

    for name in mixeval.__all__:
        assert getattr(mixeval, name) is not None


def test_one_command_imports_only_its_module():
    loaded = _modules_after(
        "from mixeval.cli import main\ntry:\n    main(['metric-ci', '--help'])\nexcept SystemExit:\n    pass")
    assert "mixeval.cli.cmd_metric_ci" in loaded
    assert not {"mixeval.cli.cmd_fit", "mixeval.cli.cmd_study", "mixeval.study"} & loaded


HEAVY = {"numpy", "pandas", "scipy", "matplotlib", "formulaic", "statsmodels", "mixeval.mixed", "mixeval.study"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_help_imports_no_numeric_module(command):
    """Every command's ``--help`` is built without numpy, pandas, scipy or the models (issue 41, item 14)."""
    loaded = _modules_after(
        f"from mixeval.cli import main\ntry:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass")
    assert not HEAVY & loaded, sorted(HEAVY & loaded)


def test_a_commands_help_is_fast():
    """``mixeval significance --help`` (1.7-3 s before) takes under 0.3 s beyond starting the interpreter: wall
    times of fresh interpreters, best of three each, the bare interpreter measured in the same run (a loaded
    machine slows both)."""

    def best(argv: list[str]) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([sys.executable, *argv], capture_output=True, cwd=ROOT, check=True)
            times.append(time.perf_counter() - start)
        return min(times)

    bare = best(["-c", "pass"])
    help_ = best(["-m", "mixeval", "significance", "--help"])
    assert help_ - bare < 0.3, (help_, bare)


def _documented_subpackage_names() -> set[str]:
    """``mixeval.<sub>.<name>`` as the README, the docs and the API index write them."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from api_groups import GROUPS
    finally:
        sys.path.pop(0)
    names = {entry for _, _, entries in GROUPS.values() for entry in entries if "." in entry}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        if "_build" in page.parts:
            continue
        names |= {m.group(1) for m in re.finditer(r"\bmixeval\.([a-z]\w*\.[A-Za-z]\w*)", page.read_text())}
    return names  # (names of private modules, ``mixeval.significance._labels``, are not documented API)


def test_every_documented_subpackage_is_reachable_from_import_mixeval():
    """``import mixeval; mixeval.uncertainty.power_from_components`` as the README writes it (issue 38, item 10)."""
    names = _documented_subpackage_names()
    assert "uncertainty.power_from_components" in names
    code = ("import mixeval\nmissing = []\n"
            f"for dotted in {sorted(names)!r}:\n"
            "    obj = mixeval\n"
            "    try:\n"
            "        for part in dotted.split('.'):\n"
            "            obj = getattr(obj, part)\n"
            "    except AttributeError:\n"
            "        missing.append(dotted)\n"
            "print(missing)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
