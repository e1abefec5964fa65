"""Inference on clmm fits: GLRTs (compare, nominal_test), reliability on the latent scale, and a small
simulation of interval coverage and type I error (the full one: benchmarks/sim_clmm.py)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.mixed import clmm, compare
from mixeval.mixed import nominal_test


def _study(rng, n_items=30, n_raters=6, effects=(0.0, 0.5, 0.5), rater_sd=0.55, spread=None):
    grid = pd.MultiIndex.from_product([range(n_items), ["A", "B", "C"], range(n_raters)],
                                      names=["item", "system", "rater"]).to_frame(index=False)
    eta = (grid.system.map(dict(zip("ABC", effects))).to_numpy() + rng.normal(0, 1, n_items)[grid.item]
           + rng.normal(0, rater_sd, n_raters)[grid.rater])
    cuts = np.array([-2.0, -0.7, 0.6, 2.0])
    if spread is None:
        grid["rating"] = np.searchsorted(cuts, eta + rng.logistic(size=len(grid))) + 1
    else:  # rater-specific stretching of the scale
        latent = eta + rng.logistic(size=len(grid))
        scale = np.asarray(spread)[grid.rater]
        grid["rating"] = [int(np.searchsorted(cuts * s, v)) + 1 for s, v in zip(scale, latent)]
    grid["item"] = "i" + grid.item.astype(str)
    grid["rater"] = "r" + grid.rater.astype(str)
    grid["bc"] = np.where(grid.system == "A", "A", "BC")
    return grid


def test_glrt_of_nested_fixed_effects():
    df = _study(np.random.default_rng(4))
    full = clmm("rating ~ system + (1|item) + (1|rater)", df)
    null = clmm("rating ~ 1 + (1|item) + (1|rater)", df)
    res = compare(full, null)
    assert res.df == 2.0
    assert res.statistic == pytest.approx(2 * (full.loglik - null.loglik))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        no_rater = clmm("rating ~ system + (1|item)", df)
    res = compare(full, no_rater)
    assert res.df == 1.0 and "pvalue_boundary" in res.details


def test_nominal_test_detects_raters_who_stretch_the_scale():
    rng = np.random.default_rng(7)
    df = _study(rng, n_items=40, rater_sd=0.0, spread=[0.5, 0.5, 1.0, 1.0, 2.0, 2.0])
    res = nominal_test("rating ~ system + (1|item)", df, "rater")
    assert res.df == 15.0 and res.pvalue < 1e-3


def test_reliability_uses_the_latent_residual():
    df = _study(np.random.default_rng(4))
    for link, resid in (("logit", np.pi**2 / 3), ("probit", 1.0)):
        fit = clmm("rating ~ system + (1|item) + (1|rater)", df, link=link)
        comps = fit.components
        expected = comps["item"] / (comps["item"] + comps["rater"] / 3 + resid / 3)
        assert mixeval.phi(fit, item="item", n={"rater": 3}, scale="latent") == pytest.approx(expected, rel=1e-12)
        table = mixeval.dstudy(fit, "item", {"rater": [1, 2, 4]})
        assert len(table) == 3
        best = mixeval.cheapest_design(fit, "item", 0.5, max_n={"rater": 20})
        assert best is not None


def test_small_simulation_coverage_and_type_one_error():
    """30 replicates of the design of benchmarks/sim_clmm.py: effect intervals cover and the GLRT of a true
    null rejects at about its level (binomial bounds for 30 draws: coverage >= 0.8, rejections <= 5 of 30)."""
    rng = np.random.default_rng(11)
    cover, reject = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(30):
            df = _study(rng, n_items=20, n_raters=5)
            full = clmm("rating ~ system + (1|item) + (1|rater)", df)
            null = clmm("rating ~ bc + (1|item) + (1|rater)", df)
            ci = full.confint(method="wald").table
            cover.append(ci.loc["systemB", "lower"] <= 0.5 <= ci.loc["systemB", "upper"])
            reject.append(compare(full, null).pvalue < 0.05)
    assert np.mean(cover) >= 0.8
    assert sum(reject) <= 5


def test_compare_nominal_with_location_thresholds_has_no_boundary_pvalue():
    rng = np.random.default_rng(7)
    df = _study(rng, n_items=40, rater_sd=0.0, spread=[0.5, 0.5, 1.0, 1.0, 2.0, 2.0])
    nominal = clmm("rating ~ system + (1|item)", df, nominal="rater")
    base = clmm("rating ~ system + (1|item)", df)
    res = compare(nominal, base)
    assert res.df == 20.0 and "pvalue_boundary" not in res.details


def test_large_log_start_from_a_subsample_reaches_the_same_optimum(monkeypatch):
    """Above 2 x _START_ROWS rows the theta-only start stage runs on every s-th level of the largest factor;
    it only places the joint optimisation, whose optimum is the same."""
    from mixeval.mixed import _clmm

    rng = np.random.default_rng(8)
    n_items, n_raters = 500, 10
    item, rater = np.repeat(np.arange(n_items), n_raters), np.tile(np.arange(n_raters), n_items)
    latent = 0.4 * (item % 2) + rng.normal(0, 1, n_items)[item] + rng.normal(0, 0.5, n_raters)[rater]
    df = pd.DataFrame({"rating": np.digitize(latent + rng.logistic(size=item.size), [-2, -0.7, 0.6, 2]) + 1,
                       "system": item % 2, "item": item, "rater": rater})
    formula = "rating ~ system + (1|item) + (1|rater)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = clmm(formula, df)
        monkeypatch.setattr(_clmm, "_START_ROWS", 1_000)
        problem = whole.problem
        sub = _clmm._start_rows(problem)
        assert sub is not None and 250 <= sub.nobs < problem.nobs
        big = max(range(len(sub.re.terms)), key=lambda k: sub.re.terms[k].n_levels)
        counts = np.bincount(sub.re.terms[big].codes)
        assert set(counts[counts > 0]) == {n_raters}  # every kept item with all of its raters
        started = clmm(formula, df)
    assert started.loglik == pytest.approx(whole.loglik, rel=1e-9)
    np.testing.assert_allclose(started.theta, whole.theta, rtol=1e-4)
    np.testing.assert_allclose(started.coef, whole.coef, rtol=1e-4)
