"""What the input of an aggregate fit is, and which query engine runs the queries.

An *engine* wraps one table-like source and offers the few operations the
aggregate path needs: the column names and kinds, identifier quoting, a
``range`` table and running a SQL query whose (small) result comes back as a
pandas DataFrame. The source table is always referred to as ``{src}`` in the SQL.
"""

from __future__ import annotations

import glob as _glob
from pathlib import Path
from typing import Protocol

import pandas as pd

from ..errors import InputError, InputTypeError

__all__ = ["Engine", "as_engine", "is_aggregate_source", "describe_source"]


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
        return source  # already an engine (re-used across fits: its aggregate tables are kept)
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
