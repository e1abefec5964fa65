"""Degrees-of-freedom methods and trends against R (emmeans 1.8.4 with pbkrtest and lmerTest).

Fixtures: tests/significance/fixtures/df_trend_fixtures.json (make_df_trend_fixtures.R): for each
case and each ``lmer.df`` ("asymptotic", "satterthwaite", "kenward-roger"), the emmeans or emtrends
table and the pairwise contrasts with Tukey, no and Holm adjustment. Cases: an unbalanced crossed
item x rater design (Satterthwaite and Kenward-Roger differ), slopes of a numeric property there,
the book's Table 4.2 (7,287 rows; emmeans' row limits raised) and the slopes of TER in src_length.

Two sources of the variance parameters:
* ``"lme4"``: mixeval's fit with lme4's theta, sigma, fixef and vcov put in (from the fixture), which
  isolates the df computations from the optimiser's tolerance. Tolerances: estimates and interval ends
  1e-6 relative to the scale of the estimates; SE, statistics and df 1e-6 relative (lmerTest's
  numerical derivatives carry about 1e-8 relative noise: it gives 6243.9999 for Table 4.2's 6244);
  p-values 1e-6 absolute (Tukey included).
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
        else:
            df = pd.read_csv(ROOT / source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITS[name] = lmer(case["formula_py"], df, REML=case["REML"])
    return _FITS[name]


def _compare(ours: pd.DataFrame, ref: list[dict], est_col: str, stat_col: str | None, source: str) -> None:
    df_rtol, se_rtol = SOURCES[source]
    assert len(ours) == len(ref)
    est = np.array([r["estimate"] for r in ref])
    scale = np.max(np.abs(est)) + np.max([r["SE"] for r in ref])
    np.testing.assert_allclose(ours[est_col], est, rtol=0, atol=REL * scale)
    np.testing.assert_allclose(ours["se"], [r["SE"] for r in ref], rtol=se_rtol)
    np.testing.assert_allclose(ours["df"], [_num(r["df"]) for r in ref], rtol=df_rtol)
    np.testing.assert_allclose(ours["ci_low"], [r["LCL"] for r in ref], rtol=0, atol=REL * scale)
    np.testing.assert_allclose(ours["ci_high"], [r["UCL"] for r in ref], rtol=0, atol=REL * scale)
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
        ours = emmeans(fit, case["specs"], df=dfm)
        _compare(ours, ref, "emmean", None, source)
    else:
        ours = emtrends(fit, case["specs"], case["var"], df=dfm)
        _compare(ours, ref, "trend", None, source)
    assert [str(v) for v in ours[case["specs"]]] == [r[case["specs"]] for r in ref]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("adjust", ADJUSTS)
@pytest.mark.parametrize("dfm", DFS)
@pytest.mark.parametrize("name", list(CASES))
def test_contrasts_match_emmeans(name, dfm, adjust, source, request):
    case = CASES[name]
    fit = _fit(case, request, source)
    ref = case["results"][dfm]["contrasts"][adjust]
    if case["var"] is None:
        res = pairwise(fit, case["specs"], adjust=adjust, df=dfm)
    else:
        res = pairwise_trends(fit, case["specs"], case["var"], adjust=adjust, df=dfm)
    assert list(res.table["contrast"]) == [r["contrast"] for r in ref]
    _compare(res.table, ref, "estimate", "z" if dfm == "asymptotic" else "t", source)
    assert res.df_method == dfm
    np.testing.assert_allclose(res.table["effect_size"], res.table["estimate"] / fit.sigma, rtol=1e-12)


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
