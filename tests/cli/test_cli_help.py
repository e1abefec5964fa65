"""The command line's help: ``--version``, commands listed by task, an example epilog per command that parses,
and a help text for every argument."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

import pytest

import mixeval
from mixeval.cli import COMMANDS, build_parser
from mixeval.cli._commands import GROUPS


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _all_parsers() -> dict[str, argparse.ArgumentParser]:
    out = {}
    for name, parser in _subparsers(build_parser()).items():
        out[name] = parser
        if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            out.update({f"{name} {sub}": p for sub, p in _subparsers(parser).items()})
    return out


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser(["--version"]).parse_args(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"mixeval {mixeval.__version__}"


def test_every_command_is_in_one_of_the_groups():
    assert {row.group for row in COMMANDS.values()} == set(GROUPS)


def test_top_level_help_lists_the_commands_by_task():
    text = build_parser(["--help"]).format_help()
    for group in GROUPS:
        names = [name for name, row in COMMANDS.items() if row.group == group]
        section = text.split(f"\n{group}:\n", 1)[1].split("\n\n", 1)[0]
        assert [line.split()[0] for line in section.splitlines()] == names, group


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_examples_that_parse(name):
    parser = _subparsers(build_parser())[name]
    assert parser.epilog and parser.epilog.startswith("example"), name  # ours, or one the command module wrote
    assert COMMANDS[name].examples
    for example in COMMANDS[name].examples:
        argv = shlex.split(example)[1:]
        assert argv[0] == name
        args = build_parser(argv).parse_args(argv)
        assert args.command == name
        if parser.epilog.startswith("examples:"):
            assert example in parser.format_help()


@pytest.mark.parametrize("name", sorted(_all_parsers()))
def test_every_argument_has_help(name):
    parser = _all_parsers()[name]
    missing = [a.option_strings or a.dest for a in parser._actions
               if not a.help and not isinstance(a, argparse._HelpAction)]
    assert not missing, f"mixeval {name}: arguments without help: {missing}"


def test_version_from_the_console():
    out = subprocess.run([sys.executable, "-m", "mixeval", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"mixeval {mixeval.__version__}"
