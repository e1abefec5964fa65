"""Stage 2 (lme4's ``mkLmerDevfun``): the profiled deviance as a function of theta.

Notation of Bates et al. (2015, JSS 67(1)): ``Lambda = diag(theta_k)`` expanded
over the levels of each term, ``A = Lambda Z'Z Lambda + I``, and for
``W = [X y]``::

    M(theta) = W'W - W'Z Lambda A^{-1} Lambda Z'W
    beta     = M_XX^{-1} M_Xy,      r2 = M_yy - M_yX beta      (penalised RSS)
    ML:   d(theta) = log|A| + n (1 + log(2 pi r2 / n))
    REML: d(theta) = log|A| + log|M_XX| + (n - p) (1 + log(2 pi r2 / (n - p)))

``A`` is split into the diagonal block of the largest factor and the rest, and
``A^{-1}`` is applied through the Schur complement of that diagonal block. The
block's weights take one value per distinct level count, so a call costs
``O(c q_r^2 + q_r^3)`` for ``c`` distinct counts, whatever the number of rows
and of the largest factor's levels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, lapack

from ._blas import blas_threads_for
from ._stats import SufficientStats

__all__ = ["DevianceParts", "deviance_parts", "deviance_and_gradient", "profiled_deviance", "make_deviance_function",
           "solve_random_effects", "average_information", "gradient_from_parts"]

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
    #: upper Cholesky factor ``U`` of the Schur complement (``S = U'U``), Fortran-ordered as LAPACK returns it
    chol_s: np.ndarray = field(repr=False)
    lam_r: np.ndarray = field(repr=False)
    #: beta of the statistics' own response when it is centred (``beta`` is then on the response's scale)
    beta_centred: np.ndarray | None = field(default=None, repr=False)
    #: ``K' D^{-1} A`` and ``S^{-1} H`` (``H = Lr (Z_r'W - lam0^2 K' D^{-1} A)``), re-used by the gradient
    ka_w: np.ndarray | None = field(default=None, repr=False)
    s_inv_h: np.ndarray | None = field(default=None, repr=False)


def _expand_theta(stats: SufficientStats, theta: np.ndarray) -> tuple[float, np.ndarray]:
    lam0 = float(theta[0]) if stats.n_terms else 0.0
    lam_r = theta[stats.term_of_column] if stats.n_terms > 1 else np.zeros(0)
    return lam0, lam_r


def _schur(stats: SufficientStats, lam0: float, lam_r: np.ndarray, kkw: np.ndarray) -> np.ndarray:
    """``S = Lr (C_rr - lam0^2 K' D^-1 K) Lr + I``, formed in place of ``kkw`` (lower triangle exact).

    ``S`` can be thousands of rows wide, so passes over it are saved: ``C_rr`` is added on the diagonal
    when it is diagonal, and one scalar scales it when all of ``Lr`` is one theta.
    """
    s = kkw
    s *= -(lam0 * lam0)
    if stats.classes.diagonal_crr:
        s[np.diag_indices_from(s)] += np.diag(stats.crr)
    else:
        s += stats.crr
    if lam_r.size and np.all(lam_r == lam_r[0]):
        s *= lam_r[0] * lam_r[0]
    else:
        s *= lam_r[:, None]
        s *= lam_r[None, :]
    s[np.diag_indices_from(s)] += 1.0
    return s



def profile_fixed_effects(m: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Profile the fixed effects out of ``M(theta)``: ``(beta, M_XX, log|M_XX|, r^2)``.

    ``beta = M_XX^{-1} M_Xy`` and ``r^2 = M_yy - M_yX beta`` (the penalised residual sum of squares); raises
    ``LinAlgError`` when ``r^2`` is not positive (the response is fitted exactly).
    """
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
    return beta, mxx, logdet_mxx, r2


def profiled_criterion(logdet_a: float, logdet_mxx: float, r2: float, n: int, p: int, reml: bool) -> float:
    """The profiled REML criterion or ML deviance from its pieces (Bates et al. 2015, Eqs. 34 and 41)."""
    if reml:
        dof = n - p
        return logdet_a + logdet_mxx + dof * (1.0 + _LOG_2PI + np.log(r2 / dof))
    return logdet_a + n * (1.0 + _LOG_2PI + np.log(r2 / n))

def deviance_parts(stats: SufficientStats, theta: np.ndarray, reml: bool) -> DevianceParts:
    """Evaluate the profiled deviance at ``theta`` and keep the intermediate factors (see :func:`_evaluate`).

    Examples
    --------
    At ``theta = 0`` the model is the linear model ``y ~ 1``: ``beta`` is the mean, ``r2`` the residual sum of
    squares around it and the ML deviance ``n (1 + log(2 pi r2 / n))``.

    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> p = deviance_parts(compute_stats(build_design("y ~ 1 + (1|g)", df)), np.array([0.0]), reml=False)
    >>> round(float(p.beta[0]), 4), round(float(p.r2), 4)
    (3.6667, 23.3333)
    >>> bool(np.isclose(p.deviance, 6 * (1 + np.log(2 * np.pi * p.r2 / 6))))
    True
    """
    return _evaluate(stats, theta, reml)


def _evaluate(stats: SufficientStats, theta: np.ndarray, reml: bool) -> DevianceParts:
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

    Notes
    -----
    The weights ``1 / d_l``, ``d_l = lam0^2 n_l + 1``, of the eliminated block depend on a level only
    through its count ``n_l``; the weighted products are sums over count classes
    (:class:`~mixeval.mixed._stats.LevelClasses`).
    """
    theta = np.asarray(theta, dtype=float)
    p, n = stats.p, stats.nobs
    lam0, lam_r = _expand_theta(stats, theta)
    qr = lam_r.shape[0]
    if stats.n_terms:
        cls = stats.classes
        w = 1.0 / (lam0 * lam0 * cls.counts + 1.0)
        d0 = lam0 * lam0 * stats.counts0 + 1.0
        quad = (lam0 * lam0) * cls.aa(w)
        logdet_a = -float(cls.sizes @ np.log(w))
    else:
        d0 = np.zeros(0)
        quad = np.zeros_like(stats.ww)
        logdet_a = 0.0
    if qr:
        s = _schur(stats, lam0, lam_r, cls.kk(w, full=False))
        with blas_threads_for(qr):  # s.T: s's lower triangle as the upper one of a Fortran array (factored in place)
            chol_s = cholesky(s.T, lower=False, overwrite_a=True, check_finite=False)
        ka_w = cls.ka(w)
        h = lam_r[:, None] * (stats.zrw - (lam0 * lam0) * ka_w)
        # H' S^{-1} H through potrs (a triangular solve with trsm is slow for tiny
        # matrices when the BLAS is multi-threaded)
        s_inv_h = cho_solve((chol_s, False), h, check_finite=False)
        quad = quad + h.T @ s_inv_h
        logdet_a += 2.0 * float(np.sum(np.log(np.diag(chol_s))))
    else:
        chol_s = np.zeros((0, 0))
        ka_w = s_inv_h = None
    beta, mxx, logdet_mxx, r2 = profile_fixed_effects(stats.ww - quad, p)
    beta_centred = None
    if stats.coef_shift is not None:  # statistics of a centred response: report beta on the response's scale
        beta_centred, beta = beta, beta + stats.coef_shift
    dev = profiled_criterion(logdet_a, logdet_mxx, r2, n, p, reml)
    parts = DevianceParts(
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
        beta_centred=beta_centred,
        ka_w=ka_w,
        s_inv_h=s_inv_h,
    )
    return parts


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


def _centred_beta(stats: SufficientStats, parts: DevianceParts) -> np.ndarray:
    """The coefficients that belong to the statistics' own (possibly centred) response."""
    return parts.beta if parts.beta_centred is None else parts.beta_centred


def solve_random_effects(stats: SufficientStats, parts: DevianceParts) -> tuple[np.ndarray, np.ndarray]:
    """Spherical random effects ``u`` solving ``A u = Lambda Z'(y - X beta)``, split as (u_0, u_r)."""
    lam0 = float(parts.theta[0])
    coef = np.append(-_centred_beta(stats, parts), 1.0)  # W coef -> y - X beta
    g0 = lam0 * (stats.z0w @ coef)
    if parts.lam_r.shape[0]:
        rhs = parts.lam_r * (stats.zrw @ coef - lam0 * (stats.cross0r.T @ (g0 / parts.d0)))
        ur = cho_solve((parts.chol_s, False), rhs, check_finite=False)
        a0r_ur = (lam0 * stats.cross0r) @ (parts.lam_r * ur)
    else:
        ur = np.zeros(0)
        a0r_ur = 0.0
    u0 = (g0 - a0r_ur) / parts.d0
    return u0, ur


def _cholesky_inverse(chol: np.ndarray) -> np.ndarray:
    """``S^{-1}`` from the upper Cholesky factor (LAPACK potri), as a C-ordered array whose lower triangle
    is exact (the upper one stays zero)."""
    inv, info = lapack.dpotri(chol, lower=0)
    if info:
        raise LinAlgError("Schur complement is singular")
    return inv.T


def _inverse_diagonal(chol: np.ndarray) -> np.ndarray:
    """``diag(S^{-1})`` from the upper factor: row sums of squares of ``U^{-1}`` (trtri, half the work of a full inverse)."""
    inv, info = lapack.dtrtri(chol, lower=0)
    if info:
        raise LinAlgError("Schur complement is singular")
    return np.einsum("ij,ij->i", inv, inv)


def _trace_product(inv_lower: np.ndarray, m: np.ndarray) -> float:
    """``tr(S^{-1} M)`` for symmetric ``M`` (full, or its lower triangle) from the lower triangle of ``S^{-1}``."""
    return float(2.0 * np.vdot(inv_lower, m) - np.diag(inv_lower) @ np.diag(m))


def _weighted_trace(cls, v: np.ndarray, inv_lower: np.ndarray, lam_r: np.ndarray) -> float:
    """``tr(S^{-1} Lr K' diag(w) K Lr)`` for class weights ``v`` from the lower triangle of ``S^{-1}``.

    With the per-level pair table this is ``sum_l w_l k_l' Lr S^{-1} Lr k_l`` (``k_l`` the rows of ``K``):
    one product with the table instead of forming ``K' diag(w) K`` and a pass over it.
    """
    if cls.rowwise and cls._kk_table is not None:
        return float(v[cls.of_level] @ cls.level_quadratic_forms(inv_lower, lam_r))
    kk = cls.kk(v, full=False)
    kk *= lam_r[:, None]
    kk *= lam_r[None, :]
    return _trace_product(inv_lower, kk)


def deviance_and_gradient(stats: SufficientStats, theta: np.ndarray, reml: bool) -> tuple[float, np.ndarray]:
    """The profiled deviance and its exact gradient with respect to theta.

    Notes
    -----
    With ``E_k`` the indicator of term ``k``'s levels, ``U = A^{-1} Lambda Z'W`` and
    ``R = Z'W - Z'Z Lambda U``, the derivatives are

    ``d log|A| / d theta_k = (q_k - tr_k(A^{-1})) / theta_k`` (0 at ``theta_k = 0``, where the
    deviance is even), ``dM / d theta_k = -(P_k + P_k')`` with ``P_k = R_k' U_k``, hence
    ``d r^2 = c' dM c`` for ``c = (-beta, 1)`` and ``d log|M_XX| = tr(M_XX^{-1} dM_XX)``.

    In the largest factor's block, with ``B = Lr U_r`` and ``K = Z_0'Z_r``, ``A_0 = Z_0'W``:
    ``R_0 = D^{-1} (A_0 - K B)`` and ``U_0 = lam0 R_0``, so ``P_0`` and ``tr_0(A^{-1}) = sum 1/d +
    lam0^2 tr(S^{-1} Lr K' D^{-2} K Lr)`` are sums over count classes with weights ``1/d^2``.
    """
    return gradient_from_parts(stats, _evaluate(stats, np.abs(np.asarray(theta, dtype=float)), reml))


def gradient_from_parts(stats: SufficientStats, parts: DevianceParts) -> tuple[float, np.ndarray]:
    """:func:`deviance_and_gradient` from an evaluation already made (``deviance_parts`` at ``parts.theta``)."""
    theta, reml = parts.theta, parts.reml
    k_terms = stats.n_terms
    p, n = stats.p, stats.nobs
    lam0, lam_r = theta[0], parts.lam_r
    qr = lam_r.shape[0]
    cls = stats.classes
    w = 1.0 / (lam0 * lam0 * cls.counts + 1.0)
    w2 = w * w
    l2 = lam0 * lam0
    ka_w2 = cls.ka(w2)
    aa_w2 = cls.aa(w2)
    tr_ainv0 = float(cls.sizes @ w)
    if qr:
        ka_w, ur = parts.ka_w, parts.s_inv_h  # U_r = S^{-1} Lr (Z_r'W - lam0^2 K'D^{-1}A), formed by the evaluation
        b = lam_r[:, None] * ur
        kk_w_b = cls.kk_times(w, b)
        rr = stats.zrw - l2 * (ka_w - kk_w_b) - stats.crr @ b
        if cls.counts.size == 1 and cls.diagonal_crr:
            # one count class: K'D^-2K = w K'D^-1K, so tr(S^-1 lam0^2 Lr K'D^-2K Lr) = w tr(S^-1 (I + Lr C_rr Lr - S))
            # needs diag(S^-1) only
            with blas_threads_for(qr):
                trace_r = _inverse_diagonal(parts.chol_s)
            kk_w2_b = w[0] * kk_w_b
            tr_ainv0 += float(w[0] * (trace_r @ (1.0 + lam_r * lam_r * np.diag(stats.crr)) - qr))
        else:
            kk_w2_b = cls.kk_times(w2, b)
            with blas_threads_for(qr):
                s_inv = _cholesky_inverse(parts.chol_s)
            trace_r = np.diag(s_inv).copy()
            tr_ainv0 += l2 * _weighted_trace(cls, w2, s_inv, lam_r)
        p0 = lam0 * (aa_w2 - ka_w2.T @ b - b.T @ ka_w2 + b.T @ kk_w2_b)
    else:
        p0 = lam0 * aa_w2
        ur = rr = np.zeros((0, p + 1))
        trace_r = np.zeros(0)
    c = np.append(-_centred_beta(stats, parts), 1.0)
    if p:
        mxx_inv = cho_solve((cholesky(parts.mxx, lower=True, check_finite=False), True), np.eye(p), check_finite=False)
    grad = np.zeros(k_terms)
    bounds = np.concatenate([[0], np.cumsum(stats.n_levels[1:])]) if qr else np.zeros(1, dtype=int)
    for k in range(k_terms):
        if k == 0:
            pk, tr_ainv, qk = p0, tr_ainv0, stats.n_levels[0]
        else:
            sl = slice(bounds[k - 1], bounds[k])
            pk = rr[sl].T @ ur[sl]
            tr_ainv = float(np.sum(trace_r[sl]))
            qk = stats.n_levels[k]
        th = theta[k]
        dlogdet = 0.0 if th == 0.0 else 2.0 * (qk - tr_ainv) / th
        dm = -(pk + pk.T)
        dr2 = float(c @ dm @ c)
        if reml:
            g = dlogdet + (float(np.sum(mxx_inv * dm[:p, :p])) if p else 0.0) + (n - p) * dr2 / parts.r2
        else:
            g = dlogdet + n * dr2 / parts.r2
        grad[k] = g
    return parts.deviance, grad


def average_information(stats: SufficientStats, theta: np.ndarray, reml: bool,
                        parts: DevianceParts | None = None) -> np.ndarray:
    """The average-information approximation of the profiled deviance's Hessian in theta.

    Notes
    -----
    With ``V = sigma^2 V_1``, ``V_1 = I + Z Lambda^2 Z'``, ``P_1`` its REML projection (``V_1^{-1}`` less
    the fixed effects' part), ``e = P_1 y`` (the penalised residual) and ``a_j = Z_j'e`` its level sums,
    the average information of ``-2 log L`` (the mean of the observed and the expected information,
    Gilmour, Thompson and Cullis 1995) in ``(sigma^2, theta)`` is ``y'P V_a P V_b P y``:
    ``r^2 / sigma^6``, ``2 theta_j |a_j|^2 / sigma^4`` and ``4 theta_j theta_k a_j' Z_j'P_1 Z_k a_k / sigma^2``.
    Profiling ``sigma^2 = r^2 / nu`` out (``nu = n - p`` for REML, ``n`` for ML) leaves

    ``H_jk = 4 theta_j theta_k nu / r^2 (a_j' Z_j'P_1 Z_k a_k - |a_j|^2 |a_k|^2 / r^2)``.

    It needs ``K + p`` solves with the Schur complement's factor, not its inverse: a Hessian for the
    price of a fraction of one evaluation, close to the exact one when the factors have many levels.
    ``parts``, the evaluation at ``theta`` when already made, spares the factorisation.
    """
    theta = np.abs(np.asarray(theta, dtype=float))
    if parts is None or parts.reml != reml or not np.array_equal(parts.theta, theta):
        parts = _evaluate(stats, theta, reml)
    p, n = stats.p, stats.nobs
    nu = n - p if reml else n
    lam0, lam_r = float(theta[0]), parts.lam_r
    k0 = stats.cross0r

    def c_times(v0: np.ndarray, vr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # Z'Z v
        out0 = stats.counts0[:, None] * v0
        outr = np.zeros((lam_r.size, v0.shape[1]))
        if lam_r.size:
            out0 = out0 + np.asarray(k0 @ vr)
            outr = np.asarray(k0.T @ v0) + stats.crr @ vr
        return out0, outr

    def a_solve(r0: np.ndarray, rr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # A^{-1} [r0; rr]
        d0 = parts.d0[:, None]
        if not lam_r.size:
            return r0 / d0, rr
        t = rr - lam0 * lam_r[:, None] * np.asarray(k0.T @ (r0 / d0))
        xr = cho_solve((parts.chol_s, False), t, check_finite=False)
        x0 = (r0 - lam0 * np.asarray(k0 @ (lam_r[:, None] * xr))) / d0
        return x0, xr

    def v_inverse(y0: np.ndarray, yr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # Y - C Lambda A^{-1} Lambda Y
        x0, xr = a_solve(lam0 * y0, lam_r[:, None] * yr)
        c0, cr = c_times(lam0 * x0, lam_r[:, None] * xr)
        return y0 - c0, yr - cr

    u0, ur = solve_random_effects(stats, parts)
    coef = np.append(-_centred_beta(stats, parts), 1.0)
    c0, cr = c_times((lam0 * u0)[:, None], (lam_r * ur)[:, None])
    a0 = stats.z0w @ coef - c0[:, 0]
    ar = stats.zrw @ coef - cr[:, 0]
    k_terms = stats.n_terms
    bounds = np.concatenate([[0], np.cumsum(stats.n_levels[1:])]).astype(int)
    # b_j: a restricted to term j's block, one column per term
    b0 = np.zeros((a0.size, k_terms))
    br = np.zeros((ar.size, k_terms))
    b0[:, 0] = a0
    for j in range(1, k_terms):
        br[bounds[j - 1]:bounds[j], j] = ar[bounds[j - 1]:bounds[j]]
    g0, gr = v_inverse(*c_times(b0, br))  # Z'V_1^{-1} Z b
    if p:
        x0, xr = v_inverse(stats.z0w[:, :p], stats.zrw[:, :p])  # Z'V_1^{-1} X
        proj = cho_solve((cholesky(parts.mxx, lower=True, check_finite=False), True),
                         x0.T @ b0 + xr.T @ br, check_finite=False)
        g0 = g0 - x0 @ proj
        gr = gr - xr @ proj
    m = b0.T @ g0 + br.T @ gr
    sq = np.diag(b0.T @ b0 + br.T @ br)
    r2 = parts.r2
    h = 4.0 * np.outer(theta, theta) * nu / r2 * (m - np.outer(sq, sq) / r2)
    return 0.5 * (h + h.T)
