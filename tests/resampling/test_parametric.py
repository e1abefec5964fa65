"""Z-test and paired t-test (book Section 4.1) against scipy / statsmodels and the book's example."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ztest

from mixeval.errors import InputError
from mixeval.resampling import paired_t_test, z_test


def test_book_example_cohen_1995():
    # sigma = 50 known, N = 100, mean 15, mu0 = 25 -> Z = -2 (book Section 4.1)
    x = np.r_[np.full(50, 5.0), np.full(50, 25.0)]
    two = z_test(x, mu0=25, sigma=50)
    assert two.statistic == pytest.approx(-2.0, abs=1e-12)
    assert two.pvalue == pytest.approx(2 * stats.norm.cdf(-2.0), rel=1e-12)  # 0.0455
    assert two.pvalue < 0.05
    less = z_test(x, mu0=25, sigma=50, alternative="less")
    assert less.pvalue == pytest.approx(stats.norm.cdf(-2.0), rel=1e-12)  # 0.0228 < 0.05
    # the rejection regions quoted in the book: |Z| >= 1.96 two-sided, Z <= -1.64 left-tailed
    assert two.confidence_interval.high == pytest.approx(15 + 1.959963985 * 5, rel=1e-9)


@pytest.mark.parametrize("alternative, sm", [("two-sided", "two-sided"), ("greater", "larger"), ("less", "smaller")])
def test_z_test_matches_statsmodels(alternative, sm):
    rng = np.random.default_rng(0)
    a = rng.normal(0.4, 0.2, size=80)
    b = a - 0.03 + rng.normal(0, 0.1, size=80)
    ours = z_test(a, b, alternative=alternative)
    z, p = ztest(a - b, value=0.0, alternative=sm)
    assert ours.statistic == pytest.approx(z, rel=1e-12)
    assert ours.pvalue == pytest.approx(p, rel=1e-10)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_paired_t_matches_scipy(alternative):
    rng = np.random.default_rng(1)
    a = rng.normal(0.4, 0.2, size=25)
    b = a - 0.02 + rng.normal(0, 0.08, size=25)
    ours = paired_t_test(a, b, alternative=alternative)
    ref = stats.ttest_rel(a, b, alternative=alternative)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert ours.df == 24
    ci = ref.confidence_interval(0.9)
    ours90 = paired_t_test(a, b, alternative="two-sided", level=0.9).confidence_interval
    if alternative == "two-sided":
        assert (ours90.low, ours90.high) == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_t_type_one_error_near_nominal():
    rng = np.random.default_rng(5)
    p = np.array([paired_t_test(rng.normal(size=30), rng.normal(size=30)).pvalue for _ in range(2000)])
    assert 0.035 <= np.mean(p <= 0.05) <= 0.065


def test_parametric_bad_input():
    with pytest.raises(InputError, match="identical"):
        paired_t_test([1, 2, 3], [0, 1, 2])
    with pytest.raises(InputError, match="sigma"):
        z_test([1, 2, 3], sigma=-1)
    with pytest.raises(InputError, match="at least 2"):
        paired_t_test([1.0], [2.0])
