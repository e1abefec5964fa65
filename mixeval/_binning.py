"""Classes of a numeric data property (for comparisons conditional on it, book Table 4.3)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._validation import require_columns
from .errors import InputError

__all__ = ["bin_property"]


def bin_property(data: pd.DataFrame, column: str, cuts: Sequence[float], labels: Sequence[str] | None = None,
                 *, name: str | None = None) -> pd.DataFrame:
    """A copy of ``data`` with a new categorical column binning ``column`` at ``cuts`` (right-closed).

    ``cuts=(15, 55)`` gives ``<= 15``, ``(15, 55]`` and ``> 55`` (the book's Table 4.3 classes, as its
    companion code forms them: ``(length > 15) + (length > 55)``).

    Examples
    --------
    >>> df = pd.DataFrame({"len": [3, 15, 16, 55, 56]})
    >>> bin_property(df, "len", (15, 55), ("short", "typical", "very long"))["len_class"].tolist()
    ['short', 'short', 'typical', 'typical', 'very long']
    """
    require_columns(data, [column])
    values = pd.to_numeric(data[column], errors="coerce")
    if values.isna().any():
        raise InputError(f"column {column!r} must be numeric without missing values to be binned.")
    cuts = sorted(float(c) for c in cuts)
    labels = list(labels) if labels is not None else (
        [f"<= {cuts[0]:g}"] + [f"({a:g}, {b:g}]" for a, b in zip(cuts, cuts[1:])] + [f"> {cuts[-1]:g}"])
    if len(labels) != len(cuts) + 1:
        raise InputError(f"{len(cuts)} cut(s) make {len(cuts) + 1} classes; got {len(labels)} labels.")
    codes = np.searchsorted(np.asarray(cuts), values.to_numpy(), side="left")
    out = data.copy()
    out[name or f"{column}_class"] = pd.Categorical(np.asarray(labels, dtype=object)[codes], categories=labels)
    return out
