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

__all__ = ["ClusteredMeans", "clustered_means", "cluster_indicator", "mcnemar", "McNemar", "power_table"]


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
    degrees of freedom as ``clubSandwich::coef_test(test = "Satterthwaite")``).
    """

    n: np.ndarray
    n_clusters: np.ndarray
    estimate: np.ndarray
    sd: np.ndarray
    se_naive: np.ndarray
    se_cr1: np.ndarray
    se_cr2: np.ndarray
    df_cr2: np.ndarray


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
                          se_naive=se_naive, se_cr1=se_cr1, se_cr2=se_cr2, df_cr2=df_cr2)


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
