"""The glmmTMB families through every member of a fit: restricted likelihood, nAGQ, profile and Wald intervals of the
dispersion, the parametric bootstrap, prior weights, predictions on new rows, printing, pickling, bad input."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import InputError, MixevalWarning
from mixeval.mixed import GlmerResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "glmmtmb"
FORMULA = "errors ~ system + x + (1|item) + (1|system:seed)"


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixevalWarning)
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def counts() -> pd.DataFrame:
    return pd.read_csv(FIXTURES / "sim_nb.csv", dtype=str).astype({"x": float, "errors": float})


@pytest.fixture(scope="module")
def nb(counts) -> GlmerResult:
    return _quiet(mixeval.fit, FORMULA, counts, family="negative_binomial")


def test_profile_interval_of_the_dispersion_brackets_it_and_agrees_with_wald(nb):
    from mixeval.mixed._profile import profile_interval

    wald = nb.confint(method="wald").table
    lo, hi = profile_interval(nb.model, "dispersion")
    assert lo < nb.dispersion < hi
    # the deviance is nearly quadratic in log theta here: the profile and the log-scale Wald interval agree
    np.testing.assert_allclose([lo, hi], wald.loc["dispersion", ["lower", "upper"]], rtol=0.02)
    lo, hi = profile_interval(nb.model, "systemB")
    assert lo < nb.fixef["systemB"] < hi


def test_prior_weights_count_a_row_that_many_times(counts):
    """glmmTMB's weights multiply a row's log-likelihood: weight 2 is the row twice."""
    sub = counts.iloc[:360].copy()
    w = np.where(np.arange(len(sub)) % 3 == 0, 2.0, 1.0)
    weighted = _quiet(mixeval.fit, FORMULA, sub.assign(w=w), family="negative_binomial", weights="w")
    doubled = pd.concat([sub, sub[w == 2]], ignore_index=True)
    twice = _quiet(mixeval.fit, FORMULA, doubled, family="negative_binomial")
    assert weighted.loglik == pytest.approx(twice.loglik, rel=1e-8)
    np.testing.assert_allclose(weighted.coef, twice.coef, rtol=1e-5, atol=1e-6)
    assert weighted.dispersion == pytest.approx(twice.dispersion, rel=1e-5)


def test_restricted_likelihood_and_nagq(nb, counts):
    reml = nb.refit(REML=True)
    assert reml.reml and reml.family == nb.family and reml.refit(REML=False).loglik == pytest.approx(nb.loglik)
    # the restricted criterion raises the variance estimates (they are not shrunk by the fixed effects' fit)
    assert reml.variances["item"] > nb.variances["item"]
    zero = _quiet(mixeval.fit, FORMULA, counts, family="negative_binomial", nAGQ=0)
    assert zero.loglik <= nb.loglik + 1e-9 and zero.dispersion == pytest.approx(nb.dispersion, rel=0.02)
    with pytest.raises(InputError, match="quadrature"):
        mixeval.fit("errors ~ system + (1|item)", counts, family="negative_binomial", nAGQ=5)


def test_parametric_bootstrap_of_the_dispersion(nb):
    boot = nb.bootstrap(lambda f: f.dispersion, n_resamples=12, random_state=4)
    draws = boot.draws.to_numpy(dtype=float).ravel()
    assert draws.size == 12 and np.all(draws > 0)
    assert abs(np.median(draws) - nb.dispersion) < 0.6 * nb.dispersion


def test_predictions_on_new_rows_and_printing(nb, counts):
    new = counts.iloc[:5].assign(item="unseen")
    eta = nb.predict(new, type="link", allow_new_levels=True)
    np.testing.assert_allclose(eta, nb.predict(new, type="link", re=False) + np.array(
        [nb.ranef["system:seed"][f"{s}:{e}"] for s, e in zip(new.system, new.seed)]), rtol=1e-10)
    np.testing.assert_allclose(nb.predict(new, allow_new_levels=True), np.exp(eta))
    text = nb.summary()
    assert "dispersion" in text and "negative_binomial" in text
    assert "dispersion" in nb._repr_html_()
    out = nb.to_dict()
    assert out["dispersion"] == pytest.approx(nb.dispersion) and set(out["family_parameters"]) == {"dispersion"}
    assert pickle.loads(pickle.dumps(nb)) == nb
    assert nb.aic == pytest.approx(-2 * nb.loglik + 2 * (len(nb.coef) + 2 + 1))


def test_latent_components_carry_the_family_s_residual_variance(nb):
    comps = nb.latent_components
    lam = float(np.mean(np.exp(nb.design.X @ nb.coef))) * np.exp(0.5 * (comps["item"] + comps["system:seed"]))
    assert comps["Residual"] == pytest.approx(np.log1p(1 / lam + 1 / nb.dispersion))
    assert "lognormal" in nb.family.latent_note


def test_ordered_beta_predicts_the_mean_with_its_zeros_and_ones():
    d = pd.read_csv(FIXTURES / "sim_ordbeta.csv", dtype=str).astype({"f1": float}).iloc[:1200]
    fit = _quiet(mixeval.fit, "f1 ~ system + (1|item)", d, family="ordered_beta")
    eta = fit.predict(type="link")
    c = fit.family_parameters
    s, t = 1 / (1 + np.exp(-(eta - c["cutpoint_lower"]))), 1 / (1 + np.exp(-(eta - c["cutpoint_upper"])))
    np.testing.assert_allclose(fit.predict(), t + (s - t) / (1 + np.exp(-eta)), rtol=1e-12)
    assert c["cutpoint_lower"] < c["cutpoint_upper"]
    # the fitted mean matches the observed mean (a property of the ML fit with an intercept, up to the link)
    assert fit.predict().mean() == pytest.approx(d.f1.mean(), abs=0.02)


@pytest.mark.parametrize("family, column, match", [
    ("beta", "f1", "ordered_beta"),
    ("negative_binomial", "f1", "whole counts"),
])
def test_fits_refuse_responses_of_another_family_by_name(family, column, match):
    d = pd.read_csv(FIXTURES / "sim_ordbeta.csv", dtype=str).astype({"f1": float}).iloc[:240]
    with pytest.raises(InputError, match=match):
        mixeval.fit(f"{column} ~ system + (1|item)", d, family=family)


def test_beta_binomial_refuses_successes_above_trials():
    d = pd.read_csv(FIXTURES / "sim_betabin.csv", dtype=str).astype({"k": float, "n": float}).iloc[:80]
    d["p"] = d.k / d.n
    d.loc[3, "p"] = 1.2
    with pytest.raises(InputError, match="more successes than trials"):
        mixeval.fit("p ~ model + (1|task)", d, family="beta_binomial", weights="n")


def test_fit_door_uses_or_refuses_every_argument(counts):
    with pytest.raises(InputError, match="threshold"):
        mixeval.fit(FORMULA, counts, family="negative_binomial", threshold="equidistant")
    with pytest.raises(InputError, match="nAGQ"):
        mixeval.fit("x ~ system + (1|item)", counts, nAGQ=2)
    with pytest.raises(InputError, match="maximum likelihood"):
        mixeval.fit("errors ~ system + (1|item)", counts.assign(errors=counts.errors.clip(0, 4)), family="ordinal",
                    REML=True)
    lmm = _quiet(mixeval.fit, "x ~ system + (1|item)", counts)
    assert lmm.reml and lmm == _quiet(mixeval.lmer, "x ~ system + (1|item)", counts)
