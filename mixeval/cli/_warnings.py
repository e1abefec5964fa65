"""Warnings on the command line: each once, on its own line of standard error, in the command's words.

A warning's text comes from the library, which writes advised arguments for Python (``family='binomial'``).
Here they become the running command's flags: the form :func:`mixeval.errors.as_flag` gave, and otherwise
``name=value`` outside parentheses wherever the command has the flag ``--name`` (``--if-undefined zero``).
A progress bar on screen is cleared first (``tqdm.write``), so no warning is glued onto a bar.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

from ..errors import cli_words, plain_message

__all__ = ["in_flag_words", "warning_texts", "print_warnings", "show_warning", "set_command_options"]

#: the option strings of the running command (set by :func:`mixeval.cli.main`)
_OPTIONS: set[str] = set()
#: texts already printed by this run
_SHOWN: set[str] = set()

_KEYWORD = re.compile(r"(?<![\w.-])([a-z][a-z0-9_]*)=('([^']*)'|\"([^\"]*)\"|[\w.+-]+)")


def set_command_options(options: Iterable[str]) -> None:
    """The flags of the command that runs (``--family``, ``--df``, ...); a new run forgets what was printed."""
    _OPTIONS.clear()
    _OPTIONS.update(options)
    _SHOWN.clear()


def _inside_call(text: str, position: int) -> bool:
    """Whether ``position`` lies inside the parentheses of a call (``name(...)``), not of a remark (``(...)``)."""
    opened: list[int] = []
    for i, char in enumerate(text[:position]):
        if char == "(":
            opened.append(i)
        elif char == ")" and opened:
            opened.pop()
    return any(i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.") for i in opened)


def _keyword_as_flag(match: re.Match, text: str, options: set[str]) -> str:
    name, value = match.group(1), match.group(2)
    if _inside_call(text, match.start()):  # an argument of a call (``Study(..., family="x")``) stays Python
        return match.group(0)
    if re.search(r"--[\w-]+\s+$", text[:match.start()]):  # the value of a flag (``--n item=1``) stays as written
        return match.group(0)
    flag = "--" + name.replace("_", "-")
    if value == "True" and flag in options:
        return flag
    if value == "False" and f"--no-{flag[2:]}" in options:
        return f"--no-{flag[2:]}"
    if flag not in options or value in ("True", "False"):
        return match.group(0)
    plain = match.group(3) if match.group(3) is not None else match.group(4)
    return f"{flag} {plain if plain is not None else value}"


def in_flag_words(message: object, options: Iterable[str] | None = None) -> str:
    """The text of a warning as the command line says it.

    Examples
    --------
    >>> in_flag_words("undefined; returning NaN (set it to 0: if_undefined='zero').", {"--if-undefined"})
    'undefined; returning NaN (set it to 0: --if-undefined zero).'
    >>> in_flag_words("use Study(..., family='binomial') or k=5", {"--family"})  # no --k; inside a call
    "use Study(..., family='binomial') or k=5"
    """
    known = set(_OPTIONS if options is None else options)
    text = cli_words(message)
    return _KEYWORD.sub(lambda m: _keyword_as_flag(m, text, known), text)


def warning_texts(caught: Iterable[object]) -> list[str]:
    """The texts of recorded warnings (``warnings.WarningMessage`` or messages), each once, in flag words."""
    return list(dict.fromkeys(in_flag_words(getattr(w, "message", w)) for w in caught))


def _write(line: str) -> None:
    tqdm_module = sys.modules.get("tqdm")
    if tqdm_module is not None:  # clears a bar on screen, writes the line, redraws the bar below it
        tqdm_module.tqdm.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr)


def print_warnings(caught: Iterable[object]) -> list[str]:
    """Print each recorded warning once, as ``warning: ...`` on its own line of standard error; returns the texts."""
    texts = warning_texts(caught)
    for text in texts:
        if text not in _SHOWN:
            _SHOWN.add(text)
            _write(f"warning: {plain_message(text)}")
    return texts


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of a command: the warning as :func:`print_warnings` prints it (no source line:
    the user ran a command, not our code)."""
    print_warnings([message])
