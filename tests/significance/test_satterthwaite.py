"""Satterthwaite df with the components' shares at an upper bound (mixeval.significance._satterthwaite).

Closed forms at the two ends (one component carrying all of the variance: its own df, the t of a balanced
design; none: inf), the reduction to Satterthwaite's formula, coverage in the idealised model with known
truth (the committed study is benchmarks/sim_satterthwaite_limit.py), and the df of glmer and lmer fits.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval import lmer
from mixeval.errors import InputError
from mixeval.mixed import glmer
from mixeval.significance import emmeans, emmeans_response
from mixeval.significance._ddf import canonical_df, ddf_pieces
from mixeval.significance._glmm_ddf import glmm_ddf_pieces
from mixeval.significance._satterthwaite import SHARE_QUANTILE, satterthwaite_upper_df, share_multipliers


def _one_component(part, known, k):
    """``Vhat = part + known`` with ``part`` a chi2(k)/k-type estimate: ``g' A g = 2 part^2 / k``."""
    part = np.asarray(part, dtype=float)
    g = (part * np.sqrt(2.0 / k))[:, None]
    return satterthwaite_upper_df(part + known, g, np.eye(1), np.array([float(k)]))


@pytest.mark.parametrize("k", [1, 2, 3, 9, 40])
def test_a_component_carrying_all_the_variance_keeps_its_own_df(k):
    np.testing.assert_allclose(_one_component([0.3, 1.0, 7.0], 0.0, k), k, rtol=1e-12)


def test_no_component_gives_infinite_df_and_a_zero_variance_nan():
    df = satterthwaite_upper_df(np.array([1.0, 0.0]), np.zeros((2, 1)), np.eye(1), np.array([2.0]))
    assert np.isinf(df[0]) and np.isnan(df[1])


def test_many_levels_reduce_to_satterthwaite():
    rng = np.random.default_rng(0)
    g, B = rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    A = B @ B.T
    var = 1.0 + np.abs(rng.normal(size=4))
    satt = 2 * var ** 2 / np.einsum("ij,jk,ik->i", g, A, g)
    np.testing.assert_allclose(satterthwaite_upper_df(var, g, A, np.full(3, np.inf)), satt, rtol=1e-12)
    # with finite k never more (the parts at their upper bounds); fewer for variances that add up
    assert np.all(satterthwaite_upper_df(var, g, A, np.array([2.0, 5.0, 50.0])) <= satt)
    # independent components with parts 0.5, 0.3, 0.1 of V = 1.2 (each w = 2 part^2 / k)
    k, parts = np.array([2.0, 5.0, 50.0]), np.array([0.5, 0.3, 0.1])
    g1 = np.sqrt(2 * parts ** 2 / k)[None, :]
    satt1 = 2 * 1.2 ** 2 / np.sum(g1 ** 2)
    assert satterthwaite_upper_df(np.array([1.2]), g1, np.eye(3), k)[0] < satt1


def test_multipliers_are_upper_chi2_bounds():
    k = np.array([2.0, 4.0, 30.0])
    np.testing.assert_allclose(share_multipliers(k), k / stats.chi2.ppf(SHARE_QUANTILE, k), rtol=1e-12)
    assert np.all(np.diff(share_multipliers(k)) < 0) and np.all(share_multipliers(k) > 1)


def test_coverage_in_the_idealised_model_with_three_levels():
    """A component from 3 levels (k = 2) with 90 % of the variance: Satterthwaite undercovers, the upper df
    do not. Known truth; 40,000 replicates (MC se 0.11 points)."""
    rng = np.random.default_rng(20261123)
    k, rho, n = 2, 0.9, 40_000
    z = rng.standard_normal(n)
    part = rho * rng.chisquare(k, n) / k
    vhat = part + (1 - rho)
    satt = np.mean(np.abs(z) <= stats.t.ppf(0.975, k * (vhat / part) ** 2) * np.sqrt(vhat))
    upper = np.mean(np.abs(z) <= stats.t.ppf(0.975, _one_component(part, 1 - rho, k)) * np.sqrt(vhat))
    assert satt < 0.93
    assert abs(upper - 0.95) < 0.01


