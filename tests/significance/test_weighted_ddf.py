"""Degrees of freedom of weighted Gaussian fits (issue 38 item 5): Satterthwaite equal to lmerTest's on
``lmer(..., weights = w)``, Kenward-Roger with the weighted residual covariance (pbkrtest's own routines given
``sigma^2 W^-1``; fixtures by ``fixtures/weighted/make_weighted_ddf.R``), and a weighted Study's default
emmeans()/pairwise() (which crashed) on Kenward-Roger."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.significance import kenward_roger_vcov

HERE = Path(__file__).parent / "fixtures" / "weighted"
FIXTURES = json.loads((HERE / "weighted_ddf.json").read_text())
CASES = ["single", "crossed"]


def _study(case):
    data = pd.read_csv(HERE / f"weighted_{case}.csv")
    return Study(data, FIXTURES[case]["formula"].replace(" | ", "|"), weights="w")


@pytest.mark.parametrize("case", CASES)
def test_weighted_fit_is_lmers(case):
    fit, want = _study(case).fit, FIXTURES[case]
    for name, value in want["variances"].items():
        assert fit.variances[name] == pytest.approx(value, rel=1e-6)
    np.testing.assert_allclose(fit.coef, want["fixef"], rtol=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_weighted_satterthwaite_is_lmertests(case):
    study, want = _study(case), FIXTURES[case]
    means = study.emmeans(df="satterthwaite")
    np.testing.assert_allclose(means["df"], want["emmeans_satterthwaite"]["df"], rtol=2e-5)
    np.testing.assert_allclose(means["se"], want["emmeans_satterthwaite"]["se"], rtol=1e-5)
    pairs = study.pairwise(df="satterthwaite", adjust="none").table
    for column, key in (("estimate", "estimate"), ("se", "se"), ("df", "df"), ("t", "t"), ("pvalue", "pvalue")):
        np.testing.assert_allclose(pairs[column], want["pairs_satterthwaite"][key], rtol=2e-5, atol=1e-12)
    np.testing.assert_allclose(study.fit.coef_tests()["df"], want["coef_df"], rtol=2e-5)


@pytest.mark.parametrize("case", CASES)
def test_weighted_kenward_roger_uses_the_weights(case):
    study, want = _study(case), FIXTURES[case]
    np.testing.assert_allclose(kenward_roger_vcov(study.fit), np.array(want["vcov_kr_weighted"]), rtol=1e-5)
    means = study.emmeans(df="kenward-roger")
    np.testing.assert_allclose(means["se"], want["emmeans_kr_weighted"]["se"], rtol=1e-5)
    np.testing.assert_allclose(means["df"], want["emmeans_kr_weighted"]["df"], rtol=2e-5)
    pairs = study.pairwise(df="kenward-roger", adjust="none").table
    np.testing.assert_allclose(pairs["se"], want["pairs_kr_weighted"]["se"], rtol=1e-5)
    np.testing.assert_allclose(pairs["df"], want["pairs_kr_weighted"]["df"], rtol=2e-5)
    # pbkrtest's vcovAdj on the weighted lmer (emmeans' default) takes the residual covariance as sigma^2 I:
    # its standard errors and df are not the weighted model's
    assert not np.allclose(want["kr_emmeans_unweighted_G"]["se"], means["se"], rtol=1e-3)


@pytest.mark.parametrize("case", CASES)
def test_weighted_study_defaults_do_not_crash_and_name_the_method(case):
    import warnings

    study, want = _study(case), FIXTURES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a FewLevelsWarning for the 5 raters is expected
        means = study.emmeans()
        pairs = study.pairwise()
    assert means.attrs["df_method"] == "kenward-roger" and "emmeans'" in means.attrs["df_rule"]
    np.testing.assert_allclose(means["df"], want["emmeans_kr_weighted"]["df"], rtol=2e-5)
    assert pairs.df_method == "kenward-roger" and "Kenward-Roger" in pairs.summary()
