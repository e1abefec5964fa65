"""Study(..., family="binomial") with the default Laplace (ML) fit and df="asymptotic" gives glmer + emmeans'
numbers; the marginal (population-averaged) accuracy against R's integrate, the probit closed form and a
brute-force Monte-Carlo average.

Fixture: tests/significance/fixtures/make_glmer_emmeans_parity.R (lme4 1.1.31, emmeans 1.8.4.1), glmer run
with a tightened optimiser (bobyqa rhoend 1e-10) so that its log-likelihood equals ours to 1e-6: at lme4's
default tolerance glmer stops 4e-4 (simulated) and 2.6e-3 (demo) below our optimum, with fixed effects 1e-3 off.
Estimates agree to 1e-4 absolute; standard errors (and z, p, intervals) to 5e-4 relative: both covariances come
from finite-difference Hessians of the deviance over (theta, beta), lme4's with its own steps (the demo's z of
-7.7975 against -7.7988).
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

from mixeval import Study
from mixeval.errors import FewLevelsWarning
from mixeval.mixed.families import get_family
from mixeval.significance._marginal import marginal_mean

FIX = Path(__file__).parent / "fixtures"
REF = json.loads((FIX / "glmer_emmeans_parity.json").read_text())
DEMO = Path(__file__).parents[2] / "mixeval" / "data" / "demo_mt.csv"
TOL = 1e-4
RTOL_SE = 5e-4


def _study(name: str) -> Study:
    if name == "sim":
        data = pd.read_csv(FIX / "glmer_parity_sim.csv")
    else:
        data = pd.read_csv(DEMO).assign(correct=lambda d: (d.score >= 70).astype(int))
    formula = REF[name]["formula"]
    return Study(data, formula, family="binomial", reml=False)


@pytest.fixture(scope="module", params=["sim", "demo"])
def case(request):
    return request.param, _study(request.param), REF[request.param]


def test_fit_matches_glmer(case):
    _, study, ref = case
    assert study.fit.loglik == pytest.approx(ref["logLik"], abs=1e-5)
    np.testing.assert_allclose(study.fit.coef, ref["fixef"], atol=TOL)
    np.testing.assert_allclose(study.fit.cov_coef, ref["vcov"], atol=TOL, rtol=2 * RTOL_SE)


def test_response_means_match_emmeans(case):
    _, study, ref = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewLevelsWarning)
        table = study.emmeans(df="asymptotic")
    e = ref["emmeans"]
    assert list(table.system) == e["system"]
    for ours, theirs in (("prob", "prob"), ("se", "se"), ("lower", "lower"), ("upper", "upper")):
        np.testing.assert_allclose(table[ours], e[theirs], atol=TOL)
    assert table.attrs["fit_criterion"] == "Laplace" and "conditional" in table.attrs["scale"]


def test_odds_ratios_match_emmeans_pairs(case):
    _, study, ref = case
    res = study.pairwise(df="asymptotic")
    o = ref["odds_ratios"]
    assert list(res.table.contrast) == o["contrast"]
    for ours, theirs in (("odds_ratio", "odds_ratio"), ("se", "se"), ("z", "z"), ("pvalue", "pvalue"),
                         ("lower", "lower"), ("upper", "upper")):
        np.testing.assert_allclose(res.table[ours], o[theirs], atol=TOL, rtol=RTOL_SE)
    assert res.fit_criterion == "Laplace" and res.df_method == "asymptotic"


def test_differences_match_regrid_pairs(case):
    _, study, ref = case
    res = study.pairwise(df="asymptotic", scale="difference")
    d = ref["differences"]
    for ours, theirs in (("estimate", "estimate"), ("se", "se"), ("z", "z"), ("pvalue", "pvalue"),
                         ("lower", "lower"), ("upper", "upper")):
        np.testing.assert_allclose(res.table[ours], d[theirs], atol=TOL, rtol=RTOL_SE)


def test_marginal_accuracy_is_the_integral_over_the_random_effects(case):
    """Against R's integrate() at glmer's estimates (ours equal them to 1e-5); the conditional accuracy and
    emmeans' second-order bias.adjust differ from it."""
    name, study, ref = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewLevelsWarning)
        table = study.emmeans(marginal=True)
    np.testing.assert_allclose(table.prob, ref["marginal_exact"], atol=TOL)
    assert "marginal" in table.attrs["scale"]
    assert np.all((table.lower < table.prob) & (table.prob < table.upper))
    assert np.max(np.abs(table.prob - np.array(ref["emmeans"]["prob"]))) > 0.03
    if name == "demo":  # item variance 3.5: the second-order approximation is off by several points
        assert np.max(np.abs(np.array(ref["bias_adjusted"]["prob"]) - table.prob)) > 0.03


