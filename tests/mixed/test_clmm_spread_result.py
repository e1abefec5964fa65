"""A fit with random rater thresholds is a ClmmResult like every ordinal fit: its Hessian, predictions, simulation,
intervals and CLI output, each checked against the engine or the model without spreads."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.mixed import ClmmResult, MixedResult, clmm
from mixeval.mixed._clmm import ClmmDeviance
from mixeval.mixed._clmm_thresholds import RandomThresholdDeviance, random_threshold_problem
from test_clmm_thresholds import _null_point, ratings, widened_point

FORMULA = "rating ~ system + (1|item) + (1|rater)"


@pytest.fixture(scope="module")
def fits():
    df = ratings(11, 12, 25, 0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        null = clmm(FORMULA, df)
        fit = clmm(FORMULA, df, random_thresholds="rater")
    return df, null, fit


def test_one_result_type_with_the_widened_term(fits):
    df, null, fit = fits
    assert isinstance(fit, ClmmResult) and isinstance(fit, MixedResult)
    assert fit.spread == "rater" and null.spread is None
    assert fit.term_coef_names[fit.group_names.index("rater")] == ("(Intercept)", "spread")
    assert list(fit.varcorr_frame().name) == ["item", "rater", "rater.spread", "rater.(Intercept).spread"]
    assert fit.n_params == null.n_params + 2
    assert fit.cov_params is not None and np.all(np.isfinite(fit.coefficients.se))
    assert pickle.loads(pickle.dumps(fit)) == fit
    out = fit.to_dict()
    assert out["random_thresholds"] == "rater" and list(out["spread_contrast"]) == ["1|2", "2|3", "3|4", "4|5"]
    assert null.to_dict()["random_thresholds"] is None
    assert "Random thresholds: level r of rater" in fit.summary() and "random thresholds" in fit._repr_html_()


def test_hessian_off_the_spread_equals_the_model_without_spreads(fits):
    """With the spread column of Lambda at 0 the two deviances are the same function of (theta, alpha, beta), so the
    spread model's Hessian (second differences of the deviance) restricted to those coordinates equals the plain
    model's (central differences of its exact gradient)."""
    _, null, _ = fits
    dev = RandomThresholdDeviance(random_threshold_problem(null.problem, "rater"))
    x = widened_point(null)
    h = dev.hessian(x)
    r = [t.group for t in null.problem.re.terms].index("rater")
    keep = np.delete(np.arange(x.size), [r + 1, r + 2])
    h0 = ClmmDeviance(null.problem).hessian(_null_point(null))
    np.testing.assert_allclose(h[np.ix_(keep, keep)], h0, rtol=2e-4, atol=2e-4 * np.abs(h0).max())


def test_fitted_probabilities_are_the_engines_likelihood_terms(fits):
    """predict(type="prob") at each row's own rating is exp(l_i) of the Laplace engine at the conditional modes:
    the thresholds theta_j + s_r d_j and the shift enter the prediction as they enter the likelihood."""
    df, _, fit = fits
    dev = RandomThresholdDeviance(fit.problem)
    dev.u = fit.u
    _, rows, _ = dev.modes(np.concatenate([fit.theta, fit.alpha, fit.coef]))
    probs = fit.predict(type="prob").to_numpy()
    own = probs[np.arange(len(df)), fit.y]
    np.testing.assert_allclose(own, np.exp(rows.l), rtol=1e-8)
    # the spreads matter: the common thresholds with the same location give other probabilities
    common = fit.predict(type="prob", re=False).to_numpy()
    assert not np.allclose(probs, common, atol=1e-3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)


def test_new_levels_take_the_average_raters_thresholds(fits):
    df, _, fit = fits
    new = pd.DataFrame({"system": ["A", "B"], "item": [-1, -2], "rater": [-5, -6]})
    with pytest.raises(InputError, match="'rater' not in the fit"):
        fit.predict(new.assign(item=[0, 1]))
    np.testing.assert_allclose(fit.predict(new, allow_new_levels=True).to_numpy(), fit.predict(new, re=False).to_numpy(),
                               atol=1e-14)
    # a known rater keeps its own thresholds: its spread mode moves the outer categories
    known = pd.DataFrame({"system": ["A"], "item": [-1], "rater": [0]})
    s0 = float(fit.ranef["rater"].loc["0", "spread"])
    p = fit.predict(known, allow_new_levels=True).to_numpy()[0]
    c0 = float(fit.ranef["rater"].loc["0", "(Intercept)"])
    thr = fit.thresholds.to_numpy() + s0 * fit.spread_contrast.to_numpy()
    cdf = 1 / (1 + np.exp(-(thr - c0)))
    np.testing.assert_allclose(p, np.diff(np.concatenate([[0.0], cdf, [1.0]])), rtol=1e-10)


