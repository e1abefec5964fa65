"""Every example at the end of a command's ``--help`` runs as written (issue 41, item 6): its input files are the
ones ``mixeval demo --write-data .`` writes (the harness logs, circularity and meta-evaluation tables included), its
model has the demo's seed term, and the fast ones are run here."""

from __future__ import annotations

import argparse
import shlex

import pytest

from mixeval.cli import COMMANDS, build_parser, main

#: examples that take several seconds (bootstrap refits, power simulations, the whole report): their files are
#: checked, the run is left to the commands' own tests
SLOW = ("--method boot", "mixeval power", "mixeval report", "mixeval demo --json", "--random prompt")
SLOW_EXACT = {"mixeval demo"}
OUTPUT_FLAGS = {"--out", "--html"}

EXAMPLES = [(name, example) for name, row in COMMANDS.items() for example in row.examples]


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("examples")
    assert main(["demo", "--write-data", str(folder)]) == 0
    return folder


def _inputs(argv: list[str]) -> list[str]:
    """The files an example reads: its arguments that name a file (not the output of --out/--html)."""
    return [a for i, a in enumerate(argv) if "." in a and not a.startswith("-") and "~" not in a
            and (i == 0 or argv[i - 1] not in OUTPUT_FLAGS) and a.rsplit(".", 1)[-1] in {"csv", "parquet", "eval"}
            or a.endswith("/")]


def test_the_examples_start_with_writing_the_demo_data():
    action = next(a for a in build_parser(["fit"])._actions if isinstance(a, argparse._SubParsersAction))
    examples = action.choices["fit"].format_help().split("examples:", 1)[1]
    assert examples.lstrip().startswith("mixeval demo --write-data .")


def test_the_demo_models_have_the_seed_term():
    """Seeds are nested in systems in the demo: a model of its scores that compares systems needs them."""
    for name, example in EXAMPLES:
        formulas = [a for a in shlex.split(example) if "~" in a and "system" in a.split("~")[1]]
        for formula in formulas:
            assert "system:seed" in formula, example


@pytest.mark.parametrize("name, example", EXAMPLES, ids=[e for _, e in EXAMPLES])
def test_every_example_runs_as_written(name, example, demo_dir, monkeypatch, capsys):
    argv = shlex.split(example)[1:]
    files = _inputs(argv)
    missing = [f for f in files if not (demo_dir / f).exists()]
    assert not missing, f"{example}: {missing} not written by 'mixeval demo --write-data'"
    if example in SLOW_EXACT or any(marker in example for marker in SLOW):
        return
    monkeypatch.chdir(demo_dir)
    assert main(argv) == 0, capsys.readouterr().err


def test_write_data_refuses_the_flags_it_would_ignore_and_a_file_as_folder(tmp_path, capsys):
    assert main(["demo", "--write-data", str(tmp_path), "--json"]) == 2
    assert "drop --json" in capsys.readouterr().err
    assert main(["demo", "--write-data", str(tmp_path), "--out", "x.html"]) == 2
    assert "drop --out" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("x")
    assert main(["demo", "--write-data", str(tmp_path / "file.txt")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert not list(tmp_path.glob("demo_*.csv"))
