"""Rank-deficient fixed parts fitted as R fits them (``fixtures/make_rank_deficient.R``).

lme4 (``lmer``, ``glmer``), glmmTMB (``rank_check = "adjust"``) and ``ordinal::clmm`` drop the columns beyond the
first ``rank`` pivots of ``qr(X, tol = 1e-7)`` and fit the rest. mixeval keeps the same columns (the names R keeps,
on twelve designs), warns naming the dropped ones, reaches R's log-likelihood (1e-6 relative) and R's kept
coefficients (1e-6; 1e-5 where mixeval's optimum is above R's, which then stopped short), and gives NaN, never a
number, for the marginal means emmeans calls ``nonEst``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import RankDeficientWarning
from mixeval.formula import kept_columns, kept_columns_of_gram, model_matrix
from mixeval.significance import emmeans, emtrends, joint_tests, pairwise

FIX = json.loads((Path(__file__).parent / "fixtures" / "rank_deficient.json").read_text())


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    cols = {}
    for name, v in FIX["data"].items():
        if v["kind"] == "factor":
            cols[name] = pd.Categorical.from_codes(v["codes"], categories=v["levels"], ordered=v["ordered"])
        else:
            cols[name] = np.asarray(v["values"], dtype=float)
    return pd.DataFrame(cols)


def _names(value) -> list[str]:
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("case", FIX["kept"], ids=[c["rhs"] for c in FIX["kept"]])
def test_kept_columns_are_lme4s(case, data):
    """The pivoting rule: the columns kept are those lme4's ``chkRank.drop.cols`` keeps, in order (an empty cell
    of a two- and a three-way interaction, collinear covariates in both orders, a covariate a factor determines in
    both orders, a column aliased at R's 1e-7 and one that is not)."""
    mm = model_matrix(case["rhs"], data)
    assert list(mm.columns) == _names(case["names"])
    X = mm.to_numpy()
    kept = [mm.columns[j] for j in kept_columns(X)]
    assert kept == _names(case["kept"])
    if case["rhs"] not in ("x + near",):  # 1e-9 aliasing is below what X'X resolves (the aggregate path's input)
        assert [mm.columns[j] for j in kept_columns_of_gram(X.T @ X)] == kept


def _fit(case: dict, data: pd.DataFrame):
    if case["engine"] == "lmer":
        return mixeval.lmer(case["formula"], data, REML=False)
    if case["engine"] in ("glmer", "glmmTMB"):
        return mixeval.glmer(case["formula"], data, family=case["family"])
    return mixeval.clmm(case["formula"], data)


