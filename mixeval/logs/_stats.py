"""Vectorised statistics of paired differences on evaluation items: cluster-robust standard errors
(CR1, CR2 with Bell-McCaffrey degrees of freedom), McNemar's test and the power of a paired comparison.

Every function takes a matrix whose columns are separate comparisons (pairs of models, or single models)
and whose rows are items, with a 0/1 mask of the items each column uses, so that thousands of pairs are
computed with a few matrix products and no loop over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import stats

from ..errors import InputError

__all__ = ["ClusteredMeans", "clustered_means", "cluster_indicator", "mcnemar", "McNemar", "power_table",
           "RandomIntercept", "random_intercept"]


def cluster_indicator(codes: np.ndarray, n_clusters: int) -> sp.csr_matrix:
    """The items x clusters 0/1 matrix of integer cluster codes ``0..n_clusters-1``.

    Examples
    --------
    >>> cluster_indicator(np.array([0, 0, 1]), 2).toarray()
    array([[1., 0.],
           [1., 0.],
           [0., 1.]])
    """
    n = len(codes)
    return sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, n_clusters))


@dataclass(frozen=True)
class ClusteredMeans:
    """Means of the columns of a matrix over their items, with naive and cluster-robust standard errors.

    Attributes are arrays with one entry per column: ``n`` items used, ``n_clusters`` clusters with at
    least one used item, ``estimate`` the mean, ``se_naive`` (items independent), ``se_cr1`` (sandwich,
    HC1-type small-sample factor as R's ``sandwich::vcovCL``), ``se_cr2`` (Bell-McCaffrey bias-reduced
    sandwich as R's ``clubSandwich::vcovCR(type = "CR2")``), ``df_cr2`` (Bell-McCaffrey / Satterthwaite
    degrees of freedom as ``clubSandwich::coef_test(test = "Satterthwaite")``); ``sums``, ``sizes`` (clusters x
    columns) the cluster sums of the centred values and the used items per cluster, ``ss`` the centred sum
    of squares.
    """

    n: np.ndarray
    n_clusters: np.ndarray
    estimate: np.ndarray
    sd: np.ndarray
    se_naive: np.ndarray
    se_cr1: np.ndarray
    se_cr2: np.ndarray
    df_cr2: np.ndarray
    sums: np.ndarray
    sizes: np.ndarray
    ss: np.ndarray


def _check_clusters(n: np.ndarray, n_clusters: np.ndarray) -> None:
    if np.any(n < 2):
        raise InputError("a comparison has fewer than 2 shared items; a standard error needs at least 2.")
    if np.any(n_clusters < 2):
        raise InputError(
            "the items of a comparison fall into a single cluster; a cluster-robust standard error needs at "
            "least 2 clusters (check the --cluster column, or compare without it)."
        )


def clustered_means(values: np.ndarray, mask: np.ndarray, clusters: sp.csr_matrix) -> ClusteredMeans:
    """Means of the columns of ``values`` over the items where ``mask`` is 1, with clustered SEs.

    Parameters
    ----------
    values : ndarray, shape (n_items, k)
        One column per comparison (e.g. the paired differences of one pair of models per item); entries
        where ``mask`` is 0 are ignored (may be NaN).
    mask : ndarray of bool, shape (n_items, k)
        The items each column uses.
    clusters : scipy.sparse matrix, shape (n_items, n_clusters)
        The 0/1 cluster indicator (:func:`cluster_indicator`); the identity for unclustered items.

    Returns
    -------
    ClusteredMeans

    Notes
    -----
    With residuals :math:`e_i = d_i - \\bar d` over the :math:`n` used items, cluster sums
    :math:`S_g = \\sum_{i \\in g} e_i`, cluster sizes :math:`n_g`, :math:`G` non-empty clusters:

    * naive: :math:`\\mathrm{SE}^2 = \\sum_i e_i^2 / (n (n - 1))`;
    * CR1: :math:`\\mathrm{SE}^2 = \\frac{G}{G-1} \\sum_g S_g^2 / n^2` (the regression on an intercept has
      one coefficient, so the HC1 factor :math:`(n-1)/(n-k)` is 1);
    * CR2: the intercept-only hat matrix block is :math:`J/n`, so :math:`(I - H_{gg})^{-1/2}` multiplies
      the cluster sum by :math:`(1 - n_g/n)^{-1/2}` and :math:`\\mathrm{SE}^2 = \\sum_g S_g^2 / (1 - n_g/n) / n^2`;
    * the Bell-McCaffrey degrees of freedom under the working model :math:`\\sigma^2 I` are
      :math:`\\mathrm{tr}(\\Omega)^2 / \\mathrm{tr}(\\Omega^2)` with
      :math:`\\Omega = \\mathrm{diag}(a) - b b^\\top / n`, :math:`a_g = n_g / (n^2 (1 - n_g/n))`,
      :math:`b_g = n_g / (n \\sqrt{1 - n_g/n})`.

    With one item per cluster, CR2 is the naive SE and its df is :math:`n - 1` (the paired t-test).

    Examples
    --------
    >>> d = np.array([[1.0], [2.0], [3.0], [6.0]])
    >>> m = clustered_means(d, np.ones_like(d, dtype=bool), cluster_indicator(np.array([0, 0, 1, 1]), 2))
    >>> float(m.estimate[0]), float(m.se_cr1[0]), float(m.se_cr2[0]), float(m.df_cr2[0])
    (3.0, 1.5, 1.5, 1.0)
    """
    values = np.asarray(values, dtype=float)
    w = np.asarray(mask, dtype=float)
    x = np.where(w > 0, values, 0.0)
    n = w.sum(axis=0)
    estimate = x.sum(axis=0) / np.where(n > 0, n, np.nan)
    e = (x - estimate) * w
    ct = clusters.T.tocsr()
    sums = np.asarray(ct @ e)                   # G x k cluster sums of residuals
    sizes = np.asarray(ct @ w)                  # G x k used items per cluster
    n_clusters = (sizes > 0).sum(axis=0)
    _check_clusters(n, n_clusters)
    ss = (e * e).sum(axis=0)
    sd = np.sqrt(ss / (n - 1))
    se_naive = sd / np.sqrt(n)
    se_cr1 = np.sqrt(n_clusters / (n_clusters - 1) * (sums * sums).sum(axis=0)) / n
    share = sizes / n
    keep = 1.0 - share
    se_cr2 = np.sqrt((sums * sums / keep).sum(axis=0)) / n
    a = sizes / (n * n * keep)
    b2 = sizes * sizes / (n * n * keep)          # b_g^2
    tr = a.sum(axis=0) - b2.sum(axis=0) / n
    tr2 = (a * a).sum(axis=0) - 2.0 * (a * b2).sum(axis=0) / n + b2.sum(axis=0) ** 2 / (n * n)
    df_cr2 = tr * tr / tr2
    return ClusteredMeans(n=n.astype(int), n_clusters=n_clusters.astype(int), estimate=estimate, sd=sd,
                          se_naive=se_naive, se_cr1=se_cr1, se_cr2=se_cr2, df_cr2=df_cr2, sums=sums, sizes=sizes,
                          ss=ss)


@dataclass(frozen=True)
class McNemar:
    """McNemar's test per pair of 0/1 results: ``b`` items only the first model got right, ``c`` only the
    second; ``pvalue`` the exact binomial test on the ``b + c`` discordant items, ``midp`` its mid-p
    (Fagerland, Lydersen and Laake 2013), ``statistic``/``pvalue_asymptotic`` R's ``mcnemar.test``
    (continuity-corrected chi-square, 1 df; NaN without discordant items)."""

    b: np.ndarray
    c: np.ndarray
    statistic: np.ndarray
    pvalue_asymptotic: np.ndarray
    pvalue: np.ndarray
    midp: np.ndarray


def mcnemar(b: np.ndarray, c: np.ndarray) -> McNemar:
    """McNemar's test from the discordant counts ``b`` (first right, second wrong) and ``c`` (vice versa).

    Notes
    -----
    With :math:`m = b + c` and :math:`k = \\min(b, c)`, :math:`X \\sim \\mathrm{Bin}(m, 1/2)`: exact
    :math:`p = \\min(1, 2 P(X \\le k))`, mid-p :math:`= 2 P(X \\le k) - P(X = k)`, chi-square
    :math:`(|b - c| - 1)^2 / m` (without the continuity correction when :math:`b = c`, as R's ``mcnemar.test``).

    Examples
    --------
    >>> r = mcnemar(np.array([10]), np.array([3]))
    >>> round(float(r.pvalue[0]), 6), round(float(r.midp[0]), 6), round(float(r.statistic[0]), 6)
    (0.092285, 0.057373, 2.769231)
    """
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    m = b + c
    k = np.minimum(b, c)
    cdf = stats.binom.cdf(k, m, 0.5)
    pmf = stats.binom.pmf(k, m, 0.5)
    exact = np.minimum(1.0, 2.0 * cdf)
    midp = 2.0 * cdf - pmf
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = np.where(m > 0, (np.abs(b - c) - (b != c)) ** 2 / m, np.nan)  # R: no correction when b == c
    return McNemar(b=b.astype(int), c=c.astype(int), statistic=chi2, pvalue_asymptotic=stats.chi2.sf(chi2, 1),
                   pvalue=np.where(m > 0, exact, 1.0), midp=np.where(m > 0, midp, 1.0))


def power_table(se: np.ndarray, n: np.ndarray, estimate: np.ndarray, *, alpha: float, power: float,
                effect: float | None) -> dict[str, np.ndarray]:
    """Minimum detectable difference and the number of items for ``power`` at two-sided level ``alpha``.

    Notes
    -----
    With :math:`z = z_{1-\\alpha/2} + z_{\\mathrm{power}}` and the per-item variance of the paired
    difference implied by the (clustered) standard error, :math:`s^2 = n \\, \\mathrm{SE}^2` (the design
    effect of clustering included): :math:`\\mathrm{MDD} = z \\, \\mathrm{SE}` and
    :math:`n_\\delta = \\lceil z^2 s^2 / \\delta^2 \\rceil` items (in clusters of the same sizes) to detect
    a true difference :math:`\\delta` (the observed estimate, and ``effect`` when given).

    Examples
    --------
    >>> t = power_table(np.array([0.01]), np.array([1000]), np.array([0.02]), alpha=0.05, power=0.8, effect=0.01)
    >>> round(float(t["mdd"][0]), 5), int(t["n_needed"][0]), int(t["n_needed_effect"][0])
    (0.02802, 1963, 7849)
    """
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    var_item = n * se * se
    out = {"mdd": z * se}
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(estimate != 0, np.ceil(z * z * var_item / (estimate * estimate)), np.inf)
    out["n_needed"] = need
    if effect is not None:
        out["n_needed_effect"] = np.ceil(z * z * var_item / (effect * effect))
    return out


@dataclass(frozen=True)
class RandomIntercept:
    """REML fits of ``d ~ 1 + (1 | cluster)``, one per column: ``estimate`` the GLS mean, ``se`` its standard
    error, ``sd_cluster`` and ``sigma`` the standard deviations, ``theta`` their ratio (lme4's relative
    covariance factor), ``deviance`` the REML criterion at the optimum, ``boundary`` where ``theta`` is 0."""

    estimate: np.ndarray
    se: np.ndarray
    sd_cluster: np.ndarray
    sigma: np.ndarray
    theta: np.ndarray
    deviance: np.ndarray
    boundary: np.ndarray


def _reml_parts(t: np.ndarray, sums: np.ndarray, sizes: np.ndarray, ss: np.ndarray, n: np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The REML criterion at relative sd ``t`` (one per column) and the GLS mean (as a shift of the centred
    values), the weighted residual sum of squares and the sum of the GLS weights behind it."""
    theta = t * t
    shrink = 1.0 / (1.0 + theta * sizes)                   # 1 / (1 + theta n_g); 1 for unused clusters
    weight = (sizes * shrink).sum(axis=0)                   # W = sum_g n_g / (1 + theta n_g)
    mu = (sums * shrink).sum(axis=0) / weight
    resid = sums - sizes * mu                               # cluster sums of d - mu
    q = ss + n * mu * mu - theta * (resid * resid * shrink).sum(axis=0)
    q = np.maximum(q, np.finfo(float).tiny)
    dev = (n - 1) * (1 + np.log(2 * np.pi * q / (n - 1))) - np.log(shrink).sum(axis=0) + np.log(weight)
    return dev, mu, q, weight


def random_intercept(sums: np.ndarray, sizes: np.ndarray, ss: np.ndarray, n: np.ndarray, mean: np.ndarray,
                     *, grid: int = 25, t_max: float = 1e3, iterations: int = 40) -> RandomIntercept:
    """The linear mixed model ``d ~ 1 + (1 | cluster)`` fitted by REML to many columns at once.

    Parameters
    ----------
    sums, sizes : ndarray, shape (n_clusters, k)
        Per column, the cluster sums of the centred values ``d - mean`` and the number of its values in each
        cluster (0 for clusters a column does not use); :func:`clustered_means` gives both.
    ss, n, mean : ndarray, shape (k,)
        The centred sum of squares, the number of values and their mean.
    grid, t_max, iterations
        The search over the relative standard deviation ``t = sd_cluster / sigma``: a grid of ``grid``
        points on ``[0, t_max]`` (0 and log-spaced), then golden-section steps between the neighbours of the
        best grid point.

    Returns
    -------
    RandomIntercept

    Notes
    -----
    With :math:`\\theta = t^2`, clusters :math:`g` of :math:`n_g` values summing to :math:`S_g`, the
    covariance of a cluster's values is :math:`\\sigma^2 (I + \\theta J)`, whose inverse is
    :math:`\\sigma^{-2} (I - \\frac{\\theta}{1 + \\theta n_g} J)`. Hence the GLS mean
    :math:`\\hat\\mu = \\sum_g S_g / (1 + \\theta n_g) / W` with :math:`W = \\sum_g n_g / (1 + \\theta n_g)`,
    the weighted residual sum of squares
    :math:`Q = \\sum_i (d_i - \\hat\\mu)^2 - \\sum_g \\frac{\\theta}{1 + \\theta n_g} (S_g - n_g \\hat\\mu)^2`,
    and, with :math:`\\sigma^2` profiled out as :math:`Q / (N - 1)`, lme4's REML criterion

    .. math:: d(t) = (N - 1)\\left(1 + \\log \\frac{2 \\pi Q}{N - 1}\\right) + \\sum_g \\log(1 + \\theta n_g) + \\log W,

    a function of the one parameter :math:`t`, evaluated for all columns at once from the cluster sums. The
    standard error of the mean is :math:`\\sqrt{\\hat\\sigma^2 / W}`, as ``vcov`` of lme4's fit.

    Examples
    --------
    >>> d = np.array([[0.1], [0.3], [0.2], [0.9], [1.1], [0.7], [0.5], [0.4]])
    >>> m = clustered_means(d, np.ones_like(d, dtype=bool), cluster_indicator(np.array([0, 0, 0, 1, 1, 1, 2, 2]), 3))
    >>> fit = random_intercept(m.sums, m.sizes, m.ss, m.n, m.estimate)
    >>> [round(float(x[0]), 6) for x in (fit.estimate, fit.se, fit.sd_cluster, fit.sigma)]
    [0.517267, 0.206557, 0.346237, 0.144667]
    """
    sums = np.asarray(sums, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    ss = np.asarray(ss, dtype=float)
    n = np.asarray(n, dtype=float)
    k = sums.shape[1]
    ts = np.concatenate([[0.0], np.geomspace(1e-3, t_max, grid - 1)])
    devs = np.stack([_reml_parts(np.full(k, t), sums, sizes, ss, n)[0] for t in ts])
    best = np.argmin(devs, axis=0)
    lo = ts[np.maximum(best - 1, 0)]
    hi = ts[np.minimum(best + 1, grid - 1)]
    ratio = (np.sqrt(5.0) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1 = _reml_parts(x1, sums, sizes, ss, n)[0]
    f2 = _reml_parts(x2, sums, sizes, ss, n)[0]
    for _ in range(iterations):
        left = f1 < f2                                      # the minimum lies in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x_new = np.where(left, hi - ratio * (hi - lo), lo + ratio * (hi - lo))
        f_new = _reml_parts(x_new, sums, sizes, ss, n)[0]
        x1, x2 = np.where(left, x_new, x2), np.where(left, x1, x_new)
        f1, f2 = np.where(left, f_new, f2), np.where(left, f1, f_new)
    t = (lo + hi) / 2
    dev_t = _reml_parts(t, sums, sizes, ss, n)[0]
    at_zero = devs[0] <= dev_t
    t = np.where(at_zero, 0.0, t)
    dev, mu, q, weight = _reml_parts(t, sums, sizes, ss, n)
    sigma2 = q / (n - 1)
    return RandomIntercept(estimate=np.asarray(mean, dtype=float) + mu, se=np.sqrt(sigma2 / weight),
                           sd_cluster=t * np.sqrt(sigma2), sigma=np.sqrt(sigma2), theta=t, deviance=dev,
                           boundary=t == 0)