def test_simulated_ratings_carry_the_spread():
    """Ratings simulated from a fit with a large spread SD, refitted: the spread SD is recovered (the simulator
    draws (shift, spread) pairs and moves each rater's thresholds), and without spreads it is not."""
    df = ratings(5, 40, 30, 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = clmm(FORMULA, df, random_thresholds="rater")
        sim = fit.simulate(1, random_state=3)[:, 0]
        refit = fit.refit_response(sim)
    assert refit.spread == "rater"

    def spread_sd(f):
        return float(f.varcorr.set_index(["group", "name"]).loc[("rater", "spread"), "std"])

    assert spread_sd(fit) > 0.5
    assert abs(spread_sd(refit) - spread_sd(fit)) < 0.4
    assert fit.simulate(3, random_state=1).shape == (len(df), 3)
    np.testing.assert_array_equal(fit.simulate(2, random_state=9), fit.simulate(2, random_state=9))


def test_intervals_through_the_one_protocol(fits):
    _, _, fit = fits
    wald = fit.confint(method="wald").table
    assert list(wald.index[:4]) == ["sd_(Intercept)|item", "sd_(Intercept)|rater", "cor_spread.(Intercept)|rater",
                                    "sd_spread|rater"]
    z = 1.959963984540054
    tt = fit.threshold_table
    np.testing.assert_allclose(wald.loc[tt.index, "lower"], tt.estimate - z * tt.se, rtol=1e-10)
    assert np.isnan(wald.loc["cor_spread.(Intercept)|rater", "lower"])
    sd = wald.loc["sd_spread|rater"]
    assert 0 < sd.lower < sd.estimate < sd.upper
    boot = fit.confint(method="boot", n_resamples=4, random_state=2).table
    assert np.all(np.isfinite(boot.loc[tt.index, ["lower", "upper"]].to_numpy()))


def test_profile_interval_of_an_effect_is_near_its_wald_interval(fits):
    from mixeval.uncertainty import profile_intervals

    _, _, fit = fits
    lo, hi = profile_intervals(fit.model, names=["systemB"], progress=False)["systemB"]
    wlo, whi = fit.confint(method="wald").table.loc["systemB", ["lower", "upper"]]
    assert lo < fit.fixef["systemB"] < hi
    assert abs(lo - wlo) < 0.15 * (whi - wlo) and abs(hi - whi) < 0.15 * (whi - wlo)
    assert fit.model.deviance(fit.model.estimates()) == pytest.approx(fit.criterion, rel=1e-10)


def test_cli_fit_json_and_refusals(fits, tmp_path, capsys):
    from mixeval.cli import main

    df, _, fit = fits
    path = tmp_path / "r.csv"
    df.to_csv(path, index=False)
    assert main(["fit", str(path), FORMULA, "--family", "ordinal", "--random-thresholds", "rater", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["random_thresholds"] == "rater"
    assert out["loglik"] == pytest.approx(fit.loglik, rel=1e-9)
    assert out["varcorr"]["rater.spread"] == pytest.approx(fit.components["rater.spread"], rel=1e-6)
    assert main(["fit", str(path), "rating ~ system + (1|item) + (1|rater)", "--random-thresholds", "rater"]) == 2
    assert "--random-thresholds rater needs --family ordinal" in capsys.readouterr().err


def test_reliability_refuses_a_spread_fit_by_name(fits):
    from mixeval import phi

    _, null, fit = fits
    with pytest.raises(InputError, match="random_thresholds='rater'"):
        phi(fit, "item", {"rater": 6})
    assert 0 < phi(null, "item", {"rater": 6}) < 1


def test_emmeans_on_the_latent_scale_use_the_average_raters_thresholds(fits):
    """emmeans of a spread fit are those of the average rater (s_r = 0, c_r = 0): the expected rating from the
    fit's thresholds and effect with the Wald covariance of (alpha, beta)."""
    from mixeval.significance import emmeans_ordinal

    _, _, fit = fits
    em = emmeans_ordinal(fit, "system", mode="mean.class").set_index("system")
    for system, shift in (("A", 0.0), ("B", float(fit.fixef["systemB"]))):
        cum = 1 / (1 + np.exp(-(fit.thresholds.to_numpy() - shift)))
        probs = np.diff(np.concatenate([[0.0], cum, [1.0]]))
        assert em.loc[system, "mean.class"] == pytest.approx(float(probs @ np.arange(1, 6)), rel=1e-10)
    assert np.all(em.se > 0)
