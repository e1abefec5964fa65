"""Kenward-Roger for random-slope lmer fits against pbkrtest 0.5.2 and emmeans 1.8.4 (issue 36 item 7).

Fixtures: fixtures/kenward_roger/kr_slopes.json, written by make_kr_slopes.R beside it: for a factor slope
``(1 + system | item)`` (unbalanced), uncorrelated slopes ``(1 + x || g)`` (unbalanced), Barr's crossed
``(1 + x | subject) + (1 | item)`` (balanced), sleepstudy (balanced), a correlation of 0.97, a singular fit at
correlation +1 and a weighted ``(1 + x | g)`` fit: pbkrtest's ``vcovAdj`` (with its ``W`` and ``P``), ``Lb_ddf`` of
the coefficients and of three more linear functions, lmerTest's Satterthwaite df of the same functions, and for the
factor designs emmeans' means and contrasts with ``lmer.df = "kenward-roger"`` and with emmeans' default.

Two sources of the variance parameters: ``"lme4"`` (mixeval's fit with lme4's theta, sigma, fixef and vcov put in:
the computation alone, to 1e-8 relative) and ``"mixeval"`` (mixeval's own REML fit, within about 4e-7 of lme4's
theta: adjusted SEs 1e-5 relative, df 1e-4 relative).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.errors import InputError
from mixeval.mixed import lmer
from mixeval.significance import emmeans, kenward_roger_vcov, pairwise
from mixeval.significance._ddf import (default_df, ddf_pieces, df_inference, kenward_roger_problem,
                                       random_intercept_problem)
from mixeval.significance._kenward_roger import kr_pieces, re_layout

HERE = Path(__file__).parent / "fixtures" / "kenward_roger"
FIXTURES = json.loads((HERE / "kr_slopes.json").read_text())["cases"]
SOURCES = {"lme4": (1e-8, 1e-8), "mixeval": (1e-5, 1e-4)}  # (adjusted SE rtol, df rtol)
_FITS: dict = {}


def _py_formula(formula: str) -> str:
    return formula.replace(" || ", "||").replace(" | ", "|")


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(HERE / FIXTURES[name]["file"])


def _fit(name: str, source: str = "mixeval"):
    key = (name, source)
    if key not in _FITS:
        case = FIXTURES[name]
        if source == "lme4":
            own = _fit(name)
            assert list(own.fixed_names) == case["fixef_names"]
            _FITS[key] = dataclasses.replace(own, theta=np.asarray(case["theta"], dtype=float),
                                             sigma2=float(case["sigma"]) ** 2,
                                             coef=np.asarray(case["fixef"], dtype=float),
                                             cov_coef=np.asarray(case["vcov"], dtype=float))
        else:
            data = _data(name)
            weights = None if case["weights"] is None else data[case["weights"]].to_numpy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the singular case warns
                _FITS[key] = lmer(_py_formula(case["formula"]), data, weights=weights)
    return _FITS[key]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("name", list(FIXTURES))
def test_adjusted_covariance_and_df_are_pbkrtests(name, source):
    case, fit = FIXTURES[name], _fit(name, source)
    se_rtol, df_rtol = SOURCES[source]
    L = np.asarray(case["L"], dtype=float)
    adjusted = kenward_roger_vcov(fit)
    np.testing.assert_allclose(np.sqrt(np.einsum("ij,jk,ik->i", L, adjusted, L)), case["L_kr"]["se"], rtol=se_rtol)
    np.testing.assert_allclose(df_inference(fit, "kenward-roger").df(L), case["L_kr"]["df"], rtol=df_rtol)
    if source == "lme4":
        np.testing.assert_allclose(adjusted, np.asarray(case["vcov_adjusted"]), rtol=1e-8,
                                   atol=1e-10 * np.abs(adjusted).max())


@pytest.mark.parametrize("name", list(FIXTURES))
def test_variance_parameters_are_pbkrtests(name):
    """The same variance parameters in the same order: each term's variances and covariances (lower triangle,
    column-wise), then the residual; W (the expected-information covariance) and P_r = d Phi^-1 / d gamma_r."""
    case, pieces = FIXTURES[name], ddf_pieces(_fit(name, "lme4"))
    P = np.asarray(case["P"], dtype=float)
    assert pieces.P.shape == P.shape
    np.testing.assert_allclose(pieces.P, P, rtol=1e-8, atol=1e-10 * np.abs(P).max())
    W = np.asarray(case["W"], dtype=float)
    np.testing.assert_allclose(pieces.W_expected, W, rtol=1e-7, atol=1e-9 * np.abs(W).max())


@pytest.mark.parametrize("name", list(FIXTURES))
def test_satterthwaite_of_slope_fits_is_lmertests(name):
    """Slope fits keep the engine's Satterthwaite (lmerTest's (theta, sigma)); before, ``(1 + x || g)`` took the
    random-intercept pieces with x's term read as an intercept (df 106 for lmerTest's 14)."""
    case, fit = FIXTURES[name], _fit(name)
    assert random_intercept_problem(fit) == "has random slopes"
    df = df_inference(fit, "satterthwaite").df(np.asarray(case["L"], dtype=float))
    np.testing.assert_allclose(df, case["L_satterthwaite"]["df"], rtol=5e-4)  # both by numerical derivatives


@pytest.mark.parametrize("source", list(SOURCES))
def test_factor_slope_means_and_contrasts_are_emmeans(source):
    case, fit = FIXTURES["factor_slope"], _fit("factor_slope", source)
    se_rtol, df_rtol = SOURCES[source]
    means = emmeans(fit, "system", df="kenward-roger")
    assert means["system"].tolist() == case["emmeans_kr"]["level"]
    np.testing.assert_allclose(means["emmean"], case["emmeans_kr"]["emmean"], rtol=1e-6)
    np.testing.assert_allclose(means["se"], case["emmeans_kr"]["se"], rtol=se_rtol)
    np.testing.assert_allclose(means["df"], case["emmeans_kr"]["df"], rtol=df_rtol)
    pairs = pairwise(fit, "system", df="kenward-roger", adjust="none").table
    for column in ("se", "t"):
        np.testing.assert_allclose(pairs[column], case["pairs_kr"][column], rtol=se_rtol)
    np.testing.assert_allclose(pairs["df"], case["pairs_kr"]["df"], rtol=df_rtol)
    np.testing.assert_allclose(pairs["pvalue"], case["pairs_kr"]["pvalue"], rtol=df_rtol)


def test_study_default_gives_slope_designs_emmeans_kenward_roger():
    """emmeans' default for lmer fits of up to 3,000 rows is Kenward-Roger, random slopes included; before, the
    Study fell back to Satterthwaite for them."""
    case = FIXTURES["factor_slope"]
    study = Study(_data("factor_slope"), _py_formula(case["formula"]))
    means = study.emmeans()
    assert means.attrs["df_method"] == "kenward-roger" and "emmeans'" in means.attrs["df_rule"]
    np.testing.assert_allclose(means["se"], case["emmeans_default"]["se"], rtol=1e-5)
    np.testing.assert_allclose(means["df"], case["emmeans_default"]["df"], rtol=1e-4)
    pairs = study.pairwise(adjust="none")
    assert pairs.df_method == "kenward-roger" and "Kenward-Roger" in pairs.summary()
    np.testing.assert_allclose(pairs.table["df"], case["pairs_kr"]["df"], rtol=1e-4)


def test_weighted_slope_study_uses_the_weighted_residual_covariance():
    case = FIXTURES["weighted"]
    study = Study(_data("weighted"), _py_formula(case["formula"]), weights=case["weights"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        means = study.emmeans("system")
        pairs = study.pairwise("system", adjust="none").table
    assert means.attrs["df_method"] == "kenward-roger"
    np.testing.assert_allclose(means["se"], case["emmeans_kr_weighted"]["se"], rtol=1e-5)
    np.testing.assert_allclose(means["df"], case["emmeans_kr_weighted"]["df"], rtol=1e-4)
    np.testing.assert_allclose(pairs["se"], case["pairs_kr_weighted"]["se"], rtol=1e-5)
    np.testing.assert_allclose(pairs["df"], case["pairs_kr_weighted"]["df"], rtol=1e-4)


@pytest.mark.parametrize("name", ["factor_slope", "uncorrelated", "sleepstudy", "singular", "weighted"])
def test_block_path_equals_dense_path(name):
    """Terms on one grouping factor (``||`` too) use level blocks; the dense q x q path gives the same pieces."""
    fit = _fit(name)
    lay = re_layout(fit.model_terms, fit.theta)
    assert len(lay.n_levels) == 1
    w = None if fit.weights is None else np.sqrt(fit.weights)
    args = (fit.design.X, fit.design.y, lay, fit.sigma2)
    blocks, dense = kr_pieces(*args, root_w=w), kr_pieces(*args, dense=True, root_w=w)
    for attr in ("vcov", "vcov_adjusted", "P", "W_expected"):
        a, b = getattr(blocks, attr), getattr(dense, attr)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max(), err_msg=attr)
    assert blocks.W_observed is None and dense.W_observed is None


def test_kenward_roger_still_needs_a_reml_fit():
    data = _data("barr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer("rt ~ x + (1 + x|subject) + (1|item)", data, REML=False)
    assert kenward_roger_problem(fit) == "was fitted by maximum likelihood (REML=False)"
    assert default_df(fit)[0] == "satterthwaite"
    with pytest.raises(InputError, match="REML=True"):
        kenward_roger_vcov(fit)
    reml = _fit("barr")
    assert kenward_roger_problem(reml) is None and default_df(reml)[0] == "kenward-roger"


def test_crossed_slopes_match_the_n_by_n_formulas():
    """A slope term on the second factor behind a larger intercept factor, and a correlated slope term crossed with
    it (dense path, first factor eliminated block by block): pbkrtest's formulas with n x n matrices."""
    rng = np.random.default_rng(11)
    n = 240
    d = pd.DataFrame({"g": rng.integers(0, 40, n), "h": rng.integers(0, 6, n), "k": rng.integers(0, 5, n),
                      "x": rng.normal(size=n), "s": rng.choice(["A", "B"], n)})
    d["y"] = (rng.normal(size=40)[d.g] + rng.normal(size=6)[d.h] * (1 + d.x) + rng.normal(size=5)[d.k] * d.x
              + 0.3 * d.x + rng.normal(size=n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer("y ~ x + s + (1|g) + (1 + x||h) + (1 + x|k)", d)
    X, s2 = fit.design.X, fit.sigma2
    G, gamma = [], []
    start = 0
    for t in fit.model_terms:
        b = t.X.shape[1]
        rows, cols = np.triu_indices(b)[::-1]
        lam = np.zeros((b, b))
        lam[rows, cols] = fit.theta[start:start + b * (b + 1) // 2]
        start += b * (b + 1) // 2
        cov = s2 * lam @ lam.T
        Zt = np.zeros((n, len(t.levels), b))
        Zt[np.arange(n), t.codes, :] = t.X
        for i, j in zip(rows, cols):
            Zi, Zj = Zt[:, :, i], Zt[:, :, j]
            G.append(Zi @ Zj.T + (Zj @ Zi.T if i != j else 0.0))
            gamma.append(cov[i, j])
    G.append(np.eye(n))
    gamma.append(s2)
    Si = np.linalg.inv(sum(a * b for a, b in zip(gamma, G)))
    Phi = np.linalg.inv(X.T @ Si @ X)
    P = np.array([-X.T @ Si @ Gr @ Si @ X for Gr in G])
    Proj = Si - Si @ X @ Phi @ X.T @ Si
    W = 2 * np.linalg.inv(np.array([[np.trace(Proj @ Gr @ Proj @ Gs) for Gs in G] for Gr in G]))
    U = sum(W[r, s] * (X.T @ Si @ G[r] @ Si @ G[s] @ Si @ X - P[r] @ Phi @ P[s])
            for r in range(len(G)) for s in range(len(G)))
    pieces = ddf_pieces(fit)
    lay = re_layout(fit.model_terms, fit.theta)
    assert lay.n_levels == (d.g.nunique(), 6, 5) and lay.widths == (1, 2, 2) and len(lay.params) == 1 + 2 + 3
    np.testing.assert_allclose(pieces.vcov, Phi, rtol=1e-9)
    np.testing.assert_allclose(pieces.P, P, rtol=1e-8, atol=1e-10 * np.abs(P).max())
    np.testing.assert_allclose(pieces.W_expected, W, rtol=1e-7, atol=1e-10 * np.abs(W).max())
    np.testing.assert_allclose(pieces.vcov_adjusted, Phi + 2 * Phi @ U @ Phi, rtol=1e-8)
