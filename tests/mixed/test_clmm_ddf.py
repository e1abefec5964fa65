"""Satterthwaite df of a clmm's thresholds and effects (mixeval.mixed._clmm_ddf)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.mixed import clmm, glmer
from mixeval.mixed._clmm_ddf import clmm_satterthwaite_df


def _rater_ratings(n_raters: int, seed: int, per_rater: int = 300, sd: float = 1.0) -> pd.DataFrame:
    """Probit ratings, 4 categories, of two systems by ``n_raters`` raters with rater effects of SD ``sd``."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"rater": np.repeat(np.arange(n_raters), per_rater).astype(str),
                       "system": np.tile(["A", "B"], n_raters * per_rater // 2)})
    latent = (0.5 * (df.system == "B") + rng.normal(0, sd, n_raters)[df.rater.astype(int)]
              + rng.standard_normal(len(df)))
    df["rating"] = np.digitize(latent, [-1.0, 0.0, 1.0]) + 1
    return df


def _fit(formula: str, df: pd.DataFrame, link: str = "probit"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clmm(formula, df, link=link)


@pytest.fixture(scope="module")
def rater_fits():
    return {r: _fit("rating ~ system + (1|rater)", _rater_ratings(r, seed=1)) for r in (6, 12)}


@pytest.mark.parametrize("n_raters", [6, 12])
def test_threshold_df_is_the_number_of_raters_when_their_mean_dominates(rater_fits, n_raters):
    # Many ratings per rater: a threshold's variance is ~ sigma_r^2 / R, and the ML variance has asymptotic
    # variance 2 sigma_r^4 / R, so Satterthwaite's df is R (the within-rater part, small, raises it a little).
    d = clmm_satterthwaite_df(rater_fits[n_raters])
    thresholds = d[["1|2", "2|3", "3|4"]].to_numpy()
    assert np.all(thresholds >= 0.95 * n_raters) and np.all(thresholds <= 1.25 * n_raters)


def test_effect_within_raters_has_large_df(rater_fits):
    # The system contrast is within raters (each rates both systems): the rater variance barely enters it.
    for fit in rater_fits.values():
        assert clmm_satterthwaite_df(fit)["systemB"] > 1000


def test_df_grows_with_the_number_of_raters(rater_fits):
    small, large = clmm_satterthwaite_df(rater_fits[6]), clmm_satterthwaite_df(rater_fits[12])
    assert np.all(large[["1|2", "2|3", "3|4"]] > small[["1|2", "2|3", "3|4"]] * 1.5)


def test_step_stability(rater_fits):
    fit = rater_fits[6]
    base = clmm_satterthwaite_df(fit)
    for step in (1e-4, 1e-2):
        other = clmm_satterthwaite_df(fit, step=step)
        np.testing.assert_allclose(other[["1|2", "2|3", "3|4"]], base[["1|2", "2|3", "3|4"]], rtol=5e-3)


def test_contrasts_by_matrix_and_by_frame(rater_fits):
    fit = rater_fits[6]
    base = clmm_satterthwaite_df(fit)
    rows = np.eye(4)[[1, 3]]
    by_matrix = clmm_satterthwaite_df(fit, rows)
    assert list(by_matrix.index) == ["L1", "L2"]
    np.testing.assert_allclose(by_matrix.to_numpy(), base[["2|3", "systemB"]].to_numpy(), rtol=1e-10)
    frame = pd.DataFrame({"2|3": [1.0], "1|2": [-1.0]}, index=["spread"])
    by_frame = clmm_satterthwaite_df(fit, frame)
    np.testing.assert_allclose(by_frame["spread"], clmm_satterthwaite_df(fit, [[-1.0, 1.0, 0.0, 0.0]])["L1"],
                               rtol=1e-10)


def test_no_free_component_gives_infinite_df():
    df = _rater_ratings(6, seed=2, per_rater=60, sd=0.0)
    fit = _fit("rating ~ system + (1|rater)", df)
    if fit.theta[0] >= 1e-4:
        pytest.skip("the rater SD was not estimated at 0 on this draw")
    assert np.all(np.isinf(clmm_satterthwaite_df(fit)))


def test_refusals(rater_fits):
    fit = rater_fits[6]
    with pytest.raises(InputError, match="4 columns"):
        clmm_satterthwaite_df(fit, np.ones((1, 3)))
    with pytest.raises(InputError, match="not thresholds or effects"):
        clmm_satterthwaite_df(fit, pd.DataFrame({"systemZ": [1.0]}))
    with pytest.raises(InputError, match="missing or infinite"):
        clmm_satterthwaite_df(fit, [[np.nan, 1.0, 0.0, 0.0]])
    with pytest.raises(InputError, match="step"):
        clmm_satterthwaite_df(fit, step=0.5)
    df = _rater_ratings(6, seed=1, per_rater=20).assign(hit=lambda d: (d.rating > 2).astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = glmer("hit ~ system + (1|rater)", df, family="binomial")
    with pytest.raises(InputError, match="fit of mixeval.clmm"):
        clmm_satterthwaite_df(other)
