"""Degrees-of-freedom methods and trends against R (emmeans 1.8.4 with pbkrtest and lmerTest).

Fixtures: tests/significance/fixtures/df_trend_fixtures.json (make_df_trend_fixtures.R): for each
case and each ``lmer.df`` ("asymptotic", "satterthwaite", "kenward-roger"), the emmeans or emtrends
table and the pairwise contrasts with Tukey, no and Holm adjustment. Cases: an unbalanced crossed
item x rater design (Satterthwaite and Kenward-Roger differ), a singular fit of the same design, slopes of a numeric property there,
the book's Tables 4.2 and 4.3 (7,287 rows; emmeans' row limits raised; Table 4.3's contrasts within
each length class) and the slopes of TER in src_length.

Two sources of the variance parameters:
* ``"lme4"``: mixeval's fit with lme4's theta, sigma, fixef and vcov put in (from the fixture), which
  isolates the df computations from the optimiser's tolerance. Tolerances: estimates and interval ends
  1e-6 relative to the scale of the estimates; SE, statistics and df 1e-6 relative (lmerTest's
  numerical derivatives carry about 1e-8 relative noise: it gives 6243.9999 for Table 4.2's 6244);
  p-values 1e-6 absolute (Tukey included). Exception: Satterthwaite df of the singular fit, 5e-6
  (lmerTest's numerical derivatives at the boundary).
* ``"mixeval"``: mixeval's own fit (variance components within about 2e-6 relative of lme4's):
  the same tolerances except df and SE, 2e-5 relative (df of small designs move with the variance
  estimates).
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import lmer
from mixeval.significance import emmeans, emtrends, pairwise, pairwise_trends

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
FIXTURES = json.loads((HERE / "fixtures" / "df_trend_fixtures.json").read_text())
CASES = {c["name"]: c for c in FIXTURES["cases"]}
DFS = ["asymptotic", "satterthwaite", "kenward-roger"]
ADJUSTS = ["tukey", "none", "holm"]

REL = 1e-6
P_TOL = 1e-6
SOURCES = {"lme4": (REL, REL), "mixeval": (2e-5, 2e-5)}  # (df rtol, se rtol)
# lmerTest differentiates numerically; at a boundary (theta = 0) its Satterthwaite df carry about 2e-6
# relative error (mixeval's are analytic, with the boundary component held fixed)
DF_RTOL = {("singular_rater", "satterthwaite"): 5e-6}

_FITS: dict = {}


def _num(v) -> float:
    return np.inf if v == "Inf" else float(v)


def _fit(case: dict, request, source: str = "mixeval"):
    name = case["name"]
    if source == "lme4":
        key = (name, "lme4")
        if key not in _FITS:
            own = _fit(case, request)
            ref = case["fit"]
            assert list(own.fixed_names) == ref["fixef_names"]
            _FITS[key] = dataclasses.replace(own, theta=np.asarray(ref["theta"], dtype=float),
                                             sigma2=float(ref["sigma"]) ** 2, coef=np.asarray(ref["fixef"], dtype=float),
                                             cov_coef=np.column_stack(ref["vcov"]))
        return _FITS[key]
    if name not in _FITS:
        source = case["data"]["file"]
        if source.startswith("bookdata/"):
            df = pd.read_csv(request.getfixturevalue("bookdata") / source.split("/", 1)[1])
            if "cls" in (case["data"].get("preprocess") or ""):
                df["cls"] = np.array(["short", "typical", "very long"])[
                    (df.src_length > 15).astype(int) + (df.src_length > 55).astype(int)]
        else:
            df = pd.read_csv(ROOT / source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITS[name] = lmer(case["formula_py"], df, REML=case["REML"])
    return _FITS[name]


def _compare(ours: pd.DataFrame, ref: list[dict], est_col: str, stat_col: str | None, source: str,
             df_rtol: float | None = None) -> None:
    df_rtol = max(SOURCES[source][0], df_rtol or 0.0)
    se_rtol = SOURCES[source][1]
    assert len(ours) == len(ref)
    est = np.array([r["estimate"] for r in ref])
    scale = np.max(np.abs(est)) + np.max([r["SE"] for r in ref])
    np.testing.assert_allclose(ours[est_col], est, rtol=0, atol=REL * scale)
    np.testing.assert_allclose(ours["se"], [r["SE"] for r in ref], rtol=se_rtol)
    np.testing.assert_allclose(ours["df"], [_num(r["df"]) for r in ref], rtol=df_rtol)
    np.testing.assert_allclose(ours["lower"], [r["LCL"] for r in ref], rtol=0, atol=REL * scale)
    np.testing.assert_allclose(ours["upper"], [r["UCL"] for r in ref], rtol=0, atol=REL * scale)
    if stat_col is not None:
        np.testing.assert_allclose(ours[stat_col], [r["ratio"] for r in ref], rtol=se_rtol)
        np.testing.assert_allclose(ours["pvalue"], [r["p.value"] for r in ref], rtol=0, atol=P_TOL)


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("dfm", DFS)
@pytest.mark.parametrize("name", list(CASES))
def test_means_or_trends_match_emmeans(name, dfm, source, request):
    case = CASES[name]
    fit = _fit(case, request, source)
    ref = case["results"][dfm]["means"]
    if case["var"] is None:
        ours = emmeans(fit, case["specs"], by=case["by"], df=dfm)
        _compare(ours, ref, "emmean", None, source, DF_RTOL.get((name, dfm)))
    else:
        ours = emtrends(fit, case["specs"], case["var"], df=dfm)
        _compare(ours, ref, "trend", None, source, DF_RTOL.get((name, dfm)))
    keys = [case["specs"]] + ([case["by"]] if case["by"] else [])
    assert [tuple(str(v) for v in row) for row in ours[keys].itertuples(index=False)] == [
        tuple(r[k] for k in keys) for r in ref]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("adjust", ADJUSTS)
@pytest.mark.parametrize("dfm", DFS)
@pytest.mark.parametrize("name", list(CASES))
def test_contrasts_match_emmeans(name, dfm, adjust, source, request):
    case = CASES[name]
    fit = _fit(case, request, source)
    ref = case["results"][dfm]["contrasts"][adjust]
    if case["var"] is None:
        res = pairwise(fit, case["specs"], by=case["by"], adjust=adjust, df=dfm)
    else:
        res = pairwise_trends(fit, case["specs"], case["var"], adjust=adjust, df=dfm)
    assert list(res.table["contrast"]) == [r["contrast"] for r in ref]
    if case["by"]:
        assert list(res.table[case["by"]].astype(str)) == [r[case["by"]] for r in ref]
    _compare(res.table, ref, "estimate", "z" if dfm == "asymptotic" else "t", source, DF_RTOL.get((name, dfm)))
    assert res.df_method == dfm
    np.testing.assert_allclose(res.table["effect_size"], res.table["estimate"] / fit.sigma, rtol=1e-12)
    # emmeans' eff_size(emm, sigma = sigma(fit), edf = Inf): the same standardized differences
    np.testing.assert_allclose(res.table["effect_size"], case["results"][dfm]["effect_size"], rtol=1e-5)


def test_kenward_roger_table_4_2_is_fast(request):
    """Table 4.2 (7,287 rows, 1,041 sentences): the Kenward-Roger pieces in the random-effects space."""
    case = CASES["table4.2_system"]
    fit = _fit(case, request)
    from mixeval.significance._ddf import _CACHE

    _CACHE.clear()
    start = time.perf_counter()
    res = pairwise(fit, "system", df="kenward-roger")
    elapsed = time.perf_counter() - start
    assert elapsed < 20.0  # about 0.4 s on the 2-core machine; R (pbkrtest, sparse) takes about 0.1 s
    np.testing.assert_allclose(res.table["df"], 6244.0, rtol=1e-9)  # balanced: n - items - (p - 1)


def test_studentized_range_quadrature_matches_scipy():
    """The fixed-rule ptukey/qtukey agree with scipy's adaptive integration to 1e-7 (df from 1.2 to inf)."""
    from scipy import stats as sps

    from mixeval.significance._tukey import ptukey, qtukey

    for k in (2, 3, 6, 20):
        for dof in (1.2, 2.5, 10.7, 291.7, 6244.0, np.inf):
            q = np.array([0.3, 1.5, 3.5, 8.0])
            np.testing.assert_allclose(ptukey(q, k, dof, upper=True), sps.studentized_range.sf(q, k, dof), atol=1e-7)
    assert qtukey(0.95, 3, 291.7) == pytest.approx(sps.studentized_range.ppf(0.95, 3, 291.7), abs=1e-7)


