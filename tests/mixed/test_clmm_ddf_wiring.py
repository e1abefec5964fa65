"""Satterthwaite df of a clmm fit where users meet them: Wald t intervals (ClmmResult.confint), emmeans_ordinal,
pairwise_ordinal and an ordinal Study with df="satterthwaite"."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval import Study
from mixeval.errors import InputError
from mixeval.mixed import clmm
from mixeval.mixed._clmm_ddf import clmm_satterthwaite_df
from mixeval.significance import emmeans_ordinal, pairwise_ordinal


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    grid = pd.MultiIndex.from_product([range(30), ["A", "B", "C"], range(5)], names=["item", "system", "rater"])
    df = grid.to_frame(index=False)
    latent = (df.system.map({"A": 0.0, "B": 0.5, "C": 0.5}).to_numpy() + rng.normal(0, 1, 30)[df.item]
              + rng.normal(0, 0.55, 5)[df.rater] + rng.logistic(size=len(df)))
    df["rating"] = np.digitize(latent, [-2.0, -0.7, 0.6, 2.0]) + 1
    return df


@pytest.fixture(scope="module")
def fit(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clmm("rating ~ system + (1|item) + (1|rater)", data)


def test_wald_t_intervals_use_the_satterthwaite_df(fit):
    z = fit.confint(method="wald").table
    t = fit.confint(method="wald", df="satterthwaite", level=0.9).table
    dof = clmm_satterthwaite_df(fit)
    se = np.sqrt(np.diag(fit.cov_params))[fit.theta.size:]
    crit = stats.t.ppf(0.95, dof.to_numpy())
    np.testing.assert_allclose(t.loc[dof.index, "upper"] - t.loc[dof.index, "estimate"], crit * se, rtol=1e-10)
    np.testing.assert_allclose(t.loc[dof.index, "df"], dof.to_numpy())
    assert np.all(np.isinf(t.loc[["sd_(Intercept)|item", "sd_(Intercept)|rater"], "df"]))
    # the thresholds' df are those of few raters, the within-rater effects' are large
    assert t.loc["2|3", "df"] < 60 and t.loc["systemB", "df"] > 1000
    z95 = fit.confint(method="wald", df="satterthwaite").table
    assert np.all((z95.loc[dof.index, "upper"] - z95.loc[dof.index, "lower"])
                  >= (z.loc[dof.index, "upper"] - z.loc[dof.index, "lower"]) - 1e-12)


def test_df_refused_with_the_other_methods(fit):
    with pytest.raises(InputError, match="method='wald'"):
        fit.confint(method="profile", df="satterthwaite")
    with pytest.raises(InputError, match="'asymptotic'"):
        fit.confint(method="wald", df="kenward-roger")


@pytest.mark.parametrize("mode", ["latent", "mean.class", "exc.prob"])
def test_emmeans_and_pairwise_take_satterthwaite_df(fit, mode):
    z = emmeans_ordinal(fit, "system", mode=mode)
    t = emmeans_ordinal(fit, "system", mode=mode, df="satterthwaite")
    est = z.columns[z.columns.get_loc("se") - 1]
    np.testing.assert_allclose(t[est], z[est])
    np.testing.assert_allclose(t.se, z.se)
    assert np.all(np.isfinite(t.df)) and np.all(t.df > 1)
    crit = stats.t.ppf(0.975, t.df.to_numpy())
    np.testing.assert_allclose(t.upper - t[est], crit * t.se, rtol=1e-10)
    pw = pairwise_ordinal(fit, "system", mode=mode, df="satterthwaite", adjust="none").table
    assert "t" in pw.columns and "z" not in pw.columns
    assert np.all(pw.df > 1)
    two_sided = 2 * stats.t.sf(np.abs(pw.t), pw.df)
    np.testing.assert_allclose(pw.pvalue, two_sided, rtol=1e-8)


def test_latent_contrasts_of_within_rater_effects_are_near_z(fit):
    pw = pairwise_ordinal(fit, "system", df="satterthwaite", adjust="none").table
    z = pairwise_ordinal(fit, "system", adjust="none").table
    assert np.all(pw.df > 1000)
    np.testing.assert_allclose(pw.pvalue, z.pvalue, rtol=1e-2)  # t on ~1e4 df


def test_ordinal_study_passes_df(data):
    study = Study(data, "rating ~ system + (1|item) + (1|rater)", family="ordinal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em = study.emmeans(df="satterthwaite", type="mean.class")
        pw = study.pairwise(df="satterthwaite", adjust="holm")
    assert np.all(np.isfinite(em.df)) and pw.df_method == "satterthwaite"
    with pytest.raises(InputError, match="satterthwaite"):
        study.emmeans(df="kenward-roger")


def test_other_families_refuse_satterthwaite_confint_by_name():
    from mixeval import lmer

    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(15), 4)
    df = pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)})
    fit = lmer("y ~ 1 + (1|g)", df)
    with pytest.raises(InputError, match="offered for ordinal"):
        fit.confint(method="wald", df="satterthwaite")
    assert "df" not in fit.confint(method="wald").table.columns
