"""Stage 2 (lme4's ``mkLmerDevfun``): the profiled deviance as a function of theta.

Notation of Bates et al. (2015, JSS 67(1)): ``Lambda = diag(theta_k)`` expanded
over the levels of each term, ``A = Lambda Z'Z Lambda + I``, and for
``W = [X y]``::

    M(theta) = W'W - W'Z Lambda A^{-1} Lambda Z'W
    beta     = M_XX^{-1} M_Xy,      r2 = M_yy - M_yX beta      (penalised RSS)
    ML:   d(theta) = log|A| + n (1 + log(2 pi r2 / n))
    REML: d(theta) = log|A| + log|M_XX| + (n - p) (1 + log(2 pi r2 / (n - p)))

``A`` is split into the diagonal block of the largest factor and the rest, and
``A^{-1}`` is applied through the Schur complement of that diagonal block, so a
call costs ``O(q_0 q_r^2 + q_r^3)`` whatever the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_solve, cholesky

from ._stats import SufficientStats

__all__ = ["DevianceParts", "deviance_parts", "deviance_and_gradient", "profiled_deviance", "make_deviance_function", "solve_random_effects"]

_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class DevianceParts:
    """Everything computed on the way to the deviance at one theta."""

    theta: np.ndarray
    deviance: float
    reml: bool
    logdet_a: float
    logdet_mxx: float
    r2: float
    beta: np.ndarray
    mxx: np.ndarray = field(repr=False)
    # pieces re-used to solve for the random effects
    d0: np.ndarray = field(repr=False)
    chol_s: np.ndarray = field(repr=False)
    lam_r: np.ndarray = field(repr=False)


def weighted_gram(k, w: np.ndarray) -> np.ndarray:
    """``K' diag(w) K`` as a dense array, for a dense or a sparse ``K``."""
    if sp.issparse(k):
        return (k.T @ sp.diags(w) @ k).toarray()
    return (k * w[:, None]).T @ k


def _expand_theta(stats: SufficientStats, theta: np.ndarray) -> tuple[float, np.ndarray]:
    lam0 = float(theta[0]) if stats.n_terms else 0.0
    lam_r = theta[stats.term_of_column] if stats.n_terms > 1 else np.zeros(0)
    return lam0, lam_r


def deviance_parts(stats: SufficientStats, theta: np.ndarray, reml: bool) -> DevianceParts:
    """Evaluate the profiled deviance at ``theta`` and keep the intermediate factors.

    Parameters
    ----------
    stats : SufficientStats
    theta : ndarray, shape (n_terms,)
        Relative standard deviations ``sigma_k / sigma`` (lme4's theta for random intercepts).
    reml : bool
        REML criterion if True, else ML deviance.

    Returns
    -------
    DevianceParts
    """
    theta = np.asarray(theta, dtype=float)
    p, n = stats.p, stats.nobs
    lam0, lam_r = _expand_theta(stats, theta)
    qr = lam_r.shape[0]
    if stats.n_terms:
        d0 = lam0 * lam0 * stats.counts0 + 1.0
        g0 = lam0 * stats.z0w
        quad = g0.T @ (g0 / d0[:, None])
        logdet_a = float(np.sum(np.log(d0)))
    else:
        d0 = np.zeros(0)
        quad = np.zeros_like(stats.ww)
        logdet_a = 0.0
    if qr:
        # Schur complement of the diagonal block: S = Lr C Lr + I - lam0^2 Lr K' D^{-1} K Lr, K = Z_0'Z_r
        k = stats.cross0r
        w = 1.0 / d0
        ktwk = weighted_gram(k, w)
        s = (lam_r[:, None] * (stats.crr - (lam0 * lam0) * ktwk)) * lam_r[None, :]
        s[np.diag_indices_from(s)] += 1.0
        chol_s = cholesky(s, lower=True, check_finite=False)
        h = lam_r[:, None] * (stats.zrw - (lam0 * lam0) * (k.T @ (stats.z0w * w[:, None])))
        # H' S^{-1} H through potrs (a triangular solve with trsm is slow for tiny
        # matrices when the BLAS is multi-threaded)
        quad = quad + h.T @ cho_solve((chol_s, True), h, check_finite=False)
        logdet_a += 2.0 * float(np.sum(np.log(np.diag(chol_s))))
    else:
        chol_s = np.zeros((0, 0))
    m = stats.ww - quad
    mxx = m[:p, :p]
    if p:
        chol_x = cholesky(mxx, lower=True, check_finite=False)
        beta = cho_solve((chol_x, True), m[:p, p], check_finite=False)
        logdet_mxx = 2.0 * float(np.sum(np.log(np.diag(chol_x))))
    else:
        beta = np.zeros(0)
        logdet_mxx = 0.0
    r2 = float(m[p, p] - m[:p, p] @ beta)
    if not r2 > 0.0:
        raise LinAlgError("penalised residual sum of squares is not positive (the response is fitted exactly)")
    if reml:
        dof = n - p
        dev = logdet_a + logdet_mxx + dof * (1.0 + _LOG_2PI + np.log(r2 / dof))
    else:
        dev = logdet_a + n * (1.0 + _LOG_2PI + np.log(r2 / n))
    return DevianceParts(
        theta=theta.copy(),
        deviance=float(dev),
        reml=reml,
        logdet_a=logdet_a,
        logdet_mxx=logdet_mxx,
        r2=r2,
        beta=beta,
        mxx=mxx,
        d0=d0,
        chol_s=chol_s,
        lam_r=lam_r,
    )


