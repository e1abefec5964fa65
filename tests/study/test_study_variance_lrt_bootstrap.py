"""Parametric-bootstrap p-values of variance-component LRTs (issue 36 item 13): keyword-only ``n_resamples=`` and
``random_state=``; the bootstrap's null distribution is the boundary mixture's with many levels and heavier at 0
with few, where the mixture is only asymptotic."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval import Study
from mixeval.errors import InputError


def _study(raters, seed=0, rater_sd=0.0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame([(i, r) for i in range(25) for r in range(raters)], columns=["item", "rater"])
    df["score"] = rng.normal(size=25)[df.item] + rng.normal(0, rater_sd, raters)[df.rater] + rng.normal(size=len(df))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Study(df, "score ~ (1|item) + (1|rater)")


def test_bootstrap_null_distribution_is_the_mixture_with_many_levels():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _study(40).variance_lrt("rater", n_resamples=400, random_state=3)
    draws = res.details["null_distribution"]
    assert draws.shape == (400,) and np.all(np.isfinite(draws))
    at_zero = np.mean(draws < 1e-6)
    assert at_zero == pytest.approx(0.5, abs=0.1)  # 50:50 mixture of chi2(0) and chi2(1); MC se 0.025
    positive = draws[draws >= 1e-6]
    assert stats.kstest(positive, stats.chi2(1).cdf).pvalue > 0.001
    finite = draws.size
    assert res.pvalue == pytest.approx((1 + np.sum(draws >= res.statistic - 1e-9 * (1 + res.statistic))) / (1 + finite))
    assert "parametric bootstrap (400 refits" in res.method and "pvalue_mixture" in res.details


def test_with_three_levels_the_bootstrap_puts_more_mass_at_zero_than_the_mixture():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = _study(3).variance_lrt("rater", n_resamples=300, random_state=4).details["null_distribution"]
    assert np.mean(draws < 1e-6) > 0.6  # the mixture's 0.5 is asymptotic in the number of levels


def test_bootstrap_options_are_keyword_only_seeded_and_checked():
    study = _study(4, rater_sd=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = study.variance_lrt("rater", n_resamples=30, random_state=7)
        b = study.variance_lrt("rater", n_resamples=30, random_state=7)
    assert a.pvalue == b.pvalue and 0 < a.pvalue <= 1 and a.details["pvalue_se"] > 0
    with pytest.raises(InputError, match="give n_resamples= too"):
        study.variance_lrt("rater", random_state=7)
    with pytest.raises(InputError, match="`n_resamples` must be a whole number >= 1"):
        study.variance_lrt("rater", n_resamples=0)
    with pytest.raises(TypeError):
        study.variance_lrt("rater", 30)


def test_glmm_variance_lrt_bootstrap():
    rng = np.random.default_rng(5)
    df = pd.DataFrame([(i, s) for i in range(40) for s in range(4)], columns=["item", "seed"])
    eta = rng.normal(size=40)[df.item] + rng.normal(0, 0.5, 4)[df.seed]
    df["correct"] = (rng.random(len(df)) < 1 / (1 + np.exp(-eta))).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(df, "correct ~ 1 + (1|item) + (1|seed)", family="binomial")
        res = study.variance_lrt("seed", n_resamples=20, random_state=1)
    assert 0 < res.pvalue <= 1 and res.details["null_distribution"].shape == (20,)
