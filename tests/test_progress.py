"""Progress bars only where someone watches them: a terminal or a notebook, never a pipe or a log file."""

from __future__ import annotations

import contextlib
import io

from mixeval._progress import progress, watched


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_bar_on_a_pipe_or_a_file():
    with contextlib.redirect_stderr(io.StringIO()):
        assert not watched()
        assert progress(range(3)).disable


def test_a_bar_on_a_terminal_unless_switched_off():
    with contextlib.redirect_stderr(_Terminal()):
        assert watched()
        assert not progress(range(3)).disable
        assert progress(range(3), enabled=False).disable
