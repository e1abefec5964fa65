"""Profile-likelihood intervals of the abilities of a fixed-effects preference model."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps
from scipy.linalg import null_space
from scipy.optimize import brentq

from ._fixed import fit_fixed
from ._log import VoteLog
from ._model import ModelFit
from ._separation import unbounded_sides

__all__ = ["profile_interval"]


def _profile_loglik(fit: ModelFit, log: VoteLog, c: np.ndarray, value: float) -> float:
    """Maximum log-likelihood with ``c' beta = value``: ``beta = c value / c'c + N gamma`` (``N`` spans ``c``'s
    orthogonal complement), so ``gamma`` is fitted with an offset."""
    X = fit.design.X
    basis = null_space(c[None, :])
    offset = X @ (c * value / (c @ c))
    start = basis.T @ fit.beta
    sub = fit_fixed(fit.fixed.model, X @ basis, log.outcome, log.count, offset=offset, beta0=start,
                    phi0=fit.phi if fit.fixed.model.n_phi else None, warn=False, covariance=False)
    return sub.loglik


def profile_interval(fit: ModelFit, log: VoteLog, c: np.ndarray, level: float) -> tuple[float, float]:
    """The ``level`` profile-likelihood interval of ``c' beta``: where ``2 (l_max - l_profile) = chi2_1(level)``.

    Notes
    -----
    The roots are bracketed by stepping out from the estimate in multiples of its Wald standard error and
    found by Brent's method. Under separation a side along which the likelihood keeps rising
    (:func:`~._separation.unbounded_sides`) is infinite.
    """
    open_below, open_above = unbounded_sides(fit.fixed.model, np.asarray(fit.design.X, dtype=float), log.outcome,
                                             log.count, fit.null_basis, c)
    est = float(c @ fit.beta)
    se = float(np.sqrt(c @ fit.cov @ c))
    crit = sps.chi2.ppf(level, 1)

    def excess(v: float) -> float:
        return 2 * (fit.loglik - _profile_loglik(fit, log, c, v)) - crit

    bounds = []
    for sign, unbounded in ((-1.0, open_below), (1.0, open_above)):
        if unbounded:
            bounds.append(sign * np.inf)
            continue
        step = se if np.isfinite(se) and se > 0 else 1.0
        inner, outer = est, est + sign * step
        for _ in range(30):
            if excess(outer) > 0:
                break
            inner, outer = outer, outer + sign * step
            step *= 2
        else:
            bounds.append(sign * np.inf)
            continue
        bounds.append(brentq(excess, min(inner, outer), max(inner, outer), xtol=1e-10))
    return bounds[0], bounds[1]
