"""Progress bars (tqdm) that appear only when work takes a while and output is interactive."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["progress"]


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", enabled: bool | None = None) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm bar shown after 2 seconds (``enabled=False`` hides it)."""
    return tqdm(iterable, total=total, desc=desc, disable=(enabled is False), delay=2.0, leave=False)
