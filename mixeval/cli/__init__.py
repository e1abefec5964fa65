"""Command line: ``mixeval COMMAND ...`` (also ``python -m mixeval``).

Each sub-command lives in its own module ``mixeval/cli/cmd_<name>.py`` that
defines ``register(subparsers) -> None``. A command's handler returns the process
exit code. Errors of the user's input (the project's :class:`mixeval.errors.MixevalError`,
also for unreadable files and bad flag values) end the command with a one-line message and
exit code 2; any other exception is a bug and propagates with its traceback.

Start-up is kept short (every scripted call pays it): one table, :data:`COMMANDS` (in
``_commands.py``), gives each command's module, task group, one-line help and examples, so
``mixeval --help`` imports no command module and ``mixeval fit ...`` imports only ``cmd_fit``;
the command modules and the CLI's helpers import numpy, pandas and the models inside their
handlers, so a command's ``--help`` does not load them either. A new ``cmd_*`` module adds its
commands to :data:`COMMANDS`; a test checks that the table matches what the modules register.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import shlex
import sys
import warnings
from collections.abc import Sequence

from ..errors import MixevalError
from ._commands import COMMANDS, GROUPS, Command
from ._io import print_json
from ._warnings import in_flag_words, set_command_options, show_warning

__all__ = ["main", "build_parser", "print_json", "COMMANDS", "Command", "command_modules"]


def command_listing() -> str:
    """The commands by task with their one-line help (``mixeval --help``; nothing is imported).

    Examples
    --------
    >>> print(command_listing().splitlines()[0])
    fitting:
    """
    width = max(len(name) for name in COMMANDS) + 2
    lines: list[str] = []
    for group in GROUPS:
        lines += [""] if lines else []
        lines.append(f"{group}:")
        lines += [f"  {name:<{width}}{command.help}" for name, command in COMMANDS.items() if command.group == group]
    return "\n".join(lines)


def _epilog(command: str) -> str | None:
    row = COMMANDS.get(command)
    if row is None or not row.examples:
        return None
    first = ["  mixeval demo --write-data .    # writes demo_mt.csv and the other demo_* files here"]
    uses_demo = any("demo_" in line for line in row.examples) and command != "demo"
    return "examples:\n" + "\n".join(first * uses_demo + [f"  {line}" for line in row.examples])


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps paragraphs as argparse does, but keeps indented lines (examples, listings) as they are."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        paragraph: list[str] = []
        for line in text.splitlines():
            if not line.strip() or line.startswith("  ") or (line.endswith(":") and len(line) < width):
                if paragraph:
                    out.append(super()._fill_text(" ".join(paragraph), width, indent))
                    paragraph = []
                out.append(indent + line)
            else:
                paragraph.append(line)
        if paragraph:
            out.append(super()._fill_text(" ".join(paragraph), width, indent))
        return "\n".join(out)


class _Commands(argparse._SubParsersAction):
    """Sub-commands that take their examples from :data:`COMMANDS` and are listed by :func:`command_listing`."""

    def add_parser(self, name, **kwargs):
        kwargs.setdefault("epilog", _epilog(name))
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs.pop("help", None)  # listed by task in the top-level epilog instead of argparse's flat list
        return super().add_parser(name, **kwargs)


def command_modules() -> list[str]:
    """Names of the ``cmd_*`` modules of this package (found on disk, nothing imported).

    Examples
    --------
    >>> command_modules()[:3]
    ['cmd_agreement', 'cmd_bootstrap', 'cmd_circularity']
    >>> sorted({row.module for row in COMMANDS.values()}) == command_modules()  # every module is listed
    True
    """
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))


def _requested_command(argv: Sequence[str]) -> str | None:
    """The sub-command named on the command line (the first argument that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser.

    Without ``argv``, every ``cmd_*`` module is imported and registers its sub-commands (the full
    parser). With ``argv`` (what :func:`main` passes), only the module of the command named there is
    imported; the other commands are listed by name and help (:data:`COMMANDS`) without importing them.

    Examples
    --------
    >>> args = build_parser().parse_args(["reproduce", "goyal-table-1"])
    >>> args.command, args.name, args.json
    ('reproduce', 'goyal-table-1', False)
    >>> "reliability" in build_parser(["fit"]).format_help()  # listed, though only cmd_fit was imported
    True
    """
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="mixeval",
        description="Model-based statistics for ML/NLP evaluations (validity, reliability, significance).",
        epilog=command_listing() + "\n\n'mixeval COMMAND --help' shows a command's options and examples.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mixeval {__version__}")
    parser.register("action", "parsers", _Commands)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="one of the commands below")
    sub.required = True
    if argv is None:
        for name in command_modules():
            importlib.import_module(f"{__name__}.{name}").register(sub)
        return parser
    command = _requested_command(argv)
    if command in COMMANDS:
        importlib.import_module(f"{__name__}.{COMMANDS[command].module}").register(sub)
    for name, row in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=row.help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mixeval`` command.

    Examples
    --------
    The exit code is returned (the console script passes it to ``sys.exit``); an error of the input prints one
    line to stderr and returns 2.

    >>> code = main(["reproduce", "goyal-table-1", "--json"])
    {"rows": [{"dataset": "BOLD", "n": 23679, ...}]}
    >>> code
    0
    >>> main(["reproduce", "no-such-table"])  # stderr: mixeval reproduce: error: unknown reproduction ...
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.command_line = "mixeval " + shlex.join(argv)  # a report's provenance: the command that made it
    set_command_options(_command_parser(parser, args.command)._option_string_actions)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # each text once (show_warning), whatever ran before in this process
        warnings.showwarning = show_warning
        try:
            return int(args.handler(args) or 0)
        except MixevalError as exc:  # bad input (files, flags, data): one line; anything else is a bug
            print(f"mixeval {args.command}: error: {in_flag_words(exc)}", file=sys.stderr)
            return 2


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The sub-parser of ``command`` (its flags are the words warnings and errors use)."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]
