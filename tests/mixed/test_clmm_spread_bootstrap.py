"""The rater threshold-spread test's parametric-bootstrap p-value (issue 36 item 13): seeded, keyword-only, the
mixture kept in the details."""

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.mixed import threshold_spread_test


@pytest.fixture(scope="module")
def ratings():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"rater": np.repeat(np.arange(5), 30), "item": np.tile(np.arange(30), 5)})
    latent = rng.normal(0, 1, 30)[df.item] + rng.normal(0, 0.5, 5)[df.rater] + rng.logistic(size=150)
    df["rating"] = np.digitize(latent, [-1.5, 0.0, 1.5]) + 1
    return df


def test_spread_test_bootstrap_is_seeded_and_keeps_the_mixture(ratings):
    formula = "rating ~ 1 + (1|item) + (1|rater)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = threshold_spread_test(formula, ratings, "rater")
        a = threshold_spread_test(formula, ratings, "rater", n_resamples=6, random_state=2)
        b = threshold_spread_test(formula, ratings, "rater", n_resamples=6, random_state=2)
    assert a.statistic == pytest.approx(plain.statistic)
    assert a.details["pvalue_mixture"] == pytest.approx(plain.pvalue)
    draws = a.details["null_distribution"]
    np.testing.assert_array_equal(draws, b.details["null_distribution"])
    finite = draws[np.isfinite(draws)]
    assert a.pvalue == pytest.approx((1 + np.sum(finite >= a.statistic * (1 - 1e-9))) / (1 + finite.size))
    assert np.all(finite >= 0) and "parametric bootstrap" in a.method
    with pytest.raises(InputError, match="give n_resamples= too"):
        threshold_spread_test(formula, ratings, "rater", random_state=2)
    with pytest.raises(InputError, match="`n_resamples` must be a whole number >= 1"):
        threshold_spread_test(formula, ratings, "rater", n_resamples=-1)


def test_boundary_warning_says_which_part_of_the_spread_covariance_is_on_the_boundary():
    from mixeval import clmm
    from mixeval.errors import SingularFitWarning

    df = pd.DataFrame({"rater": np.repeat(np.arange(6), 40), "item": np.tile(np.arange(40), 6)})
    rng = np.random.default_rng(2)
    latent = rng.normal(0, 1, 40)[df.item] + rng.normal(0, 0.5, 6)[df.rater] + rng.logistic(size=240)
    df["rating"] = np.digitize(latent, [-2, -0.7, 0.7, 2]) + 1
    with pytest.warns(SingularFitWarning) as caught:
        fit = clmm("rating ~ 1 + (1|item) + (1|rater)", df, random_thresholds="rater")
    text = " ".join(str(w.message) for w in caught)
    assert fit.variances["rater"] > 0.01  # the shift variance is not zero: the boundary is the correlation
    assert "perfectly correlated (correlation +1.00" in text and "a variance of 'rater'" not in text
