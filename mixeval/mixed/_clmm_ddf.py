"""Satterthwaite degrees of freedom of linear functions of a cumulative link mixed model's thresholds and effects.

A threshold of a rating model fitted to few raters carries the mean of those raters' effects in its sampling
variance: its standard error comes from a variance estimated from (say) 5 raters, and a z interval ignores that
this standard error is itself estimated. lmerTest's answer for ``lmer`` fits, Satterthwaite's moment match of the
estimated variance to a scaled chi-square, carries over to the clmm's maximum-likelihood (Laplace) fit with the
covariance of ``(alpha, beta)`` at given random-effects parameters taken from the Hessian of the deviance at fixed
``theta`` (the conditional modes re-optimised at every evaluation, ``(alpha, beta)`` re-optimised at each
``theta``).

A scalar component estimated on the boundary (``theta < 1e-4``) is held fixed (it contributes no slope).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ._satterthwaite import satterthwaite_df

__all__ = ["clmm_satterthwaite_df", "clmm_covariance_at", "BOUNDARY_THETA", "FD_STEP"]

#: Standard deviations below this are on the boundary and held fixed.
BOUNDARY_THETA = 1e-4

#: Relative step of the central differences of ``V(theta)`` (``h_j = FD_STEP * max(theta_j, 0.05)``).
FD_STEP = 1e-3

_NEWTON_TOL = 1e-10
_NEWTON_MAX = 30


def _check_fit(fit: object) -> None:
    if type(fit).__name__ != "ClmmResult":
        raise InputError(f"clmm_satterthwaite_df needs a fit of mixeval.clmm; got {type(fit).__name__}.")
    if int(fit.nAGQ) > 1 or any(t.n_coef != 1 for t in fit.problem.re.terms):
        raise InputError("clmm_satterthwaite_df needs a Laplace fit (nAGQ=1) with scalar random-effects terms "
                         "((1|g) only): the slopes of the covariance use the deviance's exact gradient.")
    if fit.cov_params is None or not np.all(np.isfinite(fit.cov_params[:fit.theta.size, :fit.theta.size])):
        raise InputError("the fit has no usable covariance of its random-effects parameters (cov_params is missing "
                         "or not finite); refit, or use z intervals.")


def _contrast_matrix(fit, L) -> tuple[list[str], np.ndarray]:
    """Rows of ``L`` over ``(alpha, beta)`` in the fit's order, with their names (identity when ``L`` is None)."""
    names = list(fit.alpha_names) + list(fit.fixed_names)
    if L is None:
        return names, np.eye(len(names))
    if isinstance(L, pd.DataFrame):
        missing = [c for c in L.columns if c not in names]
        if missing:
            raise InputError(f"L has columns {missing} that are not thresholds or effects of the fit; "
                             f"use columns among {names}.")
        return [str(i) for i in L.index], L.reindex(columns=names, fill_value=0.0).to_numpy(dtype=float)
    M = np.atleast_2d(np.asarray(L, dtype=float))
    if M.ndim != 2 or M.shape[1] != len(names):
        raise InputError(f"L must have {len(names)} columns (the thresholds then the effects: {names}); "
                         f"got shape {np.shape(L)}.")
    if not np.all(np.isfinite(M)):
        raise InputError("L has missing or infinite entries.")
    return [f"L{i + 1}" for i in range(M.shape[0])], M


def _free_theta(theta: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.asarray(theta) >= BOUNDARY_THETA)


def _ab_hessian(dev, theta: np.ndarray, ab: np.ndarray, u0: np.ndarray) -> np.ndarray:
    """The ``(alpha, beta)`` block of the deviance's Hessian at fixed ``theta`` (modes warm-started from ``u0``)."""
    dev.u = u0.copy()
    k = theta.size
    h = dev.hessian(np.concatenate([theta, ab]))[k:, k:]
    dev.u = u0
    return h


