"""The few-levels warning of the default z intervals (component shares, idealised coverage) and the calibrated
range of the experimental df="satterthwaite-upper"."""

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.errors import FewLevelsWarning, InputError
from mixeval.mixed import glmer, lmer
from mixeval.significance import emmeans, emmeans_response
from mixeval.significance._dominance import component_shares, idealised_z_coverage
from mixeval.significance._labels import fit_criterion
from mixeval.significance._upper_range import upper_range_problems


def _crossed(items=30, seeds=3, systems="AB", seed_sd=1.0, rng=0):
    rng = np.random.default_rng(rng)
    d = pd.DataFrame([(i, s, m) for i in range(items) for s in range(seeds) for m in systems],
                     columns=["item", "seed", "system"])
    d["score"] = (rng.normal(size=items)[d.item] + rng.normal(0, seed_sd, seeds)[d.seed]
                  + rng.normal(size=len(d)))
    return d


@pytest.mark.parametrize("levels, share", [(2, 0.5), (3, 1.0), (5, 0.7), (10, 0.9)])
def test_idealised_coverage_against_simulation(levels, share):
    rng = np.random.default_rng(levels)
    n = 400_000
    x = rng.chisquare(levels - 1, n)
    z = rng.normal(size=n)
    cover = np.mean(np.abs(z) < 1.959963984540054 * np.sqrt(share * x / (levels - 1) + 1 - share))
    assert idealised_z_coverage(levels, share) == pytest.approx(cover, abs=4 * np.sqrt(0.1 / n) + 1e-3)


def test_shares_of_a_balanced_grand_mean_are_the_closed_form():
    d = _crossed(items=30, seeds=4, systems="A")
    fit = lmer("score ~ 1 + (1|item) + (1|seed)", d)
    v = fit.variances
    parts = np.array([v["item"] / 30, v["seed"] / 4])
    total = parts.sum() + v["Residual"] / 120
    np.testing.assert_allclose(component_shares(fit, np.array([[1.0]]))[0], parts / total, atol=1e-6)


def test_shares_of_a_glmm_mean_and_contrast():
    d = _crossed(items=40, seeds=3, seed_sd=1.0, rng=1)
    d["correct"] = (d.score > 0).astype(int)
    fit = glmer("correct ~ system + (1|item) + (1|seed)", d)
    shares = component_shares(fit, np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert shares[0, 1] > 0.5 and shares[0].sum() <= 1
    assert shares[1, 1] < 1e-3  # crossed seeds cancel in the contrast


def test_study_default_warns_and_explicit_df_does_not():
    study = Study(_crossed(items=30, seeds=3), "score ~ system + (1|item) + (1|seed)")
    with pytest.warns(FewLevelsWarning, match="'seed' has 3 levels"):
        study.emmeans()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLevelsWarning)
        study.emmeans(df="asymptotic")
        study.pairwise()  # contrasts of crossed systems: the seeds cancel
    many = Study(_crossed(items=30, seeds=30, seed_sd=0.3), "score ~ system + (1|item) + (1|seed)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLevelsWarning)
        many.emmeans()


def test_upper_range_accepts_balanced_crossed_and_refuses_the_rest():
    d = _crossed(items=20, seeds=3)
    assert upper_range_problems(lmer("score ~ system + (1|item) + (1|seed)", d)) == []
    nested = d.assign(run=d.system + d.seed.astype(str))
    assert "nested" in " ".join(upper_range_problems(lmer("score ~ system + (1|item) + (1|run)", nested)))
    unbalanced = d.iloc[5:]
    fit = lmer("score ~ system + (1|item) + (1|seed)", unbalanced)
    assert "unbalanced" in " ".join(upper_range_problems(fit))
    with pytest.raises(InputError, match="experimental.*unbalanced"):
        emmeans(fit, "system", df="satterthwaite-upper")
    d["x"] = np.tile([0.0, 1.0, 2.0], len(d) // 3)
    d["correct"] = (d.score > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slopes = glmer("correct ~ system + (1 + x|item) + (1|seed)", d)
    assert "random slopes" in " ".join(upper_range_problems(slopes))
    with pytest.raises(InputError, match="random slopes on 'item'"):
        emmeans_response(slopes, "system", marginal=True)
    two = lmer("score ~ system + (1|item) + (1|seed)", _crossed(items=20, seeds=2))
    with pytest.raises(InputError, match="'seed' has 2 levels"):
        emmeans(two, "system", df="satterthwaite-upper")
    assert fit_criterion(slopes) == "Laplace" and fit_criterion(fit) == "REML"


def test_gaussian_study_reml_option_is_named_in_the_tables():
    d = _crossed(items=30, seeds=12, seed_sd=0.2)
    ml = Study(d, "score ~ system + (1|item) + (1|seed)", reml=False)
    assert not ml.fit.reml and ml.fit_ml is ml.fit
    table = ml.emmeans(df="satterthwaite")
    assert table.attrs["fit_criterion"] == "ML" and table.attrs["df_method"] == "satterthwaite"
    assert "Fit: ML; degrees of freedom: Satterthwaite" in table.attrs["note"]
    reml = Study(d, "score ~ system + (1|item) + (1|seed)")
    assert reml.fit.reml and reml.pairwise().fit_criterion == "REML"
    assert ml.where("seed < 6").reml is False  # a subset keeps the criterion
    lrt = ml.variance_lrt("seed")  # on REML fits whatever the Study's criterion
    assert lrt.statistic == pytest.approx(reml.variance_lrt("seed").statistic, rel=1e-6)
