"""confint (profile, Wald, parametric bootstrap) of GLMM fits against lme4 (fixtures/make_glmer_confint_fixtures.R).

Profile. lme4's ``confint(method = "profile")`` of a ``glmerMod`` profiles every parameter (sd's and fixed
effects) on its stage-2 deviance, re-optimising all the others, and interpolates zeta by splines. Two things
separate it from the exact ends: the splines, and lme4's Laplace deviance function itself, which is exact at
the fit but drifts away from it (binary_crossed: 962.95656 where the Laplace approximation is 962.94890, also
with ``tolPwrss = 1e-12``). The fixture therefore holds three references per nAGQ = 1 case: lme4's
``confint``; the exact roots of zeta on lme4's ``devfun2`` (``profile_exact``, bobyqa + uniroot); and the
exact roots on an independent dense Laplace deviance written in R (``profile_laplace``). Measured: ours
equal ``profile_laplace`` to 4e-11 relative (tested at 1e-5), lme4's ``confint`` within 0.0021 standard errors
(3.7e-3 relative; tested at 0.01 se) and ``profile_exact`` within 3.5e-3 relative (lme4's deviance drift).
For nAGQ = 5 lme4's adaptive Gauss-Hermite deviance is accurate: ``profile_exact`` to 1.2e-6 (tested at 1e-5).

Wald. The fixed effects' intervals are ``beta -/+ z se`` with the Hessian-based ``vcov``. Against the
Hessian of the independent Laplace deviance (numDeriv): se's to 1.7e-6, ends to 7e-6 (tested 1e-5). lme4
differentiates its drifting deviance: its ends lie up to 0.016 z se from ours for nAGQ = 1 (tested 0.02),
1e-5 z se for nAGQ = 5 (tested 1e-4). lme4 gives NA for sd's; ours are the delta method (tested exactly).

Bootstrap. Percentile ends within Monte-Carlo error of ``bootMer``'s (4 combined standard errors of the two
percentile estimates).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from mixeval import glmer
from mixeval.errors import InputError
from mixeval.uncertainty import (
    GlmmFitModel,
    as_fit_model,
    bootstrap_fit,
    confint,
    profile_intervals,
    profile_zeta,
)
from mixeval.mixed._glmm_model import theta_from_varpar, varpar_from_theta

FIX = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmer"
CASES = {f["name"]: f for f in json.loads((FIX / "glmer_confint_fixtures.json").read_text())["fits"]}


def _fit(name: str):
    case = CASES[name]
    df = pd.read_csv(DATA / case["file"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return glmer(case["formula"], df, family=case["family"], nAGQ=case["nAGQ"], weights=case["weights"])


@pytest.fixture(scope="module")
def fits():
    return {}


def _get(fits: dict, name: str):
    if name not in fits:
        fits[name] = _fit(name)
    return fits[name]


def _close(ours: float, ref: float, rel: float = 1e-3, abs_: float = 1e-7) -> bool:
    return abs(ours - ref) <= max(rel * abs(ref), abs_)


LAPLACE_CASES = ["binary_item", "binomial_proportions", pytest.param("poisson_counts", marks=pytest.mark.slow),
                 pytest.param("binary_crossed", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", LAPLACE_CASES)
def test_profile_matches_exact_laplace_profile_and_lme4(fits, name):
    case = CASES[name]
    fit = _get(fits, name)
    assert fit.deviance == pytest.approx(case["laplace_minimum"], abs=1e-5)
    ours = profile_intervals(as_fit_model(fit), 0.95, progress=False)
    assert list(ours) == list(case["profile"])  # lme4's row names and order
    se = dict(zip(fit.fixed_names, np.sqrt(np.diag(fit.cov_coef))))
    for param, ref in case["profile_laplace"].items():
        lo, hi = ours[param]
        assert _close(lo, ref[0], rel=1e-5) and _close(hi, ref[1], rel=1e-5), (param, (lo, hi), ref)
        # lme4's own confint: its spline on its drifting deviance, within 0.01 standard errors
        scale = se.get(param, (ref[1] - ref[0]) / (2 * 1.96))
        lme4 = case["profile"][param]
        assert abs(lo - lme4[0]) <= 0.01 * scale and abs(hi - lme4[1]) <= 0.01 * scale, (param, (lo, hi), lme4)


def test_profile_agq_matches_lme4_exact_profile(fits):
    case = CASES["binary_item_agq5"]
    fit = _get(fits, "binary_item_agq5")
    ours = profile_intervals(as_fit_model(fit), 0.95, progress=False)
    for param, ref in case["profile_exact"].items():
        lo, hi = ours[param]
        assert _close(lo, ref[0], rel=1e-5) and _close(hi, ref[1], rel=1e-5), (param, (lo, hi), ref)


def test_profile_zeta_at_the_ends(fits):
    """zeta at the interval's ends is -/+ the normal quantile (the root is a root), and 0 at the estimate."""
    fit = _get(fits, "binary_item")
    model = as_fit_model(fit)
    ci = confint(fit, method="profile", level=0.9, progress=False).table
    for name in ("sd_(Intercept)|item", "systemB"):
        z = profile_zeta(model, name, np.array([ci.loc[name, "lower"], ci.loc[name, "estimate"], ci.loc[name, "upper"]]))
        np.testing.assert_allclose(z, [-norm.ppf(0.95), 0.0, norm.ppf(0.95)], atol=1e-6)


