"""The clmm's start: the quadratic-expansion criterion (closed form, exact gradient) and where it places theta."""

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import build_design
from mixeval.mixed._clmm import (
    ClmmDeviance,
    clmm_problem,
    optimize_clmm,
    quadratic_deviance,
    quadratic_start,
)
from mixeval.mixed._ordinal import get_ordinal, ordered_response, row_derivatives


def _problem(formula: str, df: pd.DataFrame, link: str = "logit"):
    resp = ordered_response(df["rating"], None)
    design = build_design(formula, df.assign(rating=resp.codes.astype(float)))
    return clmm_problem(design, resp, get_ordinal(link, "flexible"))[0]


def _crossed(n_items: int, n_raters: int, sd_item: float, sd_rater: float, seed: int, link: str = "logit"):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), n_raters)
    rater = np.tile(np.arange(n_raters), n_items)
    system = item % 2
    noise = rng.logistic(size=item.size) if link == "logit" else rng.normal(size=item.size)
    latent = 0.5 * system + rng.normal(0, sd_item, n_items)[item] + rng.normal(0, sd_rater, n_raters)[rater] + noise
    return pd.DataFrame({"rating": np.digitize(latent, [-1.5, -0.5, 0.5, 1.5]) + 1, "system": system.astype(str),
                         "item": item.astype(str), "rater": rater.astype(str)})


def _fixed(problem) -> np.ndarray:
    return optimize_clmm(ClmmDeviance(problem.without_random_effects())).theta


def test_single_intercept_closed_form():
    """One random intercept: D(theta) = sum_j log(1 + W_j theta^2) - S_j^2 theta^2 / (1 + W_j theta^2)."""
    df = _crossed(40, 6, 1.0, 0.0, 1)
    problem = _problem("rating ~ system + (1|item)", df)
    dev = ClmmDeviance(problem)
    fixed = _fixed(problem)
    fg = quadratic_deviance(dev, fixed)
    alpha, beta = fixed[:problem.n_alpha], fixed[problem.n_alpha:]
    a, b = problem.arguments(alpha, problem.X @ beta)
    rows = row_derivatives("logit", a, b)
    codes = problem.re.terms[0].codes
    S = np.bincount(codes, weights=rows.r)
    W = np.bincount(codes, weights=rows.w)
    for t in (0.3, 0.9, 1.7):
        closed = np.sum(np.log1p(W * t * t) - S**2 * t * t / (1 + W * t * t))
        assert fg(np.array([t]))[0] == pytest.approx(closed, rel=1e-10)


@pytest.mark.parametrize("formula, link", [
    ("rating ~ system + (1|item) + (1|rater)", "logit"),
    ("rating ~ system + (1|item) + (1|rater)", "probit"),
    ("rating ~ system + (1|rater) + (1|rater:system)", "logit"),
])
def test_gradient_matches_differences(formula, link):
    df = _crossed(30, 5, 0.8, 0.5, 2, link)
    problem = _problem(formula, df, link)
    fg = quadratic_deviance(ClmmDeviance(problem), _fixed(problem))
    t = np.array([0.7, 0.4])
    _, grad = fg(t)
    for k in range(2):
        h = 1e-6
        up, down = t.copy(), t.copy()
        up[k] += h
        down[k] -= h
        assert grad[k] == pytest.approx((fg(up)[0] - fg(down)[0]) / (2 * h), rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_start_near_the_laplace_optimum(seed):
    """Simulated crossed ratings with known SDs 1.0 and 0.6: the start lies within 20% of the Laplace optimum, and
    the fit reaches the same optimum as from lme4's start at 1."""
    df = _crossed(80, 8, 1.0, 0.6, seed)
    problem = _problem("rating ~ system + (1|item) + (1|rater)", df)
    fixed = _fixed(problem)
    start = quadratic_start(ClmmDeviance(problem), fixed)
    fit = optimize_clmm(ClmmDeviance(problem))
    np.testing.assert_allclose(start, fit.theta[:2], rtol=0.2)
    from_one = optimize_clmm(ClmmDeviance(problem), x0=np.concatenate([np.ones(2), fixed]))
    assert fit.deviance == pytest.approx(from_one.deviance, abs=1e-8)
    np.testing.assert_allclose(fit.theta, from_one.theta, rtol=1e-4, atol=1e-5)


def test_floor_keeps_a_zero_component_off_zero():
    """A rater variance of 0: the start is at the floor (0.1), never at 0 where the deviance is stationary."""
    df = _crossed(80, 6, 1.0, 0.0, 6)
    problem = _problem("rating ~ system + (1|item) + (1|rater)", df)
    start = quadratic_start(ClmmDeviance(problem), _fixed(problem))
    assert np.all(start >= 0.1)
