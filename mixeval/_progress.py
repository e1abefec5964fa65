"""Progress bars (tqdm) that appear only when work takes a while."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["progress"]

# tqdm.auto picks the notebook widget, which needs ipywidgets; without it tqdm warns ("IProgress not
# found") on every bar, so fall back to the plain text bar.
if importlib.util.find_spec("ipywidgets") is not None:
    from tqdm.auto import tqdm
else:
    from tqdm import tqdm


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", enabled: bool | None = None) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm bar shown after 2 seconds (``enabled=False`` hides it)."""
    return tqdm(iterable, total=total, desc=desc, disable=(enabled is False), delay=2.0, leave=False)
