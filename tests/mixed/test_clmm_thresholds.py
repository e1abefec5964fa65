"""Random rater thresholds (shift and spread per rater): the Laplace engine against closed cases and direct
integration, the parameterisation's invariances, the fit and the spread GLRT.

ordinal::clmm cannot fit this model; the references are the fit without spreads (the same model when the
spread variance is 0), direct numerical integration of the marginal likelihood, and simulation
(benchmarks/sim_random_thresholds.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

from mixeval.errors import InputError
from mixeval.mixed import ClmmResult, clmm, threshold_spread_test
from mixeval.mixed._clmm import ClmmDeviance
from mixeval.mixed._clmm_thresholds import RandomThresholdDeviance, random_threshold_problem, spread_contrast

THETA = np.array([-2.0, -0.7, 0.7, 2.0])


def ratings(seed: int, n_raters: int, n_items: int, spread_sd: float, shift_sd: float = 0.5,
            item_sd: float = 1.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rater = np.repeat(np.arange(n_raters), n_items)
    item = np.tile(np.arange(n_items), n_raters)
    system = item % 2
    shift = rng.normal(0, shift_sd, n_raters)
    spread = rng.normal(0, spread_sd, n_raters)
    latent = 0.5 * system + rng.normal(0, item_sd, n_items)[item] + rng.logistic(size=rater.size)
    cuts = THETA[None, :] + spread[:, None] * spread_contrast(4)[None, :] - shift[:, None]
    rating = (latent[:, None] > cuts[rater]).sum(axis=1) + 1
    return pd.DataFrame({"rating": rating, "system": np.where(system == 1, "B", "A"), "item": item, "rater": rater})


def _null_point(fit) -> np.ndarray:
    """``(theta, alpha, beta)`` of a fit in :class:`~mixeval.mixed._clmm.ClmmDeviance`'s layout."""
    return np.concatenate([fit.theta, fit.alpha, fit.coef])


def widened_point(null, spread_column=(0.0, 0.0)) -> np.ndarray:
    """The fit without spreads in the widened layout (the rater's L21, L22 given)."""
    x = _null_point(null)
    k0 = null.problem.re.n_theta
    r = [t.group for t in null.problem.re.terms].index("rater")
    theta = x[:k0]
    return np.concatenate([theta[:r], [theta[r], *spread_column], theta[r + 1:], x[k0:]])