def test_studentized_range_far_tail_keeps_its_digits():
    """Below 1e-14, ``1 - F`` is rounding noise (it was 4.9e-15 for q = 20 with 78 df, a Tukey p-value printed as
    if significant at 5e-15); the tail lies between one pair's probability and the union over the pairs, and
    q = 20 falls below 1e-20 (R's ptukey returns 0 there)."""
    from scipy import stats as sps

    from mixeval.significance._tukey import ptukey

    one_pair = 2 * sps.norm.sf(15.0 / np.sqrt(2))
    assert one_pair <= ptukey(15.0, 3, np.inf, upper=True) <= 3 * one_pair * (1 + 1e-9)
    assert ptukey(20.0, 3, 78.0, upper=True) < 1e-20
    assert ptukey(20.0, 4, 5.0, upper=True) == pytest.approx(sps.studentized_range.sf(20.0, 4, 5.0), rel=1e-7)


def test_random_effects_space_equals_dense_formulas():
    """Kenward-Roger and Satterthwaite pieces from Z'Z, Z'X (three crossed factors, one an interaction,
    unbalanced) equal pbkrtest's / lmerTest's definitions evaluated with n x n matrices."""
    from mixeval.significance._ddf import ddf_pieces

    rng = np.random.default_rng(7)
    idx = pd.MultiIndex.from_product([range(12), range(4), ["A", "B", "C"]], names=["item", "rater", "sys"]).to_frame(index=False)
    idx = idx[rng.random(len(idx)) < 0.7].reset_index(drop=True)
    idx["x"] = rng.normal(size=len(idx))
    idx["y"] = (rng.normal(0, 0.7, 12)[idx.item] + rng.normal(0, 0.4, 4)[idx.rater]
                + rng.normal(0, 0.3, 48)[idx.item * 4 + idx.rater] + 0.3 * idx.x + rng.normal(0, 0.5, len(idx)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer("y ~ sys * x + (1|item) + (1|rater) + (1|item:rater)", idx)
    X, n = fit.design.X, fit.nobs
    G = []
    for g in fit.design.groups:
        Zk = np.zeros((n, g.n_levels))
        Zk[np.arange(n), g.codes] = 1.0
        G.append(Zk @ Zk.T)
    G.append(np.eye(n))
    gamma = [fit.sigma2 * t * t for t in fit.theta] + [fit.sigma2]
    Si = np.linalg.inv(sum(a * b for a, b in zip(gamma, G)))
    Phi = np.linalg.inv(X.T @ Si @ X)
    P = np.array([-X.T @ Si @ Gr @ Si @ X for Gr in G])
    Proj = Si - Si @ X @ Phi @ X.T @ Si
    trPGPG = np.array([[np.trace(Proj @ Gr @ Proj @ Gs) for Gs in G] for Gr in G])
    W = 2 * np.linalg.inv(trPGPG)
    U = sum(W[r, s] * (X.T @ Si @ G[r] @ Si @ G[s] @ Si @ X - P[r] @ Phi @ P[s])
            for r in range(len(G)) for s in range(len(G)))
    e = Proj @ fit.design.y
    hessian = np.array([[-trPGPG[r, s] + 2 * e @ G[r] @ Proj @ G[s] @ e for s in range(len(G))] for r in range(len(G))])
    pieces = ddf_pieces(fit)
    np.testing.assert_allclose(pieces.vcov, Phi, rtol=1e-9)
    np.testing.assert_allclose(pieces.P, P, rtol=1e-8, atol=1e-10 * np.abs(P).max())
    np.testing.assert_allclose(pieces.W_expected, W, rtol=1e-7)
    np.testing.assert_allclose(pieces.vcov_adjusted, Phi + 2 * Phi @ U @ Phi, rtol=1e-8)
    np.testing.assert_allclose(pieces.W_observed, 2 * np.linalg.inv(hessian), rtol=1e-7)


def test_ml_fits_use_the_engines_satterthwaite_and_refuse_kenward_roger():
    from mixeval.errors import InputError

    df = pd.read_csv(ROOT / CASES["unbalanced_sys"]["data"]["file"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer("y ~ sys + (1|item) + (1|rater)", df, REML=False)
    res = pairwise(fit, "sys", df="satterthwaite")
    C = np.array([[0, -1, 0], [0, 0, -1], [0, 1, -1.0]])
    np.testing.assert_allclose(res.table["df"], [fit.satterthwaite_df(c) for c in C], rtol=1e-12)
    with pytest.raises(InputError, match="REML"):
        pairwise(fit, "sys", df="kenward-roger")
    with pytest.raises(InputError, match="df='t'"):
        emmeans(fit, "sys", df="t")


def test_trend_lines_have_the_emtrends_slopes():
    from mixeval.significance import plot_trends
    from mixeval.significance._trends import trend_lines

    case = CASES["unbalanced_trend_x"]
    fit = _fit(case, None) if case["name"] in _FITS else lmer(case["formula_py"], pd.read_csv(ROOT / case["data"]["file"]))
    lines = trend_lines(fit, "sys", "x", values=[10.0, 50.0])
    slopes = emtrends(fit, "sys", "x").set_index("sys")["trend"]
    for level, rows in lines.groupby("sys"):
        assert (rows.estimate.iloc[1] - rows.estimate.iloc[0]) / 40.0 == pytest.approx(slopes[level], rel=1e-9)
    fig = plot_trends(fit, "sys", "x", show_data=True)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["A", "B", "C"]


def test_one_factor_diagonal_path_equals_dense_path():
    """A single random intercept uses diagonal q-space blocks (no q x q matrix): same pieces as the dense path."""
    from mixeval.significance._kenward_roger import kr_pieces, re_layout

    df = pd.read_csv(ROOT / CASES["unbalanced_sys"]["data"]["file"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer("y ~ sys * x + (1|item)", df)
    args = (fit.design.X, fit.design.y, re_layout(fit.model_terms, fit.theta), fit.sigma2)
    diag, dense = kr_pieces(*args), kr_pieces(*args, dense=True)
    for name in ("vcov", "vcov_adjusted", "P", "W_expected", "W_observed"):
        a, b = getattr(diag, name), getattr(dense, name)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max(), err_msg=name)


def test_single_factor_has_no_level_limit_and_the_balanced_closed_form():
    """15,000 items x 2 systems (beyond the dense limit): Kenward-Roger's df of the within-item contrast
    is the residual df of the balanced design, n - items - (p - 1) = 14,999, as for Table 4.2 (6,244)."""
    from mixeval.significance._kenward_roger import KR_MAX_EFFECTS

    rng = np.random.default_rng(3)
    n_items = 15_000
    assert n_items > KR_MAX_EFFECTS
    item = np.repeat(np.arange(n_items), 2)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], n_items)})
    df["y"] = rng.normal(size=n_items)[item] + 0.1 * (df.system == "B") + rng.normal(size=item.size)
    fit = lmer("y ~ system + (1|item)", df)
    start = time.perf_counter()
    res = pairwise(fit, "system", df="kenward-roger")
    assert time.perf_counter() - start < 10.0
    assert res.table["df"].iloc[0] == pytest.approx(14_999, rel=1e-9)
    np.testing.assert_allclose(res.table["se"], np.sqrt(2 * fit.sigma2 / n_items), rtol=1e-9)
