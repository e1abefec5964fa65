"""Parametric tests of book Section 4.1 on sentence-level scores: Z-test and paired t-test."""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from .._results import ConfidenceInterval, TestResult
from .._validation import as_1d_float, require_level
from ..errors import InputError
from ._common import check_alternative

__all__ = ["z_test", "paired_t_test"]


def _differences(a: object, b: object | None) -> np.ndarray:
    x = as_1d_float(a, "a")
    if b is None:
        return x
    y = as_1d_float(b, "b")
    if x.shape != y.shape:
        raise InputError(f"`a` and `b` must hold one score per item for the same items; got {x.size} and {y.size}.")
    return x - y


def _pvalue(cdf_stat: float, sf_stat: float, alternative: str) -> float:
    if alternative == "greater":
        return sf_stat
    if alternative == "less":
        return cdf_stat
    return min(1.0, 2.0 * min(cdf_stat, sf_stat))


def z_test(
    a: object,
    b: object | None = None,
    *,
    mu0: float = 0.0,
    sigma: float | None = None,
    alternative: str = "two-sided",
    level: float = 0.95,
) -> TestResult:
    """Z-test for the mean of sentence-level scores, or of paired differences ``a - b``.

    Parameters
    ----------
    a : array_like
        Sentence-level scores (one per test item).
    b : array_like, optional
        Scores of a second system on the same items; the test is then on ``a - b``.
    mu0 : float
        Mean under the null hypothesis.
    sigma : float, optional
        Known population standard deviation; if omitted the sample standard
        deviation (``ddof=1``) is plugged in (the large-sample Z-test).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 says the mean exceeds ``mu0``.
    level : float
        Level of the normal confidence interval for the mean.

    Returns
    -------
    TestResult
        ``statistic`` is Z, ``estimate`` the mean, ``df`` None.

    Notes
    -----
    :math:`Z = \\sqrt{N} (\\bar x - \\mu_0) / \\sigma` is compared with the standard
    normal (book Eq. 4.1); the interval is :math:`\\bar x \\pm z_{(1+\\text{level})/2}\\, \\sigma / \\sqrt N`.

    Examples
    --------
    The book's example (Cohen 1995): sigma = 50, N = 100, mean 15, mu0 = 25.

    >>> import numpy as np
    >>> from mixeval.resampling import z_test
    >>> x = np.r_[np.full(50, 5.0), np.full(50, 25.0)]   # mean 15
    >>> res = z_test(x, mu0=25, sigma=50)
    >>> res.statistic, round(res.pvalue, 4)
    (-2.0, 0.0455)
    """
    alternative = check_alternative(alternative)
    level = require_level(level)
    d = _differences(a, b)
    n = d.size
    if sigma is None:
        if n < 2:
            raise InputError("the Z-test needs at least 2 items to estimate sigma; pass `sigma=` if it is known.")
        s = float(d.std(ddof=1))
    else:
        s = float(sigma)
        if not np.isfinite(s) or s <= 0:
            raise InputError(f"`sigma` must be a positive number; got {sigma!r}.")
    if s == 0:
        raise InputError("all differences are identical (standard deviation 0): the Z statistic is undefined.")
    se = s / np.sqrt(n)
    mean = float(d.mean())
    z = (mean - mu0) / se
    p = _pvalue(float(special.ndtr(z)), float(special.ndtr(-z)), alternative)
    q = special.ndtri((1 + level) / 2)
    return TestResult(
        statistic=float(z), pvalue=p, df=None, alternative=alternative,
        method="Z-test" + (" (paired differences)" if b is not None else ""),
        estimate=mean, confidence_interval=ConfidenceInterval(mean - q * se, mean + q * se, level, "normal"),
        details={"n": n, "sigma": s, "sigma_known": sigma is not None, "mu0": float(mu0), "se": se},
    )


def paired_t_test(
    a: object,
    b: object,
    *,
    alternative: str = "two-sided",
    level: float = 0.95,
) -> TestResult:
    """Paired t-test of sentence-level scores of two systems on the same items.

    Parameters
    ----------
    a, b : array_like
        Scores of systems A and B, one per test item, in the same order.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 says A scores higher on average.
    level : float
        Level of the t confidence interval for the mean difference.

    Returns
    -------
    TestResult
        ``statistic`` t, ``df`` ``n - 1``, ``estimate`` the mean difference.

    Notes
    -----
    :math:`t = \\bar d / (s_d / \\sqrt n)` with :math:`d_i = a_i - b_i`, compared with
    Student's t on :math:`n - 1` degrees of freedom, computed by ``scipy.stats.ttest_1samp`` on the differences (= ``ttest_rel``)
    (statistic, p-value and interval).

    Examples
    --------
    >>> from mixeval.resampling import paired_t_test
    >>> res = paired_t_test([0.3, 0.5, 0.4, 0.6], [0.2, 0.45, 0.41, 0.5])
    >>> round(res.statistic, 4), res.df
    (2.2953, 3.0)
    """
    alternative = check_alternative(alternative)
    level = require_level(level)
    d = _differences(a, b)
    n = d.size
    if n < 2:
        raise InputError("the paired t-test needs at least 2 items.")
    s = float(d.std(ddof=1))
    if s == 0:
        raise InputError("all paired differences are identical (standard deviation 0): t is undefined.")
    res = stats.ttest_1samp(d, 0.0, alternative=alternative)  # type: ignore[arg-type]  # checked; stubs: a Literal
    # the two-sided interval whatever the alternative (as every interval of the resampling tests)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(confidence_level=level)
    mean = float(d.mean())
    return TestResult(
        statistic=float(res.statistic), pvalue=float(res.pvalue), df=float(res.df), alternative=alternative,
        method="paired t-test", estimate=mean,
        confidence_interval=ConfidenceInterval(float(ci.low), float(ci.high), level, "t"),  # scipy's low/high
        details={"n": n, "se": s / np.sqrt(n)},
    )
