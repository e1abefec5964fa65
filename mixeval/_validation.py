"""Small pure validators shared by every public entry point.

Each raises :class:`mixeval.errors.InputError` (a ``ValueError``) or
:class:`mixeval.errors.InputTypeError` (a ``TypeError``) with a message that names the argument or column and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import ColumnError, InputError, InputTypeError

__all__ = [
    "require_dataframe",
    "require_columns",
    "require_numeric_column",
    "require_no_missing",
    "require_probability",
    "require_level",
    "require_positive_int",
    "as_1d_float",
    "require_bool",
    "id_like_columns",
    "not_numeric_message",
    "describe_id_column",
]


def require_dataframe(data: object, argument: str = "data") -> pd.DataFrame:
    """Return ``data`` if it is a DataFrame, else raise :class:`InputTypeError`."""
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(
            f"`{argument}` must be a pandas DataFrame in long format (one row per observation); "
            f"got {type(data).__name__}. Build one with pandas.read_csv(...) or pandas.DataFrame(...)."
        )
    if len(data) == 0:
        raise InputError(f"`{argument}` has no rows.")
    return data


def require_columns(data: pd.DataFrame, columns: Iterable[str], argument: str = "data") -> None:
    """Raise :class:`ColumnError` listing the available columns if any is missing."""
    missing = [c for c in columns if c not in data.columns]
    if missing:
        available = ", ".join(map(str, data.columns))
        raise ColumnError(
            f"column(s) {', '.join(repr(m) for m in missing)} not found in `{argument}`; "
            f"available columns: {available}."
        )


def require_numeric_column(data: pd.DataFrame, column: str, role: str = "score") -> np.ndarray:
    """Return the column as float array; raise if it is not numeric or not finite."""
    series = data[column]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        raise InputError(not_numeric_message(series, f"the {role} column {column!r}"))
    values = series.to_numpy(dtype=float, na_value=np.nan)
    require_finite(values, f"column {column!r}")
    return values


def not_numeric_message(series: pd.Series, what: str) -> str:
    """Why a column that should hold numbers does not: the cells that are not numbers (with their row), or, when
    none is, its type; and how to convert it.

    Examples
    --------
    >>> print(not_numeric_message(pd.Series(["0.5", "0.7", "error", "0.1"]), "the score column 'bleu'"))
    the score column 'bleu' must be numeric; 1 of its 4 values is not a number: 'error' (row 3). Fix or remove those
    rows, or convert with pandas.to_numeric(..., errors='coerce') and drop the missing values it makes.
    """
    present = series.dropna()
    numbers = pd.to_numeric(present, errors="coerce")
    bad = present[numbers.isna()]
    if 0 < len(bad) < len(present):
        shown = ", ".join(f"{str(v)!r} (row {i + 1 if isinstance(i, (int, np.integer)) else i})"
                          for i, v in bad.head(3).items())
        return (f"{what} must be numeric; {len(bad)} of its {len(present)} values {'is' if len(bad) == 1 else 'are'} "
                f"not a number: {shown}. Fix or remove those rows, or convert with pandas.to_numeric(..., "
                "errors='coerce') and drop the missing values it makes.")
    example = present.astype(str).head(3).tolist()
    return (f"{what} must be numeric; it has dtype {series.dtype} (e.g. {example}). Convert it with "
            f"pandas.to_numeric(data[{series.name!r}]).")


def require_no_missing(data: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise if any of ``columns`` holds a missing value; say how many and how to drop them."""
    for column in columns:
        n_missing = int(data[column].isna().sum())
        if n_missing:
            raise InputError(
                f"column {column!r} has {n_missing} missing value(s) out of {len(data)} rows. "
                f"mixeval drops nothing silently: remove them first, e.g. "
                f"data.dropna(subset=[{column!r}])."
            )


def require_finite(values: np.ndarray, what: str) -> None:
    """Raise if ``values`` holds NaN or infinite entries."""
    bad = ~np.isfinite(values)
    if bad.any():
        n_nan = int(np.isnan(values).sum())
        n_inf = int(bad.sum()) - n_nan
        raise InputError(
            f"{what} has {n_nan} NaN and {n_inf} infinite value(s) out of {values.size}. "
            "mixeval drops nothing silently: remove or impute them first."
        )


