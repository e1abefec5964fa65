"""predict(newdata) as lme4's predict.merMod: random effects of known levels included by default (re.form = NULL),
new levels refused unless allow_new_levels (then 0), population level with re=False (re.form = NA); nothing about
the new rows silently dropped or recoded."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.errors import ColumnError, InputError


@pytest.fixture(scope="module")
def slopes():
    rng = np.random.default_rng(3)
    g = np.repeat([f"s{i}" for i in range(12)], 8)
    x = np.tile(np.linspace(-1, 1, 8), 12)
    cond = np.tile(["a", "b"], 48)
    b0, b1 = rng.normal(0, 1, 12), rng.normal(0, 0.5, 12)
    codes = np.repeat(np.arange(12), 8)
    y = 1 + 0.5 * x + (cond == "b") * 0.3 + b0[codes] + b1[codes] * x + rng.normal(0, 0.3, 96)
    df = pd.DataFrame({"y": y, "x": x, "g": g, "cond": cond})
    return mixeval.lmer("y ~ x + cond + (1 + x | g)", df), df


def test_known_levels_reproduce_the_fitted_values(slopes):
    fit, df = slopes
    new = df.sample(frac=1.0, random_state=1)  # reordered rows: predictions follow the rows, not the fit's order
    np.testing.assert_allclose(fit.predict(new), fit.fitted[new.index.to_numpy()], rtol=1e-10)


def test_by_hand_with_a_random_slope(slopes):
    fit, _ = slopes
    new = pd.DataFrame({"x": [0.25], "cond": ["b"], "g": ["s3"]})
    re = fit.ranef["g"].loc["s3"]
    fe = fit.fixef
    expected = fe["(Intercept)"] + fe["x"] * 0.25 + fe["condb"] + re["(Intercept)"] + re["x"] * 0.25
    assert fit.predict(new)[0] == pytest.approx(expected, rel=1e-10)
    assert fit.predict(new, re=False)[0] == pytest.approx(expected - re["(Intercept)"] - re["x"] * 0.25, rel=1e-10)


def test_new_levels_are_refused_or_population_level(slopes):
    fit, _ = slopes
    new = pd.DataFrame({"x": [0.0, 0.0], "cond": ["a", "a"], "g": ["s0", "never"]})
    with pytest.raises(InputError, match="'never'.*allow_new_levels"):
        fit.predict(new)
    got = fit.predict(new, allow_new_levels=True)
    assert got[1] == pytest.approx(fit.predict(new, re=False)[1])
    assert got[0] != pytest.approx(got[1])


def test_bad_new_rows_are_named(slopes):
    fit, _ = slopes
    with pytest.raises(ColumnError, match="'g'"):
        fit.predict(pd.DataFrame({"x": [0.0], "cond": ["a"]}))
    with pytest.raises(InputError, match="missing"):
        fit.predict(pd.DataFrame({"x": [np.nan], "cond": ["a"], "g": ["s0"]}), re=False)
    with pytest.raises(InputError, match="never saw"):
        fit.predict(pd.DataFrame({"x": [0.0], "cond": ["zzz"], "g": ["s0"]}), re=False)
    with pytest.raises(InputError, match="newdata only"):
        fit.predict(allow_new_levels=True)


@pytest.mark.filterwarnings("ignore::mixeval.errors.SingularFitWarning")
def test_glmm_nested_groups():
    rng = np.random.default_rng(5)
    site = np.repeat(["A", "B", "C"], 40)
    rater = np.tile(np.repeat(["r1", "r2", "r3", "r4"], 10), 3)
    eta = -0.2 + rng.normal(0, 0.8, 12)[np.repeat(np.arange(12), 10)]
    df = pd.DataFrame({"y": rng.binomial(1, 1 / (1 + np.exp(-eta))), "site": site, "rater": rater})
    fit = mixeval.glmer("y ~ 1 + (1|site/rater)", df, family="binomial")
    np.testing.assert_allclose(fit.predict(df.iloc[::-1]), fit.predict()[::-1], rtol=1e-10)
    # rater r1 of site A and of site B are different levels of rater:site
    new = pd.DataFrame({"site": ["A", "B"], "rater": ["r1", "r1"]})
    a, b = fit.predict(new, type="link")
    modes = fit.ranef
    assert a == pytest.approx(fit.fixef["(Intercept)"] + modes["rater:site"]["r1:A"] + modes["site"]["A"])
    assert b == pytest.approx(fit.fixef["(Intercept)"] + modes["rater:site"]["r1:B"] + modes["site"]["B"])


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "predict"


@pytest.fixture(scope="module")
def lme4_predict():
    return json.loads((FIXTURES / "predict_fixtures.json").read_text())


def test_slopes_equal_lme4(lme4_predict):
    """lmer(y ~ x + cond + (1 + x | g)): predict(newdata, allow.new.levels = TRUE) and re.form = NA, to 1e-5."""
    ref = lme4_predict["slopes"]
    fit = mixeval.lmer("y ~ x + cond + (1 + x | g)", pd.read_csv(FIXTURES / "slopes.csv"))
    new = pd.read_csv(FIXTURES / "slopes_new.csv")
    assert fit.loglik == pytest.approx(ref["loglik"], rel=1e-7)
    np.testing.assert_allclose(fit.predict(new, allow_new_levels=True), ref["re"], atol=1e-5)
    np.testing.assert_allclose(fit.predict(new, re=False), ref["population"], atol=1e-5)


@pytest.mark.filterwarnings("ignore::mixeval.errors.SingularFitWarning")
def test_nested_glmer_equals_lme4(lme4_predict):
    """glmer(y ~ system + (1 | site/rater), binomial), a singular fit (site variance 0) where lme4 stops 7.7e-5 short
    of mixeval's log-likelihood: link and response predictions of known and new levels within 5e-4 (the estimates
    differ by that much)."""
    ref = lme4_predict["nested"]
    fit = mixeval.glmer("y ~ system + (1|site/rater)", pd.read_csv(FIXTURES / "nested.csv"), family="binomial")
    new = pd.read_csv(FIXTURES / "nested_new.csv")
    assert ref["loglik"] - 1e-6 <= fit.loglik <= ref["loglik"] + 1e-3
    np.testing.assert_allclose(fit.predict(new, type="link", allow_new_levels=True), ref["link"], atol=5e-4)
    np.testing.assert_allclose(fit.predict(new, allow_new_levels=True), ref["response"], atol=5e-4)
    np.testing.assert_allclose(fit.predict(new, type="link", re=False), ref["population"], atol=5e-4)


def test_a_fit_from_a_design_matrix_refuses_new_rows():
    """The engine fit of a Bradley-Terry model (difference design, no formula terms) predicts its fitted rows only."""
    import warnings

    from mixeval.preferences import bradley_terry, simulate_arena

    log = simulate_arena(600, {"a": 0.5, "b": 0.0, "c": -0.5}, n_judges=5, judge_sd=0.5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = bradley_terry(log, judge="judge", position="random").model
    assert engine.predict().shape == (engine.nobs,)
    with pytest.raises(InputError, match="fitted from a formula"):
        engine.predict(log.head(3))