def marginal_inverse_link(link, eta, s2):
    """The marginal mean of a family whose mean is the inverse link (binomial's logit and probit, Poisson's log)."""
    family = get_family("poisson" if link == "log" else "binomial", link)
    return marginal_mean(family, eta, s2)[:3]


@pytest.mark.parametrize("s2", [0.0, 0.3, 1.0, 4.0, 25.0])
def test_marginal_inverse_link_probit_closed_form_and_logit_quadrature(s2):
    eta = np.array([-3.0, -0.5, 0.0, 1.2, 4.0])
    mu, d_eta, d_s2 = marginal_inverse_link("probit", eta, s2)
    np.testing.assert_allclose(mu, special.ndtr(eta / np.sqrt(1 + s2)), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(d_eta, stats.norm.pdf(eta / np.sqrt(1 + s2)) / np.sqrt(1 + s2), rtol=1e-11, atol=1e-300)
    mu, d_eta, d_s2 = marginal_inverse_link("log", eta, s2)  # the quadrature against exp(eta + s2 / 2)
    np.testing.assert_allclose(mu, np.exp(eta + s2 / 2), rtol=1e-12)
    np.testing.assert_allclose(d_s2, np.exp(eta + s2 / 2) / 2, rtol=1e-12)
    # the logit rule against adaptive quadrature, and the derivatives against central differences
    mu, d_eta, d_s2 = marginal_inverse_link("logit", eta, s2)
    sd = np.sqrt(s2)
    exact = [special.expit(e) if sd == 0 else integrate.quad(
        lambda b: special.expit(e + b) * stats.norm.pdf(b, 0, sd), -12 * sd, 12 * sd, points=[-e],
        epsabs=1e-14, epsrel=1e-13, limit=500)[0] for e in eta]
    np.testing.assert_allclose(mu, exact, atol=1e-12)
    h = 1e-5
    num_eta = (marginal_inverse_link("logit", eta + h, s2)[0] - marginal_inverse_link("logit", eta - h, s2)[0]) / (2 * h)
    np.testing.assert_allclose(d_eta, num_eta, atol=1e-8)
    if s2 > 0:
        num_s2 = (marginal_inverse_link("logit", eta, s2 + h)[0] - marginal_inverse_link("logit", eta, s2 - h)[0]) / (2 * h)
        np.testing.assert_allclose(d_s2, num_s2, atol=1e-8)


def test_marginal_mean_against_brute_force_simulation():
    """Monte-Carlo average of expit(eta + b) over 2e6 draws (se about 2e-4): within 4 se."""
    rng = np.random.default_rng(3)
    eta, s2 = 2.197, 1.0  # a typical item's 0.9
    draws = special.expit(eta + rng.normal(0, np.sqrt(s2), 2_000_000))
    mc, se = draws.mean(), draws.std() / np.sqrt(draws.size)
    mu = marginal_inverse_link("logit", np.array([eta]), s2)[0][0]
    assert abs(mu - mc) < 4 * se
    assert 0.03 < 0.9 - mu < 0.05  # the 'about 0.035' between the typical item and the mean


def test_marginal_delta_method_gradient_is_the_numerical_one(case):
    """The Jacobian of the marginal means in (theta, beta) against central differences of the means."""
    from mixeval.significance._emmeans import marginal_means
    from mixeval.significance._marginal import marginal_moments, parameter_covariance

    _, study, _ = case
    fit = study.fit
    _, L, _, _ = marginal_means(fit, "system", None)
    theta, beta = np.asarray(fit.theta, float), np.asarray(fit.coef, float)

    def means(params):
        t, b = params[:theta.size], params[theta.size:]
        return marginal_inverse_link(fit.link, L @ b, float(t @ t))[0]

    x0, h = np.concatenate([theta, beta]), 1e-6
    J = np.column_stack([(means(x0 + h * e) - means(x0 - h * e)) / (2 * h) for e in np.eye(x0.size)])
    C = parameter_covariance(fit)
    _, cov = marginal_moments(fit, L)
    np.testing.assert_allclose(cov, J @ C @ J.T, rtol=1e-5, atol=1e-12)
