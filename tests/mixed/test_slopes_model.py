"""The FitModel of random-slope fits (mixeval/uncertainty/_slopes_model.py): parametrisation, deviances,
gradient, simulation, refits, Wald and bootstrap intervals (lme4 fixtures: tests/uncertainty/fixtures/make_confint_fixtures.R)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from mixeval import lmer
from mixeval.errors import InputError
from mixeval.uncertainty import as_fit_model, bootstrap_fit, confint
from mixeval.mixed._slopes_model import (SlopeFitModel, factor_to_sdcor, sdcor_to_factor, term_layout,
                                               wald_varpar_slopes)

FIX = Path(__file__).parents[1] / "uncertainty" / "fixtures"
CASES = {f["name"]: f for f in json.loads((FIX / "confint_fixtures.json").read_text())["fits"]}
SLOPES = CASES["slopes"]


def _fit(formula: str, df: pd.DataFrame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lmer(formula, df, **kw)


@pytest.fixture(scope="module")
def slopes_fit():
    return _fit(SLOPES["formula"], pd.read_csv(FIX / SLOPES["data"]["file"]))


@pytest.fixture(scope="module")
def three_coef():
    """A term with three coefficients (three correlations) and an intercept term, on generated data."""
    rng = np.random.default_rng(11)
    g = np.repeat(np.arange(25), 8)
    item = np.tile(np.arange(8), 25)
    x, z = rng.normal(size=200), rng.normal(size=200)
    chol = np.linalg.cholesky(np.array([[1.0, 0.3, -0.2], [0.3, 0.6, 0.1], [-0.2, 0.1, 0.4]]))
    b = rng.normal(size=(25, 3)) @ chol.T
    y = 2 + 0.5 * x + b[g, 0] + b[g, 1] * x + b[g, 2] * z + rng.normal(0, 0.7, 8)[item] + rng.normal(size=200)
    df = pd.DataFrame({"g": g, "item": item, "x": x, "z": z, "y": y})
    return _fit("y ~ x + z + (1 + x + z | g) + (1 | item)", df), df


def test_names_are_lme4s():
    # lme4 1.1.31: lme4:::profnames(lmer(rt ~ x + (1 + x + z | subject) + (1 | item)), signames = FALSE)
    names, kinds = term_layout("subject", ("(Intercept)", "x", "z"))
    assert names == ("sd_(Intercept)|subject", "cor_x.(Intercept)|subject", "cor_z.(Intercept)|subject",
                     "sd_x|subject", "cor_z.x|subject", "sd_z|subject")
    assert kinds == ("sd", "cor", "cor", "sd", "cor", "sd")


def test_sdcor_roundtrip():
    values = np.array([1.5, 0.3, -0.4, 2.0, 0.25, 0.7])
    lam = sdcor_to_factor(values, 3)
    assert np.allclose(np.triu(lam, 1), 0) and np.all(np.diag(lam) >= 0)
    np.testing.assert_allclose(factor_to_sdcor(lam), values, rtol=1e-12)
    cov = lam @ lam.T
    assert cov[2, 1] / np.sqrt(cov[1, 1] * cov[2, 2]) == pytest.approx(0.25)


def test_slope_fit_gets_the_slope_model(slopes_fit):
    model = as_fit_model(slopes_fit)
    assert isinstance(model, SlopeFitModel)
    assert model.param_names == tuple(SLOPES["profile"])  # lme4's order: item (40 levels) first
    est = dict(zip(model.param_names, model.estimates()))
    for name, value in SLOPES["boot"]["estimate"].items():  # bootMer's t0: lme4's own fit
        assert est[name] == pytest.approx(value, rel=1e-4)


def test_ml_estimates_and_deviances(slopes_fit):
    model = as_fit_model(slopes_fit)
    varpar, beta, dev = model.ml_estimates()
    ml = slopes_fit.refit(REML=False)
    assert dev == pytest.approx(ml.criterion, rel=1e-12)
    np.testing.assert_allclose(varpar, model.theta_to_varpar(ml.theta, ml.sigma), rtol=1e-6)
    np.testing.assert_allclose(beta, ml.coef, rtol=1e-8)
    assert model.ml_deviance(varpar) == pytest.approx(dev, abs=1e-8)
    for j, b in enumerate(beta):  # beta_j held at its MLE: the minimum itself
        assert model.ml_deviance_fixed(j, b) == pytest.approx(dev, abs=1e-6)
        assert model.ml_deviance_fixed(j, b + 5.0) > dev + 1e-3
    # at given (sd, cor, sigma): minimised over sigma with the relative factors held, the ML criterion at theta
    from scipy.optimize import minimize_scalar

    other = varpar * np.array([1.2, 0.8, 1.0, 1.1, 1.0])
    other[2] = -0.3
    theta = model.varpar_to_theta(other)
    np.testing.assert_allclose(model.theta_to_varpar(theta, other[-1]), other, rtol=1e-12)
    best = minimize_scalar(lambda s: model.ml_deviance(model.theta_to_varpar(theta, s)),
                           bounds=(0.5 * other[-1], 2 * other[-1]), method="bounded", options={"xatol": 1e-9})
    assert best.fun == pytest.approx(ml.criterion_at(theta), abs=1e-7)


@pytest.mark.parametrize("which", ["slopes", "three"])
def test_gradient_matches_finite_differences(which, slopes_fit, three_coef):
    fit = slopes_fit if which == "slopes" else three_coef[0]
    model = as_fit_model(fit)
    varpar = model.ml_estimates()[0]
    rng = np.random.default_rng(2)
    kinds = np.array(model.varpar_kinds)
    x = varpar * rng.uniform(0.8, 1.2, varpar.size)
    x[kinds == "cor"] = rng.uniform(-0.5, 0.5, int(np.sum(kinds == "cor")))
    value, grad = model.ml_deviance_and_gradient(x)
    assert value == pytest.approx(model.ml_deviance(x), abs=1e-7)
    fd = np.empty(x.size)
    for i in range(x.size):
        h = 1e-5 * max(abs(x[i]), 1e-2)
        e = np.zeros(x.size)
        e[i] = h
        fd[i] = (model.ml_deviance(x + e) - model.ml_deviance(x - e)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5 * np.max(np.abs(fd)))


def test_refit_fast_path_equals_a_full_fit(three_coef):
    fit, df = three_coef
    model = as_fit_model(fit)
    Y = model.simulate(3, np.random.default_rng(0))
    for b, summ in enumerate(model.refit(Y)):
        full = _fit(fit.formula, df.assign(y=Y[:, b]))
        ref = np.concatenate([model.theta_to_varpar(full.theta, full.sigma), full.coef])
        np.testing.assert_allclose(summ.params, ref, rtol=1e-6, atol=1e-8)
        assert summ.criterion == pytest.approx(full.criterion, rel=1e-10)
        np.testing.assert_allclose(summ.cov_coef, full.cov_coef, rtol=1e-6)
        assert summ.variances == pytest.approx(full.variances, rel=1e-6)
        result = model.refit_result(Y[:, b])
        assert result.criterion == pytest.approx(full.criterion, rel=1e-10)
        np.testing.assert_allclose(result.coef, full.coef, rtol=1e-8)


def test_simulated_covariance_is_the_fitted_one(slopes_fit):
    """Rows of one subject: covariance ``Z_s Sigma Z_s' + sigma_item^2 (same item) + sigma^2 I``; means ``X beta``."""
    model = as_fit_model(slopes_fit)
    df = pd.read_csv(FIX / SLOPES["data"]["file"])
    Y = model.simulate(10000, np.random.default_rng(3))
    cov_s = slopes_fit.covariances["(1 + x | subject)"].to_numpy()
    var_item = slopes_fit.variances["item"]
    rows = np.flatnonzero(df.subject == "s01")[:6]
    zs = np.column_stack([np.ones(rows.size), df.x.to_numpy()[rows]])
    expected = zs @ cov_s @ zs.T + slopes_fit.sigma2 * np.eye(rows.size)  # different items: no item covariance
    expected[np.diag_indices(rows.size)] += var_item
    got = np.cov(Y[rows])
    np.testing.assert_allclose(got, expected, rtol=0.08, atol=0.05 * expected.max())  # sd of an entry: ~2%
    mean = slopes_fit.design.X @ slopes_fit.coef
    se = np.sqrt(np.diag(expected) / 10000)
    assert np.all(np.abs(Y[rows].mean(axis=1) - mean[rows]) < 5 * se)


