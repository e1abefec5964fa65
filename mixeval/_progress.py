"""Progress bars (tqdm) that appear only where someone watches: a terminal or a notebook, after 2 seconds."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["progress", "watched"]

# tqdm.auto picks the notebook widget, which needs ipywidgets; without it tqdm warns ("IProgress not
# found") on every bar, so fall back to the plain text bar.
if importlib.util.find_spec("ipywidgets") is not None:
    from tqdm.auto import tqdm
else:
    from tqdm import tqdm


def _in_notebook() -> bool:
    """A Jupyter kernel runs the code (its output is not a terminal, but a bar renders there)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def watched() -> bool:
    """Whether a progress bar would be seen: standard error is a terminal, or a notebook runs the code.

    A bar written to a pipe or a log file is a stream of carriage returns that other lines get glued to.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()):
    ...     watched()
    False
    """
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    try:
        if stream is not None and isatty is not None and isatty():
            return True
    except ValueError:  # a closed stream
        return False
    return _in_notebook()


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", enabled: bool | None = None) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm bar shown after 2 seconds on a terminal or in a notebook (never on a pipe or a
    file); ``enabled=False`` hides it everywhere.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     total = sum(progress(range(5), desc="piped"))
    >>> total, err.getvalue()
    (10, '')
    """
    return tqdm(iterable, total=total, desc=desc, disable=enabled is False or not watched(), delay=2.0, leave=False)
