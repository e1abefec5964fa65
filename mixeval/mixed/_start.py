"""Starting values for theta from moment equations (Henderson's Method 1) on the sufficient statistics.

lme4 starts every relative standard deviation at 1. Each deviance evaluation of a
design with thousands of levels in its second-largest factor costs a dense
factorisation, and from 1 the optimiser spends most of its evaluations finding the
region of the optimum. Henderson's (1953) Method 1 gives unbiased estimates of the
variance components of a random model ``y = mu + sum_k Z_k u_k + e`` from the
between-level sums of squares, and they are functions of the statistics the fit
already has (level counts, level-pair counts, level sums). For balanced designs they
are the REML estimates (when positive); for unbalanced ones a start close to them.
The fit itself is unchanged: the optimiser still minimises the profiled deviance.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, solve

from ._stats import SufficientStats

__all__ = ["moment_equations", "moment_start"]

#: components estimated at or below 0 start here (theta = 0 is stationary, so a start must be off it)
START_FLOOR = 0.05

#: and none above this (a residual variance estimated near 0 would give theta -> inf)
START_CEILING = 1e3


def _squared_sums(m, row_weights: np.ndarray, col_bounds: np.ndarray) -> np.ndarray:
    """``sum_{l, m in block j} m_lm^2 / r_l`` for each block ``j`` of columns (``r`` the row weights)."""
    sq = m.multiply(m) if sp.issparse(m) else m * m
    col = np.asarray(sq.T @ (1.0 / row_weights)).ravel() if m.shape[0] else np.zeros(m.shape[1])
    return np.add.reduceat(col, col_bounds[:-1]) if col.size else np.zeros(col_bounds.size - 1)


def moment_equations(stats: SufficientStats) -> tuple[np.ndarray, np.ndarray]:
    """Henderson's Method 1 on the OLS residuals: ``(C, t)`` with ``E[t] = C (sigma^2, sigma_1^2, ..., sigma_K^2)``.

    Notes
    -----
    With ``e = y - X b`` (``b`` least squares), ``s_kl`` the sum of ``e`` over level ``l`` of factor
    ``k`` and ``n_kl`` its count, ``n_{kl,jm}`` the count of rows in level ``l`` of ``k`` and ``m`` of ``j``:

    ``t_0 = e'e - (1'e)^2 / n``, ``E t_0 = (n - 1) sigma^2 + sum_j (n - b_j) sigma_j^2``,

    ``t_k = sum_l s_kl^2 / n_kl - (1'e)^2 / n``, ``E t_k = (q_k - 1) sigma^2 + sum_j (a_kj - b_j) sigma_j^2``,

    with ``a_kj = sum_{l, m} n_{kl,jm}^2 / n_kl`` and ``b_j = sum_m n_jm^2 / n``. The expectations are
    those of the random model with an intercept only (the other fixed effects are removed from ``e``
    but not from the expectations), which is enough for a starting value.

    Examples
    --------
    Balanced one-way data, three groups of two: ``t_0`` is the total and ``t_1`` the between-group sum of
    squares of the ANOVA table (``E t_1 = 2 sigma^2 + 4 sigma_g^2``).

    >>> import pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> c, t = moment_equations(compute_stats(build_design("y ~ 1 + (1|g)", df)))
    >>> c.tolist(), t.round(4).tolist()
    ([[5.0, 4.0], [2.0, 4.0]], [23.3333, 20.3333])
    """
    p, n = stats.p, float(stats.nobs)
    ww = stats.ww
    try:
        b = solve(ww[:p, :p], ww[:p, p], assume_a="pos", check_finite=False) if p else np.zeros(0)
    except (LinAlgError, ValueError):
        b = np.linalg.lstsq(ww[:p, :p], ww[:p, p], rcond=None)[0]
    c = np.append(-b, 1.0)
    ee = float(c @ ww @ c)
    levels = np.asarray(stats.n_levels)
    bounds = np.concatenate([[0], np.cumsum(levels[1:])]).astype(np.int64)
    sums_r = stats.zrw @ c
    total = float(stats.z0w[:, -1].sum() - stats.z0w[:, :p].sum(axis=0) @ b)  # 1'e
    mean_term = total * total / n
    counts_r = np.diag(stats.crr) if stats.crr.size else np.zeros(0)
    k_terms = levels.size
    # a[k, j] = sum over levels l of k and m of j of n_lm^2 / n_l
    a = np.empty((k_terms, k_terms))
    a[0, 0] = n
    if k_terms > 1:
        a[0, 1:] = _squared_sums(stats.cross0r, stats.counts0, bounds)
        k_sq = stats.cross0r.multiply(stats.cross0r) if sp.issparse(stats.cross0r) else stats.cross0r ** 2
        a[1:, 0] = np.add.reduceat(np.asarray(k_sq.sum(axis=0)).ravel() / counts_r, bounds[:-1])
        for k in range(1, k_terms):  # blocks of Z_r'Z_r (the diagonal ones are diagonal: a_kk = n)
            rows = slice(bounds[k - 1], bounds[k])
            for j in range(1, k_terms):
                cols = slice(bounds[j - 1], bounds[j])
                a[k, j] = n if j == k else float(np.sum(stats.crr[rows, cols] ** 2, axis=1) @ (1.0 / counts_r[rows]))
    b_j = np.concatenate([[stats.counts0 @ stats.counts0], np.add.reduceat(counts_r * counts_r, bounds[:-1])
                          if k_terms > 1 else np.zeros(0)]) / n
    t = np.empty(k_terms + 1)
    coef = np.empty((k_terms + 1, k_terms + 1))
    t[0] = ee - mean_term
    coef[0, 0] = n - 1.0
    coef[0, 1:] = n - b_j
    t[1] = float((stats.z0w @ c) ** 2 @ (1.0 / stats.counts0)) - mean_term
    for k in range(1, k_terms):
        sl = slice(bounds[k - 1], bounds[k])
        t[k + 1] = float(sums_r[sl] ** 2 @ (1.0 / counts_r[sl])) - mean_term
    coef[1:, 0] = levels - 1.0
    coef[1:, 1:] = a - b_j[None, :]
    return coef, t


def moment_start(stats: SufficientStats) -> np.ndarray | None:
    """Starting thetas ``sqrt(sigma_k^2 / sigma^2)`` from :func:`moment_equations`, or None when they fail.

    Components estimated at or below 0 start at :data:`START_FLOOR`; None (start at lme4's 1) when the
    equations are singular or the residual variance is not positive.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> moment_start(compute_stats(build_design("y ~ 1 + (1|g)", df))).round(4)  # sqrt((MSB - MSW) / 2) / sqrt(MSW)
    array([2.1409])
    """
    if not stats.n_terms:
        return None
    coef, t = moment_equations(stats)
    try:
        sigma2 = solve(coef, t, check_finite=False)
    except (LinAlgError, ValueError):
        return None
    if not (np.all(np.isfinite(sigma2)) and sigma2[0] > 0):
        return None
    ratio = np.maximum(sigma2[1:], 0.0) / sigma2[0]
    return np.clip(np.sqrt(ratio), START_FLOOR, START_CEILING)
