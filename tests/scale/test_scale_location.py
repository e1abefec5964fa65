"""The aggregate path does not depend on where the response is located: sums are taken of y - mean(y)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

from mixeval import lmer  # noqa: E402
from mixeval.scale import lmer_aggregate  # noqa: E402
from mixeval.scale._sql import level_sums_sql, moments_sql  # noqa: E402


def _log(seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(60), 12)
    system = np.tile(np.repeat(["A", "B", "C"], 4), 60)
    seed_ = np.tile(np.arange(4), 180)
    y = (rng.normal(0, 3.0, 60)[item] + (system == "B") * 0.8 + rng.normal(0, 1.0, 4)[seed_]
         + rng.normal(0, 2.0, item.size))
    return pd.DataFrame({"item": item.astype(str), "system": system, "seed": seed_.astype(str), "y": y})


FORMULA = "y ~ system + (1|item) + (1|seed)"


@pytest.mark.parametrize("offset", [1e3, 1e6, 1e9, 1e12])
@pytest.mark.parametrize("reml", [True, False])
def test_offsets_change_no_variance_component(offset, reml):
    df = _log()
    shifted = df.assign(y=df.y + offset)
    # the reference: the same (rounded) values, located at 0 (the subtraction is exact)
    reference = shifted.assign(y=shifted.y - offset)
    ref = lmer_aggregate(FORMULA, pa.Table.from_pandas(reference), REML=reml)
    fit = lmer_aggregate(FORMULA, pa.Table.from_pandas(shifted), REML=reml)
    for name in ("item", "seed", "Residual"):
        assert fit.variances[name] == pytest.approx(ref.variances[name], rel=1e-8)
    assert fit.fixef["(Intercept)"] - offset == pytest.approx(ref.fixef["(Intercept)"], abs=1e-9 * offset)
    np.testing.assert_allclose(fit.fixef.iloc[1:], ref.fixef.iloc[1:], rtol=1e-7, atol=1e-9)
    assert fit.loglik - ref.loglik == pytest.approx(0.0, abs=1e-6)  # same likelihood: y is only shifted
    np.testing.assert_allclose(fit.ranef["item"].to_numpy(), ref.ranef["item"].to_numpy(), rtol=1e-6, atol=1e-7)


def test_centred_aggregate_equals_in_memory_fit():
    df = _log().assign(y=lambda d: d.y + 250.0)
    agg = lmer_aggregate(FORMULA, pa.Table.from_pandas(df))
    mem = lmer(FORMULA, df)
    for name in ("item", "seed", "Residual"):
        assert agg.variances[name] == pytest.approx(mem.variances[name], rel=1e-9)
    np.testing.assert_allclose(agg.fixef.to_numpy(), mem.fixef.to_numpy(), rtol=1e-10)


def test_model_without_constant_is_uncentred_exactly():
    """No intercept and a numeric column only: not location-equivariant, the raw sums are restored."""
    df = _log().assign(x=lambda d: np.linspace(1.0, 3.0, len(d)), y=lambda d: d.y + 40.0)
    formula = "y ~ 0 + x + (1|item)"
    agg = lmer_aggregate(formula, pa.Table.from_pandas(df))
    mem = lmer(formula, df)
    assert agg.variances["item"] == pytest.approx(mem.variances["item"], rel=1e-8)
    assert agg.fixef["x"] == pytest.approx(mem.fixef["x"], rel=1e-10)


def test_queries_subtract_the_centre():
    q = lambda c: f'"{c}"'  # noqa: E731
    assert '("y" AS DOUBLE) - 1000000000000.0)' in moments_sql([], ["y"], q, {"y": 1e12}).replace("CAST(", "")
    assert "- 2.5)" in level_sums_sql(["g"], ["x", "y"], q, {"y": 2.5})
    assert " - " not in level_sums_sql(["g"], ["y"], q)