def test_nagq0_fit_is_profiled_on_the_laplace_deviance(fits):
    """A nAGQ = 0 fit is profiled on the Laplace deviance around its optimum: the nAGQ = 1 fit's intervals."""
    laplace = _get(fits, "binary_item")
    df = pd.read_csv(DATA / CASES["binary_item"]["file"])
    fit0 = glmer(CASES["binary_item"]["formula"], df, nAGQ=0)
    names = ["systemB"]
    ours = profile_intervals(as_fit_model(fit0), 0.95, names=names, progress=False)
    ref = profile_intervals(as_fit_model(laplace), 0.95, names=names, progress=False)
    for name in names:
        np.testing.assert_allclose(ours[name], ref[name], rtol=1e-5)


@pytest.mark.parametrize("name", ["binary_item", "binary_crossed", "poisson_counts", "binomial_proportions",
                                  "binary_item_agq5"])
def test_wald(fits, name):
    case = CASES[name]
    fit = _get(fits, name)
    ci = confint(fit, method="wald").table
    z = norm.ppf(0.975)
    se = np.sqrt(np.diag(fit.cov_coef))
    names = list(fit.fixed_names)
    np.testing.assert_allclose(ci.loc[names, "lower"], fit.coef - z * se, rtol=1e-12)
    np.testing.assert_allclose(ci.loc[names, "upper"], fit.coef + z * se, rtol=1e-12)
    if "wald_laplace" in case:  # the independent Laplace deviance's Hessian (numDeriv): measured 1.7e-6, 6.6e-6
        np.testing.assert_allclose(se, case["laplace_se"], rtol=1e-5)
        np.testing.assert_allclose(ci.loc[names, ["lower", "upper"]].to_numpy(),
                                   [case["wald_laplace"][k] for k in names], rtol=0, atol=1e-5)
    # lme4's confint(method = "Wald"): its Hessian of its own (drifting) Laplace deviance puts its ends up to
    # 0.016 z se from ours (measured); its AGQ deviance is accurate (measured 1e-5 z se)
    tol = 1e-4 if case["nAGQ"] > 1 else 0.02
    for param, s in zip(names, se):
        ref = case["wald"][param]
        assert abs(ci.loc[param, "lower"] - ref[0]) <= tol * z * s, (param, ci.loc[param].tolist(), ref)
        assert abs(ci.loc[param, "upper"] - ref[1]) <= tol * z * s, (param, ci.loc[param].tolist(), ref)
    # sd's: lme4 gives NA; ours is the delta method on the fit's asymptotic variance of the variance
    vc = fit.varcorr_se
    for g, v, s in zip(vc.group, vc.variance, vc.se):
        sd = np.sqrt(v)
        row = ci.loc[f"sd_(Intercept)|{g}"]
        assert row.lower == pytest.approx(max(sd - z * s / (2 * sd), 0.0), rel=1e-12)
        assert row.upper == pytest.approx(sd + z * s / (2 * sd), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["binary_item", "binomial_proportions"])
