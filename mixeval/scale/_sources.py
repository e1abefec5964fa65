"""What the input of an aggregate fit is, and which query engine runs the queries.

An *engine* wraps one table-like source and offers the few operations the
aggregate path needs: the column names and kinds, identifier quoting, a
``range`` table and running a SQL query whose (small) result comes back as a
pandas DataFrame. The source table is always referred to as ``{src}`` in the SQL.
"""

from __future__ import annotations

import glob as _glob
from pathlib import Path
from typing import Protocol, cast

import pandas as pd

from ..errors import InputError, InputTypeError

__all__ = ["Engine", "as_engine", "is_aggregate_source", "describe_source", "with_columns"]


class Engine(Protocol):
    """The operations the aggregate path needs from a query engine."""

    dialect: str
    description: str

    def columns(self) -> list[str]: ...

    def column_kind(self, name: str) -> str:
        """``"numeric"``, ``"boolean"``, ``"string"`` (also categorical/enum) or ``"other"``."""
        ...

    def quote(self, name: str) -> str: ...

    def range_table(self, n: int, column: str) -> str:
        """SQL of a table with one BIGINT column ``column`` holding ``0..n-1``."""
        ...

    def query(self, sql: str) -> pd.DataFrame:
        """Run ``sql`` (``{src}`` is the source table) and return the result."""
        ...


def _spark_dataframe_type():
    try:
        from pyspark.sql import DataFrame as SparkDataFrame
    except Exception:  # pyspark missing or broken: no Spark input possible
        return None
    return SparkDataFrame


def is_aggregate_source(data: object) -> bool:
    """True for inputs handled by :mod:`mixeval.scale` (not a pandas DataFrame).

    Examples
    --------
    >>> import pandas as pd, pyarrow as pa
    >>> is_aggregate_source(pd.DataFrame({"x": [1.0]})), is_aggregate_source("logs/*.parquet")
    (False, True)
    >>> is_aggregate_source(pa.table({"x": [1.0]}))
    True
    """
    if isinstance(data, (str, Path)):
        return True
    mod = type(data).__module__ or ""
    return mod.startswith(("duckdb", "pyarrow", "pyspark", "mixeval.scale"))


def describe_source(data: object) -> str:
    if isinstance(data, (str, Path)):
        return f"Parquet {str(data)!r}"
    return type(data).__module__.split(".")[0] + "." + type(data).__name__


def _parquet_paths(path: str | Path) -> str:
    text = str(path)
    p = Path(text)
    if p.is_dir():
        text = str(p / "**" / "*.parquet")
    if not _glob.glob(text, recursive=True):
        raise InputError(
            f"no Parquet file matches {str(path)!r}; give an existing file, directory or glob "
            "such as 'logs/*.parquet'."
        )
    if not text.endswith(".parquet") and "*" not in text and not p.is_file():
        raise InputError(f"{str(path)!r} is not a Parquet file; give a path ending in .parquet or a glob.")
    return text


def as_engine(source: object) -> Engine:
    """The engine that runs the aggregate queries on ``source``.

    Parameters
    ----------
    source : str, Path, pyarrow.Table, duckdb.DuckDBPyRelation, pyspark.sql.DataFrame or pandas.DataFrame
        A Parquet path, directory or glob (read by DuckDB), an Arrow table or record batch
        reader (DuckDB), a DuckDB relation (its own connection), a Spark DataFrame (Spark SQL) or a pandas
        DataFrame (registered in DuckDB; useful for tests, but the in-memory path is faster for it).

    Raises
    ------
    TypeError
        For any other input.

    Examples
    --------
    >>> import pyarrow as pa
    >>> engine = as_engine(pa.table({"item": [1, 1, 2], "score": [0.5, 0.7, 0.2]}))
    >>> engine.dialect, engine.description
    ('duckdb', 'Arrow table (DuckDB)')
    >>> engine.column_kind("score")
    'numeric'
    """
    from ._duckdb import DuckDBEngine

    if hasattr(source, "query") and hasattr(source, "dialect") and hasattr(source, "range_table"):
        return cast(Engine, source)  # already an engine (re-used across fits: its aggregate tables are kept)
    if isinstance(source, pd.DataFrame):
        return DuckDBEngine.from_pandas(source)
    if isinstance(source, (str, Path)):
        return DuckDBEngine.from_parquet(_parquet_paths(source))
    mod = type(source).__module__ or ""
    if mod.startswith("duckdb"):
        return DuckDBEngine.from_relation(source)
    if mod.startswith("pyarrow"):
        return DuckDBEngine.from_arrow(source)
    spark_df = _spark_dataframe_type()
    if spark_df is not None and isinstance(source, spark_df):
        from ._spark import SparkEngine

        return SparkEngine(source)
    raise InputTypeError(
        "the data must be a pandas DataFrame, a Parquet path or glob, a pyarrow Table, a DuckDB relation or a "
        f"Spark DataFrame; got {type(source).__module__}.{type(source).__name__}."
    )


class _DerivedEngine:
    """An engine whose source has extra columns, computed by the query engine from SQL expressions (a formula's
    numeric expressions, a response net of its offset). The aggregate tables it fetches are kept on the base
    engine: a derived column is named by its R expression, the same in every fit."""

    def __init__(self, base: Engine, columns: dict[str, str]) -> None:
        self._base = base
        self._derived = dict(columns)
        self.dialect = base.dialect
        self.description = base.description
        self.__dict__["_mixeval_tables"] = base.__dict__.setdefault("_mixeval_tables", [])
        self.__dict__["_mixeval_overview"] = base.__dict__.setdefault(
            "_mixeval_overview", {"nulls": {}, "response": {}})

    def columns(self) -> list[str]:
        return [*self._base.columns(), *self._derived]

    def column_kind(self, name: str) -> str:
        return "numeric" if name in self._derived else self._base.column_kind(name)

    def quote(self, name: str) -> str:
        return self._base.quote(name)

    def range_table(self, n: int, column: str) -> str:
        return self._base.range_table(n, column)

    def query(self, sql: str) -> pd.DataFrame:
        extra = ", ".join(f"{expr} AS {self.quote(alias)}" for alias, expr in self._derived.items())
        return self._base.query(sql.replace("{src}", f"(SELECT *, {extra} FROM {{src}}) AS mixeval_derived"))


def with_columns(engine: Engine, columns: dict[str, str]) -> Engine:
    """``engine`` with extra columns computed by SQL expressions (``{name: sql}``); ``engine`` itself without any.

    Examples
    --------
    >>> import pyarrow as pa
    >>> engine = with_columns(as_engine(pa.table({"x": [1.0, 2.0]})), {"x2": 'POWER("x", 2)'})
    >>> engine.query('SELECT SUM("x2") AS s FROM {src}').s.tolist()
    [5.0]
    """
    return _DerivedEngine(engine, columns) if columns else engine