@pytest.fixture(scope="module")
def crossed():
    df = ratings(11, 12, 25, 0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        null = clmm("rating ~ system + (1|item) + (1|rater)", df)
    return df, null


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_zero_spread_is_the_model_without_spreads(link):
    df = ratings(3, 10, 20, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        null = clmm("rating ~ system + (1|item) + (1|rater)", df, link=link)
    dev = RandomThresholdDeviance(random_threshold_problem(null.problem, "rater"))
    x = widened_point(null)
    base = ClmmDeviance(null.problem)
    assert dev.deviance(x) == pytest.approx(base.deviance(_null_point(null)), rel=1e-11)
    # and at another point than the optimum
    x2 = x.copy()
    x2[0] *= 1.3
    p2 = _null_point(null)
    p2[0] *= 1.3
    assert dev.deviance(x2) == pytest.approx(ClmmDeviance(null.problem).deviance(p2), rel=1e-11)


def test_contrast_scale_and_centring_leave_the_deviance_unchanged(crossed):
    df, null = crossed
    d = spread_contrast(4)
    x = widened_point(null, (0.2, 0.5))
    k = [t.group for t in null.problem.re.terms].index("rater")
    start = sum(t.n_theta for t in null.problem.re.terms[:k])
    L = np.array([[x[start], 0.0], [x[start + 1], x[start + 2]]])
    value = RandomThresholdDeviance(random_threshold_problem(null.problem, "rater")).deviance(x)

    def with_factor(contrast, factor):
        y = x.copy()
        y[start:start + 3] = factor[0, 0], factor[1, 0], factor[1, 1]
        return RandomThresholdDeviance(random_threshold_problem(null.problem, "rater", contrast=contrast)).deviance(y)

    # k d with spreads s / k: Sigma's spread row scaled by 1 / k
    scaled = np.diag([1.0, 0.5]) @ L
    assert with_factor(2.0 * d, scaled) == pytest.approx(value, rel=1e-9)
    # d + c with (shift, spread) -> (shift + c spread, spread): Sigma -> T Sigma T'
    c = 0.7
    T = np.array([[1.0, c], [0.0, 1.0]])
    centred = np.linalg.cholesky(T @ L @ L.T @ T.T)
    assert with_factor(d + c, centred) == pytest.approx(value, rel=1e-9)


def test_laplace_deviance_close_to_direct_integration():
    """One rater term (no other random effects): the marginal likelihood is a product over raters of 2-D
    integrals, computed on a fine grid (401 x 401 points over +-6 sd); with 120 ratings per rater Laplace's
    error is small."""
    rng = np.random.default_rng(7)
    n_raters, per = 5, 120
    rater = np.repeat(np.arange(n_raters), per)
    shift, spread = rng.normal(0, 0.6, n_raters), rng.normal(0, 0.5, n_raters)
    latent = rng.logistic(size=rater.size)
    cuts = THETA[None, :] + spread[:, None] * spread_contrast(4)[None, :] - shift[:, None]
    df = pd.DataFrame({"rating": (latent[:, None] > cuts[rater]).sum(axis=1) + 1, "rater": rater})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        null = clmm("rating ~ 1 + (1|rater)", df)
    problem = random_threshold_problem(null.problem, "rater")
    L = np.array([[0.6, 0.0], [0.1, 0.45]])
    alpha = np.asarray(null.alpha, dtype=float)
    x = np.concatenate([[L[0, 0], L[1, 0], L[1, 1]], alpha])
    laplace = -0.5 * RandomThresholdDeviance(problem).deviance(x)

    grid = np.linspace(-6.0, 6.0, 401)
    z1, z2 = np.meshgrid(grid, grid, indexing="ij")
    cs = np.stack([z1.ravel(), z2.ravel()]).T @ L.T  # (c, s) at each grid point
    log_prior = -0.5 * (z1.ravel() ** 2 + z2.ravel() ** 2) - np.log(2 * np.pi)
    h = grid[1] - grid[0]
    theta_ext = np.concatenate([[-np.inf], alpha, [np.inf]])
    d_ext = np.concatenate([[0.0], spread_contrast(4), [0.0]])
    y = problem.base.y
    exact = 0.0
    for r in range(n_raters):
        rows = np.flatnonzero(rater == r)
        total = log_prior.copy()
        for j in range(5):
            count = int(np.sum(y[rows] == j))
            if count:
                up = special.expit(theta_ext[j + 1] + cs[:, 1] * d_ext[j + 1] - cs[:, 0])
                lo = special.expit(theta_ext[j] + cs[:, 1] * d_ext[j] - cs[:, 0])
                with np.errstate(invalid="ignore", divide="ignore"):  # crossing thresholds (|s| beyond 3 sd): no mass
                    total += count * np.where(up > lo, np.log(np.maximum(up - lo, 1e-300)), -np.inf)
        top = total.max()
        exact += top + np.log(np.sum(np.exp(total - top)) * h * h)
    # Laplace's error is O(1 / ratings per rater) per rater: 0.011 here, 0.004 with 480 ratings per rater
    assert laplace == pytest.approx(exact, abs=4e-3 * n_raters)
    assert laplace != pytest.approx(exact, abs=1e-6)  # an approximation, not the integral


def test_fit_improves_on_the_model_without_spreads_and_recovers_a_large_spread():
    df = ratings(5, 30, 30, 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = threshold_spread_test("rating ~ system + (1|item) + (1|rater)", df, "rater")
    alt, null = res.details["alternative"], res.details["null"]
    assert isinstance(alt, ClmmResult) and alt.spread == "rater" and null.spread is None
    assert alt.loglik >= null.loglik - 1e-8
    assert res.pvalue < 1e-3
    spread_sd = float(alt.varcorr.set_index(["group", "name"]).loc[("rater", "spread"), "std"])
    assert 0.5 < spread_sd < 1.4
    assert res.statistic == pytest.approx(2 * (alt.loglik - null.loglik))
    # the mixture p-value lies between those of chi2(1) and chi2(2)
    assert res.pvalue <= res.details["pvalue_naive"]
    modes = alt.ranef["rater"]
    assert list(modes.columns) == ["(Intercept)", "spread"] and len(modes) == 30
    # the spread modes follow the simulated spreads' order
    rng = np.random.default_rng(5)
    rng.normal(0, 0.5, 30)
    true_spread = rng.normal(0, 0.9, 30)
    assert np.corrcoef(true_spread, modes["spread"])[0, 1] > 0.7
    assert "Random thresholds: level r of rater" in alt.summary()
    assert alt.to_dict()["loglik"] == alt.loglik


def test_clmm_keyword_returns_the_random_thresholds_fit(crossed):
    df, null = crossed
    fit = clmm("rating ~ system + (1|item) + (1|rater)", df, random_thresholds="rater")
    assert isinstance(fit, ClmmResult) and fit.spread == "rater"
    assert fit.loglik >= null.loglik - 1e-8
    assert fit.n_params == null.n_params + 2
    assert list(fit.thresholds.index) == ["1|2", "2|3", "3|4", "4|5"]


def test_refusals(crossed):
    df, _ = crossed
    with pytest.raises(InputError, match=r"\(1\|rater\)"):
        clmm("rating ~ system + (1|item)", df, random_thresholds="rater")
    with pytest.raises(InputError, match="not a column"):
        clmm("rating ~ system + (1|item) + (1|rater)", df, random_thresholds="judge")
    with pytest.raises(InputError, match="nominal"):
        clmm("rating ~ system + (1|item) + (1|rater)", df, random_thresholds="rater", nominal="system")
    with pytest.raises(InputError, match="flexible"):
        clmm("rating ~ system + (1|item) + (1|rater)", df, random_thresholds="rater", threshold="equidistant")
    two = df.assign(rating=(df.rating > 3).astype(int) + 1)
    with pytest.raises(InputError, match="3 or more"):
        clmm("rating ~ system + (1|item) + (1|rater)", two, random_thresholds="rater")


def test_exact_gradient_refuses_adaptive_quadrature():
    """ClmmDeviance.deviance_and_gradient is Laplace's; with nAGQ > 1 it refuses instead of returning Laplace's."""
    df = ratings(2, 8, 15, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = clmm("rating ~ system + (1|rater)", df, nAGQ=5)
    dev = ClmmDeviance(fit.problem, 5)
    with pytest.raises(ValueError, match="fun_and_grad"):
        dev.deviance_and_gradient(_null_point(fit))
    value, grad = dev.fun_and_grad()(_null_point(fit))
    assert value == pytest.approx(dev.deviance(_null_point(fit))) and grad.shape == _null_point(fit).shape
