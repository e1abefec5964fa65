"""The GROUP BY queries whose results are the sufficient statistics of a random-intercept fit.

All queries are plain SQL understood by DuckDB and Spark SQL; identifiers are
quoted by the engine and the source table is ``{src}``. With ``v = [x_1..x_m, y]``
the numeric columns of the fixed part and the response, and the *cell* the
combination of the categorical fixed-effect columns:

* :func:`overview_sql`: row count, NULL count per column, ``sum(y)`` and ``sum(y^2)``;
* :func:`moments_sql`: per cell, the count, ``sum(v_j)`` and ``sum(v_j v_k)`` (``W'W``);
* :func:`level_sums_sql`: per level of one grouping term and cell, the count and ``sum(v_j)`` (``Z_k'W``);
* :func:`pair_counts_sql`: per pair of levels of two grouping terms, the count (``Z_j'Z_k``).

Sums of a column far from 0 (``y = 1e12 + noise``) lose the noise to rounding, so a value
column can be centred by a constant (``centres``: column -> constant, e.g. its mean from the overview
query): the queries then sum ``v - c`` instead of ``v``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

__all__ = ["overview_sql", "moments_sql", "level_sums_sql", "pair_counts_sql", "key_alias"]


def key_alias(i: int) -> str:
    return f"k{i}"


def _d(expr: str) -> str:
    return f"CAST({expr} AS DOUBLE)"


def _value(column: str, q: Callable[[str], str], centres: Mapping[str, float] | None) -> str:
    """The summed expression of a value column: ``CAST(col AS DOUBLE)``, minus its centre if it has one."""
    c = (centres or {}).get(column, 0.0)
    return f"({_d(q(column))} - {float(c)!r})" if c else _d(q(column))


def _keys(cols: Sequence[str], q: Callable[[str], str]) -> tuple[str, str]:
    """SELECT list and GROUP BY list for key columns (aliased k0, k1, ...)."""
    sel = ", ".join(f"{q(c)} AS {key_alias(i)}" for i, c in enumerate(cols))
    grp = ", ".join(q(c) for c in cols)
    return sel, grp


def overview_sql(columns: Sequence[str], response: str, q: Callable[[str], str]) -> str:
    nulls = ", ".join(f"SUM(CASE WHEN {q(c)} IS NULL THEN 1 ELSE 0 END) AS null{i}" for i, c in enumerate(columns))
    y = _d(q(response))
    return f"SELECT COUNT(*) AS n, {nulls}, SUM({y}) AS sy, SUM({y} * {y}) AS syy FROM {{src}}"


def moments_sql(cells: Sequence[str], values: Sequence[str], q: Callable[[str], str],
                centres: Mapping[str, float] | None = None) -> str:
    v = [_value(c, q, centres) for c in values]
    sums = [f"SUM({e}) AS s{j}" for j, e in enumerate(v)]
    prods = [f"SUM({v[j]} * {v[k]}) AS m{j}_{k}" for j in range(len(v)) for k in range(j, len(v))]
    if cells:
        sel, grp = _keys(cells, q)
        return f"SELECT {sel}, COUNT(*) AS n, {', '.join(sums + prods)} FROM {{src}} GROUP BY {grp}"
    return f"SELECT COUNT(*) AS n, {', '.join(sums + prods)} FROM {{src}}"


def level_sums_sql(keys: Sequence[str], values: Sequence[str], q: Callable[[str], str],
                   centres: Mapping[str, float] | None = None) -> str:
    sel, grp = _keys(keys, q)
    sums = ", ".join(f"SUM({_value(c, q, centres)}) AS s{j}" for j, c in enumerate(values))
    return f"SELECT {sel}, COUNT(*) AS n, {sums} FROM {{src}} GROUP BY {grp}"


def pair_counts_sql(keys: Sequence[str], q: Callable[[str], str]) -> str:
    sel, grp = _keys(keys, q)
    return f"SELECT {sel}, COUNT(*) AS n FROM {{src}} GROUP BY {grp}"
