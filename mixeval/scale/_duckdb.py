"""DuckDB (the embedded default engine): Parquet files, Arrow tables, DuckDB relations."""

from __future__ import annotations

import pandas as pd

__all__ = ["DuckDBEngine"]

_VIEW = "mixeval_src"


def _duckdb():
    try:
        import duckdb
    except ImportError as exc:  # optional dependency
        raise ImportError(
            "reading Parquet files, Arrow tables and pandas data through the query engine needs DuckDB: "
            "pip install 'mixeval[duckdb]'."
        ) from exc
    return duckdb


def _kind(type_name: str) -> str:
    t = type_name.upper()
    if t.startswith(("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                     "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")):
        return "numeric"
    if t.startswith("BOOLEAN"):
        return "boolean"
    if t.startswith(("VARCHAR", "ENUM")):
        return "string"
    return "other"


class DuckDBEngine:
    """Runs the aggregate queries with DuckDB on one relation (the data stay where they are)."""

    dialect = "duckdb"

    def __init__(self, relation, description: str, keepalive: object = None) -> None:
        self._rel = relation
        self.description = description
        self._keepalive = keepalive  # the connection (and the source) must outlive the relation

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_relation(cls, relation) -> DuckDBEngine:
        return cls(relation, "DuckDB relation")

    @classmethod
    def from_parquet(cls, pattern: str) -> DuckDBEngine:
        con = _duckdb().connect()
        return cls(con.read_parquet(pattern), f"Parquet {pattern!r} (DuckDB)", keepalive=con)

    @classmethod
    def from_arrow(cls, table) -> DuckDBEngine:
        con = _duckdb().connect()
        return cls(con.from_arrow(table), "Arrow table (DuckDB)", keepalive=(con, table))

    @classmethod
    def from_pandas(cls, df: pd.DataFrame) -> DuckDBEngine:
        con = _duckdb().connect()
        return cls(con.from_df(df), "pandas DataFrame (DuckDB)", keepalive=(con, df))

    # ---------------------------------------------------------------- protocol
    def columns(self) -> list[str]:
        return list(self._rel.columns)

    def column_kind(self, name: str) -> str:
        types = dict(zip(self._rel.columns, (str(t) for t in self._rel.types)))
        return _kind(types[name])

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def range_table(self, n: int, column: str) -> str:
        return f"(SELECT range AS {column} FROM range({int(n)}))"

    def query(self, sql: str) -> pd.DataFrame:
        return self._rel.query(_VIEW, sql.replace("{src}", _VIEW)).df()
