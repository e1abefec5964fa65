"""The command line starts without importing the heavy modules, and its command listing is complete."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

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
    assert registered == COMMANDS


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
