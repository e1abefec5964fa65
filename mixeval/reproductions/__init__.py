"""Registry of reproductions of published tables (``mixeval reproduce NAME``).

A reproduction is a function ``f(data_dir: pathlib.Path) -> pandas.DataFrame``
that recomputes one table of the book or a paper; its rows become the JSON
``{"rows": [...]}`` (lower-case column names). Modules in this package register
reproductions with :func:`register`; :func:`available` imports them all.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["register", "available", "get", "default_data_dir"]

Reproduction = Callable[[Path], "pd.DataFrame"]
_REGISTRY: dict[str, tuple[Reproduction, str]] = {}


def register(name: str, description: str) -> Callable[[Reproduction], Reproduction]:
    """Decorator registering ``f`` under ``name`` (e.g. ``"table-3.1"``).

    Examples
    --------
    Every reproduction module registers its tables at import; a name can be registered only once:

    >>> from mixeval.reproductions.book import table_3_1
    >>> get("table-3.1") is table_3_1
    True
    >>> register("table-3.1", "again")(table_3_1)
    Traceback (most recent call last):
        ...
    RuntimeError: reproduction 'table-3.1' registered twice
    """

    def deco(f: Reproduction) -> Reproduction:
        if name in _REGISTRY:
            raise RuntimeError(f"reproduction {name!r} registered twice")
        _REGISTRY[name] = (f, description)
        return f

    return deco


def __getattr__(name: str):
    """The reproduction modules (``book``, ``goyal``, ``validity``) on first use, as ``mixeval.reproductions.book``."""
    if not name.startswith("_") and name in {info.name for info in pkgutil.iter_modules(__path__)}:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def available() -> dict[str, str]:
    """Names and descriptions of every registered reproduction.

    Examples
    --------
    >>> "table-4.1" in available() and "goyal-table-1" in available()
    True
    """
    _load_all()
    return {k: v[1] for k, v in sorted(_REGISTRY.items())}


def get(name: str) -> Reproduction:
    """The reproduction registered as ``name``; the error lists the valid names.

    Examples
    --------
    >>> t = get("goyal-table-1")(None)          # Goyal et al.'s Table 1 needs no data
    >>> t["dataset"].tolist()
    ['BOLD', 'RealToxicityPrompts']
    """
    names = available()
    if name not in _REGISTRY:
        raise InputError(f"unknown reproduction {name!r}; available: {', '.join(names)}.")
    return _REGISTRY[name][0]


def default_data_dir() -> Path | None:
    """``$MIXEVAL_DATA`` if set, else ``../shared/bookdata`` (relative to cwd or the repo) if it exists.

    Examples
    --------
    >>> from unittest import mock
    >>> with mock.patch.dict("os.environ", {"MIXEVAL_DATA": "/data/book"}):
    ...     default_data_dir().as_posix()
    '/data/book'
    """
    env = os.environ.get("MIXEVAL_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[2]
    for candidate in (Path.cwd() / ".." / "shared" / "bookdata", here.parent / "shared" / "bookdata"):
        if candidate.is_dir():
            return candidate.resolve()
    return None
