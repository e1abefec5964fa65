"""The evaluator of ordinal fits (mixeval/mixed/_clmm_model.py): profile intervals against ordinal's profiles
(fixtures of tests/mixed/fixtures/clmm/make_clmm_profile_fixtures.R), the parametric bootstrap through the one
bootstrap code, Wald intervals, and the arguments of the result's methods."""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import clmm
from mixeval.errors import InputError, InputTypeError
from mixeval.mixed import ClmmResult
from mixeval.mixed._clmm_model import ClmmFitModel
from mixeval.mixed._confint import ConfintResult
from mixeval.uncertainty import FitModel, as_fit_model

FIX = Path(__file__).parent / "fixtures" / "clmm"
PROFILES = json.loads((FIX / "clmm_profile_fixtures.json").read_text())
NAMES = {"tw": "tempwarm", "cy": "contactyes", "sd_judge": "sd_(Intercept)|judge"}


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    return pd.read_csv(FIX / "wine.csv")


def _ratings(seed: int = 3, n_items: int = 30, n_raters: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product([range(n_items), ["A", "B", "C"], range(n_raters)],
                                      names=["item", "system", "rater"]).to_frame(index=False)
    eta = (grid.system.map({"A": 0.0, "B": 0.5, "C": 1.0}).to_numpy() + rng.normal(0, 1.0, n_items)[grid.item]
           + rng.normal(0, 0.5, n_raters)[grid.rater])
    grid["rating"] = np.searchsorted([-2.0, -0.7, 0.6, 2.0], eta + rng.logistic(size=len(grid))) + 1
    grid["item"] = "i" + grid.item.astype(str)
    grid["rater"] = "r" + grid.rater.astype(str)
    return grid


@pytest.fixture(scope="module")
def rated() -> ClmmResult:
    return clmm("rating ~ system + (1|item) + (1|rater)", _ratings())


# ----------------------------------------------------------------------------- profile vs ordinal

@pytest.mark.parametrize("case", sorted(PROFILES))
def test_profile_intervals_equal_ordinals(wine, case):
    """Every bound within 1e-4 of the root of ordinal's signed root deviance found tightly in R (location effects by
    offsets in clm/clmm, the judge sd by clmm2's sdFixed refits, clm thresholds by the written-out likelihood);
    and within 1e-3 of ordinal's own spline-interpolated confint(clm) and confint(profile(clmm2))."""
    c = PROFILES[case]
    fit = clmm(c["formula"], wine, link=c["link"])
    assert fit.loglik == pytest.approx(c["loglik"], abs=1e-5)
    ci = fit.confint(method="profile", progress=False)
    assert isinstance(ci, ConfintResult) and ci.method == "profile"
    for name, (lo, hi) in c["tight"].items():
        row = ci.table.loc[NAMES.get(name, name)]
        assert row.lower == pytest.approx(lo, abs=1e-4), name
        assert row.upper == pytest.approx(hi, abs=1e-4), name
    for name, (lo, hi) in c.get("ordinal_confint", {}).items():
        row = ci.table.loc[NAMES[name]]
        assert (row.lower, row.upper) == pytest.approx((lo, hi), abs=1e-3)
    if "ordinal_clmm2_profile_sd" in c:
        row = ci.table.loc["sd_(Intercept)|judge"]
        assert (row.lower, row.upper) == pytest.approx(tuple(c["ordinal_clmm2_profile_sd"]), abs=1e-3)


def test_profile_zeta_is_the_signed_root_deviance(wine):
    """zeta at the estimate is 0, and at a held value it is sign * sqrt(D(v) - D_hat) with D(v) re-optimised."""
    from mixeval.mixed._profile import profile_zeta

    fit = clmm("rating ~ temp + contact + (1|judge)", wine)
    model = fit.model
    est = fit.fixef["tempwarm"]
    z = profile_zeta(model, "tempwarm", np.array([est, est + 0.5]))
    assert abs(z[0]) < 1e-4
    dev, _ = model.profile_deviance(model.param_names.index("tempwarm"), est + 0.5, model.estimates())
    assert z[1] == pytest.approx(np.sqrt(dev - fit.deviance), rel=1e-6)
    # with the held value at the estimate, the re-optimised deviance is the fit's
    assert model.ml_deviance_fixed(model.fixed_names.index("tempwarm"), est) == pytest.approx(fit.deviance, abs=1e-6)
    assert model.ml_deviance(np.array([fit.theta[0]])) == pytest.approx(fit.deviance, abs=1e-6)
    # the gradient of the deviance profiled over thresholds and effects: central differences of ml_deviance
    sd = fit.theta[0] * 1.3
    value, grad = model.ml_deviance_and_gradient(np.array([sd]))
    h = 1e-5
    fd = (model.ml_deviance(np.array([sd + h])) - model.ml_deviance(np.array([sd - h]))) / (2 * h)
    assert value == pytest.approx(model.ml_deviance(np.array([sd])), abs=1e-8)
    assert grad[0] == pytest.approx(fd, rel=1e-4)


def test_profile_of_a_flexible_threshold_keeps_the_thresholds_ordered(wine):
    """A threshold held beyond its neighbour pushes it along (the deviance is defined only for ordered thresholds)."""
    fit = clmm("rating ~ temp + contact + (1|judge)", wine)
    model = fit.model
    i = model.param_names.index("1|2")
    value = fit.alpha[1] + 1.0  # beyond "2|3"
    dev, par = model.profile_deviance(i, value, model.estimates())
    alpha = par[model.n_var:model.n_var + 4]
    assert np.isfinite(dev) and dev > fit.deviance and np.all(np.diff(alpha) > 0)


def test_profile_of_random_slopes_and_quadrature_fits():
    """Vector-valued terms (sd's and a correlation through Sv_to_Cv, finite differences) and AGQ fits: the
    intervals of a correlation and of a standard deviation bracket the estimates."""
    from mixeval.mixed._profile import profile_intervals

    df = _ratings(seed=5, n_items=10, n_raters=8)
    df["x"] = (df.system == "C").astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slope = clmm("rating ~ x + (1 + x|rater)", df)
        agq = clmm("rating ~ system + (1|item)", df, nAGQ=3)
    assert slope.model.param_names[:3] == ("sd_(Intercept)|rater", "cor_x.(Intercept)|rater", "sd_x|rater")
    est = dict(zip(slope.model.param_names, slope.model.estimates()))
    name = "cor_x.(Intercept)|rater"
    lo, hi = profile_intervals(slope.model, 0.8, names=[name], progress=False)[name]
    assert -1 <= lo <= est[name] <= hi <= 1
    est = dict(zip(agq.model.param_names, agq.model.estimates()))
    name = "sd_(Intercept)|item"
    lo, hi = profile_intervals(agq.model, 0.8, names=[name], progress=False)[name]
    assert 0 <= lo < est[name] < hi


# ----------------------------------------------------------------------------- the protocol and the bootstrap

def test_the_model_is_a_fit_model(rated):
    model = rated.model
    # every member of the protocol (scalar terms: the optional gradient too)
    assert isinstance(model, FitModel) and isinstance(model, ClmmFitModel) and as_fit_model(rated) is model
    assert model.param_names == ("sd_(Intercept)|item", "sd_(Intercept)|rater", "1|2", "2|3", "3|4", "4|5",
                                 "systemB", "systemC")
    np.testing.assert_allclose(model.estimates(), np.concatenate([rated.theta, rated.alpha, rated.coef]))
    back = pickle.loads(pickle.dumps(rated))
    assert back == rated and back.model.param_names == model.param_names


def test_wald_intervals_are_the_ones_of_the_tables(rated):
    ci = rated.confint(method="wald", level=0.9)
    assert isinstance(ci, ConfintResult) and ci.level == 0.9 and ci.table.attrs["level"] == 0.9
    z = 1.6448536269514722
    t = ci.table
    th = rated.alpha_table
    np.testing.assert_allclose(t.loc[list(th.index), "upper"] - t.loc[list(th.index), "lower"], 2 * z * th.se)
    co = rated.coefficients
    np.testing.assert_allclose(t.loc[list(co.index), "lower"], co.estimate - z * co.se)
    vt = rated.varcorr_se  # sd's on the log scale: sd * exp(-/+ z se(var) / (2 var))
    sd = np.sqrt(vt.variance.to_numpy())
    np.testing.assert_allclose(t.loc[["sd_(Intercept)|item", "sd_(Intercept)|rater"], "upper"],
                               sd * np.exp(z * vt.se.to_numpy() / (2 * vt.variance.to_numpy())))


def test_bootstrap_intervals_through_the_one_bootstrap(rated):
    """Percentile intervals of the refits' estimates; the same seed gives the same draws; the refits' spread
    of the effects agrees with the Wald standard errors (a 540-rating design: within 40% for 40 refits)."""
    boot = rated.bootstrap(n_resamples=40, random_state=4, progress=False)
    ci = rated.confint(method="boot", n_resamples=40, random_state=4, progress=False)
    assert ci.method == "boot" and ci.n_resamples == 40
    assert list(ci.table.index) == list(rated.model.param_names)
    np.testing.assert_allclose(ci.table.lower, boot.draws.quantile(0.025).to_numpy())
    np.testing.assert_allclose(ci.table.upper, boot.draws.quantile(0.975).to_numpy())
    se = boot.se[["systemB", "systemC"]].to_numpy()
    np.testing.assert_allclose(se, rated.coefficients.se.to_numpy(), rtol=0.4)
    assert abs(boot.draws["systemC"].mean() - rated.fixef["systemC"]) < 4 * se[1] / np.sqrt(40) + 0.05
    stat = rated.bootstrap(lambda m: m.fixef["systemC"], n_resamples=2, random_state=1, progress=False)
    assert stat.draws.shape == (2, 1)
    with pytest.raises(InputError, match="n_resamples"):
        rated.bootstrap(n_resamples=0)


def test_a_refit_at_the_fit_response_returns_the_fit(rated):
    """The warm-started refit of the fit's own ratings is the fit (same optimum)."""
    model = rated.model
    codes = np.asarray(rated.y)
    r = model.refit(codes[:, None])[0]
    np.testing.assert_allclose(r.params, model.estimates(), rtol=1e-4, atol=1e-5)
    assert r.criterion == pytest.approx(rated.deviance, abs=1e-6)
    assert set(r.variances) == set(rated.variances)


def test_a_refit_missing_a_category_maps_its_thresholds():
    """Flexible thresholds of a simulated data set without the top category: +inf for the top threshold, the
    others those of a fit of the data."""
    df = _ratings(seed=8, n_items=20, n_raters=4)
    fit = clmm("rating ~ system + (1|item)", df)
    codes = np.minimum(np.asarray(fit.y), 3)  # no 5s
    r = fit.model.refit(codes)[0]
    direct = fit.refit_response(np.asarray(fit.levels)[codes])
    np.testing.assert_allclose(r.params[1:4], direct.alpha, rtol=1e-4, atol=1e-5)
    assert r.params[4] == np.inf


def test_nominal_fits_profile_but_do_not_simulate(wine):
    fit = clmm("rating ~ temp", wine, nominal="contact")
    ci = fit.confint(method="profile", progress=False, level=0.8).table
    assert ((ci.lower < ci.estimate) & (ci.estimate < ci.upper)).all()
    with pytest.raises(InputError, match="nominal effects"):
        fit.confint(method="boot", n_resamples=5)


# ----------------------------------------------------------------------------- arguments

def test_refit_takes_reml_false_or_none_only(rated):
    assert rated.refit(REML=False) is rated and rated.refit(REML=None) is rated
    with pytest.raises(InputError, match="REML=True"):
        rated.refit(REML=True)
    with pytest.raises(InputTypeError, match="REML"):
        rated.refit(REML="no")
    with pytest.raises(TypeError):
        rated.refit(False)
    with pytest.raises(InputError, match="reml=True"):
        rated.model.refit(np.asarray(rated.y), reml=True)
    with pytest.raises(InputError, match="reml"):
        rated.model.refit_result(np.asarray(rated.y), reml="yes")


def test_confint_arguments_are_checked(rated):
    with pytest.raises(InputError, match="method"):
        rated.confint(method="bca")
    with pytest.raises(InputError, match="level"):
        rated.confint(method="wald", level=95)
    with pytest.raises(TypeError):
        rated.confint(method="wald", nsim=10)
    with pytest.raises(InputError, match="ClmmResult|clmm"):
        ClmmFitModel(object())
