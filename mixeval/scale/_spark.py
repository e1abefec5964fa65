"""Spark SQL engine (optional extra ``pyspark``): the queries run where the Spark DataFrame lives."""

from __future__ import annotations

import itertools

import pandas as pd

__all__ = ["SparkEngine"]

_counter = itertools.count()

_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")


class SparkEngine:
    """Runs the aggregate queries through ``spark.sql`` on a temporary view of the DataFrame."""

    dialect = "spark"

    def __init__(self, df) -> None:
        self._df = df
        self._spark = df.sparkSession
        self._view = f"mixeval_src_{next(_counter)}"
        df.createOrReplaceTempView(self._view)
        self._types = dict(df.dtypes)
        self.description = "Spark DataFrame"

    def columns(self) -> list[str]:
        return list(self._df.columns)

    def column_kind(self, name: str) -> str:
        t = self._types[name].lower()
        if t.startswith(_NUMERIC):
            return "numeric"
        if t == "boolean":
            return "boolean"
        if t.startswith(("string", "varchar", "char")):
            return "string"
        return "other"

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def range_table(self, n: int, column: str) -> str:
        return f"(SELECT id AS {column} FROM range({int(n)}))"

    def query(self, sql: str) -> pd.DataFrame:
        result = self._spark.sql(sql.replace("{src}", self._view))
        rows = result.collect()
        return pd.DataFrame([tuple(r) for r in rows], columns=list(result.columns))
