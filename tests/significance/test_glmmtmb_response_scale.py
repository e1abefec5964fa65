"""Response-scale means and pairwise comparisons of glmmTMB's families through Study (issue 39): negative binomial,
beta and beta-binomial against glmmTMB + emmeans (z intervals: df = Inf); ordered beta, whose mean E[y | eta] counts
its exact 0s and 1s (emmeans and glmmTMB report the inverse link instead), against its closed form, the delta method
by central differences and, marginal over the random effects, brute-force simulation.

Fixture: tests/significance/fixtures/glmmtmb/make_glmmtmb_emmeans.R (glmmTMB 1.1.5, emmeans 1.8.4.1) on the data of
tests/mixed/fixtures/glmmtmb/. Tolerances: the fits agree to 1e-6 in the log-likelihood (ours equal or higher);
means, ratios and differences to 2e-4 relative (glmmTMB's optimiser stops near 1e-5 in the fixed effects); standard
errors to 0.5% (glmmTMB's Hessian is exact by automatic differentiation, ours central differences of the exact
gradient); Tukey p-values to 1e-3 relative plus 1e-6 (emmeans' ptukey is computed to about 4 digits).
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from mixeval import Study
from mixeval.errors import InputError

FIX = Path(__file__).parent / "fixtures" / "glmmtmb"
DATA = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmmtmb"
REF = json.loads((FIX / "glmmtmb_emmeans.json").read_text())["cases"]
NUMERIC = {"nb": ["x", "errors"], "beta": ["score"], "beta_binomial": ["k", "n"]}
LABEL = {"nb": ("rate", "ratio"), "beta": ("proportion", "odds_ratio"), "beta_binomial": ("prob", "odds_ratio")}


def _read(name: str) -> pd.DataFrame:
    d = pd.read_csv(DATA / REF[name]["file"], dtype=str)
    for col in d.columns:
        d[col] = d[col].astype(float) if col in NUMERIC[name] else d[col]
    return d


@pytest.fixture(scope="module", params=list(REF))
def case(request):
    name = request.param
    ref = REF[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(_read(name), ref["formula"], family=ref["family"], system=ref["by"])
        study.fit
    return name, study, ref


def test_fit_matches_glmmtmb(case):
    _, study, ref = case
    assert study.fit.loglik >= ref["loglik"] - 1e-6 * abs(ref["loglik"])
    assert study.fit.loglik == pytest.approx(ref["loglik"], rel=1e-6)
    np.testing.assert_allclose(study.fit.coef, ref["fixef"], atol=1e-3)


def test_response_means_match_emmeans(case):
    name, study, ref = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = study.emmeans(df="asymptotic")
    label = LABEL[name][0]
    assert list(table.columns[:2]) == [ref["by"], label]
    assert list(table[ref["by"]].astype(str)) == ref["levels"]
    r = ref["response"]
    np.testing.assert_allclose(table[label], r["mean"], rtol=2e-4)
    np.testing.assert_allclose(table["se"], r["se"], rtol=5e-3)
    np.testing.assert_allclose(table["lower"], r["lower"], rtol=1e-3)
    np.testing.assert_allclose(table["upper"], r["upper"], rtol=1e-3)
    link = study.emmeans(type="link", df="asymptotic")
    np.testing.assert_allclose(link["emmean"], ref["link"]["emmean"], atol=2e-4)
    np.testing.assert_allclose(link["se"], ref["link"]["se"], rtol=5e-3)


def test_pairwise_ratios_match_emmeans(case):
    name, study, ref = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = study.pairwise(df="asymptotic")
    t, r = res.table, ref["ratio"]
    column = LABEL[name][1]
    assert list(t["contrast"]) == r["contrast"] and column in t.columns
    np.testing.assert_allclose(t[column], r["ratio"], rtol=2e-4)
    np.testing.assert_allclose(t["se"], r["se"], rtol=5e-3)
    np.testing.assert_allclose(t["z"], r["z"], rtol=5e-3)
    np.testing.assert_allclose(t["pvalue"], r["pvalue"], rtol=2e-2, atol=1e-6)
    np.testing.assert_allclose(t["lower"], r["lower"], rtol=2e-3)
    np.testing.assert_allclose(t["upper"], r["upper"], rtol=2e-3)


def test_pairwise_differences_match_regrid(case):
    name, study, ref = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = study.pairwise(scale="difference", df="asymptotic")
    t, r = res.table, ref["difference"]
    assert list(t["contrast"]) == r["contrast"]
    assert res.scale.startswith(f"differences of {study.family.response_plural}")
    np.testing.assert_allclose(t["estimate"], r["estimate"], rtol=5e-4, atol=2e-5)
    np.testing.assert_allclose(t["se"], r["se"], rtol=5e-3)
    np.testing.assert_allclose(t["pvalue"], r["pvalue"], rtol=2e-2, atol=1e-6)


# ----------------------------------------------------------------------------- ordered beta: the mean with its 0s and 1s
@pytest.fixture(scope="module")
def ordbeta():
    d = pd.read_csv(DATA / "sim_ordbeta.csv", dtype=str).astype({"f1": float})
    d = d[d["item"] < "i120"].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(d, "f1 ~ system + (1|item) + (1|system:seed)", family="ordered_beta")
        study.fit
    return study


def _ordbeta_mean(eta, psi):
    s, t = special.expit(eta - psi[1]), special.expit(eta - psi[2])
    return t + (s - t) * special.expit(eta)


def test_ordered_beta_means_count_the_exact_zeros_and_ones(ordbeta):
    fit = ordbeta.fit
    table = ordbeta.emmeans(df="asymptotic")
    eta = ordbeta.emmeans(type="link", df="asymptotic")["emmean"].to_numpy()
    want = _ordbeta_mean(eta, fit.family_par)
    np.testing.assert_allclose(table["proportion"], want, rtol=1e-12)
    assert np.max(np.abs(want - special.expit(eta))) > 1e-3  # not the inverse link (emmeans' and glmmTMB's number)
    assert np.all((table.lower < table.proportion) & (table.proportion < table.upper))
    # the delta method in (beta, psi): central differences of the mean against the fit's covariance
    from mixeval.significance._emmeans import marginal_means

    _, L, _, _ = marginal_means(fit, "system", None)
    k, p = fit.theta.size, fit.coef.size
    x0 = np.concatenate([fit.coef, fit.family_par])
    f = lambda x: _ordbeta_mean(L @ x[:p], x[p:])
    h = 1e-6
    J = np.column_stack([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(x0.size)])
    C = fit.cov_params[k:, k:]
    np.testing.assert_allclose(table["se"], np.sqrt(np.diag(J @ C @ J.T)), rtol=1e-5)
    # the cutpoints' uncertainty is part of it: their block alone moves the standard error
    J0 = J.copy()
    J0[:, p:] = 0.0
    assert np.all(np.sqrt(np.diag(J0 @ C @ J0.T)) < table["se"].to_numpy() * (1 - 1e-5))


def test_ordered_beta_marginal_means_match_simulation(ordbeta):
    """The population-averaged mean over the random intercepts against 2e6 simulated scores (4 standard errors)."""
    fit = ordbeta.fit
    table = ordbeta.emmeans(marginal=True)
    eta = ordbeta.emmeans(type="link", df="asymptotic")["emmean"].to_numpy()
    s2 = float(fit.theta @ fit.theta)
    rng = np.random.default_rng(5)
    for e, got in zip(eta, table["proportion"]):
        b = rng.normal(0, np.sqrt(s2), 2_000_000)
        draws = _ordbeta_mean(e + b, fit.family_par)
        assert got == pytest.approx(draws.mean(), abs=4 * draws.std() / np.sqrt(draws.size))


def test_ordered_beta_has_no_ratio_scale_and_compares_differences(ordbeta):
    res = ordbeta.pairwise(df="asymptotic")  # its default: differences of the means
    assert "estimate" in res.table.columns and res.scale.startswith("differences of proportions")
    means = ordbeta.emmeans(df="asymptotic").set_index("system")["proportion"]
    assert res.table["estimate"].iloc[0] == pytest.approx(means["A"] - means["B"], rel=1e-12)
    with pytest.raises(InputError, match="no ratio scale"):
        ordbeta.pairwise(scale="ratio")
