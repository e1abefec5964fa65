"""Bad input, empty categories, the category order and the results' conventions of clmm."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.mixed import clmm
from mixeval.mixed._ordinal import EmptyCategoryWarning


def _ratings(seed=3, n_raters=12, per=30, cuts=(-1.5, -0.5, 0.5, 1.5)):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"rater": np.repeat([f"r{i}" for i in range(n_raters)], per),
                       "system": np.tile(["A", "B", "C"], n_raters * per // 3)})
    latent = 0.7 * (df.system == "B") + 1.2 * (df.system == "C") + rng.normal(0, 0.8, n_raters)[
        df.rater.str[1:].astype(int)] + rng.logistic(size=len(df))
    df["rating"] = np.digitize(latent, cuts) + 1
    return df


def test_non_integer_ratings_are_refused():
    df = _ratings()
    df["rating"] = df.rating + 0.5
    with pytest.raises(InputError, match="non-integer"):
        clmm("rating ~ system + (1|rater)", df)


def test_single_category_is_refused():
    df = _ratings()
    df["rating"] = 3
    with pytest.raises(InputError, match="single observed category"):
        clmm("rating ~ system + (1|rater)", df)


def test_unordered_strings_are_refused_and_levels_fix_it():
    df = _ratings()
    words = np.array(["bad", "poor", "fair", "good", "great"])
    df["label"] = words[df.rating - 1]
    with pytest.raises(InputError, match="levels="):
        clmm("label ~ system + (1|rater)", df)
    df["cat"] = pd.Categorical(df.label)
    with pytest.raises(InputError, match="unordered categorical"):
        clmm("cat ~ system + (1|rater)", df)
    by_levels = clmm("label ~ system + (1|rater)", df, levels=list(words))
    by_numbers = clmm("rating ~ system + (1|rater)", df)
    assert by_levels.loglik == pytest.approx(by_numbers.loglik, rel=1e-10)
    assert list(by_levels.thresholds.index) == ["bad|poor", "poor|fair", "fair|good", "good|great"]
    with pytest.raises(InputError, match="not in levels"):
        clmm("label ~ system + (1|rater)", df, levels=list(words[:4]))


def test_interior_empty_category_keeps_the_scale_and_warns():
    df = _ratings()
    df = df[df.rating != 3].reset_index(drop=True)
    with pytest.warns(EmptyCategoryWarning, match="'3'|3"):
        fit = clmm("rating ~ system + (1|rater)", df, levels=[1, 2, 3, 4, 5])
    t = fit.thresholds
    assert list(t.index) == ["1|2", "2|3", "3|4", "4|5"]
    assert t["2|3"] == t["3|4"]  # P(rating = 3) estimated as 0
    # the same as the model on the four observed categories
    merged = clmm("rating ~ system + (1|rater)", df)
    assert fit.loglik == pytest.approx(merged.loglik, rel=1e-10)
    probs = fit.predict(type="prob")
    assert list(probs.columns) == [1, 2, 3, 4, 5] and np.allclose(probs[3], 0.0)
    # an ordered Categorical with the unused category behaves the same
    df["cat"] = pd.Categorical(df.rating, categories=[1, 2, 3, 4, 5], ordered=True)
    with pytest.warns(EmptyCategoryWarning):
        by_cat = clmm("cat ~ system + (1|rater)", df)
    assert by_cat.loglik == pytest.approx(fit.loglik, rel=1e-10)


def test_empty_top_category_gives_an_infinite_threshold():
    df = _ratings()
    df = df[df.rating != 5].reset_index(drop=True)
    with pytest.warns(EmptyCategoryWarning):
        fit = clmm("rating ~ system + (1|rater)", df, levels=[1, 2, 3, 4, 5])
    assert fit.thresholds["4|5"] == np.inf and np.isnan(fit.threshold_table.se["4|5"])


def test_equidistant_thresholds_estimate_an_empty_category():
    df = _ratings()
    df = df[df.rating != 3].reset_index(drop=True)
    with pytest.warns(EmptyCategoryWarning, match="equidistant"):
        fit = clmm("rating ~ system + (1|rater)", df, levels=[1, 2, 3, 4, 5], threshold="equidistant")
    assert np.all(np.diff(fit.thresholds) > 0)


def test_bad_options_are_refused():
    df = _ratings()
    with pytest.raises(InputError, match="link"):
        clmm("rating ~ system + (1|rater)", df, link="cloglog2")
    with pytest.raises(InputError, match="threshold"):
        clmm("rating ~ system + (1|rater)", df, threshold="wiggly")
    with pytest.raises(InputError, match="nAGQ"):
        clmm("rating ~ system + (1|rater) + (1|rater:system)", df, nAGQ=5)
    with pytest.raises(InputError, match="intercept"):
        clmm("rating ~ 0 + system + (1|rater)", df)
    with pytest.raises(InputError, match="REML"):
        clmm("rating ~ system + (1|rater)", df).refit(REML=True)


def test_result_conventions_and_pickle():
    df = _ratings()
    fit = clmm("rating ~ system + (1|rater)", df)
    again = pickle.loads(pickle.dumps(fit))
    assert again == fit
    d = fit.to_dict()
    assert list(d["thresholds"]) == ["1|2", "2|3", "3|4", "4|5"] and set(d["varcorr"]) == {"rater"}
    assert "Threshold coefficients" in fit.summary() and "<table" in fit._repr_html_()
    from mixeval.mixed import MixedResult

    assert isinstance(fit, MixedResult)
    vc = fit.varcorr_frame()
    assert list(vc.columns) == ["name", "grp", "var1", "var2", "vcov", "sdcor"]
    assert vc.vcov[0] == pytest.approx(fit.components["rater"])
    # the varcorr table's percentages use the latent residual variance pi^2 / 3
    assert fit.varcorr.percent[0] == pytest.approx(100 * vc.vcov[0] / (vc.vcov[0] + np.pi**2 / 3))
    assert fit.latent_components["Residual"] == pytest.approx(np.pi**2 / 3)
    # predicted probabilities sum to one; the expected rating lies on the scale
    p = fit.predict(type="prob")
    assert np.allclose(p.sum(axis=1), 1.0)
    m = fit.predict(type="mean")
    assert np.all((m > 1) & (m < 5))
    new = pd.DataFrame({"system": ["A", "C"], "rater": ["r0", "unseen"]})
    assert fit.predict(new, type="latent", re=False)[1] == pytest.approx(fit.fixef["systemC"])
    with pytest.raises(InputError, match="allow_new_levels"):
        fit.predict(new, type="latent")
    latent = fit.predict(new, type="latent", allow_new_levels=True)
    assert latent[0] == pytest.approx(fit.ranef["rater"]["r0"]) and latent[1] == pytest.approx(fit.fixef["systemC"])
    sims = fit.simulate(3, random_state=1)
    assert sims.shape == (len(df), 3) and set(np.unique(sims)) <= {1, 2, 3, 4, 5}
    refit = fit.refit_response(sims[:, 0])
    assert refit.nobs == fit.nobs and refit.formula == fit.formula
    with pytest.raises(InputError, match="Wald"):
        fit.confint(method="profile")
    ci = fit.confint(method="Wald")
    assert {"lower", "upper", "level"} <= set(ci.columns) and (ci.lower < ci.upper).all()


def test_random_slopes_fit_and_improve_the_likelihood():
    df = _ratings(n_raters=15)
    df["x"] = (df.system == "C").astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slope = clmm("rating ~ x + (1 + x|rater)", df)
        inter = clmm("rating ~ x + (1|rater)", df)
    assert slope.loglik >= inter.loglik - 1e-8
    assert set(slope.variances) == {"rater", "rater.x"}
    assert len(slope.varcorr_frame()) == 3  # two variances and a covariance


def test_the_members_of_every_mixed_model():
    """The one-core members (tests/mixed/test_one_core.py's MEMBERS and METHODS) on an ordinal fit; the methods
    keep MixedResult's keyword-only options (confint defaults to Wald, the one interval ordinal fits have)."""
    import inspect

    from mixeval.mixed import GlmerResult, MixedResult
    from test_one_core import MEMBERS, METHODS

    fit = clmm("rating ~ system + (1|rater)", _ratings())
    for name in MEMBERS:
        getattr(fit, name)
    assert fit.distribution_variance == pytest.approx(np.pi**2 / 3)
    for name in METHODS:
        ours = inspect.signature(getattr(type(fit), name))
        base = inspect.signature(getattr(MixedResult, name, None) or getattr(GlmerResult, name))
        kinds = lambda sig: [(p.name, p.kind) for p in sig.parameters.values() if p.name != "self"]  # noqa: E731
        assert [n for n, _ in kinds(ours)] == [n for n, _ in kinds(base)] or name in ("predict", "confint"), name
    with pytest.raises(InputError, match="Wald"):
        fit.bootstrap(n_resamples=10)
    assert fit.deviance == fit.criterion == pytest.approx(-2 * fit.loglik)
    assert fit.predict(type="response").shape == (fit.nobs, 5)