def _optimal_ab(dev, theta: np.ndarray, ab: np.ndarray, u0: np.ndarray, h_inv: np.ndarray) -> np.ndarray:
    """``(alpha, beta)`` minimising the deviance at fixed ``theta``: chord Newton from ``ab`` with ``h_inv``."""
    k = theta.size
    for _ in range(_NEWTON_MAX):
        dev.u = u0.copy()
        step = h_inv @ dev.deviance_and_gradient(np.concatenate([theta, ab]))[1][k:]
        ab = ab - step
        if np.max(np.abs(step)) < _NEWTON_TOL:
            break
    return ab


def _conditional_cov(dev, theta: np.ndarray, ab0: np.ndarray, u0: np.ndarray, h_inv: np.ndarray) -> np.ndarray:
    """``V(theta) = 2 H_ab^-1`` at ``(alpha, beta)`` re-optimised at ``theta``."""
    ab = _optimal_ab(dev, theta, ab0, u0, h_inv)
    return 2.0 * np.linalg.inv(_ab_hessian(dev, theta, ab, u0))


def _variance_slopes(dev, theta: np.ndarray, ab: np.ndarray, u0: np.ndarray, M: np.ndarray, free: np.ndarray,
                     step: float) -> tuple[np.ndarray, np.ndarray]:
    """``l' V(theta_hat) l`` for each row and its central-difference slopes in the free ``theta``."""
    h_inv = np.linalg.inv(_ab_hessian(dev, theta, ab, u0))
    V = 2.0 * h_inv
    var = np.einsum("ij,jk,ik->i", M, V, M)
    g = np.zeros((M.shape[0], free.size))
    for col, j in enumerate(free):
        h = step * max(float(theta[j]), 0.05)
        quad = []
        for sign in (1.0, -1.0):
            t = theta.copy()
            t[j] += sign * h
            Vt = _conditional_cov(dev, t, ab, u0, h_inv)
            quad.append(np.einsum("ij,jk,ik->i", M, Vt, M))
        g[:, col] = (quad[0] - quad[1]) / (2 * h)
    dev.u = u0
    return var, g


def clmm_satterthwaite_df(fit, L=None, *, step: float = FD_STEP) -> pd.Series:
    """Satterthwaite degrees of freedom of the thresholds and location effects of a clmm fit (or of contrasts).

    Parameters
    ----------
    fit : ClmmResult
        A Laplace fit of :func:`mixeval.clmm` with scalar random-effects terms.
    L : array-like of shape (r, m + p) or DataFrame, optional
        Linear functions of the thresholds parameters (``fit.alpha_names``) then the effects (``fit.fixed_names``);
        a DataFrame names its rows by its index and its columns by parameter (missing columns are 0). Default: each
        threshold parameter and each effect on its own.
    step : float, keyword-only
        Relative step of the central differences in ``theta`` (``h_j = step * max(theta_j, 0.05)``).

    Returns
    -------
    pandas.Series
        The df of each row (``inf`` where no free random-effects parameter enters the variance).

    Notes
    -----
    With ``x = (alpha, beta)`` the thresholds and effects and ``theta`` the standard deviations of the scalar
    random-effects terms (the engine's parameters), the covariance of ``x`` at given ``theta`` is

        V(theta) = 2 [d^2 D(theta, x) / dx dx' at x = x_hat(theta)]^-1,

    ``D`` the Laplace deviance (conditional modes re-optimised at every evaluation) and ``x_hat(theta)`` its
    minimiser at fixed ``theta``. For a linear function ``l' x`` Satterthwaite's moment match is

        df = 2 (l' V l)^2 / (g' A g),   g_j = d (l' V(theta) l) / d theta_j,

    with ``A`` the ``theta`` block of the fit's ``cov_params`` (the inverse of half the Hessian over every
    parameter), ``g`` by central differences in ``theta``, both at the estimates. Components estimated at the
    boundary (``theta_j < 1e-4``) are held fixed. The construction is lmerTest's for ``lmer`` fits on the
    clmm's likelihood; the Hessian over ``x`` is central differences of the exact gradient.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import clmm
    >>> rng = np.random.default_rng(3)
    >>> df = pd.DataFrame({"rater": np.repeat(np.arange(6), 60), "system": np.tile(["A", "B"], 180)})
    >>> latent = 0.8 * (df.system == "B") + rng.normal(0, 0.8, 6)[df.rater] + rng.logistic(size=360)
    >>> df["rating"] = np.digitize(latent, [-1.5, 0.0, 1.5]) + 1
    >>> d = clmm_satterthwaite_df(clmm("rating ~ system + (1|rater)", df))
    >>> list(d.index)
    ['1|2', '2|3', '3|4', 'systemB']
    >>> bool(d["2|3"] < 10 < d["systemB"])
    True
    """
    _check_fit(fit)
    if not (isinstance(step, (int, float)) and 0 < step < 0.1):
        raise InputError(f"step must be a number in (0, 0.1); got {step!r}.")
    names, M = _contrast_matrix(fit, L)
    theta = np.array(fit.theta, dtype=float)
    free = _free_theta(theta)
    dev = fit.problem.evaluator(1)
    u0 = np.array(fit.u, dtype=float)
    dev.u = u0.copy()
    ab = np.concatenate([fit.alpha, fit.coef]).astype(float)
    var, g = _variance_slopes(dev, theta, ab, u0, M, free, float(step))
    A = np.asarray(fit.cov_params, dtype=float)[np.ix_(free, free)]
    return pd.Series(satterthwaite_df(var, g, A) if free.size else np.full(len(names), np.inf), index=names,
                     name="df")