def test_wald_fixed_effects_match_lme4(slopes_fit):
    ci = confint(slopes_fit, method="wald").table
    se = np.sqrt(np.diag(slopes_fit.cov_coef))
    for (param, ref), s in zip([(k, v) for k, v in SLOPES["wald"].items() if v[0] != "NA"], se):
        # lme4's optimum differs from ours by ~1e-5 in theta (ours has the lower criterion)
        assert abs(ci.loc[param, "lower"] - ref[0]) < 1e-4 * s
        assert abs(ci.loc[param, "upper"] - ref[1]) < 1e-4 * s


def test_wald_correlation_is_delta_method(slopes_fit):
    iv = wald_varpar_slopes(slopes_fit, norm.ppf(0.975))
    cov = slopes_fit.varcomp_cov()
    frame = slopes_fit.varcorr_frame().set_index("name")
    keys = ["subject.(Intercept).x", "subject", "subject.x"]
    c, vi, vj = (float(frame.vcov[k]) for k in keys)
    rho = c / np.sqrt(vi * vj)
    grad = np.array([1 / np.sqrt(vi * vj), -rho / (2 * vi), -rho / (2 * vj)])
    se = np.sqrt(grad @ cov.loc[keys, keys].to_numpy() @ grad)
    lo, hi = iv["cor_x.(Intercept)|subject"]
    assert (lo, hi) == pytest.approx((rho - norm.ppf(0.975) * se, rho + norm.ppf(0.975) * se), rel=1e-12)
    sd = np.sqrt(vi)
    se_sd = np.sqrt(cov.loc["subject", "subject"]) / (2 * sd)
    assert iv["sd_(Intercept)|subject"] == pytest.approx((sd - 1.959963984540054 * se_sd, sd + 1.959963984540054 * se_sd))


