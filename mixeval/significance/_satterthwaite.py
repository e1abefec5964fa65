"""Satterthwaite degrees of freedom of linear functions of the fixed effects, and the same with each variance
component's share taken at an upper confidence bound.

Both take ``V = l' Phi l``, its gradient ``g`` in the covariance parameters and their asymptotic covariance
``A``; :mod:`mixeval.significance._ddf` (lmer) and :mod:`mixeval.significance._glmm_ddf` (glmer) supply them.

Satterthwaite's moment match ``df = 2 V^2 / (g' A g)`` is computed at the estimated components. When a
component estimated from few levels carries a large share of a mean's variance ``V`` (three seeds of an
accuracy evaluation), its estimate is a scaled chi-square with about ``levels - 1`` df, and the estimated
share and the estimated ``V`` are small together: the df come out large exactly when ``V`` is too small, and
95 % intervals undercover (lmerTest's Satterthwaite and pbkrtest's
Kenward-Roger, the same df for one linear function, undercover alike on such a Gaussian design,
the documentation's method notes). No df evaluated at the estimated
share can avoid it: the exact quantile of the pivot at that share covers less still.

``"satterthwaite-upper"`` (experimental; refused outside its calibrated range,
:mod:`mixeval.significance._upper_range`) keeps the standard error and replaces each component's part of ``V`` by its upper
``1 - p`` confidence bound before the moment match (``p = SHARE_QUANTILE``). Component ``j`` contributes
``w_j = g_j^2 A_jj`` to the variance of ``V``-hat; as a scaled chi-square with ``k_j`` df its part of ``V`` is
``s_j = sqrt(k_j w_j / 2)``, and its upper bound ``m_j s_j`` with ``m_j = k_j / chi2_p(k_j)``. Then

    df = 2 (V + sum_j (m_j - 1) s_j)^2 / ((m g)' A (m g)),

which is Satterthwaite's df at the inflated parts. It is exact at both ends (``V`` all from one component:
``k`` df, the t interval of a balanced design; from none: ``inf``) and moves the df between them. ``p`` was
chosen in the idealised model (one component with ``k`` df carrying a share ``rho`` of ``V``, the rest
known) to minimise the largest coverage error over ``k`` in 2-19 and ``rho`` in (0, 1]: ``p = 0.35``, worst
error 0.8 points (Satterthwaite: 2.9); 0.30-0.40 are all within 1.2 points. ``k_j`` is the number of levels
of the component's grouping factor minus one (``n - rank X`` for a residual variance).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..mixed.engine import satterthwaite_df

__all__ = ["SHARE_QUANTILE", "satterthwaite_df", "share_multipliers", "satterthwaite_upper_df"]

#: Lower chi-square quantile defining each component's upper bound (chosen by simulation in the idealised model).
SHARE_QUANTILE = 0.35


def share_multipliers(k: np.ndarray, quantile: float = SHARE_QUANTILE) -> np.ndarray:
    """``m = k / chi2_p(k)``: how far the upper bound of a chi-square-``k`` variance estimate lies above it
    (``p = quantile``).

    Examples
    --------
    >>> share_multipliers(np.array([2.0, 59.0, np.inf])).round(3)
    array([2.321, 1.087, 1.   ])
    """
    k = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = k / stats.chi2.ppf(quantile, np.where(np.isfinite(k), k, 1.0))
    return np.where(np.isfinite(k), m, 1.0)


def satterthwaite_upper_df(var: np.ndarray, g: np.ndarray, A: np.ndarray, k: np.ndarray, *,
                           quantile: float = SHARE_QUANTILE) -> np.ndarray:
    """Satterthwaite df of linear functions with the components' parts of ``V`` at their upper bounds.

    Parameters
    ----------
    var : ndarray, shape (r,)
        ``V = l' Phi l`` of each linear function.
    g : ndarray, shape (r, c)
        ``dV / d gamma_j`` for the ``c`` covariance parameters.
    A : ndarray, shape (c, c)
        Asymptotic covariance of the covariance parameters (any parametrisation matching ``g``).
    k : ndarray, shape (c,)
        Degrees of freedom of each parameter's estimate (levels of its grouping factor minus one).
    quantile : float, default SHARE_QUANTILE
        ``p`` of the upper bounds (the calibration study varies it).

    Returns
    -------
    ndarray, shape (r,)
        ``inf`` where no parameter enters (``g' A g = 0``), NaN for ``V = 0``.

    Notes
    -----
    ``w_j = g_j^2 A_jj``, ``s_j = sqrt(k_j w_j / 2)`` (scaled down together where they add up to more than
    ``V``), ``m_j = k_j / chi2_p(k_j)`` and
    ``df = 2 (V + sum_j (m_j - 1) s_j)^2 / ((m g)' A (m g))``. With ``m = 1`` it is Satterthwaite's. With one
    component it never exceeds Satterthwaite's (``s <= V``); with several, whose gradients or covariances differ
    in sign, the inflated parts could in principle give more df, and the smaller of the two is returned.

    Examples
    --------
    One component with 2 df carrying all of ``V`` (a balanced design's exact t): 2 df, as Satterthwaite.

    >>> A = np.array([[2.0 * 1.0 ** 2 / 2]])       # var of a chi2(2) / 2 estimate of 1
    >>> satterthwaite_upper_df(np.array([1.0]), np.array([[1.0]]), A, np.array([2.0]))
    array([2.])

    With a known part as large again the df drop below Satterthwaite's 8:

    >>> float(satterthwaite_upper_df(np.array([2.0]), np.array([[1.0]]), A, np.array([2.0]))[0]) < 8
    True
    """
    var = np.asarray(var, dtype=float)
    g = np.atleast_2d(np.asarray(g, dtype=float))
    A = np.atleast_2d(np.asarray(A, dtype=float))
    m = share_multipliers(k, quantile)
    w = g * g * np.diag(A)[None, :]
    part = np.sqrt(np.asarray(k, dtype=float)[None, :] * np.maximum(w, 0.0) / 2.0)
    part = np.where(np.isfinite(part), part, var[:, None])
    total = part.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        part = part * np.where(total > var, var / total, 1.0)[:, None]  # the parts are portions of V
    num = var + np.sum((m[None, :] - 1.0) * part, axis=1)
    # Satterthwaite's df of the inflated parts: numerator num instead of V, gradient m g
    upper = satterthwaite_df(num, g * m[None, :], A)
    return np.where(var > 0, np.minimum(upper, satterthwaite_df(var, g, A)), np.nan)
