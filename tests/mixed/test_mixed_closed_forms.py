"""The engine against closed forms and statsmodels (no R needed)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from mixeval.errors import SingularFitWarning
from mixeval.mixed import build_design, compute_stats, lmer
from mixeval.mixed._deviance import deviance_and_gradient, profiled_deviance


def _one_way(seed: int = 0, a: int = 12, n: int = 5, sd_a: float = 1.0, sd_e: float = 0.7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(a), n)
    y = 3.0 + rng.normal(0, sd_a, a)[g] + rng.normal(0, sd_e, a * n)
    return pd.DataFrame({"y": y, "g": [f"g{i:02d}" for i in g]})


def test_balanced_one_way_reml_equals_anova_estimator():
    # Balanced one-way random model: REML = ANOVA (method of moments) estimates when positive.
    df = _one_way()
    a, n = 12, 5
    means = df.groupby("g").y.mean().to_numpy()
    msa = n * np.sum((means - df.y.mean()) ** 2) / (a - 1)
    mse = np.sum((df.y - df.groupby("g").y.transform("mean")) ** 2) / (a * (n - 1))
    fit = lmer("y ~ 1 + (1|g)", df)
    assert fit.variances["Residual"] == pytest.approx(mse, rel=1e-8)
    assert fit.variances["g"] == pytest.approx((msa - mse) / n, rel=1e-7)
    # balanced: the GLS intercept is the grand mean, SE^2 = MSA / (a n)
    assert fit.fixef["(Intercept)"] == pytest.approx(df.y.mean(), rel=1e-10)
    assert fit.coefficients.se.iloc[0] == pytest.approx(np.sqrt(msa / (a * n)), rel=1e-6)


def test_blups_are_shrunken_group_means():
    df = _one_way(seed=3)
    fit = lmer("y ~ 1 + (1|g)", df)
    s2a, s2 = fit.variances["g"], fit.variances["Residual"]
    shrink = s2a / (s2a + s2 / 5)
    means = df.groupby("g").y.mean()
    expected = shrink * (means - fit.fixef.iloc[0])
    np.testing.assert_allclose(fit.ranef["g"].loc[means.index].to_numpy(), expected.to_numpy(), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(fit.fitted + fit.residuals, df.y.to_numpy(), rtol=0, atol=1e-12)


def test_linear_model_matches_statsmodels_ols():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(size=80), "s": rng.choice(["A", "B", "C"], 80)})
    df["y"] = 1 + 2 * df.x + (df.s == "B") * 0.5 + rng.normal(size=80)
    ml = lmer("y ~ x + s", df, REML=False)
    ols = sm.OLS(df.y, sm.add_constant(pd.get_dummies(df[["x", "s"]], drop_first=True).astype(float))).fit()
    np.testing.assert_allclose(ml.coef, ols.params.to_numpy(), rtol=1e-10)
    assert ml.loglik == pytest.approx(ols.llf, rel=1e-12)  # R's logLik(lm) is the ML log-likelihood
    reml = lmer("y ~ x + s", df)
    assert reml.sigma2 == pytest.approx(ols.scale, rel=1e-10)  # REML residual variance = RSS / (n - p)
    np.testing.assert_allclose(np.sqrt(np.diag(reml.cov_coef)), ols.bse.to_numpy(), rtol=1e-10)
    assert ml.fixed_names == ("(Intercept)", "x", "sB", "sC")


def test_exact_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    n = 400
    df = pd.DataFrame({"i": rng.integers(0, 40, n), "r": rng.integers(0, 6, n), "x": rng.normal(size=n)})
    df["y"] = rng.normal(size=40)[df.i] + rng.normal(size=6)[df.r] + df.x + rng.normal(size=n)
    stats = compute_stats(build_design("y ~ x + (1|i) + (1|r) + (1|i:r)", df))
    for reml in (True, False):
        theta = np.array([0.8, 0.3, 0.5])
        _, grad = deviance_and_gradient(stats, theta, reml)
        fd = []
        for k in range(3):
            e = np.zeros(3)
            e[k] = 1e-6
            fd.append((profiled_deviance(stats, theta + e, reml) - profiled_deviance(stats, theta - e, reml)) / 2e-6)
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_singular_fit_warns_and_reports_zero():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"g": np.repeat(np.arange(10), 4)})
    df["y"] = rng.normal(size=40)  # no group effect at all: variance estimate at the boundary
    df = pd.concat([df, df.assign(y=df.y[::-1].to_numpy())], ignore_index=True)
    with pytest.warns(SingularFitWarning, match="'g'"):
        fit = lmer("y ~ 1 + (1|g)", df)
    assert fit.singular
    assert fit.variances["g"] == 0.0
    assert "singular" in fit.summary()


def test_result_is_frozen_and_input_untouched():
    df = _one_way()
    before = df.copy()
    fit = lmer("y ~ 1 + (1|g)", df)
    pd.testing.assert_frame_equal(df, before)
    with pytest.raises(AttributeError):
        fit.sigma2 = 1.0  # type: ignore[misc]


def test_varcorr_table_columns_and_percent():
    fit = lmer("y ~ 1 + (1|g)", _one_way())
    vc = fit.varcorr
    assert list(vc.columns) == ["group", "name", "variance", "std", "percent"]
    assert vc.percent.sum() == pytest.approx(100.0)
    np.testing.assert_allclose(vc["std"] ** 2, vc.variance)
    assert "<table" in fit._repr_html_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "Random effects" in fit.summary()


def test_variance_component_standard_errors_closed_form():
    # balanced one-way design: REML = ANOVA estimators, whose variances are
    # Var(MSE) = 2 s2^2 / (a (n-1)) and Var(s2_a) = 2/n^2 [(s2 + n s2_a)^2 / (a-1) + s2^2 / (a (n-1))]
    a, n = 30, 6
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(a), n)
    df = pd.DataFrame({"y": rng.normal(0, 1, a)[g] + rng.normal(0, 0.7, a * n), "g": g})
    fit = lmer("y ~ 1 + (1|g)", df)
    s2a, s2 = fit.variances["g"], fit.variances["Residual"]
    table = fit.varcorr_se.set_index("group").se
    assert table["Residual"] == pytest.approx(np.sqrt(2 * s2**2 / (a * (n - 1))), rel=1e-4)
    assert table["g"] == pytest.approx(np.sqrt(2 / n**2 * ((s2 + n * s2a) ** 2 / (a - 1) + s2**2 / (a * (n - 1)))), rel=1e-4)