def require_probability(value: float, argument: str) -> float:
    """Return ``value`` as float if it lies in [0, 1]; else raise (a probability that may be 0 or 1: a rate, a
    precision; a confidence level or another probability strictly inside (0, 1) is :func:`require_level`'s).

    Examples
    --------
    >>> require_probability(1, "precision")
    1.0
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputTypeError(f"`{argument}` must be a number in [0, 1]; got {value!r}.") from None
    if not 0.0 <= x <= 1.0:  # also refuses nan
        raise InputError(f"`{argument}` must lie in [0, 1]; got {value!r}.")
    return x


def _named(argument: str) -> tuple[str, str]:
    """How a message names an argument and how it writes a value for it: a command-line flag (``--level``,
    ``--level {}``) or a keyword (```level```, ``level={}``)."""
    if argument.startswith("-"):
        return argument, argument + " {}"
    return f"`{argument}`", argument + "={}"


#: the value a message suggests for a probability strictly inside (0, 1), by the argument's name
_LEVEL_EXAMPLES = {"alpha": 0.05, "level": 0.95, "confidence": 0.95, "p": 0.95}


def require_level(value: object, argument: str = "level", *, example: float | None = None,
                  zero_means: str | None = None) -> float:
    """Return ``value`` as float if it lies strictly between 0 and 1; else raise, naming ``argument``.

    The one check of a confidence level and of every other probability that must lie inside (0, 1) (alpha, power,
    a target). ``argument`` is the name the caller knows: a keyword (``"level"``; the message suggests
    ``level=0.95``) or a command-line flag (``"--level"``; ``--level 0.95``). ``example`` is the value suggested
    (default by name: 0.95 for a level, 0.05 for alpha, else 0.8); with ``zero_means``, 0 is accepted too and
    means what it says (e.g. ``"no interval"``).

    Examples
    --------
    >>> require_level(0.9)
    0.9
    >>> require_level(95)
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: `level` must lie strictly between 0 and 1 (e.g. level=0.95); got 95.
    >>> require_level(2.0, "--alpha")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: --alpha must lie strictly between 0 and 1 (e.g. --alpha 0.05); got 2.0.
    """
    name, advice = _named(argument)
    suggested = advice.format(example if example is not None else _LEVEL_EXAMPLES.get(argument.lstrip("-"), 0.8))
    zero = f", or 0 for {zero_means}" if zero_means is not None else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"{name} must be a number strictly between 0 and 1 (e.g. {suggested}){zero}; "
                             f"got {value!r}.")
    x = float(value)
    if zero_means is not None and x == 0.0:
        return 0.0
    if not 0.0 < x < 1.0:  # also refuses nan
        raise InputError(f"{name} must lie strictly between 0 and 1 (e.g. {suggested}){zero}; got {value!r}.")
    return x


def require_positive_int(value: object, argument: str, minimum: int = 1, *, example: int | None = None,
                         zero_means: str | None = None) -> int:
    """Return ``value`` as int if it is a whole number >= ``minimum``; else raise, naming ``argument``.

    The one check of a count (``n_resamples``, ``nsim``, a basis dimension ``k``, ...). ``argument`` is a keyword
    or a command-line flag, as for :func:`require_level`; ``example`` a value the message suggests; with
    ``zero_means``, 0 is accepted too and means what it says (e.g. ``"no bootstrap"``).

    Examples
    --------
    >>> require_positive_int(200, "n_resamples")
    200
    >>> require_positive_int(0, "n_resamples", example=200)
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: `n_resamples` must be a whole number >= 1 (e.g. n_resamples=200); got 0.
    >>> require_positive_int(2, "--k", minimum=3)
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: --k must be a whole number >= 3; got 2.
    """
    name, advice = _named(argument)
    suggested = f" (e.g. {advice.format(example)})" if example is not None else ""
    zero = f", or 0 for {zero_means}" if zero_means is not None else ""
    message = f"{name} must be a whole number >= {minimum}{suggested}{zero}; got {value!r}."
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputTypeError(message)
    if value < minimum and not (zero_means is not None and value == 0):
        raise InputError(message)
    return int(value)


def as_1d_float(values: object, argument: str) -> np.ndarray:
    """Convert ``values`` to a finite 1-d float array or raise naming ``argument``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputTypeError(f"`{argument}` must be a sequence of numbers.") from None
    if arr.ndim != 1:
        raise InputError(f"`{argument}` must be one-dimensional; got shape {arr.shape}.")
    if arr.size == 0:
        raise InputError(f"`{argument}` is empty.")
    require_finite(arr, f"`{argument}`")
    return arr


