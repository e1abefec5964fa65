"""A preference log as a Spark DataFrame: votes counted in Spark SQL give the DataFrame fit.

Needs the optional ``pyspark`` and a Java runtime; skipped with the reason otherwise."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'mixeval[spark]')")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime (java not on PATH)", allow_module_level=True)

from mixeval.preferences import bradley_terry, simulate_arena  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (
            SparkSession.builder.master("local[1]").appName("mixeval-tests-preferences")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "1g").config("spark.default.parallelism", "1")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.parametrize("options", [dict(ties="ordinal", position="fixed"),
                                     dict(ties="drop", position="random", judge="judge")])
def test_spark_fit_equals_the_dataframe_fit(spark, options):
    log = simulate_arena(2000, np.linspace(-1, 1, 5), n_judges=5, position=0.3, judge_sd=0.5, tie_tau=0.4,
                         random_state=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = bradley_terry(spark.createDataFrame(log), **options)
        b = bradley_terry(log, **options)
    assert a.loglik == pytest.approx(b.loglik, abs=1e-8)
    np.testing.assert_allclose(a.estimates, b.estimates, atol=1e-8)
    assert a.n_votes == b.n_votes