def clmm_covariance_at(fit):
    """``theta -> V(theta)``: the covariance of ``(alpha, beta)`` at given random-effects standard deviations
    (``2 H^-1`` of the deviance over ``(alpha, beta)``, re-optimised at ``theta``), as :func:`clmm_satterthwaite_df`
    differentiates it; for variance shares (:mod:`mixeval.significance._dominance`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import clmm
    >>> rng = np.random.default_rng(4)
    >>> raters = np.repeat(np.arange(5), 50)
    >>> ratings = np.digitize(rng.normal(0, 0.7, 5)[raters] + rng.logistic(size=250), [-1.0, 1.0]) + 1
    >>> V = clmm_covariance_at(clmm("rating ~ 1 + (1|rater)", pd.DataFrame({"rater": raters, "rating": ratings})))
    >>> bool(V(np.array([1.5]))[0, 0] > V(np.array([0.5]))[0, 0])  # a larger rater variance: a less certain threshold
    True
    """
    _check_fit(fit)
    theta0 = np.array(fit.theta, dtype=float)
    dev = fit.problem.evaluator(1)
    u0 = np.array(fit.u, dtype=float)
    ab = np.concatenate([fit.alpha, fit.coef]).astype(float)
    h_inv = np.linalg.inv(_ab_hessian(dev, theta0, ab, u0))

    def at(theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        try:
            out = _conditional_cov(dev, theta, ab, u0, h_inv)
        except np.linalg.LinAlgError:  # the chord steps from the estimates overshoot: a guarded quasi-Newton search
            out = 2.0 * np.linalg.inv(_ab_hessian(dev, theta, _searched_ab(dev, theta, ab, u0), u0))
        dev.u = u0
        return out

    return at


def _searched_ab(dev, theta: np.ndarray, ab: np.ndarray, u0: np.ndarray) -> np.ndarray:
    """``(alpha, beta)`` minimising the deviance at fixed ``theta`` by L-BFGS from ``ab``; trial points with
    thresholds out of order count as infinitely bad."""
    from scipy.optimize import minimize

    k = theta.size

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        dev.u = u0.copy()
        try:
            value, grad = dev.deviance_and_gradient(np.concatenate([theta, x]))
        except np.linalg.LinAlgError:
            return float("inf"), np.zeros_like(x)
        return float(value), np.asarray(grad[k:], dtype=float)

    return minimize(f, ab, jac=True, method="L-BFGS-B").x