def _binary(n_item=40, n_seed=3, seed=5):
    rng = np.random.default_rng(seed)
    d = pd.MultiIndex.from_product([range(n_item), range(n_seed), range(2)],
                                   names=["item", "seed", "system"]).to_frame(index=False)
    eta = 1.0 + 0.3 * d.system + rng.normal(0, 0.7, n_item)[d.item] + rng.normal(0, 0.6, n_seed)[d.seed]
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["y"] = eta + rng.normal(0, 1.0, len(d))
    d["item"] = "i" + d.item.astype(str)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = np.array(["A", "B"])[d.system]
    return d


def test_glmer_fit_upper_df_below_satterthwaite_and_intervals_wider():
    d = _binary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("correct ~ system + (1|item) + (1|seed)", d, REML=True)
    pieces = glmm_ddf_pieces(fit)
    assert sorted(pieces.component_df.tolist()) == [2.0, 39.0]   # 3 seeds, 40 items
    L = np.eye(2)
    assert np.all(pieces.df_satterthwaite_upper(L) < pieces.df_satterthwaite(L))
    s = emmeans_response(fit, "system", df="satterthwaite")
    u = emmeans_response(fit, "system", df="satterthwaite-upper")
    np.testing.assert_allclose(u.se, s.se)
    assert np.all(u.df < s.df) and np.all(u.lower < s.lower) and np.all(u.upper > s.upper)


def test_lmer_random_intercepts_use_levels_and_residual_df():
    d = _binary()
    fit = lmer("y ~ system + (1|item) + (1|seed)", d)
    pieces = ddf_pieces(fit)
    k = dict(zip(fit.group_names, pieces.component_df[:-1]))
    assert k == {"item": 39.0, "seed": 2.0} and pieces.component_df[-1] == len(d) - 2
    s = emmeans(fit, "system", df="satterthwaite")
    u = emmeans(fit, "system", df="satterthwaite-upper")
    assert np.all(u.df < s.df) and np.all(u.df >= 2.0 - 1e-9)


def test_unsupported_fits_are_refused_with_the_alternatives():
    d = _binary()
    d["x"] = np.tile(np.linspace(-1, 1, 6), len(d) // 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer("y ~ system + x + (1 + x|item)", d)
    with pytest.raises(InputError, match="satterthwaite-upper.*df='satterthwaite'"):
        emmeans(fit, "system", df="satterthwaite-upper")


def test_method_names():
    assert canonical_df("Satterthwaite-Upper") == "satterthwaite-upper"
    assert canonical_df("satterthwaite_upper") == "satterthwaite-upper"
    with pytest.raises(InputError, match="satterthwaite-upper"):
        canonical_df("upper-ish")


@pytest.mark.parametrize("formula, reml, why", [
    ("score ~ system + (1|item)", False, "maximum likelihood"),
    ("score ~ system + (1 + x|item)", True, "random slopes"),
])
def test_upper_df_refusal_recommends_only_methods_that_work_for_the_fit(formula, reml, why):
    """The refusal names why and recommends the methods that run for the fit: Kenward-Roger for the REML slope fit,
    never for the ML fit (refused there)."""
    import warnings

    from mixeval import lmer
    from mixeval.errors import InputError
    from mixeval.significance import pairwise

    rng = np.random.default_rng(0)
    item = np.repeat(np.arange(20), 4)
    df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 40), "x": rng.normal(size=80)})
    df["score"] = rng.normal(size=20)[item] + rng.normal(size=80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = lmer(formula, df, REML=reml)
        with pytest.raises(InputError, match=why) as info:
            pairwise(fit, "system", df="satterthwaite-upper")
        assert "df='satterthwaite' or df='asymptotic'" in str(info.value)
        assert np.isfinite(pairwise(fit, "system", df="satterthwaite").table["df"].iloc[0])
        assert np.isinf(pairwise(fit, "system", df="asymptotic").table["df"].iloc[0])
        if reml:
            assert "df='kenward-roger'" in str(info.value)
            assert np.isfinite(pairwise(fit, "system", df="kenward-roger").table["df"].iloc[0])
        else:
            assert "kenward-roger" not in str(info.value)
            with pytest.raises(InputError, match="REML"):
                pairwise(fit, "system", df="kenward-roger")
