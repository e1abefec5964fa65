"""Numbers as text, in one format for every summary, table, report and command line.

Results keep their numbers unrounded; these functions write them for reading only, as R prints them:

* a quantity with ``digits`` significant digits (4, as ``summary()`` in R prints estimates and standard
  errors), fixed notation where readable, whole numbers as integers;
* a p-value as R's ``format.pval``: 3 significant digits, ``< 2.2e-16`` at or below double precision's
  resolution (``.Machine$double.eps``, where p-values such as Tukey's are floored);
* infinite degrees of freedom as ``Inf`` (as emmeans prints ``df = Inf``), a missing number as ``NA``;
* a count as an integer, a number *needed* (votes, items) as the ceiling integer;
* a table wrapped into blocks of columns that fit the width of the terminal or page (as R prints a wide
  data frame), the label column repeated in each block, never a column of row numbers.
"""

from __future__ import annotations

import math
import numbers
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["PVALUE_FLOOR", "format_number", "format_column", "format_pvalue", "format_count", "format_cell", "is_pvalue_column",
           "pvalue_formatters", "display_frame", "formatted_columns", "column_blocks", "text_table", "terminal_width"]

PVALUE_FLOOR = float(np.finfo(float).eps)
"""p-values at or below double precision's resolution (R's ``.Machine$double.eps``) print as ``< 2.2e-16``."""

#: significant digits of a p-value (R's ``printCoefmat``: ``dig.tst = 3`` at its default 4 digits)
PVALUE_DIGITS = 3


