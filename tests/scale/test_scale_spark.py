"""The same aggregate queries on Spark (local mode): statistics, fit and Poisson bootstrap.

Needs the optional ``pyspark`` (extra ``spark``) and a Java runtime; skipped with the reason otherwise.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'mixeval[spark]')")
if shutil.which("java") is None:  # pragma: no cover - depends on the machine
    pytest.skip("Spark needs a Java runtime (java not on PATH)", allow_module_level=True)

from mixeval.errors import ColumnError  # noqa: E402
from mixeval.mixed import build_design, compute_stats, fit_from_stats, lmer  # noqa: E402
from mixeval.scale import aggregate_stats, lmer_aggregate, poisson_bootstrap_paired  # noqa: E402
from poisson_reference import in_memory_reference  # noqa: E402


@pytest.fixture(scope="module")
def spark(spark_session):
    return spark_session  # tests/conftest.py: one local session for every Spark test


def _data(seed: int = 0, n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "item": rng.integers(0, 40, n),
            "rater": rng.choice([f"r{i}" for i in range(8)], n),
            "cond": rng.choice(["b", "a", "c"], n),
            "x": rng.normal(size=n),
        }
    )
    df["y"] = rng.normal(size=40)[df["item"]] + 0.3 * df["x"] + 0.2 * (df["cond"] == "a") + rng.normal(size=n)
    return df


def test_scale_spark_stats_and_fit(spark) -> None:
    df = _data()
    sdf = spark.createDataFrame(df)
    formula = "y ~ x * cond + (1|item) + (1|rater)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        design, s = aggregate_stats(formula, sdf)
    fit = fit_from_stats(design, s, reml=True)  # what lmer_aggregate does after the queries
    dm = build_design(formula, df)
    sm = compute_stats(dm)
    assert design.fixed_names == dm.fixed_names
    assert [g.labels for g in design.groups] == [g.labels for g in dm.groups]
    for name in ("counts0", "crr", "z0w", "zrw", "ww"):
        a, b = getattr(s.uncentred(), name), getattr(sm, name)  # the queries sum y - mean(y)
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(b)), name
    m = lmer(formula, df)
    assert abs(fit.criterion - m.criterion) / abs(m.criterion) < 1e-12
    assert np.max(np.abs(fit.coef - m.coef)) < 1e-7 * np.max(np.abs(m.coef))


def test_scale_spark_bootstrap_same_weights(spark) -> None:
    rng = np.random.default_rng(1)
    item = np.repeat(np.arange(120), 2)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 120)})
    df["score"] = rng.normal(size=120)[item] + 0.1 * (df["system"] == "A") + rng.normal(0, 0.4, 240)
    args = dict(score="score", system="system", item="item", a="A", b="B", n_resamples=60, random_state=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        res = poisson_bootstrap_paired(spark.createDataFrame(df), **args)
    ref = in_memory_reference(df, **args)
    assert np.max(np.abs(res.null_distribution + res.details["bootstrap_mean"] - ref)) < 1e-12
    duck = poisson_bootstrap_paired(df, **args)
    assert res.pvalue == duck.pvalue and res.details["engine"] == "spark"


def test_scale_spark_missing_column(spark) -> None:
    sdf = spark.createDataFrame(_data(2, 50))
    with pytest.raises(ColumnError, match="available columns: item, rater, cond, x, y"):
        lmer_aggregate("y ~ 1 + (1|judge)", sdf)
