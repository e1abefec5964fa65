"""Multiple-membership random-effects terms (each row loads on two levels): Z', the Laplace deviance against a
dense computation, and agreement with an ordinary term when the second loading is zero. (The lme4 comparison
of a fitted model is in tests/preferences/test_preferences_vs_r.py.)"""

import numpy as np
import pytest
from scipy.special import expit

from mixeval.mixed._family import get_family
from mixeval.mixed._pirls import GlmmProblem, laplace_deviance, pirls
from mixeval.mixed._reterms import ReStructure, ReTerm


def _problem(second: float, rng=np.random.default_rng(0)):
    n, L = 400, 12
    c1 = rng.integers(0, L, n)
    c2 = (c1 + rng.integers(1, L, n)) % L
    g = rng.integers(0, 5, n)
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    u = rng.normal(0, 0.8, L)
    y = (rng.random(n) < expit(0.3 + 0.5 * X[:, 1] + u[c1] - second * u[c2])).astype(float)
    mm = ReTerm("system:judge", ("(Intercept)",), c1, tuple(map(str, range(L))), np.ones((n, 1)),
                codes2=c2, X2=-second * np.ones((n, 1)))
    other = ReTerm("g", ("(Intercept)",), g, tuple("abcde"), np.ones((n, 1)))
    return GlmmProblem(y=y, X=X, weights=np.ones(n), offset=np.zeros(n), re=ReStructure((other, mm), n),
                       family=get_family("binomial")), c1, c2, g


def test_zt_loads_plus_and_minus():
    prob, c1, c2, g = _problem(1.0)
    zt = prob.re.Zt.toarray()
    assert zt.shape == (5 + 12, 400)
    rows = np.arange(400)
    np.testing.assert_array_equal(zt[5 + c1, rows], 1.0)
    np.testing.assert_array_equal(zt[5 + c2, rows], -1.0)
    np.testing.assert_array_equal(zt[g, rows], 1.0)
    assert prob.block_term() == 0  # the multiple-membership term is never the block-diagonal one


def test_laplace_deviance_equals_dense_computation():
    prob, *_ = _problem(1.0)
    theta, beta = np.array([0.6, 0.9]), np.array([0.2, 0.4])
    st = pirls(prob, theta, beta)
    zl = (prob.re.Zt.T @ prob.re.lambdat(theta).T).toarray()
    # the mode minimises the penalised deviance: check stationarity and the Laplace formula densely
    eta = prob.X @ beta + zl @ st.u
    mu = expit(eta)
    np.testing.assert_allclose(zl.T @ (prob.y - mu) - st.u, 0.0, atol=1e-8)
    w = mu * (1 - mu)
    a = zl.T @ (zl * w[:, None]) + np.eye(zl.shape[1])
    dense = -2 * np.sum(prob.y * np.log(mu) + (1 - prob.y) * np.log(1 - mu)) + st.u @ st.u + np.linalg.slogdet(a)[1]
    assert laplace_deviance(prob, st) == pytest.approx(dense, rel=1e-10)


def test_zero_second_loading_equals_the_ordinary_term():
    prob, c1, _, g = _problem(0.0)
    plain = GlmmProblem(y=prob.y, X=prob.X, weights=prob.weights, offset=prob.offset, family=prob.family,
                        re=ReStructure((prob.re.terms[0], ReTerm("system:judge", ("(Intercept)",), c1,
                                                                 prob.re.terms[1].levels, np.ones((400, 1)))), 400))
    theta, beta = np.array([0.5, 1.1]), np.array([0.1, 0.3])
    a, b = pirls(prob, theta, beta), pirls(plain, theta, beta)
    assert laplace_deviance(prob, a) == pytest.approx(laplace_deviance(plain, b), rel=1e-10)
