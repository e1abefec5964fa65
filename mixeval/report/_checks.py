"""Checking an evaluation log before a report: columns exist, long format, usable roles."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .._validation import require_dataframe, require_no_missing, require_numeric_column
from ..errors import ColumnError, InputError, InputTypeError

__all__ = ["check_evaluation_log", "long_format_hint"]


def long_format_hint(data: pd.DataFrame, roles: Sequence[str], system: str = "system") -> str:
    """A hint on reshaping when ``data`` looks wide (several numeric columns, one per system or rater).

    The table looks wide when the ``system`` column is absent and at least two numeric columns
    are not among ``roles`` (in a wide table the systems are columns). Returns ``""`` otherwise.

    Examples
    --------
    >>> import pandas as pd
    >>> wide = pd.DataFrame({"item": [1, 2], "baseline": [0.3, 0.4], "marking": [0.2, 0.3]})
    >>> print(long_format_hint(wide, ["score", "system", "item"]))  # doctest: +NORMALIZE_WHITESPACE
    The table looks wide (one numeric column per condition: baseline, marking). mixeval needs long
    format, one row per observation; reshape with pandas.melt(data, id_vars=['item'],
    value_vars=['baseline', 'marking'], var_name='system', value_name='score').
    """
    if system in data.columns:
        return ""
    numeric = [c for c in data.columns if c not in roles and pd.api.types.is_numeric_dtype(data[c])
               and not pd.api.types.is_bool_dtype(data[c])]
    if len(numeric) < 2:
        return ""
    ids = [c for c in data.columns if c not in numeric]
    var_name = system
    value_name = next((r for r in roles if r != system and r not in data.columns), "score")
    shown = ", ".join(map(str, numeric[:8])) + (", ..." if len(numeric) > 8 else "")
    return (
        f"The table looks wide (one numeric column per condition: {shown}). mixeval needs long format, one "
        f"row per observation; reshape with pandas.melt(data, id_vars={ids!r}, value_vars={numeric[:8]!r}, "
        f"var_name={var_name!r}, value_name={value_name!r})."
    )


def check_evaluation_log(
    data: pd.DataFrame,
    *,
    score: str,
    system: str,
    item: str,
    facets: Sequence[str] = (),
) -> None:
    """Raise a clear error unless ``data`` is a usable long-format evaluation log.

    Checks: the named columns exist (the error lists the available columns and, for a table
    that looks wide, how to reshape it), names are not repeated, the score is numeric and finite,
    grouping columns have no missing values, ``system`` has at least two levels, and ``item``
    (and each facet) has more than one level but fewer levels than rows.

    Raises
    ------
    TypeError
        ``data`` is not a DataFrame, or a role is not a column name string.
    mixeval.errors.ColumnError
        A named column is missing.
    mixeval.errors.InputError
        Any other check fails (message says what to do).

    Examples
    --------
    >>> from mixeval import datasets
    >>> check_evaluation_log(datasets.load_demo(), score="score", system="system", item="item",
    ...                      facets=["rater"])
    """
    data = require_dataframe(data)
    facets = [facets] if isinstance(facets, str) else list(facets)
    roles = {"score": score, "system": system, "item": item}
    roles.update({f"facets[{i}]": f for i, f in enumerate(facets)})
    for role, column in roles.items():
        if not isinstance(column, str):
            raise InputTypeError(f"`{role}` must be a column name (str); got {type(column).__name__}.")
    names = list(roles.values())
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise InputError(f"column(s) {', '.join(map(repr, repeated))} named for more than one role; "
                         "score, system, item and each facet must be different columns.")
    missing = [c for c in names if c not in data.columns]
    if missing:
        message = (f"column(s) {', '.join(map(repr, missing))} not found in `data`; "
                   f"available columns: {', '.join(map(str, data.columns))}.")
        hint = long_format_hint(data, [score, system, item, *facets], system)
        raise ColumnError(message + (" " + hint if hint else ""))
    require_numeric_column(data, score, role="score")
    grouping = [system, item, *facets]
    require_no_missing(data, grouping)
    n_system = data[system].nunique()
    if n_system < 2:
        raise InputError(f"the system column {system!r} has {n_system} level(s); comparing systems needs "
                         "at least two. Pass the column that names the systems.")
    for column in [item, *facets]:
        n = data[column].nunique()
        if n < 2:
            raise InputError(f"the column {column!r} has a single level ({data[column].iloc[0]!r}); a variance "
                             "component needs at least two levels. Drop it from the facets.")
        if n == len(data):
            raise InputError(
                f"the column {column!r} has as many levels as rows ({n}): every row is its own group, so its "
                "variance cannot be told apart from the residual. In long format each level occurs in several "
                "rows (one per system, rater, seed, ...); a table with one row per item and one column per "
                "system must first be reshaped with pandas.melt."
            )
