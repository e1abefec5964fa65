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


def _crossed(n_a=400, n_b=60, per_a=8, seed=5):
    rng = np.random.default_rng(seed)
    counts = rng.integers(2, 2 * per_a, n_a)
    a = np.repeat(np.arange(n_a), counts)
    b = np.concatenate([rng.choice(n_b, c, replace=False) for c in counts])
    x = rng.normal(size=a.size)
    y = 0.8 * rng.normal(size=n_a)[a] + 0.5 * rng.normal(size=n_b)[b] + 0.3 * x + rng.normal(size=a.size)
    return pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "x": x, "y": y})


@pytest.mark.parametrize("reml", [True, False])
def test_average_information_approximates_the_hessian_at_the_optimum(reml):
    """The average information (no traces, k + p solves) is within a few percent of the exact Hessian
    (finite differences of the exact gradient) at the optimum of a design with many levels."""
    from mixeval.mixed import build_design, compute_stats
    from mixeval.mixed._deviance import average_information, deviance_and_gradient
    from mixeval.mixed._optimize import finite_difference_hessian, optimize_theta

    stats = compute_stats(build_design("y ~ x + (1|a) + (1|b)", _crossed()))
    opt = optimize_theta(stats, reml)
    fg = lambda t: deviance_and_gradient(stats, np.abs(t), reml)  # noqa: E731
    exact = finite_difference_hessian(fg, opt.theta, fg(opt.theta)[1])
    approx = average_information(stats, opt.theta, reml)
    np.testing.assert_allclose(approx, exact, rtol=0.02, atol=0.01 * np.abs(exact).max())


def test_hessian_rows_left_nan_are_finite_differences():
    """minimize_deviance completes a partial Hessian: NaN rows by forward differences of the gradient."""
    from mixeval.mixed._optimize import _complete_hessian

    def fg(t):
        return float(t[0] ** 2 + 3 * t[0] * t[1] + 5 * t[1] ** 2), np.array([2 * t[0] + 3 * t[1], 3 * t[0] + 10 * t[1]])

    theta = np.array([0.5, 1.0])
    partial = np.array([[2.0, np.nan], [np.nan, np.nan]])
    np.testing.assert_allclose(_complete_hessian(fg, theta, fg(theta)[1], partial), [[2.0, 3.0], [3.0, 10.0]], rtol=1e-6)


def test_moment_start_is_the_anova_estimate_for_balanced_one_way_data():
    """Henderson's Method 1 on balanced data is the ANOVA estimator, (MSB - MSW) / n over MSW for theta^2."""
    from mixeval.mixed import build_design, compute_stats
    from mixeval.mixed._start import moment_start

    rng = np.random.default_rng(2)
    a, n = 12, 5
    g = np.repeat(np.arange(a), n)
    y = 1.5 * rng.normal(size=a)[g] + rng.normal(size=a * n)
    df = pd.DataFrame({"g": g.astype(str), "y": y})
    means = df.groupby("g").y.mean()
    msb = n * float(((means - y.mean()) ** 2).sum()) / (a - 1)
    msw = float(((df.y - df.g.map(means)) ** 2).sum()) / (a * (n - 1))
    start = moment_start(compute_stats(build_design("y ~ 1 + (1|g)", df)))
    assert start[0] == pytest.approx(np.sqrt((msb - msw) / n / msw), rel=1e-10)


def test_zero_candidates_from_the_even_model():
    """D = A t^2 + B t^4 (A > 0) qualifies at any t; (t^2 - t*^2)^2 never does, at any t > 0."""
    from mixeval.mixed._optimize import _zero_candidates

    logs = np.array([True])
    for t in (0.01, 0.3, 2.0):
        for a, b in ((1.0, 0.0), (0.5, 2.0), (1.0, -0.5)):
            g, h = 2 * a * t + 4 * b * t**3, 2 * a + 12 * b * t**2
            zero, predicted = _zero_candidates(np.array([t]), np.array([g]), np.array([[h]]), logs)
            assert zero.all() and predicted == pytest.approx(a * t**2 + b * t**4, rel=1e-9)
        for star in (0.05, 0.5):
            g, h = 4 * t * (t * t - star**2), 4 * (3 * t * t - star**2)
            assert not _zero_candidates(np.array([t]), np.array([g]), np.array([[h]]), logs)[0].any()
    assert not _zero_candidates(np.array([0.3]), np.array([0.6]), np.array([[2.0]]), np.array([False]))[0].any()


def test_a_minimum_at_zero_is_reached_in_few_steps(monkeypatch):
    """An even deviance with its minimum at 0 (log(1 + t^2) + t^2 beside an interior coordinate): log steps alone
    cut t by about exp(-1/2) per iteration; after two such cuts 0 itself is tried, and the optimum is exactly 0."""
    from mixeval.mixed import _optimize

    def fg(t):
        value = float(np.log1p(t[0] ** 2) + t[0] ** 2 + (t[1] - 0.7) ** 2 + 0.1 * t[0] ** 2 * t[1])
        return value, np.array([2 * t[0] / (1 + t[0] ** 2) + 2 * t[0] + 0.2 * t[0] * t[1],
                                2 * (t[1] - 0.7) + 0.1 * t[0] ** 2])

    res = minimize_deviance(fg, np.array([1.0, 1.0]), np.zeros(2))
    monkeypatch.setattr(_optimize, "_zero_candidates", lambda x, g, h, logs: (np.zeros_like(logs), 0.0))
    slow = minimize_deviance(fg, np.array([1.0, 1.0]), np.zeros(2))
    assert res.theta[0] == 0.0 and slow.theta[0] == 0.0
    assert res.theta[1] == pytest.approx(0.7, abs=1e-7)
    assert res.n_evaluations < slow.n_evaluations - 5
