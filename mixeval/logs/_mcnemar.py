"""McNemar's test for two models' 0/1 results on the same items, and its version for clustered items.

Both are vectorised over pairs. Without clusters: R's ``mcnemar.test`` (continuity-corrected chi-square), the
exact binomial test on the discordant items and its mid-p (Fagerland, Lydersen & Laake 2013). With clusters
(several questions per passage): Durkalski et al.'s (2003) statistic, and the exact randomisation test it
approximates, which flips the sign of each cluster's difference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import signal, stats

__all__ = ["McNemar", "mcnemar", "cluster_mcnemar", "MCNEMAR_TESTS"]

#: What the McNemar columns of ``compare_logs`` hold, without and with ``cluster=``.
MCNEMAR_TESTS = {
    False: ("McNemar: mcnemar_statistic and mcnemar_pvalue_asymptotic as R's mcnemar.test (continuity-corrected "
            "chi-square, 1 df), mcnemar_pvalue the exact binomial test on the discordant items, mcnemar_midp its "
            "mid-p (Fagerland et al. 2013)"),
    True: ("McNemar for clustered items: mcnemar_statistic Durkalski et al.'s (2003) statistic, (sum of the "
           "clusters' differences b_k - c_k)^2 / (sum of their squares), mcnemar_pvalue_asymptotic its chi-square "
           "(1 df) p-value; mcnemar_pvalue the exact randomisation test that flips the sign of whole clusters' "
           "differences (the exact McNemar test when each cluster is one item), mcnemar_midp its mid-p"),
}

_FFT_FROM = 2000  # discordant items above which the randomisation distribution is convolved by FFT


@dataclass(frozen=True)
class McNemar:
    """McNemar's test per pair of 0/1 results: ``b`` items only the first model got right, ``c`` only the
    second; ``statistic`` and ``pvalue_asymptotic`` the chi-square test; ``pvalue`` the exact test and
    ``midp`` its mid-p (:data:`MCNEMAR_TESTS` says which test, without and with clusters)."""

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


def _sign_flip_tail(sizes: np.ndarray, observed: int) -> tuple[float, float]:
    """``P(S >= observed)`` and ``P(S = observed)`` for ``S = sum_k e_k a_k``, ``e_k = +-1`` with probability 1/2
    each, from the non-negative integers ``sizes`` (the clusters' absolute differences ``a_k``)."""
    a = sizes[sizes > 0].astype(np.int64)
    total = int(a.sum())
    if total == 0:
        return 1.0, 1.0
    pmf = np.ones(1)                                   # distribution of T = sum of the a_k with e_k = +1
    values, counts = np.unique(a, return_counts=True)
    for v, c in zip(values.tolist(), counts.tolist()):
        part = np.zeros(v * c + 1)
        part[::v] = stats.binom.pmf(np.arange(c + 1), c, 0.5)
        pmf = signal.fftconvolve(pmf, part) if total > _FFT_FROM else np.convolve(pmf, part)
    pmf = np.clip(pmf, 0.0, None)
    t = (total + observed) // 2 if (total + observed) % 2 == 0 else None   # S = 2 T - total
    start = (total + observed + 1) // 2
    upper = float(pmf[start:].sum())
    at = float(pmf[t]) if t is not None else 0.0
    return min(upper, 1.0), at


def cluster_mcnemar(b: np.ndarray, c: np.ndarray, cluster_differences: np.ndarray) -> McNemar:
    """McNemar's test for items in clusters, per pair.

    Parameters
    ----------
    b, c : ndarray, shape (k,)
        Per pair the items only the first (``b``) and only the second (``c``) model got right.
    cluster_differences : ndarray of int, shape (n_clusters, k)
        Per cluster and pair, :math:`D_g = b_g - c_g`: the sum over the cluster's items of the difference of the
        two 0/1 results.

    Returns
    -------
    McNemar
        ``statistic`` Durkalski et al.'s :math:`X^2`, ``pvalue_asymptotic`` its chi-square (1 df) p-value,
        ``pvalue`` the exact randomisation p-value, ``midp`` its mid-p.

    Notes
    -----
    Under the null hypothesis that the two models are exchangeable within each cluster, every cluster's
    difference :math:`D_g` is symmetric about 0 and independent of the others, so :math:`S = \\sum_g D_g` has the
    randomisation distribution of :math:`\\sum_g \\epsilon_g |D_g|` with independent signs
    :math:`\\epsilon_g = \\pm 1`: exact :math:`p = \\min(1, 2 P(S \\ge |s|))`, mid-p
    :math:`= 2 P(S \\ge |s|) - P(S = |s|)`, computed by convolution (exactly; by FFT, to about 1e-12, beyond
    2,000 discordant items). Its variance is :math:`\\sum_g D_g^2`, and the normal approximation is
    Durkalski et al.'s (2003) statistic :math:`X^2 = (\\sum_g D_g)^2 / \\sum_g D_g^2` on 1 df. With one item
    per cluster, :math:`|D_g| \\in \\{0, 1\\}` and the exact test is the exact McNemar test, :math:`X^2` McNemar's
    chi-square without continuity correction.

    Examples
    --------
    >>> d = np.array([[3], [2], [1], [-1], [2], [0]])          # six passages
    >>> r = cluster_mcnemar(np.array([10]), np.array([3]), d)
    >>> round(float(r.statistic[0]), 4), round(float(r.pvalue_asymptotic[0]), 4), round(float(r.pvalue[0]), 4)
    (2.5789, 0.1083, 0.1875)
    """
    d = np.rint(np.asarray(cluster_differences, dtype=float)).astype(np.int64)
    total = d.sum(axis=0)
    square = (d * d).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = np.where(square > 0, total.astype(float) ** 2 / square, np.nan)
    exact = np.ones(d.shape[1])
    midp = np.ones(d.shape[1])
    for k in range(d.shape[1]):
        if square[k] == 0:
            continue
        upper, at = _sign_flip_tail(np.abs(d[:, k]), int(abs(total[k])))
        exact[k] = min(1.0, 2.0 * upper)
        midp[k] = min(1.0, 2.0 * upper - at)
    return McNemar(b=np.asarray(b).astype(int), c=np.asarray(c).astype(int), statistic=chi2,
                   pvalue_asymptotic=stats.chi2.sf(chi2, 1), pvalue=exact, midp=midp)
