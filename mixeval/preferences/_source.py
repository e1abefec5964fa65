"""Stage 0 (logs beyond memory): identical votes counted where the data live (DuckDB for Parquet files and
Arrow tables, a DuckDB relation, Spark SQL for a Spark DataFrame), through the query engines of
:mod:`mixeval.scale`.

One ``GROUP BY`` over the columns a fit reads (the two systems, the verdict, judge, prompt, covariate
columns) returns each distinct vote with its number of votes; the fit then reads that small frame as a log
with a count column, so it equals the fit of the rows themselves. A numeric margin is grouped by its sign
(all the model uses of it).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..errors import InputError
from ..scale import as_engine, is_aggregate_source

__all__ = ["COUNT_COLUMN", "is_source", "count_votes"]

#: the column of the counted frame that holds the number of votes of each distinct vote
COUNT_COLUMN = "_mixeval_votes"


def is_source(data: Any) -> bool:
    """A Parquet path, Arrow table, DuckDB relation or Spark DataFrame (not a pandas DataFrame)."""
    return not isinstance(data, pd.DataFrame) and is_aggregate_source(data)


def _used_columns(model_a: str, model_b: str, winner: str, judge: str | None, prompt: str | None,
                  covariates: dict | None) -> list[str]:
    cols = [model_a, model_b, winner] + [c for c in (judge, prompt) if c is not None]
    for pair in (covariates or {}).values():
        if isinstance(pair, (tuple, list)):
            cols += [str(c) for c in pair]
    return list(dict.fromkeys(cols))


def count_votes(source: Any, *, model_a: str = "model_a", model_b: str = "model_b", winner: str = "winner",
                judge: str | None = None, prompt: str | None = None, covariates: dict | None = None,
                count: str | None = None) -> pd.DataFrame:
    """The distinct votes of ``source`` with their numbers of votes (column :data:`COUNT_COLUMN`).

    Parameters
    ----------
    source : str, Path, pyarrow.Table, duckdb relation or pyspark.sql.DataFrame
        The log (one row per vote, or per group of identical votes with ``count``).
    model_a, model_b, winner, judge, prompt, covariates
        As for :func:`~mixeval.preferences.bradley_terry`.
    count : str, optional
        A column of vote counts: summed instead of counting rows (whole numbers >= 0, checked in the query).

    Raises
    ------
    InputError
        Missing columns, or a count column with negative or fractional values.

    Examples
    --------
    >>> import pyarrow as pa
    >>> t = pa.table({"model_a": ["x", "x", "y"], "model_b": ["y", "y", "x"], "winner": ["model_a"] * 3})
    >>> count_votes(t).sort_values("model_a").to_dict("list")
    {'model_a': ['x', 'y'], 'model_b': ['y', 'x'], 'winner': ['model_a', 'model_a'], '_mixeval_votes': [2, 1]}
    """
    engine = as_engine(source)
    cols = _used_columns(model_a, model_b, winner, judge, prompt, covariates)
    present = set(engine.columns())
    missing = [c for c in cols + ([count] if count is not None else []) if c not in present]
    if missing:
        raise InputError(f"the log ({engine.description}) has no column(s) {missing}; its columns are "
                         f"{sorted(present)[:20]}. Name them with model_a=, model_b=, winner=, judge=, prompt=, count=.")
    q = engine.quote
    keys = [f"SIGN({q(c)})" if c == winner and engine.column_kind(c) == "numeric" else q(c) for c in cols]
    select = ", ".join(f"{k} AS {q(c)}" for k, c in zip(keys, cols))
    if count is None:
        votes, bad = "COUNT(*)", "0"
    else:
        c = q(count)
        votes = f"SUM({c})"
        bad = f"SUM(CASE WHEN {c} < 0 OR {c} <> FLOOR({c}) THEN 1 ELSE 0 END)"
    frame = engine.query(f"SELECT {select}, {votes} AS {q(COUNT_COLUMN)}, {bad} AS {q('_mixeval_bad')} "
                         f"FROM {{src}} GROUP BY {', '.join(keys)}")
    if count is not None and float(frame["_mixeval_bad"].sum()) > 0:
        raise InputError(f"count={count!r} must hold whole numbers of votes >= 0; "
                         f"{int(frame['_mixeval_bad'].sum())} row(s) of the log do not.")
    return frame.drop(columns="_mixeval_bad")