@pytest.mark.parametrize("case", FIX["fits"], ids=[c["id"] for c in FIX["fits"]])
def test_fits_drop_the_columns_r_drops_and_reach_rs_likelihood(case, data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = _fit(case, data)
    rank = [str(w.message) for w in caught if w.category is RankDeficientWarning]
    assert len(rank) == 1
    kept = _names(case["kept"])
    assert list(fit.fixed_names) == kept
    full = model_matrix(case["formula"].split("~")[1].split("+ (")[0], data).columns
    dropped = tuple(c for c in full if c not in kept and c != "(Intercept)")
    assert fit.dropped_columns == dropped and all(name in rank[0] for name in dropped)
    assert abs(fit.loglik - case["loglik"]) <= 1e-6 * abs(case["loglik"])
    tol = 1e-6 if fit.loglik <= case["loglik"] + 1e-8 else 1e-5  # above R by 6e-8: ordinal stopped short
    np.testing.assert_allclose(fit.coef, [case["fixef"][n] for n in kept], rtol=0, atol=tol)
    assert set(fit.fixef.index) == set(kept) and not set(dropped) & set(fit.coefficients.index)
    assert f"dropping {len(dropped)} column" in fit.summary() and all(n in fit.summary() for n in dropped)
    assert fit.to_dict()["dropped_columns"] == list(dropped)


def test_full_rank_fits_drop_nothing(data):
    fit = mixeval.lmer("y ~ a + b + x + (1|g)", data)
    assert fit.dropped_columns == () and "fit warnings" not in fit.summary()
    assert fit.to_dict()["dropped_columns"] == []


@pytest.fixture(scope="module")
def reml_fit(data):
    with pytest.warns(RankDeficientWarning):
        return mixeval.lmer("y ~ a * b + (1|g)", data)


@pytest.mark.parametrize("key, specs", [("cells", ["a", "b"]), ("a", "a"), ("b", "b")])
def test_emmeans_non_estimable_means_are_nan_the_others_emmeans(reml_fit, key, specs):
    ref = FIX["emmeans"][key]
    np.testing.assert_allclose(reml_fit.coef, list(FIX["emmeans"]["fixef"].values()), rtol=1e-8, atol=1e-10)
    table = emmeans(reml_fit, specs)
    for col, levels in ref["levels"].items():
        assert table[col].astype(str).tolist() == _names(levels)
    expected = np.array([np.nan if v is None else v for v in _names(ref["emmean"])], dtype=float)
    se = np.array([np.nan if v is None else v for v in _names(ref["se"])], dtype=float)
    assert np.isnan(expected).any()
    np.testing.assert_array_equal(np.isnan(table["emmean"]), np.isnan(expected))
    assert np.isnan(table.loc[np.isnan(expected), ["se", "lower", "upper"]].to_numpy()).all()
    np.testing.assert_allclose(table["emmean"], expected, rtol=1e-7, atol=1e-9, equal_nan=True)
    np.testing.assert_allclose(table["se"], se, rtol=1e-5, equal_nan=True)
    assert "nonEst" in table.attrs["note"]


def test_contrasts_of_non_estimable_means_are_nan(reml_fit):
    ref = FIX["emmeans"]["pairs_a"]
    for adjust in ("none", "holm", "tukey"):
        table = pairwise(reml_fit, "a", adjust=adjust).table
        assert table["contrast"].tolist() == ref["contrast"]
        expected = np.array([np.nan if v is None else v for v in ref["estimate"]], dtype=float)
        np.testing.assert_allclose(table["estimate"], expected, rtol=1e-7, equal_nan=True)
        np.testing.assert_allclose(table["se"], [np.nan if v is None else v for v in ref["se"]], rtol=1e-5,
                                   equal_nan=True)
        assert np.isnan(table["pvalue"].to_numpy()[1:]).all() and np.isfinite(table["pvalue"].iloc[0])


def test_joint_tests_test_the_estimable_part_as_emmeans(reml_fit):
    """emmeans' ``joint_tests`` reduces a term to its estimable directions ("df1 reduced due to
    non-estimability") and leaves out a term with none (``b`` here); its F is printed to 3 digits."""
    ref = FIX["emmeans"]["joint"]
    table = joint_tests(reml_fit)
    rows = {t: (d, f) for t, d, f in zip(ref["term"], ref["df1"], ref["F"]) if t != "(confounded)"}
    got = table[table["df1"] > 0]
    assert got["term"].tolist() == list(rows)
    assert got["df1"].tolist() == [d for d, _ in rows.values()]
    np.testing.assert_allclose(got["F"], [f for _, f in rows.values()], atol=5e-4)


def test_trends_are_estimable_where_the_means_are_not(data):
    """The slope of ``x`` in the empty cell is estimable (it does not involve the dropped column): emmeans gives it."""
    with pytest.warns(RankDeficientWarning):
        fit = mixeval.lmer("y ~ a * b + x + (1|g)", data)
    table = emtrends(fit, ["a", "b"], "x")
    np.testing.assert_allclose(table["trend"], FIX["emmeans"]["trends"]["trend"], rtol=1e-6)
    np.testing.assert_allclose(table["se"], FIX["emmeans"]["trends"]["se"], rtol=1e-5)


def test_predict_uses_the_kept_columns_as_lme4(reml_fit, data):
    """lme4's ``predict`` drops the same columns of the new rows' matrix (``X[, -col.dropped]``)."""
    new = data.iloc[[0, 5, 9]]
    spec = reml_fit.design.fixed_spec
    assert spec.full_model_matrix(new).shape[1] == len(reml_fit.fixed_names) + 1
    np.testing.assert_allclose(reml_fit.predict(new, re=False), spec.get_model_matrix(new) @ reml_fit.coef)
    np.testing.assert_allclose(reml_fit.predict(data, re=False), reml_fit.design.X @ reml_fit.coef)
