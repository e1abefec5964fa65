"""``offset()`` in every family: summed when repeated, part of fitted values, simulations and predictions."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.mixed import clmm

CLMM = json.loads((Path(__file__).parent / "fixtures" / "clmm_offset.json").read_text())


def _wine() -> pd.DataFrame:
    d = CLMM["data"]
    return pd.DataFrame({"rating": d["rating"], "temp": d["temp"], "contact": d["contact"], "judge": d["judge"],
                         "off": d["off"], "bottle_n": d["bottle_n"]})


@pytest.mark.parametrize("key, formula", [
    ("offset", "rating ~ temp + contact + offset(off) + (1|judge)"),
    ("two_offsets", "rating ~ temp + offset(off) + offset(log(bottle_n)) + (1|judge)"),
])
def test_clmm_offset_is_ordinals(key, formula):
    fit = clmm(formula, _wine())
    ref = CLMM[key]
    assert abs(fit.loglik - ref["loglik"]) < 1e-6 * abs(ref["loglik"])
    got = {**fit.thresholds.to_dict(), **dict(zip(fit.fixed_names, fit.coef))}
    assert set(got) == set(ref["coef"])
    for name, value in ref["coef"].items():
        assert abs(got[name] - value) < 1e-4, name


def _counts(seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 400
    df = pd.DataFrame({"item": rng.integers(0, 40, n), "system": rng.choice(["A", "B"], n),
                       "tokens": rng.integers(50, 500, n)})
    rate = np.exp(-5 + 0.3 * (df.system == "B") + rng.normal(0, 0.4, 40)[df.item])
    df["errors"] = rng.poisson(df.tokens * rate)
    df["score"] = 2.0 + 0.01 * df.tokens + rng.normal(0, 0.5, 40)[df.item] + rng.normal(size=n)
    return df


def test_poisson_offset_equals_a_rate_model_and_predicts_with_it():
    df = _counts()
    fit = mixeval.glmer("errors ~ system + offset(log(tokens)) + (1|item)", df, family="poisson")
    split = mixeval.glmer("errors ~ system + offset(log(tokens / 2)) + offset(log(2)) + (1|item)", df,
                          family="poisson")
    assert abs(fit.loglik - split.loglik) < 1e-8 * abs(fit.loglik)  # offsets are summed
    np.testing.assert_allclose(fit.coef, split.coef, rtol=1e-6)
    without = mixeval.glmer("errors ~ system + (1|item)", df, family="poisson")
    assert fit.coef[0] < without.coef[0] - 3  # the intercept is a rate per token
    new = df.head(5).assign(tokens=1000)
    eta = fit.predict(new, type="link", re=False)
    X = np.column_stack([np.ones(5), (new.system == "B").to_numpy(float)])
    np.testing.assert_allclose(eta, X @ fit.coef + np.log(1000.0), rtol=1e-12)
    np.testing.assert_allclose(fit.predict(type="link"), np.log(fit.fitted), rtol=1e-10)


def test_gaussian_offset_is_subtracted_and_added_back():
    df = _counts()
    fit = mixeval.lmer("score ~ system + offset(0.01 * tokens) + (1|item)", df, REML=False)
    net = mixeval.lmer("net ~ system + (1|item)", df.assign(net=df.score - 0.01 * df.tokens), REML=False)
    assert abs(fit.loglik - net.loglik) < 1e-9 * abs(net.loglik)
    np.testing.assert_allclose(fit.coef, net.coef, rtol=1e-9)
    np.testing.assert_allclose(fit.fitted, net.fitted + 0.01 * df.tokens, rtol=1e-9)
    np.testing.assert_allclose(fit.residuals, net.residuals, atol=1e-9)
    np.testing.assert_allclose(fit.predict(df.head(3)), fit.fitted[:3], rtol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sims = fit.simulate(200, random_state=1)
    assert abs(sims.mean(axis=1) - fit.predict(re=False)).max() < 0.5  # draws centre on X beta + offset
    refit = fit.refit(REML=True)
    assert refit.design.offset_subtracted and np.allclose(refit.fitted, fit.fitted, atol=0.05)


def test_offset_errors_name_the_expression():
    df = _counts()
    with pytest.raises(mixeval.errors.InputError, match=r"offset\(log\(tokens - 100\)\) is not finite"):
        mixeval.glmer("errors ~ system + offset(log(tokens - 100)) + (1|item)", df, family="poisson")
    with pytest.raises(mixeval.errors.ColumnError, match="newdata lacks the column.*tokens"):
        mixeval.glmer("errors ~ system + offset(log(tokens)) + (1|item)", df, family="poisson").predict(
            df[["system", "item"]].head(2))