def test_bootstrap_within_monte_carlo_error_of_bootmer(fits, name, within_bootmer_error):
    ref = CASES[name]["boot"]
    n_ours = 200
    boot = bootstrap_fit(_get(fits, name), n_resamples=n_ours, random_state=7, progress=False)
    assert list(boot.interval(0.95).index) == list(ref["intervals"])
    within_bootmer_error(boot, ref, n_ours)


def test_bootstrap_is_seeded_jobs_do_not_change_draws_and_fast_path_is_a_full_fit(fits):
    fit = _get(fits, "binomial_proportions")
    a = bootstrap_fit(fit, n_resamples=6, random_state=11, progress=False)
    b = bootstrap_fit(fit, n_resamples=6, random_state=11, progress=False, n_jobs=2)
    pd.testing.assert_frame_equal(a.draws, b.draws)
    c = bootstrap_fit(fit, lambda m: np.concatenate([m.theta, m.coef]),
                      n_resamples=6, random_state=11, progress=False)
    # the two optimisations stop within the optimiser's tolerance of the same optimum (DECREASE_TOL = 1e-6 in
    # deviance units: about 1e-5 relative in a flat standard deviation)
    np.testing.assert_allclose(c.draws.to_numpy(), a.draws.to_numpy(), rtol=1e-5, atol=1e-7)


def test_simulated_responses_have_the_fitted_distribution(fits):
    """Binomial proportions are successes / trials; their mean is E[linkinv(eta)] over new random effects."""
    fit = _get(fits, "binomial_proportions")
    model = as_fit_model(fit)
    Y = model.simulate(4000, np.random.default_rng(2))
    w = fit.weights
    assert np.allclose(Y * w[:, None], np.round(Y * w[:, None]))
    assert Y.min() >= 0 and Y.max() <= 1
    # marginal mean of row 0 by quadrature over the item's random effect
    x, wq = np.polynomial.hermite_e.hermegauss(40)
    eta0 = fit.design.X[0] @ fit.coef + fit.theta[0] * x
    mean0 = float(np.sum(wq * fit.family.linkinv(eta0)) / wq.sum())
    assert Y[0].mean() == pytest.approx(mean0, abs=4 * np.sqrt(0.25 / w[0] / 4000))
    pois = as_fit_model(_get(fits, "poisson_counts")).simulate(3, np.random.default_rng(0))
    assert np.all(pois == np.round(pois)) and pois.min() >= 0


def test_varpar_theta_round_trip():
    from mixeval.mixed._reterms import ReTerm

    t3 = ReTerm("g", ("(Intercept)", "x", "z"), np.zeros(2, int), ("a",), np.ones((2, 3)))
    t1 = ReTerm("h", ("(Intercept)",), np.zeros(2, int), ("a",), np.ones((2, 1)))
    theta = np.array([1.2, 0.3, -0.4, 0.8, 0.5, 0.6, 0.7])
    vp = varpar_from_theta((t3, t1), theta)
    lam = np.array([[1.2, 0, 0], [0.3, 0.8, 0], [-0.4, 0.5, 0.6]])
    cov = lam @ lam.T
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(vp[[0, 3, 5, 6]], [*sd, 0.7])
    np.testing.assert_allclose(vp[[1, 2, 4]], [cov[1, 0] / sd[0] / sd[1], cov[2, 0] / sd[0] / sd[2], cov[2, 1] / sd[1] / sd[2]])
    np.testing.assert_allclose(theta_from_varpar((t3, t1), vp), theta, atol=1e-12)
    assert np.isnan(theta_from_varpar((t3,), np.array([1, 0.99, -0.99, 1, 0.99, 1.0]))).all()  # not a correlation matrix