def profiled_deviance(stats: SufficientStats, theta: np.ndarray, reml: bool) -> float:
    """The profiled REML criterion or ML deviance at ``theta`` (``inf`` where undefined).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> s = compute_stats(build_design("y ~ 1 + (1|g)", df))
    >>> round(profiled_deviance(s, np.array([0.0]), reml=False), 4)  # theta = 0: the linear model
    25.176
    """
    try:
        return deviance_parts(stats, theta, reml).deviance
    except LinAlgError:
        return float("inf")


def make_deviance_function(stats: SufficientStats, reml: bool):
    """``f(theta) -> deviance``, the function handed to the optimiser (lme4's devfun)."""

    def devfun(theta: np.ndarray) -> float:
        return profiled_deviance(stats, np.abs(theta), reml)

    return devfun


def solve_random_effects(stats: SufficientStats, parts: DevianceParts) -> tuple[np.ndarray, np.ndarray]:
    """Spherical random effects ``u`` solving ``A u = Lambda Z'(y - X beta)``, split as (u_0, u_r)."""
    lam0 = float(parts.theta[0])
    coef = np.append(-parts.beta, 1.0)  # W coef -> y - X beta
    g0 = lam0 * (stats.z0w @ coef)
    if parts.lam_r.shape[0]:
        rhs = parts.lam_r * (stats.zrw @ coef - lam0 * (stats.cross0r.T @ (g0 / parts.d0)))
        ur = cho_solve((parts.chol_s, True), rhs, check_finite=False)
        a0r_ur = (lam0 * stats.cross0r) @ (parts.lam_r * ur)
    else:
        ur = np.zeros(0)
        a0r_ur = 0.0
    u0 = (g0 - a0r_ur) / parts.d0
    return u0, ur


def deviance_and_gradient(stats: SufficientStats, theta: np.ndarray, reml: bool) -> tuple[float, np.ndarray]:
    """The profiled deviance and its exact gradient with respect to theta.

    Notes
    -----
    With ``E_k`` the indicator of term ``k``'s levels, ``U = A^{-1} Lambda Z'W`` and
    ``R = Z'W - Z'Z Lambda U``, the derivatives are

    ``d log|A| / d theta_k = (q_k - tr_k(A^{-1})) / theta_k`` (0 at ``theta_k = 0``, where the
    deviance is even), ``dM / d theta_k = -(P_k + P_k')`` with ``P_k = R_k' U_k``, hence
    ``d r^2 = c' dM c`` for ``c = (-beta, 1)`` and ``d log|M_XX| = tr(M_XX^{-1} dM_XX)``.
    """
    theta = np.abs(np.asarray(theta, dtype=float))
    parts = deviance_parts(stats, theta, reml)
    k_terms = stats.n_terms
    p, n = stats.p, stats.nobs
    lam0, lam_r = theta[0], parts.lam_r
    d0 = parts.d0
    qr = lam_r.shape[0]
    # U = A^{-1} G, G = Lambda Z'W (block elimination with the Schur complement S)
    g0 = lam0 * stats.z0w
    if qr:
        kmat = stats.cross0r
        rhs = lam_r[:, None] * (stats.zrw - lam0 * (kmat.T @ (g0 / d0[:, None])))
        ur = cho_solve((parts.chol_s, True), rhs, check_finite=False)
        u0 = (g0 - lam0 * (kmat @ (lam_r[:, None] * ur))) / d0[:, None]
        # R = Z'W - Z'Z Lambda U
        lu0, lur = lam0 * u0, lam_r[:, None] * ur
        r0 = stats.z0w - stats.counts0[:, None] * lu0 - stats.cross0r @ lur
        rr = stats.zrw - stats.cross0r.T @ lu0 - stats.crr @ lur
        s_inv = cho_solve((parts.chol_s, True), np.eye(qr), check_finite=False)
        trace_r = np.diag(s_inv)
    else:
        u0 = g0 / d0[:, None]
        r0 = stats.z0w - stats.counts0[:, None] * (lam0 * u0)
        ur = rr = np.zeros((0, p + 1))
        s_inv = np.zeros((0, 0))
        trace_r = np.zeros(0)
    c = np.append(-parts.beta, 1.0)
    if p:
        mxx_inv = cho_solve((cholesky(parts.mxx, lower=True, check_finite=False), True), np.eye(p), check_finite=False)
    grad = np.zeros(k_terms)
    bounds = np.concatenate([[0], np.cumsum(stats.n_levels[1:])]) if qr else np.zeros(1, dtype=int)
    for k in range(k_terms):
        if k == 0:
            rk, uk = r0, u0
            if qr:  # tr(A^-1)_00 = sum 1/d + tr(S^-1 E'E), E = lam0 D^-1 K Lr
                ete = (lam0 * lam0) * (lam_r[:, None] * weighted_gram(kmat, 1.0 / d0**2)) * lam_r[None, :]
                tr_ainv = float(np.sum(1.0 / d0) + np.sum(s_inv * ete))
            else:
                tr_ainv = float(np.sum(1.0 / d0))
            qk = stats.n_levels[0]
        else:
            sl = slice(bounds[k - 1], bounds[k])
            rk, uk = rr[sl], ur[sl]
            tr_ainv = float(np.sum(trace_r[sl]))
            qk = stats.n_levels[k]
        th = theta[k]
        dlogdet = 0.0 if th == 0.0 else 2.0 * (qk - tr_ainv) / th
        pk = rk.T @ uk
        dm = -(pk + pk.T)
        dr2 = float(c @ dm @ c)
        if reml:
            g = dlogdet + (float(np.sum(mxx_inv * dm[:p, :p])) if p else 0.0) + (n - p) * dr2 / parts.r2
        else:
            g = dlogdet + n * dr2 / parts.r2
        grad[k] = g
    return parts.deviance, grad
