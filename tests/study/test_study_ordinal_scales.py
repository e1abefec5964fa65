"""Ordinal Studies: what each probability is (issue 36 item 12: conditional, a typical item and rater, or
population-averaged with ``marginal=True``), ratings that are not numbers (``levels=``), and ``effect_size`` of the
probability modes (issue 38, rough cases)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from mixeval import Study
from mixeval.errors import InputError


@pytest.fixture(scope="module")
def ratings():
    rng = np.random.default_rng(12)
    d = pd.DataFrame([(i, r, s) for i in range(40) for r in range(5) for s in "AB"],
                     columns=["item", "rater", "system"])
    latent = 0.7 * (d.system == "B") + rng.normal(0, 1.2, 40)[d.item] + rng.normal(0, 0.5, 5)[d.rater]
    d["rating"] = np.digitize(latent + rng.logistic(size=len(d)), [-1.5, 0.0, 1.5]) + 1
    d["words"] = np.array(["poor", "fair", "good", "great"])[d.rating - 1]
    return d


@pytest.fixture(scope="module")
def study(ratings):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = Study(ratings, "rating ~ system + (1|item) + (1|rater)", family="ordinal")
        st.fit
    return st


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def test_probabilities_are_labelled_conditional_by_default(study):
    table = _quiet(lambda: study.emmeans(type="prob"))
    assert table.attrs["scale"] == "ordinal prob, conditional: a typical item and rater (random effects at 0)"
    assert "typical item and rater" in table.attrs["note"]
    pairs = _quiet(lambda: study.pairwise(scale="cum.prob"))
    assert "conditional: a typical item and rater" in pairs.scale and "typical item and rater" in pairs.summary()


def test_marginal_probabilities_integrate_the_random_effects(study):
    fit = study.fit
    table = _quiet(lambda: study.emmeans(type="prob", marginal=True))
    assert table.attrs["scale"].startswith("ordinal prob, marginal: averaged over the random effects of item and rater")
    # Monte Carlo over b ~ N(0, item + rater variance) at the fit's estimates, independent of the quadrature
    rng = np.random.default_rng(0)
    b = rng.normal(0.0, np.sqrt(sum(fit.variances.values())), 400_000)
    cuts = fit.threshold_values
    for system, eta in (("A", 0.0), ("B", float(fit.coef[0]))):
        cum = expit(cuts[None, :] - (eta + b)[:, None]).mean(axis=0)
        want = np.diff(np.concatenate([[0.0], cum, [1.0]]))
        got = table[table.system == system].sort_values("rating")["prob"].to_numpy()
        np.testing.assert_allclose(got, want, atol=3e-3)
        conditional = np.diff(np.concatenate([[0.0], expit(cuts - eta), [1.0]]))
        assert abs(got[0] - conditional[0]) > 0.01  # the typical item is not the average item
    assert np.all(table["se"] > 0) and np.all(np.isinf(table["df"]))
    mean = _quiet(lambda: study.emmeans(type="mean.class", marginal=True))
    assert mean["mean.class"].iloc[0] == pytest.approx(
        (table[table.system == "A"].sort_values("rating")["prob"].to_numpy() * np.arange(1, 5)).sum(), rel=1e-9)
    pairs = _quiet(lambda: study.pairwise(scale="prob", marginal=True))
    assert "marginal" in pairs.scale and "population-averaged" in pairs.summary()


def test_marginal_is_refused_where_it_has_no_meaning(study):
    with pytest.raises(InputError, match="latent mode is a linear predictor"):
        study.emmeans(type="latent", marginal=True)
    with pytest.raises(InputError, match="delta-method z intervals"):
        study.emmeans(type="prob", marginal=True, df="satterthwaite")
    with pytest.raises(InputError, match="marginal= must be True or False"):
        study.pairwise(scale="prob", marginal="yes")


def test_effect_size_is_given_for_the_latent_mode_and_dropped_with_a_reason(study):
    latent = _quiet(lambda: study.pairwise())
    assert latent.table["effect_size"].notna().all()
    prob = _quiet(lambda: study.pairwise(scale="prob"))
    assert "effect_size" not in prob.table.columns
    assert "differences of probabilities" in prob.effect_size_note and "scale='latent'" in prob.summary()


def test_ratings_in_words_take_their_order_from_levels(ratings, study):
    formula = "words ~ system + (1|item) + (1|rater)"
    with pytest.raises(InputError, match=r"levels=\['bad', 'ok', 'good'\]"):
        Study(ratings, formula, family="ordinal")
    words = _quiet(lambda: Study(ratings, formula, family="ordinal", levels=["poor", "fair", "good", "great"]))
    assert words.fit.levels == ("poor", "fair", "good", "great")
    assert words.fit.loglik == pytest.approx(study.fit.loglik, rel=1e-8)
    with pytest.raises(InputError, match="not in levels="):
        Study(ratings, formula, family="ordinal", levels=["poor", "fair", "good"])
    with pytest.raises(InputError, match="needs family='ordinal'"):
        Study(ratings, "rating ~ system + (1|item)", levels=[1, 2, 3, 4])
    ordered = ratings.assign(words=pd.Categorical(ratings.words, ["poor", "fair", "good", "great"], ordered=True))
    assert _quiet(lambda: Study(ordered, formula, family="ordinal").fit.levels) == ("poor", "fair", "good", "great")
    sub = _quiet(lambda: words.where(system="A"))
    assert sub.levels == words.levels