def test_slope_model_profile_is_self_consistent():
    """``y ~ x + (1 + x | g)``: sd's and the correlation profiled; zeta is -/+ 1.96 at the ends."""
    df = pd.read_csv(DATA / "binary_slope.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("y ~ x + (1 + x|g)", df)
    model = as_fit_model(fit)
    assert model.param_names == ("sd_(Intercept)|g", "cor_x.(Intercept)|g", "sd_x|g", "(Intercept)", "x")
    iv = profile_intervals(model, 0.95, names=["cor_x.(Intercept)|g"], progress=False)
    lo, hi = iv["cor_x.(Intercept)|g"]
    est = model.estimates()[1]
    assert -1 <= lo < est < hi <= 1
    inner = [v for v in (lo, hi) if abs(v) < 1]
    np.testing.assert_allclose(np.abs(profile_zeta(model, "cor_x.(Intercept)|g", np.array(inner))), norm.ppf(0.975), atol=1e-5)


@pytest.mark.slow
def test_slope_model_profile_matches_lme4():
    """sd's, correlation and fixed effects of ``y ~ x + (1 + x | g)`` (fixture: make_glmer_slope_confint_fixture.R)
    within 0.01 of a Wald half-width / 1.96 of lme4's spline ends (measured: 0.002)."""
    ref = json.loads((FIX / "glmer_slope_confint_fixture.json").read_text())
    df = pd.read_csv(DATA / ref["file"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer(ref["formula"], df)
    ours = profile_intervals(as_fit_model(fit), 0.95, progress=False)
    assert list(ours) == list(ref["profile"])
    for param, (lo_r, hi_r) in ref["profile"].items():
        lo, hi = ours[param]
        scale = ref["se"].get(param, (hi_r - lo_r) / (2 * 1.96))
        assert abs(lo - lo_r) <= 0.01 * scale and abs(hi - hi_r) <= 0.01 * scale, (param, (lo, hi), (lo_r, hi_r))


def test_singular_fit_profile_reaches_zero():
    """A sd estimated 0 (binary_singular.csv, the seed sd) gets the lower end 0 and an upper end where zeta is
    the normal quantile (lme4's confint stops on this fit: "profiling detected new, lower deviance")."""
    df = pd.read_csv(DATA / "binary_singular.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("correct ~ system + (1|item) + (1|seed)", df)
    model = as_fit_model(fit)
    name = "sd_(Intercept)|seed"
    lo, hi = profile_intervals(model, 0.95, names=[name], progress=False)[name]
    assert fit.theta[1] == 0.0 and lo == 0.0 and hi > 0
    assert profile_zeta(model, name, np.array([hi]))[0] == pytest.approx(norm.ppf(0.975), abs=1e-6)


def test_refused_inputs():
    with pytest.raises(InputError, match="glmer"):
        GlmmFitModel({"a": 1})


def test_reml_fit_is_profiled_as_its_ml_fit():
    """A glmer(REML=True) fit (the Study default) gets the intervals of the ML fit of the same model."""
    from mixeval import glmer
    from mixeval.uncertainty import confint

    rng = np.random.default_rng(2)
    df = pd.DataFrame({"item": np.repeat(np.arange(40), 4), "system": np.tile(["A", "B"], 80)})
    eta = rng.normal(size=40)[df.item] + 0.5 * (df.system == "B")
    df["correct"] = (rng.random(160) < 1 / (1 + np.exp(-eta))).astype(int)
    reml = glmer("correct ~ system + (1|item)", df, REML=True)
    ml = glmer("correct ~ system + (1|item)", df)
    a, b = confint(reml, method="wald").table, confint(ml, method="wald").table
    pd.testing.assert_frame_equal(a, b)
