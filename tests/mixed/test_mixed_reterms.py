"""The shared random-effects structure: layout as lme4's mkReTrms, and the dense profiled deviance it
implies equals the engine's sufficient-statistics deviance."""

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import build_design, compute_stats, profiled_deviance
from mixeval.mixed._reterms import ReTerm, ReStructure, build_restructure, theta_to_factors


def _dense_deviance(re: ReStructure, X: np.ndarray, y: np.ndarray, theta: np.ndarray, reml: bool) -> float:
    """Bates et al. (2015) Eqs. 34/41 computed densely from Z, Lambda (a reference, O(n q^2))."""
    n, p = X.shape
    zl = (re.Zt.T @ re.lambdat(theta).T).toarray()
    a = zl.T @ zl + np.eye(re.q)
    ainv = np.linalg.inv(a)
    w = np.column_stack([X, y])
    m = w.T @ w - w.T @ zl @ ainv @ zl.T @ w
    beta = np.linalg.solve(m[:p, :p], m[:p, p])
    r2 = m[p, p] - m[:p, p] @ beta
    logdet_a = np.linalg.slogdet(a)[1]
    if reml:
        return logdet_a + np.linalg.slogdet(m[:p, :p])[1] + (n - p) * (1 + np.log(2 * np.pi * r2 / (n - p)))
    return logdet_a + n * (1 + np.log(2 * np.pi * r2 / n))


@pytest.mark.parametrize("reml", [True, False])
def test_dense_deviance_from_restructure_equals_engine(reml):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"g": rng.integers(0, 7, 60).astype(str), "h": rng.integers(0, 4, 60).astype(str),
                       "x": rng.normal(size=60)})
    df["y"] = rng.normal(size=60) + df.x
    design = build_design("y ~ x + (1|g) + (1|h)", df)
    re = build_restructure(design)
    stats = compute_stats(design)
    theta = np.array([0.7, 1.3])
    assert re.q == sum(g.n_levels for g in design.groups)
    assert re.lower.tolist() == [0.0, 0.0] and re.theta0.tolist() == [1.0, 1.0]
    dense = _dense_deviance(re, design.X, design.y, theta, reml)
    assert dense == pytest.approx(profiled_deviance(stats, theta, reml), rel=1e-10)


def test_vector_term_layout_as_lme4():
    codes = np.array([0, 0, 1, 1, 1])
    x = np.array([0.5, 1.0, -1.0, 2.0, 3.0])
    term = ReTerm("subject", ("(Intercept)", "x"), codes, ("s1", "s2"), np.column_stack([np.ones(5), x]))
    re = ReStructure((term,), nobs=5)
    assert re.n_theta == 3 and re.q == 4
    assert re.lower.tolist() == [0.0, -np.inf, 0.0]
    assert re.theta0.tolist() == [1.0, 0.0, 1.0]
    zt = re.Zt.toarray()
    # level s1: columns 0 (intercept), 1 (slope); level s2: columns 2, 3
    assert zt[0].tolist() == [1, 1, 0, 0, 0] and zt[1].tolist() == [0.5, 1.0, 0, 0, 0]
    assert zt[3].tolist() == [0, 0, -1.0, 2.0, 3.0]
    theta = np.array([2.0, 0.3, 0.5])
    lam = theta_to_factors(re.terms, theta)[0]
    assert np.allclose(re.lambdat(theta).toarray()[:2, :2], lam.T)
    assert np.allclose(re.covariances(theta, sigma=2.0)[0], 4.0 * lam @ lam.T)
