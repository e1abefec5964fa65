"""minimize_deviance's contract: bounded coordinates (>= 0, even deviance), unbounded ones, hess=, scale-free."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import build_design, compute_stats
from mixeval.mixed._optimize import finite_difference_gradient, minimize_deviance, optimize_theta


def _quadratic(centre, scale=1.0):
    centre = np.asarray(centre, float)

    def fg(t):
        d = t - centre
        return scale * float(d @ d + 0.3 * d[0] * d[-1]), scale * (2 * d + 0.3 * np.array([d[-1], *[0] * (d.size - 2), d[0]]))

    return fg


def test_unbounded_coordinates_and_interior_optimum():
    fg = _quadratic([2.0, -3.0])
    res = minimize_deviance(fg, np.array([1.0, 0.0]), np.array([0.0, -np.inf]))
    np.testing.assert_allclose(res.theta, [2.0, -3.0], atol=1e-8)
    assert res.converged and res.n_evaluations < 20


def test_optimum_on_the_bound_is_reached_exactly():
    fg = _quadratic([-1.0, 0.5])  # the first coordinate wants to be negative: optimum at its bound 0
    res = minimize_deviance(fg, np.array([1.0, 1.0]), np.array([0.0, 0.0]))
    assert res.theta[0] == 0.0
    assert res.theta[1] == pytest.approx(0.5 - 0.15, abs=1e-7)  # d/dt1: 2 (t1 - 0.5) + 0.3 (0 + 1) = 0


def test_even_deviance_zero_is_left_when_it_is_not_the_minimum():
    def fg(t):  # even in t, minimum at |t| = 1.5, stationary at 0
        return float((t[0] ** 2 - 2.25) ** 2), np.array([4 * t[0] * (t[0] ** 2 - 2.25)])

    res = minimize_deviance(fg, np.array([0.0]), np.array([0.0]))
    assert res.theta[0] == pytest.approx(1.5, rel=1e-8)


def test_given_hessian_and_finite_difference_gradient():
    f = lambda t: float(np.sum((t - np.array([0.7, 1.9])) ** 4) + np.sum((t - np.array([0.7, 1.9])) ** 2))  # noqa: E731
    hess = lambda t: np.diag(12 * (t - np.array([0.7, 1.9])) ** 2 + 2)  # noqa: E731
    res = minimize_deviance(finite_difference_gradient(f), np.ones(2), np.zeros(2), hess=hess)
    np.testing.assert_allclose(res.theta, [0.7, 1.9], atol=1e-6)


@pytest.mark.parametrize("reml", [True, False])
def test_result_does_not_depend_on_the_response_scale(reml):
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(40), 6)
    h = np.tile(np.arange(6), 40)
    y = rng.normal(size=40)[g] + 0.5 * rng.normal(size=6)[h] + rng.normal(size=g.size)
    fits = []
    for scale in (1e-6, 1.0, 1e6):
        df = pd.DataFrame({"y": y * scale, "g": g.astype(str), "h": h.astype(str)})
        fits.append(optimize_theta(compute_stats(build_design("y ~ 1 + (1|g) + (1|h)", df)), reml))
    for fit in fits[1:]:
        np.testing.assert_allclose(fit.theta, fits[0].theta, rtol=1e-7)
        assert fit.n_evaluations == pytest.approx(fits[0].n_evaluations, abs=6)