def require_bool(value: object, argument: str) -> bool:
    """Return ``value`` if it is a bool (or numpy bool); else raise, so ``REML="no"`` is not read as true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputTypeError(f"`{argument}` must be True or False; got {value!r}.")


#: column names that say "identifier" (matched whole, case-insensitive; ``Unnamed: 0`` is pandas' saved index)
_ID_NAME = re.compile(
    r"(id|idx|index|key|uid|row|no|nr|item|unit|doc|document|example|sample|instance|question|prompt|sentence|segment|"
    r"seg|case|subject|participant)([ _-]?(id|idx|no|nr|number|index))?|q_?id|unnamed: ?\d+",
    re.IGNORECASE)
#: fewest rows for which whole numbers counting the rows mark an identifier without a telling name
_ID_MIN_ROWS = 5


def id_like_columns(data: pd.DataFrame, columns: Sequence[str] | None = None) -> list[str]:
    """Columns (of ``columns``, default all) that identify the rows rather than hold scores or ratings.

    A column is an identifier when its values are distinct (one per row) whole numbers or text labels and either
    its name says so (``id``, ``item``, ``doc_id``, ``Unnamed: 0``, ...) or, with at least 5 rows, they are text or
    whole numbers counting the rows (``k, k+1, ..., k+n-1`` in any order) and no other column is (several such
    columns are rankings, not identifiers). Scores with decimals are never taken for identifiers, whatever the
    column's name.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2, 3], "A": [0.5, 0.2, 0.9], "B": [0.4, 0.1, 0.3]})
    >>> id_like_columns(df)
    ['id']
    >>> id_like_columns(pd.DataFrame({"n": [7, 3, 5, 4, 6], "A": [1, 1, 0, 1, 0]}))
    ['n']
    >>> id_like_columns(pd.DataFrame({"r1": [1, 2, 3, 4, 5], "r2": [2, 1, 3, 5, 4]}))  # two rankings
    []
    """
    named, counting = [], []
    for column in data.columns if columns is None else columns:
        series = data[column]
        if len(series) < 2 or series.isna().any() or series.nunique() < len(series):
            continue
        if pd.api.types.is_bool_dtype(series):
            continue
        text = not pd.api.types.is_numeric_dtype(series)
        values = None if text else series.to_numpy(dtype=float)
        if values is not None and not (np.all(np.isfinite(values)) and np.all(values == np.round(values))):
            continue
        if _ID_NAME.fullmatch(str(column).strip()):
            named.append(str(column))
        elif len(series) >= _ID_MIN_ROWS and (values is None or values.max() - values.min() == len(values) - 1):
            counting.append(str(column))
    return named + (counting if len(counting) == 1 else [])


def describe_id_column(data: pd.DataFrame, column: str) -> str:
    """What makes ``column`` look like an identifier, for a message (e.g. ``distinct whole numbers 1..40``).

    Examples
    --------
    >>> describe_id_column(pd.DataFrame({"id": [3, 1, 2]}), "id")
    'one distinct value per row: whole numbers 1..3'
    """
    series = data[column]
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype=float)
        if np.all(values == np.round(values)):
            return f"one distinct value per row: whole numbers {int(values.min())}..{int(values.max())}"
        return f"one distinct value per row, from {float(values.min()):g} to {float(values.max()):g}"
    shown = ", ".join(repr(str(v)) for v in series.head(3))
    return f"one distinct value per row: {shown}, ..."
