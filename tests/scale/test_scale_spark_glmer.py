"""The aggregate binomial GLMM path on a Spark DataFrame equals the DuckDB path and the row fit.

Needs the optional ``pyspark`` and a Java runtime; skipped with the reason otherwise."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'mixeval[spark]')")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime (java not on PATH)", allow_module_level=True)

from mixeval import glmer  # noqa: E402
from mixeval.scale import glmer_aggregate  # noqa: E402


@pytest.fixture(scope="module")
def spark(spark_session):
    return spark_session  # tests/conftest.py: one local session for every Spark test


def test_spark_binary_cells_fit_equals_rows(spark) -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"item": rng.choice([f"i{k}" for k in range(25)], 2000),
                       "system": rng.choice(["A", "B"], 2000), "judge": rng.choice(["j1", "j2", "j3"], 2000)})
    eta = 0.2 + rng.normal(0, 1, 25)[df.item.str[1:].astype(int)] + 0.4 * (df.system == "B")
    df["correct"] = (rng.random(2000) < 1 / (1 + np.exp(-eta))).astype(int)
    formula = "correct ~ system + (1|item) + (1|judge)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        via_spark = glmer_aggregate(formula, spark.createDataFrame(df))
        rows = glmer(formula, df)
    assert via_spark.nobs == 2000
    assert via_spark.loglik == pytest.approx(rows.loglik, rel=1e-8)
    np.testing.assert_allclose(via_spark.coef, rows.coef, atol=1e-5)
