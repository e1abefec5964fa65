"""Study(..., family="binomial"): GLRT, response- and link-scale means, odds ratios and accuracy differences,
conditional comparisons, latent-scale reliability; the Gaussian fit of a 0/1 score warns."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import Study, compare, glmer, lmer
from mixeval.errors import FamilyWarning, FewLevelsWarning, InputError
from mixeval.significance import emmeans_response, pairwise_ratios

FIX = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmer"
FORMULA = "correct ~ system + (1|item) + (1|seed)"


@pytest.fixture(scope="module")
def data():
    return pd.read_csv(FIX / "binary_crossed.csv")


@pytest.fixture(scope="module")
def study(data):
    return Study(data, FORMULA, family="binomial")


def test_study_glrt_is_the_glmer_lrt(study, data):
    res = study.glrt()
    direct = compare(glmer(FORMULA, data), glmer("correct ~ 1 + (1|item) + (1|seed)", data))
    assert res.statistic == pytest.approx(direct.statistic, rel=1e-6)
    assert res.df == 2


def test_study_means_default_to_accuracy(study):
    with pytest.warns(FewLevelsWarning, match="'seed' has 8 levels"):
        acc = study.emmeans()
    assert list(acc.columns[:2]) == ["system", "prob"]
    assert np.all((acc.lower < acc.prob) & (acc.prob < acc.upper) & (acc.lower > 0) & (acc.upper < 1))
    # the default is the Laplace (ML) fit, as lme4's glmer, with z intervals, as emmeans
    assert not study.fit.reml and study.fit is study.fit_ml
    pd.testing.assert_frame_equal(acc, emmeans_response(study.fit, "system"))
    assert np.all(np.isinf(acc.df))
    assert acc.attrs["fit_criterion"] == "Laplace" and acc.attrs["df_method"] == "asymptotic"
    assert "conditional" in acc.attrs["scale"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLevelsWarning)  # only the default warns
        assert np.all(np.isfinite(study.emmeans(df="satterthwaite").df))
        logit = study.emmeans(type="link", df="asymptotic")
    np.testing.assert_allclose(1 / (1 + np.exp(-logit.emmean)), acc.prob)


def test_study_reml_option(data, study):
    restricted = Study(data, FORMULA, family="binomial", reml=True)
    assert restricted.fit.reml and not restricted.fit_ml.reml
    assert restricted.fit_ml.loglik == pytest.approx(study.fit.loglik, abs=1e-8)
    # the restricted criterion shrinks the seed variance less than ML does
    assert restricted.fit.variances["seed"] > study.fit.variances["seed"]
    res = restricted.pairwise(df="asymptotic")
    assert res.fit_criterion == "restricted Laplace" and "Fit criterion: restricted Laplace" in res.summary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FamilyWarning)
        assert Study(data, FORMULA, reml=False).fit.reml is False
    with pytest.raises(InputError, match="reml="):
        Study(data, FORMULA, family="binomial", reml="yes")


def test_study_pairwise_scales(study):
    ratios = study.pairwise(df="asymptotic")
    assert "odds_ratio" in ratios.table.columns
    pd.testing.assert_frame_equal(ratios.table, pairwise_ratios(study.fit, "system").table)
    assert ratios.df_method == "asymptotic" and ratios.fit_criterion == "Laplace"
    assert "odds ratios" in ratios.summary() and "Fit criterion: Laplace" in ratios.summary()
    with pytest.raises(InputError, match="Kenward-Roger"):
        study.pairwise(df="kenward-roger")
    diffs = study.pairwise(scale="difference", adjust="holm", df="asymptotic")
    assert diffs.adjust == "holm" and diffs.table.estimate.abs().max() < 1
    link = study.pairwise(scale="link", adjust="BH", df="asymptotic")
    np.testing.assert_allclose(np.exp(link.table.estimate), ratios.table.odds_ratio)
    with pytest.raises(InputError, match="scale"):
        study.pairwise(scale="percent")
    with pytest.raises(InputError, match="scale='difference'"):
        study.pairwise(marginal=True)
    with pytest.raises(InputError, match="type='response'"):
        study.emmeans(type="link", marginal=True)
    with pytest.raises(InputError, match="df='asymptotic'"):
        study.emmeans(marginal=True, df="satterthwaite")
    # the experimental upper df refuse this unbalanced design
    with pytest.raises(InputError, match="experimental.*unbalanced"):
        study.emmeans(df="satterthwaite-upper")


def test_study_conditional_on_a_data_property(data):
    d = data.assign(length=(data.item.str[1:].astype(int) * 7) % 50)
    st = Study(d, FORMULA, family="binomial")
    test, pairs, cond = st.conditional("length", cuts=(20,), labels=("short", "long"))
    assert cond.family.name == "binomial" and test.df == 4
    assert set(pairs.table["length_class"]) == {"short", "long"} and "odds_ratio" in pairs.table.columns


def test_study_latent_scale_reliability(study):
    table = study.variance_components()
    assert table.set_index("component").loc["Residual", "variance"] == pytest.approx(np.pi**2 / 3)
    assert "latent" in table.attrs["note"].lower()
    v = study.fit.variances
    expected = v["item"] / (v["item"] + v["seed"] / 3 + np.pi**2 / 3 / 3)
    assert study.phi({"seed": 3}, scale="latent") == pytest.approx(expected)
    assert study.phi({"seed": 3}) < expected  # the default: the observed scale of the mean accuracy
    assert "(here, logit link" in study.summary()


def test_probit_study_uses_unit_residual(data):
    st = Study(data, FORMULA, family="binomial", link="probit")
    assert st.variance_components().set_index("component").loc["Residual", "variance"] == 1.0


def test_gaussian_fit_of_binary_score_warns_and_names_family(data):
    with pytest.warns(FamilyWarning, match='family="binomial"'):
        Study(data, FORMULA)
    with pytest.warns(FamilyWarning, match="binomial"):
        lmer(FORMULA, data)


def test_gaussian_fit_of_small_counts_warns_poisson():
    df = pd.read_csv(FIX / "poisson_counts.csv")
    df["count"] = (df["count"] // 3)
    with pytest.warns(FamilyWarning, match="poisson"):
        lmer("count ~ system + (1|item)", df)


def test_gaussian_fit_of_continuous_or_rating_scores_does_not_warn(data):
    rng = np.random.default_rng(0)
    df = data.assign(score=rng.integers(1, 6, len(data)).astype(float))  # 1..5 ratings
    with warnings.catch_warnings():
        warnings.simplefilter("error", FamilyWarning)
        lmer("score ~ system + (1|item)", df)


def test_family_options_validated(data):
    with pytest.raises(InputError, match="link"):
        Study(data, FORMULA, link="probit")
    with pytest.raises(InputError, match="family"):
        Study(data, FORMULA, family="gamma")


def test_poisson_latent_components_use_the_lognormal_observation_variance():
    from mixeval.reliability import latent_components

    df = pd.read_csv(FIX / "poisson_counts.csv")
    fit = glmer("count ~ 1 + (1|item) + (1|seed)", df, family="poisson")
    comps = latent_components(fit)
    lam = np.exp(fit.coef[0] + 0.5 * (comps["item"] + comps["seed"]))
    assert comps["Residual"] == pytest.approx(np.log1p(1 / lam))
    st = Study(df, "count ~ system + (1|item) + (1|seed)", family="poisson")
    assert "Poisson" in st.variance_components().attrs["note"] and "ratio" in st.pairwise().table.columns


def test_study_variance_components_with_wald_intervals(study):
    """The latent residual variance (pi^2 / 3) is fixed by the link: its row's interval is the value (it raised
    KeyError 'sigma'); the components' intervals are the squared sd intervals of confint."""
    table = study.variance_components(ci="wald").set_index("component")
    ci = study.confint(method="wald").table
    assert table.loc["item", "upper"] == pytest.approx(ci.loc["sd_(Intercept)|item", "upper"] ** 2)
    assert table.loc["Residual", "lower"] == table.loc["Residual", "upper"] == pytest.approx(np.pi**2 / 3)
