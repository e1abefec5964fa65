"""Simultaneous inference beyond the studentized range: emmeans' ``"dunnettx"`` approximation of Dunnett's
many-to-one distribution and the exact single-step multivariate t (``"mvt"``), two- and one-sided."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize
from scipy import stats as sps

from ._tukey import ptukey

__all__ = ["dunnettx_pvalue", "dunnettx_critical_value", "mvt_adjusted"]


def dunnettx_pvalue(t: np.ndarray, m: int, df: np.ndarray) -> np.ndarray:
    """emmeans' ``"dunnettx"`` adjusted p-values of ``m`` contrasts: ``1 - F(|t|)`` with ``F`` the blend
    ``w P_tukey + (1 - w) P_sidak``, ``w = (m - 1) / m``, of the studentized range of ``(1 + sqrt(1 + 8m)) / 2``
    means at ``sqrt(2) |t|`` and ``F_{1,df}(t^2)^m`` (an approximation of Dunnett's many-to-one distribution).

    Examples
    --------
    >>> round(float(dunnettx_pvalue(np.array([2.7]), 2, np.array([20.0]))[0]), 5)
    0.02624
    """
    t = np.abs(np.asarray(t, dtype=float))
    df = np.broadcast_to(np.asarray(df, dtype=float), t.shape)
    return np.array([1.0 - _pdunnx(a, m, d) for a, d in zip(t, df)])


def _pdunnx(x: float, m: int, df: float) -> float:
    if m <= 1:
        return float(1.0 - 2 * sps.t.sf(x, df))
    w = (m - 1) / m
    tukey = float(ptukey(np.sqrt(2) * x, (1 + np.sqrt(1 + 8 * m)) / 2, df))
    sidak = float(sps.f.cdf(x * x, 1, df) ** m) if np.isfinite(df) else float(sps.chi2.cdf(x * x, 1) ** m)
    return w * tukey + (1 - w) * sidak


def dunnettx_critical_value(level: float, m: int, df: float) -> float:
    """The ``x`` with ``_pdunnx(x) = level`` (emmeans' ``.qdunnx``, solved to 1e-10 rather than its 5e-4; R:
    ``emmeans:::.qdunnx(0.95, 2, Inf)`` = 2.221812).

    Examples
    --------
    >>> round(dunnettx_critical_value(0.95, 2, np.inf), 4)
    2.2218
    """
    if m <= 1:
        return float(sps.t.ppf(0.5 + level / 2, df))
    lo = float(sps.t.ppf(0.5 + level / 2, df))
    hi = lo * 3
    return float(optimize.brentq(lambda x: _pdunnx(x, m, df) - level, lo, hi, xtol=1e-10))


def mvt_adjusted(t: np.ndarray, R: np.ndarray, df: float, level: float, *, tail: int = 0, random_state: int = 0
                 ) -> tuple[np.ndarray, float]:
    """Single-step simultaneous p-values and the critical value of ``m`` statistics ``T`` multivariate t (``df``;
    normal for ``inf``) with correlation ``R`` (emmeans' ``"mvt"``, mvtnorm's ``pmvt``/``qmvt``; Genz's quasi-Monte
    Carlo integration, seeded).

    ``tail=0`` (two-sided): ``P(max_j |T_j| >= |t_i|)`` and ``q`` with ``P(max |T| < q) = level``. One-sided
    (emmeans' tests against a margin): ``tail=1`` ``P(max_j T_j >= t_i)``, ``tail=-1`` ``P(min_j T_j <= t_i)``, and
    ``q`` with ``P(max T < q) = level``.

    Examples
    --------
    >>> p, q = mvt_adjusted(np.array([2.0, 0.5]), np.eye(2), np.inf, 0.95)
    >>> round(float(p[0]), 4), round(q, 4)  # independent: 1 - (1 - 0.0455)^2 and the Sidak critical value
    (0.0889, 2.2365)
    >>> p, q = mvt_adjusted(np.array([2.0, 0.5]), np.eye(2), np.inf, 0.95, tail=1)
    >>> round(float(p[0]), 4), round(q, 4)  # 1 - (1 - 0.02275)^2 and Phi^-1(sqrt(0.95))
    (0.045, 1.9545)
    """
    t = np.asarray(t, dtype=float)
    m = len(t)
    if m == 1:
        if tail == 0:
            return 2 * sps.t.sf(np.abs(t), df), float(sps.t.ppf(0.5 + level / 2, df))
        return (sps.t.sf(t, df) if tail > 0 else sps.t.cdf(t, df)), float(sps.t.ppf(level, df))
    dist: Any  # a frozen multivariate t or normal
    if np.isfinite(df):
        dist = sps.multivariate_t(loc=np.zeros(m), shape=R, df=df, seed=random_state)  # type: ignore[arg-type]  # stubs: int df
    else:
        dist = sps.multivariate_normal(mean=np.zeros(m), cov=R, seed=random_state)

    def inside(x: float) -> float:
        upper = np.full(m, x)
        return float(dist.cdf(upper, lower_limit=-upper)) if tail == 0 else float(dist.cdf(upper))

    # left tail: P(all T_j > t) = P(all T_j < -t) by symmetry
    at = np.abs(t) if tail == 0 else (t if tail > 0 else -t)
    p = np.array([1.0 - inside(v) if np.isfinite(v) else np.nan for v in at])
    lo = float(sps.t.ppf(0.5 + level / 2 if tail == 0 else level, df))
    crit = float(optimize.brentq(lambda x: inside(x) - level, lo, lo * 3, xtol=1e-6))
    return np.clip(p, 0.0, 1.0), crit