@pytest.mark.slow
def test_bootstrap_within_monte_carlo_error_of_bootmer(slopes_fit, within_bootmer_error):
    ref = SLOPES["boot"]
    n_ours = 200
    boot = bootstrap_fit(slopes_fit, n_resamples=n_ours, random_state=7, progress=False)
    assert list(boot.draws.columns) == list(ref["intervals"])
    within_bootmer_error(boot, ref, n_ours)
    for param in ref["intervals"]:
        assert boot.se[param] == pytest.approx(ref["sd"][param], rel=0.25)  # sd of 200 draws: ~5% error


def test_bootstrap_statistic_and_seed(three_coef):
    fit, _ = three_coef
    a = bootstrap_fit(fit, n_resamples=6, random_state=5, progress=False)
    b = bootstrap_fit(fit, lambda m: [m.sigma, m.coef[1]], n_resamples=6, random_state=5, progress=False)
    np.testing.assert_allclose(b.draws.to_numpy(), a.draws[["sigma", "x"]].to_numpy(), rtol=1e-6)
    assert b.estimate.tolist() == pytest.approx([fit.sigma, fit.coef[1]])
    c = bootstrap_fit(fit, n_resamples=6, random_state=5, progress=False, n_jobs=2)
    pd.testing.assert_frame_equal(a.draws, c.draws)


def test_profile_three_coefficient_term_brackets_ml_estimates(three_coef):
    fit, _ = three_coef
    from mixeval.uncertainty import profile_intervals, profile_zeta

    model = as_fit_model(fit)
    names = ["cor_x.(Intercept)|g", "cor_z.x|g", "sd_z|g", "z"]
    ci = profile_intervals(model, 0.95, names=names, progress=False)
    varpar, beta, _ = model.ml_estimates()
    ml = dict(zip(model.param_names, np.concatenate([varpar, beta])))
    for name in names:
        assert -1 <= ci[name][0] < ml[name] < ci[name][1] <= (1 if name.startswith("cor_") else np.inf), name
    # zeta at an end is the critical value: the ML deviance rose by z^2 with everything else re-optimised
    z = profile_zeta(model, "cor_z.x|g", np.array(ci["cor_z.x|g"]))
    np.testing.assert_allclose(z, [-norm.ppf(0.975), norm.ppf(0.975)], atol=1e-5)


def test_repeated_names_refused():
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(12), 5)
    x = np.tile(np.arange(5.0), 12)
    df = pd.DataFrame({"g": g, "x": x, "y": rng.normal(size=12)[g] + x + rng.normal(size=60)})
    fit = _fit("y ~ x + (1 | g) + (1 + x | g)", df)
    with pytest.raises(InputError, match="repeated parameter names"):
        as_fit_model(fit)