def format_number(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits as R's ``format`` writes it: no trailing zeros, fixed notation
    where readable.

    Fixed notation for ``1e-4 <= |x| < 1e6`` (e.g. ``0.01234``, ``60.88``, ``47752``, ``0.5``),
    scientific otherwise (``3.96e-08``); whole numbers below 1e6 as integers (``2.0`` -> ``2``);
    ``NA`` for NaN, ``Inf``/``-Inf`` for infinities (as R prints them).

    Examples
    --------
    >>> format_number(0.0123449), format_number(47752.135), format_number(3.96e-8), format_number(float("inf"))
    ('0.01234', '47752', '3.96e-08', 'Inf')
    """
    x = float(value)
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    if x.is_integer() and abs(x) < 1e6:
        return str(int(x))  # whole numbers (counts, df, sizes) without trailing zeros
    magnitude = math.floor(math.log10(abs(x)))
    if -4 <= magnitude < 6:
        text = _strip_zeros(f"{x:.{max(0, digits - 1 - magnitude)}f}")
        if text.lstrip("-").strip("0.") != "":  # else rounding ate every digit: scientific
            return text
    return _scientific(x, digits)


def _strip_zeros(text: str) -> str:
    """``0.5000`` -> ``0.5``, ``12.00`` -> ``12`` (fixed notation)."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scientific(x: float, digits: int, mantissa: int | None = None) -> str:
    """``3.960e-08`` -> ``3.96e-08``; with ``mantissa``, exactly that many decimals of the mantissa."""
    if mantissa is not None:
        return f"{x:.{mantissa}e}"
    head, _, exponent = f"{x:.{digits - 1}e}".partition("e")
    return f"{_strip_zeros(head)}e{exponent}"


def format_column(values: Sequence[float] | np.ndarray, digits: int = 4) -> list[str]:
    """Numbers of one column as R prints a numeric column: every value to at least ``digits`` significant digits,
    all with the same number of decimals (or all in scientific notation, where that is narrower).

    Examples
    --------
    >>> format_column([-1.828, 0.4013, 0.06265, float("inf")])
    ['-1.82800', '0.40130', '0.06265', 'Inf']
    >>> format_column([0.5, 0.25, 2.0]), format_column([3.2e-9, 1.1e-5, 0.1625])
    (['0.50', '0.25', '2.00'], ['3.200e-09', '1.100e-05', '1.625e-01'])
    """
    xs = [float(v) for v in values]
    finite = [x for x in xs if math.isfinite(x)]
    if not finite or all(x.is_integer() and abs(x) < 1e15 for x in finite):
        return [format_number(x, digits) for x in xs]
    decimals, mantissa = 0, 0
    for x in finite:
        if x == 0:
            continue
        magnitude = math.floor(math.log10(abs(x)))
        decimals = max(decimals, len(_strip_zeros(f"{x:.{max(0, digits - 1 - magnitude)}f}").partition(".")[2]))
        mantissa = max(mantissa, len(_scientific(x, digits).partition("e")[0].partition(".")[2]))
    fixed = [f"{x:.{decimals}f}" for x in finite]
    scientific = [_scientific(x, digits, mantissa) for x in finite]
    use_fixed = max(map(len, fixed)) <= max(map(len, scientific))
    out = iter(fixed if use_fixed else scientific)
    return [next(out) if math.isfinite(x) else format_number(x) for x in xs]


def format_pvalue(p: float, digits: int = PVALUE_DIGITS, *, relation: bool = False) -> str:
    """A p-value for display, as R's ``format.pval``: at or below 2.2e-16 as ``"< 2.2e-16"``, else ``digits``
    significant digits. With ``relation``, ``"= 0.0123"`` or ``"< 2.2e-16"`` (for ``p {relation}`` in a sentence).

    Examples
    --------
    >>> format_pvalue(0.012345), format_pvalue(7.929e-05), format_pvalue(1.07e-151), format_pvalue(0.0)
    ('0.0123', '7.93e-05', '< 2.2e-16', '< 2.2e-16')
    >>> "p " + format_pvalue(0.012345, relation=True)
    'p = 0.0123'
    """
    x = float(p)
    if math.isnan(x):
        text = "NA"
    elif x <= PVALUE_FLOOR:
        text = "< 2.2e-16"
    else:
        text = f"{x:.{digits}g}"
    return text if not relation or text.startswith("<") else f"= {text}"


def format_count(value: float, *, needed: bool = False) -> str:
    """A count as an integer with thousands separators; with ``needed`` (votes or items needed for a power), the
    ceiling (166.4 votes needed means 167), ``never`` when no number suffices (infinite).

    Examples
    --------
    >>> format_count(23679.0), format_count(166.4, needed=True), format_count(float("inf"), needed=True)
    ('23,679', '167', 'never')
    """
    x = float(value)
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "never" if needed and x > 0 else ("Inf" if x > 0 else "-Inf")
    return f"{int(math.ceil(x - 1e-9) if needed else round(x)):,}"


def is_pvalue_column(name: object) -> bool:
    """``pvalue``, ``p.value``, ``pvalue_unadjusted``, ``Pr(>Chisq)`` and kin (the columns holding p-values)."""
    text = str(name).lower()
    return text.startswith(("pvalue", "p.value", "p_value", "pr(>")) or text in ("p", "midp") \
        or text.endswith(("_pvalue", "_midp"))


def pvalue_formatters(frame: pd.DataFrame, digits: int = PVALUE_DIGITS) -> dict[str, Any]:
    """``DataFrame.to_string``/``to_html`` formatters printing the p-value columns of ``frame`` by
    :func:`format_pvalue` (the frame itself is not changed)."""
    return {c: (lambda v, d=digits: format_pvalue(v, d)) for c in frame.columns if is_pvalue_column(c)}


def format_cell(value: object, digits: int = 4, *, pvalue: bool = False) -> str:
    """One table cell as text: floats via :func:`format_number` (p-values via :func:`format_pvalue`), missing as
    ``NA``.

    Examples
    --------
    >>> format_cell(1.1e-17, pvalue=True), format_cell(1.1e-17), format_cell(0.01234, pvalue=True)
    ('< 2.2e-16', '1.1e-17', '0.0123')
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return "NA"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return format_pvalue(float(value)) if pvalue else format_number(float(value), digits)
    try:
        if pd.isna(value):  # type: ignore[call-overload]  # stubs: isna of an arbitrary object
            return "NA"
    except (TypeError, ValueError):
        pass
    return str(value)


def display_frame(data: pd.DataFrame, index: bool | None = None) -> pd.DataFrame:
    """The frame to display: a meaningful index becomes leading column(s), a plain 0..n-1 one is dropped; never
    modifies ``data``."""
    if index is None:
        index = not (isinstance(data.index, pd.RangeIndex) and data.index.start == 0 and data.index.step == 1)
    out = data.copy()
    if isinstance(out.columns, pd.MultiIndex):
        out.columns = [" ".join(map(str, c)).strip() for c in out.columns]
    if index:
        names = [n if n is not None else ("" if data.index.nlevels == 1 else f"level_{i}")
                 for i, n in enumerate(data.index.names)]
        out.index = out.index.set_names(names)
        return out.reset_index()
    return out.reset_index(drop=True)


def formatted_columns(frame: pd.DataFrame, digits: int = 4) -> list[list[str]]:
    """Every column of ``frame`` as text: p-values by :func:`format_pvalue`, other numeric columns by
    :func:`format_column` (one number of decimals per column), anything else by :func:`format_cell`."""
    out = []
    for name in frame.columns:
        series = frame[name]
        if is_pvalue_column(name) or not (pd.api.types.is_numeric_dtype(series)
                                          and not pd.api.types.is_bool_dtype(series)):
            out.append([format_cell(v, digits, pvalue=is_pvalue_column(name)) for v in series])
        else:
            out.append(format_column(series.to_numpy(dtype=float, na_value=np.nan), digits))
    return out


def terminal_width(default: int = 100) -> int:
    """The width to print for: the terminal's columns (``$COLUMNS`` first), ``default`` when not a terminal."""
    return shutil.get_terminal_size((default, 24)).columns


def text_table(data: pd.DataFrame, *, digits: int = 4, max_rows: int | None = None, index: bool | None = None,
               caption: str = "", width: int | None = None) -> str:
    """A DataFrame as an aligned plain-text table (numbers right-aligned in one format, strings left-aligned).

    With more than ``max_rows`` rows, the first ``max_rows`` are shown and a line says how many were left out
    (nothing is dropped silently). A table wider than ``width`` is printed in blocks of columns, each starting
    with the leading label columns, as R prints a wide data frame with its row names.

    Examples
    --------
    >>> import pandas as pd
    >>> print(text_table(pd.DataFrame({"component": ["item", "residual"], "variance": [0.0905, 0.0197],
    ...                                "pvalue": [1e-20, 0.0312], "df": [float("inf"), 12.0]})))
    component  variance     pvalue   df
    item         0.0905  < 2.2e-16  Inf
    residual     0.0197     0.0312   12
    >>> wide = pd.DataFrame({"system": ["A"], **{f"column_{j}": [0.5] for j in range(6)}})
    >>> print(text_table(wide, width=40))
    system  column_0  column_1  column_2
    A            0.5       0.5       0.5
    <BLANKLINE>
    system  column_3  column_4  column_5
    A            0.5       0.5       0.5
    """
    frame = display_frame(data, index)
    n_rows = len(frame)
    shown = frame if max_rows is None or n_rows <= max_rows else frame.iloc[:max_rows]
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
               for c in frame.columns]
    header = [str(c) for c in frame.columns]
    columns = formatted_columns(shown, digits)
    body = [list(cells) for cells in zip(*columns)] if columns else []
    widths = [max([len(h)] + [len(r[j]) for r in body]) for j, h in enumerate(header)]

    def line(cells: Sequence[str], columns: Sequence[int]) -> str:
        out = [cells[j].rjust(widths[j]) if numeric[j] else cells[j].ljust(widths[j]) for j in columns]
        return "  ".join(out).rstrip()

    blocks = column_blocks(widths, numeric, width)
    lines = [caption] if caption else []
    for b, block in enumerate(blocks):
        if b:
            lines.append("")
        lines.append(line(header, block))
        lines.extend(line(r, block) for r in body)
    if len(shown) < n_rows:
        lines.append(f"... {n_rows - len(shown)} more row(s) not shown ({n_rows} in total)")
    return "\n".join(lines)


def column_blocks(widths: Sequence[int], numeric: Sequence[bool], width: int | None) -> list[list[int]]:
    """Columns in blocks that fit ``width`` (all in one without a width); the leading label (non-numeric) columns
    start each, so that every block's rows say what they are (``contrast`` and ``length_class``, not ``contrast``
    alone).

    Examples
    --------
    >>> column_blocks([8, 6, 5, 5, 5], [False, False, True, True, True], 30)
    [[0, 1, 2, 3], [0, 1, 4]]
    """
    columns = list(range(len(widths)))
    if width is None or sum(widths) + 2 * (len(widths) - 1) <= width or len(widths) < 2:
        return [columns]
    lead = list(range(next((j for j, is_number in enumerate(numeric) if is_number), 1))) if not numeric[0] else []
    rest = columns[len(lead):]
    blocks: list[list[int]] = []
    current = list(lead)
    used = sum(widths[j] + 2 for j in lead)
    for j in rest:
        if len(current) > len(lead) and used + widths[j] > width:
            blocks.append(current)
            current, used = list(lead), sum(widths[k] + 2 for k in lead)
        current.append(j)
        used += widths[j] + 2
    blocks.append(current)
    return blocks
