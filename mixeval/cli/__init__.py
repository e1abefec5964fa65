"""Command line: ``mixeval COMMAND ...`` (also ``python -m mixeval``).

Each sub-command lives in its own module ``mixeval/cli/cmd_<name>.py`` that
defines ``register(subparsers) -> None``; the parser is assembled from every
such module, so commands can be added without touching this file. A command's
handler returns the process exit code. Errors of the user's input (the project's
:class:`mixeval.errors.MixevalError`, also for unreadable files and bad flag values) end the
command with a one-line message and exit code 2; any other exception is a bug and propagates
with its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from ..errors import MixevalError
from ._io import print_json

__all__ = ["main", "build_parser", "print_json"]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every ``cmd_*`` module's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="mixeval",
        description="Model-based statistics for ML/NLP evaluations (validity, reliability, significance).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mixeval`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except MixevalError as exc:  # bad input (files, flags, data): one line; anything else is a bug
        print(f"mixeval {args.command}: error: {exc}", file=sys.stderr)
        return 2