def test_cli_confint_slope_model(capsys):
    from mixeval.cli import main

    path = FIX / SLOPES["data"]["file"]
    assert main(["confint", str(path), "rt ~ x + (1+x|subject) + (1|item)", "--method", "wald", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["intervals"]) == list(SLOPES["profile"])
    lo, hi = out["intervals"]["x"]
    assert (lo, hi) == pytest.approx(SLOPES["wald"]["x"], rel=1e-4)
    assert -1 <= out["intervals"]["cor_x.(Intercept)|subject"][0] < out["intervals"]["cor_x.(Intercept)|subject"][1] <= 1


def test_doctests():
    import doctest

    import mixeval.mixed._slopes_model as mod

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_singular_slope_fit_profiles():
    """A fit with the correlation at 1 (singular): the profile is defined there (a correlation of 1 gives a
    zero diagonal of Lambda). lme4 1.1.31 gives cor [-1, 1], sigma [0.8829, 1.1574] and sd_x [0, 0.303] with
    'non-monotonic profile' and 'bad spline fit' warnings: its upper sd_x end is wrong, the profile zeta there
    is 1.16 (checked by L-BFGS-B from 10 starts over the other parameters, which also gives 1.9598 at 0.4947).
    Optimised over lme4's sd/cor coordinates the profile stopped with the correlation stuck at 1 (0.32 here);
    over theta (SlopeFitModel.profile_varpar) it finds the minimum. The Wald interval of the correlation is NaN
    on the boundary."""
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(15), 8)
    x = np.tile(np.linspace(-1, 1, 8), 15)
    y = rng.normal(size=15)[g] + 0.5 * x + rng.normal(size=120)
    fit = _fit("y ~ x + (1 + x|g)", pd.DataFrame({"g": g, "x": x, "y": y}))
    assert fit.singular
    model = as_fit_model(fit)
    varpar = model.ml_estimates()[0]
    assert varpar[1] == pytest.approx(1.0) and np.isfinite(model.ml_deviance(varpar))
    from mixeval.uncertainty import profile_intervals, profile_zeta

    ci = profile_intervals(model, names=["cor_x.(Intercept)|g", "sd_x|g", "sigma"], progress=False)
    assert ci["cor_x.(Intercept)|g"] == (-1.0, 1.0)
    assert ci["sd_x|g"][0] == 0.0 and ci["sd_x|g"][1] == pytest.approx(0.4947, abs=1e-3)
    assert profile_zeta(model, "sd_x|g", [0.3027])[0] == pytest.approx(1.16, abs=0.01)
    assert ci["sigma"] == pytest.approx((0.8829, 1.1574), rel=2e-3)
    wald = wald_varpar_slopes(fit, 1.96)
    assert np.isnan(wald["cor_x.(Intercept)|g"][0])


@pytest.mark.slow
def test_profile_factor_slopes_matches_lme4():
    """``y ~ system + (1 + system | item)`` (a 3 x 3 term, three correlations; fixture factor_slopes_sim.csv),
    whose profiles reach the boundaries: every end within 1e-3 relative of lme4's ``confint`` but the lower end
    of the intercept sd, where lme4's spline is off (its own deviance function gives zeta -1.954 at its end;
    ours is the exact root, checked here by zeta itself)."""
    from mixeval.uncertainty import profile_intervals, profile_zeta

    case = CASES["factor_slopes"]
    fit = _fit(case["formula"], pd.read_csv(FIX / case["data"]["file"]))
    model = as_fit_model(fit)
    ours = profile_intervals(model, 0.95, progress=False)
    assert sorted(ours) == sorted(case["profile"])
    for param, ref in case["profile"].items():
        for side, (o, r) in enumerate(zip(ours[param], ref)):
            if (param, side) == ("sd_(Intercept)|item", 0):
                assert o < r and profile_zeta(model, param, [r])[0] > -1.96 + 1e-3
                assert profile_zeta(model, param, [o])[0] == pytest.approx(-norm.ppf(0.975), abs=1e-5)
                continue
            assert abs(o - r) <= max(1e-3 * abs(r), 1e-7), (param, ours[param], ref)
