"""Aggregate tables fetched from an engine, kept and rolled up for later fits on the same engine.

A table is identified by its GROUP BY keys and the sums it holds (``n``, ``s:v`` =
``sum(v)``, ``m:v|w`` = ``sum(v w)``). A request whose keys are a subset of a kept
table's keys and whose sums are among the kept ones is answered by summing that
table over the other keys in pandas, without a new scan: e.g. the null model of a
likelihood-ratio test re-uses the full model's tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ._sql import key_alias, level_sums_sql, moments_sql, pair_counts_sql

__all__ = ["fetch", "moment_name", "sum_name"]


def sum_name(v: str) -> str:
    return f"s:{v}"


def moment_name(v: str, w: str) -> str:
    a, b = sorted((v, w))
    return f"m:{a}|{b}"


def _wanted(values: Sequence[str], moments: bool) -> list[str]:
    cols = ["n", *(sum_name(v) for v in values)]
    if moments:
        cols += list(dict.fromkeys(moment_name(v, w) for i, v in enumerate(values) for w in values[i:]))
    return cols


def fetch(engine, keys: Sequence[str], values: Sequence[str], *, moments: bool = False,
          centres: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Counts and sums per combination of ``keys`` (columns: keys, ``n``, ``s:v``, ``m:v|w``).

    Parameters
    ----------
    engine : Engine
        The engine; its kept tables are in ``engine._mixeval_tables``.
    keys : sequence of str
        GROUP BY columns (may be empty: one row).
    values : sequence of str
        Numeric columns whose sums (and with ``moments`` their cross-product sums) are needed.
    centres : mapping, optional
        Constants subtracted from value columns before summing (a kept table is re-used only with the
        same centres).
    """
    keys, values = list(keys), list(values)
    wanted = _wanted(values, moments)
    centres = {v: float(c) for v, c in (centres or {}).items() if v in values and c}
    tables: list[tuple[list[str], pd.DataFrame, dict]] = engine.__dict__.setdefault("_mixeval_tables", [])
    for tkeys, table, tcentres in tables:
        same_centres = all(tcentres.get(v, 0.0) == centres.get(v, 0.0) for v in values)
        if same_centres and set(keys) <= set(tkeys) and set(wanted) <= set(table.columns):
            if set(keys) == set(tkeys):
                return table[keys + wanted]
            if not keys:
                return table[wanted].sum().to_frame().T
            return table.groupby(keys, sort=False, observed=True, dropna=False)[wanted].sum().reset_index()
    q = engine.quote
    if moments:
        sql = moments_sql(keys, values, q, centres)
    elif values:
        sql = level_sums_sql(keys, values, q, centres)
    else:
        sql = pair_counts_sql(keys, q)
    res = engine.query(sql)
    names = {key_alias(i): c for i, c in enumerate(keys)}
    names.update({f"s{j}": sum_name(v) for j, v in enumerate(values)})
    names.update({f"m{j}_{k}": moment_name(values[j], values[k]) for j in range(len(values)) for k in range(j, len(values))})
    res = res.rename(columns=names)
    tables.append((keys, res, centres))
    return res[keys + wanted]
