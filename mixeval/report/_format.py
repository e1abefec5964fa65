"""Formatting numbers and table cells for display (the numbers themselves stay unrounded)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from .._results import PVALUE_FLOOR

__all__ = ["format_number", "format_cell", "display_frame"]


def format_number(value: float, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits, fixed notation where readable.

    Fixed notation for ``1e-4 <= |x| < 1e6`` (e.g. ``0.01234``, ``60.88``, ``47752``),
    scientific otherwise (``3.96e-08``); whole numbers below 1e6 as integers (``2.0`` -> ``2``);
    ``NA`` for NaN, ``inf``/``-inf`` as is.

    Examples
    --------
    >>> format_number(0.0123449), format_number(47752.135), format_number(3.96e-8)
    ('0.01234', '47752', '3.960e-08')
    """
    x = float(value)
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x.is_integer() and abs(x) < 1e6:
        return str(int(x))  # whole numbers (counts, df, sizes) without trailing zeros
    magnitude = math.floor(math.log10(abs(x)))
    if -4 <= magnitude < 6:
        decimals = max(0, digits - 1 - magnitude)
        text = f"{x:.{decimals}f}"
        if text.lstrip("-").strip("0.") == "":  # rounding ate every digit
            return f"{x:.{digits - 1}e}"
        return text
    return f"{x:.{digits - 1}e}"


def format_cell(value: object, digits: int = 4, *, pvalue: bool = False) -> str:
    """One table cell as text: floats via :func:`format_number`, missing as ``NA``; with ``pvalue``, a p-value
    below 2.2e-16 as ``< 2.2e-16`` (R's ``format.pval``).

    Examples
    --------
    >>> format_cell(1.1e-17, pvalue=True), format_cell(1.1e-17), format_cell(0.01234, pvalue=True)
    ('< 2.2e-16', '1.100e-17', '0.01234')
    """
    if pvalue and isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) \
            and float(value) <= PVALUE_FLOOR:
        return "< 2.2e-16"
    if value is None or value is pd.NA or value is pd.NaT:
        return "NA"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return format_number(float(value), digits)
    try:
        if pd.isna(value):  # type: ignore[arg-type]
            return "NA"
    except (TypeError, ValueError):
        pass
    return str(value)


def display_frame(data: pd.DataFrame, index: bool | None = None) -> pd.DataFrame:
    """The frame to display: a meaningful index becomes leading column(s); never modifies ``data``."""
    if index is None:
        index = not (isinstance(data.index, pd.RangeIndex) and data.index.start == 0 and data.index.step == 1)
    if index:
        names = [n if n is not None else ("" if data.index.nlevels == 1 else f"level_{i}")
                 for i, n in enumerate(data.index.names)]
        out = data.copy()
        out.index = out.index.set_names(names)
        if isinstance(out.columns, pd.MultiIndex):
            out.columns = [" ".join(map(str, c)).strip() for c in out.columns]
        return out.reset_index()
    out = data.copy()
    if isinstance(out.columns, pd.MultiIndex):
        out.columns = [" ".join(map(str, c)).strip() for c in out.columns]
    return out.reset_index(drop=True)
