"""Response-scale marginal means and comparisons of a glmer fit against emmeans
(fixture: tests/mixed/fixtures/glmer/make_emmeans_glmer_fixtures.R). Our vcov agrees with lme4's to ~2e-5
relative on this fit, so means, SEs and intervals are compared to 1e-4 relative."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import glmer
from mixeval.significance import (
    emmeans,
    emmeans_response,
    pairwise_differences,
    pairwise_ratios,
)

FIX = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmer"
REF = json.loads((FIX / "emmeans_glmer_fixtures.json").read_text())


@pytest.fixture(scope="module")
def fit():
    df = pd.read_csv(FIX / "binary_crossed.csv")
    return glmer("correct ~ system + (1|item) + (1|seed)", df, family="binomial")


def test_link_scale_means(fit):
    t = emmeans(fit, "system")
    np.testing.assert_allclose(t.emmean, REF["link"]["emmean"], rtol=1e-4)
    np.testing.assert_allclose(t.se, REF["link"]["SE"], rtol=1e-4)


def test_response_scale_means_are_accuracies_with_back_transformed_intervals(fit):
    t = emmeans_response(fit, "system")
    r = REF["response"]
    np.testing.assert_allclose(t.prob, r["prob"], rtol=1e-4)
    np.testing.assert_allclose(t.se, r["SE"], rtol=1e-4)
    np.testing.assert_allclose(t.ci_low, r["asymp.LCL"], rtol=1e-4)
    np.testing.assert_allclose(t.ci_high, r["asymp.UCL"], rtol=1e-4)


@pytest.mark.parametrize("key, adjust", [("odds_ratios_tukey", "tukey"), ("odds_ratios_bh", "BH")])
def test_odds_ratios(fit, key, adjust):
    t = pairwise_ratios(fit, "system", adjust=adjust).table
    r = REF[key]
    assert t.contrast.tolist() == r["contrast"]
    np.testing.assert_allclose(t.odds_ratio, r["odds.ratio"], rtol=1e-4)
    np.testing.assert_allclose(t.se, r["SE"], rtol=1e-4)
    np.testing.assert_allclose(t.pvalue, r["p.value"], rtol=1e-3)
    if adjust == "tukey":
        np.testing.assert_allclose(t.ci_low, r["asymp.LCL"], rtol=1e-4)
        np.testing.assert_allclose(t.ci_high, r["asymp.UCL"], rtol=1e-4)


@pytest.mark.parametrize("key, adjust", [("differences_tukey", "tukey"), ("differences_holm", "holm")])
def test_differences_in_accuracy(fit, key, adjust):
    t = pairwise_differences(fit, "system", adjust=adjust).table
    r = REF[key]
    assert t.contrast.tolist() == r["contrast"]
    np.testing.assert_allclose(t.estimate, r["estimate"], rtol=1e-4)
    np.testing.assert_allclose(t.se, r["SE"], rtol=1e-4)
    np.testing.assert_allclose(t.pvalue, r["p.value"], rtol=1e-3)
    np.testing.assert_allclose(t.ci_low, r["asymp.LCL"], rtol=1e-3)


def test_glmm_effect_size_is_on_the_latent_scale_or_left_out_with_a_note():
    """Binomial logit: log odds ratio / (pi / sqrt(3)) (emmeans' eff_size with that sigma); Poisson and
    differences of accuracies: no column, and the footnote says why (never a NaN column or 'residual SD nan')."""
    import warnings

    from mixeval.mixed import glmer
    from mixeval.significance import pairwise_differences, pairwise_ratios

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"item": np.repeat(np.arange(40), 4), "system": np.tile(["A", "B"], 80)})
    eta = rng.normal(size=40)[df["item"]] + 0.5 * (df["system"] == "B")
    df["correct"] = (rng.random(160) < 1 / (1 + np.exp(-eta))).astype(int)
    df["count"] = rng.poisson(np.exp(0.5 + 0.3 * eta))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratios = pairwise_ratios(glmer("correct ~ system + (1|item)", df, family="binomial"), "system")
        diffs = pairwise_differences(glmer("correct ~ system + (1|item)", df, family="binomial"), "system")
        rates = pairwise_ratios(glmer("count ~ system + (1|item)", df, family="poisson"), "system")
    expected = np.log(ratios.table["odds_ratio"]) / (np.pi / np.sqrt(3))
    np.testing.assert_allclose(ratios.table["effect_size"], expected, rtol=1e-12)
    assert ratios.sigma == pytest.approx(np.pi / np.sqrt(3))
    assert "effect_size = log ratio / latent residual SD sqrt(pi^2/3)" in ratios.summary()
    for res, why in ((diffs, "differences of probabilities"), (rates, "no constant latent residual variance")):
        assert "effect_size" not in res.table.columns
        assert why in res.summary() and "nan" not in res.summary().split("\n\n")[-1]
