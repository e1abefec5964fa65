"""Vectorised statistics of paired differences on evaluation items: cluster-robust standard errors
(CR1, CR2 with Bell-McCaffrey degrees of freedom) and the power of a paired comparison.

Every function takes a matrix whose columns are separate comparisons (pairs of models, or single models)
and whose rows are items, with a 0/1 mask of the items each column uses, so that thousands of pairs are
computed with a few matrix products and no loop over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import special

from ..errors import InputError

__all__ = ["ClusteredMeans", "clustered_means", "cluster_indicator", "t_power", "minimum_detectable", "items_needed"]


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


def t_power(ncp: np.ndarray, df: np.ndarray, alpha: float) -> np.ndarray:
    """Power of the two-sided t test at level ``alpha`` when the t statistic is non-central t with ``df``
    degrees of freedom and non-centrality ``ncp`` (both tails, R's ``power.t.test(strict = TRUE)``).

    Examples
    --------
    >>> round(float(t_power(np.array([2.8]), np.array([np.inf]), 0.05)[0]), 4)
    0.7996
    """
    ncp = np.abs(np.asarray(ncp, dtype=float))
    df = np.broadcast_to(np.asarray(df, dtype=float), ncp.shape)
    finite = np.isfinite(df)
    safe_df = np.where(finite, df, 1.0)
    crit = np.where(finite, special.stdtrit(safe_df, 1 - alpha / 2), special.ndtri(1 - alpha / 2))
    with np.errstate(invalid="ignore", over="ignore"):
        t_part = 1.0 - special.nctdtr(safe_df, ncp, crit) + special.nctdtr(safe_df, ncp, -crit)
    z_part = special.ndtr(ncp - crit) + special.ndtr(-crit - ncp)
    return np.where(finite, t_part, z_part)


def _bisect(power_at, lo: np.ndarray, hi: np.ndarray, target: float, *, integer: bool,
            iterations: int = 60) -> np.ndarray:
    """The smallest value in ``[lo, hi]`` (each entry; ``hi`` widened until it reaches ``target``) at which the
    increasing ``power_at`` reaches ``target``: an integer, or a float to ``iterations`` halvings."""
    while np.any(short := power_at(hi) < target):
        lo, hi = np.where(short, hi, lo), np.where(short, 2 * hi, hi)
    for _ in range(iterations):
        if integer and not np.any(hi - lo > 1):
            break
        mid = np.floor((lo + hi) / 2) if integer else (lo + hi) / 2
        below = power_at(mid) < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return hi


def minimum_detectable(se: np.ndarray, df: np.ndarray, *, alpha: float, power: float) -> np.ndarray:
    """The smallest true difference the two-sided t test (standard error ``se``, ``df`` degrees of freedom)
    detects with probability ``power`` at level ``alpha``.

    Notes
    -----
    :math:`\\mathrm{MDD} = \\lambda^* \\mathrm{SE}` with :math:`\\lambda^*` the non-centrality at which
    :math:`P(|T_{\\nu,\\lambda}| > t_{1-\\alpha/2,\\nu}) = ` ``power`` (bisection, once per distinct df). With normal
    quantiles this is :math:`(z_{1-\\alpha/2} + z_{\\mathrm{power}}) \\mathrm{SE}`; with few clusters (small
    :math:`\\nu`) it is larger.

    Examples
    --------
    >>> [round(float(x), 4) for x in minimum_detectable(np.array([0.01, 0.01]), np.array([np.inf, 5.0]),
    ...                                                   alpha=0.05, power=0.8)]
    [0.028, 0.0351]
    """
    se = np.asarray(se, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), se.shape)
    unique, index = np.unique(df, return_inverse=True)
    z = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    ncp = _bisect(lambda x: t_power(x, unique, alpha), np.full(unique.shape, z * 0.99), np.full(unique.shape, z * 1.5),
                  power, integer=False, iterations=45)
    return ncp[index.reshape(se.shape)] * se


def items_needed(effect: float, se: np.ndarray, n: np.ndarray, df: np.ndarray, *, alpha: float,
                 power: float) -> np.ndarray:
    """Items needed for the two-sided t test of a paired difference to detect a true difference ``effect``
    with probability ``power`` at level ``alpha``, in clusters like the observed ones.

    Parameters
    ----------
    effect : float
        The difference to detect (stated in advance, never the observed one).
    se, n, df : ndarray
        The observed (CR2) standard error, number of items and degrees of freedom of each comparison.

    Notes
    -----
    The per-item variance of the difference, clustering included, is :math:`s^2 = n \\mathrm{SE}^2`; with
    :math:`N` items in clusters of the observed sizes, :math:`\\mathrm{SE}_N = s / \\sqrt{N}` and the degrees of
    freedom grow with the clusters, :math:`\\nu_N = (\\nu + 1) N / n - 1` (so :math:`N - 1` without clusters,
    as R's ``power.t.test(type = "one.sample", strict = TRUE)``, and :math:`G_N - 1` for :math:`G_N` equal
    clusters). The result is the smallest integer :math:`N \\ge 2` whose power reaches ``power`` (bisection
    from the normal approximation :math:`((z_{1-\\alpha/2} + z_{\\mathrm{power}}) s / \\delta)^2`, below it).

    Examples
    --------
    >>> int(items_needed(0.02, np.array([0.01]), np.array([1000]), np.array([999.0]), alpha=0.05, power=0.8)[0])
    1965
    """
    se = np.asarray(se, dtype=float)
    n = np.asarray(n, dtype=float)
    df = np.asarray(df, dtype=float)
    sd = se * np.sqrt(n)
    out = np.full(se.shape, np.nan)
    ok = np.isfinite(sd) & (sd > 0) & np.isfinite(df)
    if not ok.any():
        return out
    sd, n, df = sd[ok], n[ok], df[ok]

    def power_at(items: np.ndarray) -> np.ndarray:
        return t_power(effect * np.sqrt(items) / sd, np.maximum((df + 1) * items / n - 1, 1.0), alpha)

    z = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    normal = np.maximum(np.floor((z * sd / effect) ** 2), 1.0)
    out[ok] = _bisect(power_at, normal, np.maximum(np.ceil(1.2 * normal) + 3, 2.0), power, integer=True)
    return out
