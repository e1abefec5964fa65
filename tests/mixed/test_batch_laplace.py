"""The batched Laplace refits of a block of responses equal the one-at-a-time refits (same optima)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import glmer
from mixeval.mixed._batch_laplace import BatchLaplace, supports_batch


def _data(family: str, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product([range(30), range(3), ["A", "B"]], names=["item", "seed", "system"])
    df = grid.to_frame(index=False)
    eta = 0.3 + 0.4 * (df.system == "B") + rng.normal(0, 1.0, 30)[df.item] + rng.normal(0, 0.3, 3)[df.seed]
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta))) if family == "binomial" else rng.poisson(np.exp(eta))
    return df


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_batch_refits_equal_single_refits(family):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("y ~ system + (1|item) + (1|seed)", _data(family), family=family)
    model = fit.model
    assert supports_batch(model.problem, 1)
    Y = model.simulate(6, np.random.default_rng(1))
    batch = model.refit(Y, reml=False, hessian=True)
    for b in range(Y.shape[1]):
        theta, beta, dev, cov, _ = model._refit_one(Y[:, b], True)
        assert batch[b].criterion == pytest.approx(dev, abs=1e-6)
        np.testing.assert_allclose(batch[b].params[-beta.size:], beta, atol=2e-4)
        np.testing.assert_allclose(np.abs(batch[b].params[:theta.size]), theta, atol=2e-3)
        np.testing.assert_allclose(batch[b].cov_coef, cov, rtol=2e-2, atol=1e-5)


def test_batch_is_refused_for_slopes_and_quadrature():
    df = _data("binomial")
    df["x"] = np.tile(np.linspace(-1, 1, 6), 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slope = glmer("y ~ system + (1 + x|item)", df, family="binomial")
    assert not supports_batch(slope.model.problem, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("y ~ system + (1|item)", df, family="binomial")
    assert not supports_batch(fit.model.problem, 5)
    assert isinstance(BatchLaplace(fit.model.problem), BatchLaplace)


def test_logit_means_and_kernel_are_exact_to_rounding_at_extreme_predictors():
    from scipy.special import expit

    df = _data("binomial")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("y ~ system + (1|item)", df, family="binomial")
    batch = BatchLaplace(fit.model.problem)
    n = fit.model.problem.nobs
    eta = np.linspace(-800.0, 800.0, 2 * n).reshape(2, n)
    eta[1, :7] = [-40.0, -1e-3, 0.0, 1e-3, 40.0, 36.5, -745.5]
    Y = (np.arange(2 * n).reshape(2, n) % 3 == 0).astype(float)
    mu = batch._mean(eta)
    np.testing.assert_allclose(mu, expit(eta), rtol=1e-14, atol=0.0)
    direct = 2.0 * np.sum(np.logaddexp(0.0, eta) - Y * eta, axis=1)
    np.testing.assert_allclose(batch._kernel(Y, eta, mu), direct, rtol=1e-14, atol=1e-12)
