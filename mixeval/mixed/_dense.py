"""The profiled deviance of a random-intercept model with its exact Hessian, dense in the random effects.

The refits of the parametric bootstrap and of power simulations solve the same design for many responses.
Near the fit's own optimum (the refits' warm start) Newton's method with the exact Hessian needs a few
evaluations where forward-difference curvature needs one gradient per component for every Hessian; this
module gives the Hessian for designs whose random effects are few enough to be handled densely
(:data:`DENSE_MAX_LEVELS`). The design's part (``Z'Z``, ``Z'X``, ``X'X``) is built once; a response only
brings ``Z'y``, ``X'y`` and ``y'y``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve, cholesky, solve_triangular

from ._deviance import profiled_criterion

__all__ = ["DENSE_MAX_LEVELS", "DenseDesign", "ResponseSums"]

#: random-effect levels (all terms) up to which refits use the dense exact Hessian (an evaluation costs
#: ``O(q^3)``; above this the engine's evaluator, which eliminates the largest factor's block, is faster)
DENSE_MAX_LEVELS = 400

#: values at which a component at 0 is tried for a better optimum further away (that 0 is a local optimum
#: along it, the slope in ``phi = theta^2`` tells: see :meth:`DenseDesign.start`)
DISTANT_PROBES = (0.1, 0.3, 1.0)


@dataclass(frozen=True)
class ResponseSums:
    """What one response adds to the design: ``Z'y`` (q,), ``X'y`` (p,) and ``y'y``."""

    zy: np.ndarray
    xy: np.ndarray
    yy: float


class DenseDesign:
    """``Z'Z``, ``Z'X``, ``X'X`` of a random-intercept design, and the deviance of a response on it.

    Parameters
    ----------
    zt : list of scipy.sparse matrices
        ``Z_k'`` per term (``q_k x n`` indicators), in the order of theta.
    X : ndarray, shape (n, p)

    Notes
    -----
    With ``phi_k = theta_k^2``, ``Sigma = I + sum_k phi_k Z_k Z_k'`` (the relative covariance of ``y``),
    ``P = Sigma^-1 - Sigma^-1 X (X' Sigma^-1 X)^-1 X' Sigma^-1`` and ``r2 = y'P y``, the profiled criteria are
    ``log|Sigma| + n log r2`` (ML) and ``log|Sigma| + log|X' Sigma^-1 X| + (n - p) log r2`` (REML) up to
    constants (``log|Sigma| = log|A|``, ``X' Sigma^-1 X = M_XX`` of :mod:`mixeval.mixed._deviance`). With
    ``T = Sigma^-1`` (ML) or ``P`` (REML), ``Q = Z'P Z`` and ``u = Z'P y``, the derivatives in ``phi`` are

    ``g_k = tr(Z_k'T Z_k) - m u_k'u_k / r2``,
    ``H_kl = -||Z_k'T Z_l||_F^2 + m (2 u_k'Q_kl u_l / r2 - u_k'u_k u_l'u_l / r2^2)``

    (``m = n`` or ``n - p``), and in theta ``g_theta = 2 theta g``, ``H_theta = 4 theta theta' H + 2 diag(g)``.
    The ``Sigma^-1``-products of ``[Z X y]`` come from ``A = Lambda Z'Z Lambda + I`` without touching the rows:
    ``K = T'T - (Lambda Z'T)' A^-1 (Lambda Z'T)`` for ``T = [Z X y]``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> codes = np.repeat(np.arange(3), 2)
    >>> zt = [sp.csr_matrix((np.ones(6), (codes, np.arange(6))), shape=(3, 6))]
    >>> design = DenseDesign(zt, np.ones((6, 1)))
    >>> y = np.array([1.0, 2, 3, 4, 5, 7])
    >>> value, grad, hess = design.evaluate(np.array([1.6997]), design.sums(y)[0], reml=False)
    >>> round(value, 4), bool(abs(grad[0]) < 1e-3), bool(hess[0, 0] > 0)
    (22.7682, True, True)
    """

    def __init__(self, zt: list, X: np.ndarray) -> None:
        self.zt = sp.vstack(zt).tocsr() if zt else sp.csr_matrix((0, X.shape[0]))
        self.X = np.asarray(X, dtype=float)
        self.nobs, self.p = self.X.shape
        sizes = [z.shape[0] for z in zt]
        self.n_terms = len(sizes)
        self.term = np.repeat(np.arange(self.n_terms), sizes)
        self.indicator = np.zeros((self.term.size, self.n_terms))
        self.indicator[np.arange(self.term.size), self.term] = 1.0
        c = (self.zt @ self.zt.T).toarray()
        zx = np.asarray(self.zt @ self.X)
        self.c_zx = np.hstack([c, zx])          # Z'[Z X]
        self.xx = self.X.T @ self.X

    @property
    def n_levels(self) -> int:
        return self.term.size

    def sums(self, Y: np.ndarray) -> list[ResponseSums]:
        """:class:`ResponseSums` of every column of ``Y`` (one sparse product for the block)."""
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            Y = Y[:, None]
        zy = np.asarray(self.zt @ Y)
        xy = self.X.T @ Y
        yy = np.einsum("ij,ij->j", Y, Y)
        return [ResponseSums(zy[:, b].copy(), xy[:, b].copy(), float(yy[b])) for b in range(Y.shape[1])]

    def _products(self, theta: np.ndarray, s: ResponseSums):
        """``K`` (the ``Sigma^-1``-products of ``[Z X y]``) and ``log|A|`` at theta."""
        q, p = self.term.size, self.p
        lam = np.abs(theta)[self.term]
        zt_t = np.hstack([self.c_zx, s.zy[:, None]])  # Z'[Z X y]
        a = lam[:, None] * zt_t[:, :q] * lam[None, :]
        a[np.diag_indices_from(a)] += 1.0
        chol = cholesky(a, lower=True, check_finite=False)
        v = solve_triangular(chol, lam[:, None] * zt_t, lower=True, check_finite=False)
        tt = np.empty((q + p + 1, q + p + 1))
        tt[:q] = zt_t
        tt[q:, :q] = zt_t[:, q:].T
        tt[q:q + p, q:q + p] = self.xx
        tt[q:q + p, q + p] = tt[q + p, q:q + p] = s.xy
        tt[q + p, q + p] = s.yy
        k = tt - v.T @ v
        return k, 2.0 * float(np.sum(np.log(np.diag(chol))))

    def solve(self, theta: np.ndarray, s: ResponseSums, reml: bool):
        """``(deviance, beta, M_XX, r2, K, cho_factor of M_XX)`` at ``theta``; ``LinAlgError`` where undefined."""
        theta = np.abs(np.asarray(theta, dtype=float))
        q, p, n = self.term.size, self.p, self.nobs
        k, logdet_a = self._products(theta, s)
        m = k[q:, q:]
        fx = None
        if p:
            fx = cho_factor(m[:p, :p], lower=True, check_finite=False)
            beta = cho_solve(fx, m[:p, p], check_finite=False)
            logdet_mxx = 2.0 * float(np.sum(np.log(np.diag(fx[0]))))
        else:
            beta, logdet_mxx = np.zeros(0), 0.0
        r2 = float(m[p, p] - m[:p, p] @ beta)
        if not r2 > 0.0:
            raise LinAlgError("penalised residual sum of squares is not positive (the response is fitted exactly)")
        value = float(profiled_criterion(logdet_a, logdet_mxx, r2, n, p, reml))
        return value, beta, m[:p, :p], r2, k, fx

    def phi_derivatives(self, theta: np.ndarray, s: ResponseSums, reml: bool) -> tuple[float, np.ndarray, np.ndarray]:
        """The profiled deviance at ``theta`` with its gradient and Hessian in ``phi = theta^2`` (class Notes)."""
        theta = np.abs(np.asarray(theta, dtype=float))
        q, p, n = self.term.size, self.p, self.nobs
        value, beta, _, r2, k, fx = self.solve(theta, s, reml)
        kzz, kzx = k[:q, :q], k[:q, q:q + p]
        u = k[:q, q + p] - kzx @ beta                                               # Z'P y
        q_mat = kzz - kzx @ cho_solve(fx, kzx.T, check_finite=False) if p else kzz  # Z'P Z
        t_mat = q_mat if reml else kzz
        mm = (n - p) if reml else n
        e = self.indicator
        uk = e.T @ (u * u)
        eu = e * u[:, None]
        g_phi = e.T @ np.diag(t_mat) - mm * uk / r2
        h_phi = -(e.T @ (t_mat * t_mat) @ e) + mm * (2.0 * (eu.T @ q_mat @ eu) / r2 - np.outer(uk, uk) / (r2 * r2))
        return value, g_phi, h_phi

    def evaluate(self, theta: np.ndarray, s: ResponseSums, reml: bool) -> tuple[float, np.ndarray, np.ndarray]:
        """The profiled deviance at ``theta`` with its gradient and Hessian in theta (see the class Notes).

        Raises ``LinAlgError`` where the criterion is undefined (``r2`` not positive).
        """
        theta = np.abs(np.asarray(theta, dtype=float))
        value, g_phi, h_phi = self.phi_derivatives(theta, s, reml)
        return value, 2.0 * theta * g_phi, 4.0 * np.outer(theta, theta) * h_phi + np.diag(2.0 * g_phi)

    def start(self, theta0: np.ndarray, s: ResponseSums, reml: bool) -> np.ndarray:
        """``theta0`` with every zero component the deviance descends from moved to its Newton step in ``phi``.

        At ``theta_k = 0`` the deviance is stationary in theta_k (it is even), so an optimiser started there
        holds the component; where the slope in ``phi_k = theta_k^2`` is negative, 0 is not the optimum along
        it and the component starts at ``sqrt(-g_k / H_kk)`` (0.1 where the curvature in ``phi_k`` is not
        positive).
        """
        theta0 = np.abs(np.asarray(theta0, dtype=float)).copy()
        zero = theta0 == 0.0
        if not zero.any():
            return theta0
        try:
            _, g_phi, h_phi = self.phi_derivatives(theta0, s, reml)
        except LinAlgError:
            return np.where(zero, 0.1, theta0)
        for k in np.flatnonzero(zero & (g_phi < 0)):
            theta0[k] = np.sqrt(-g_phi[k] / h_phi[k, k]) if h_phi[k, k] > 0 else 0.1
        return theta0

    def optimize(self, s: ResponseSums, reml: bool, theta0: np.ndarray):
        """The optimum over ``theta >= 0``: :func:`~mixeval.mixed._optimize.minimize_deviance` with the exact Hessian.

        Zero components of the start that the deviance descends from are moved off 0 first
        (:meth:`start`), and again after the optimiser stops (it holds a component at 0, where the deviance
        is stationary); the optimiser's own probes then only look for a better optimum away from 0
        (:data:`DISTANT_PROBES`).
        """
        from ._optimize import minimize_deviance

        last: dict = {}

        def fun_and_grad(t: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad, hess = self.evaluate(t, s, reml)
            last["theta"], last["hess"] = t.copy(), hess
            return value, grad

        def hessian(t: np.ndarray) -> np.ndarray:
            if "theta" in last and np.array_equal(last["theta"], t):
                return last["hess"]
            return self.evaluate(t, s, reml)[2]

        def fun(t: np.ndarray) -> float:
            return self.solve(t, s, reml)[0]

        lower = np.zeros(self.n_terms)
        opt = minimize_deviance(fun_and_grad, self.start(theta0, s, reml), lower, hess=hessian, fun=fun,
                                probes=DISTANT_PROBES)
        for _ in range(self.n_terms):  # a component held at 0 although the deviance descends from there
            again = self.start(opt.theta, s, reml)
            if np.array_equal(again, opt.theta):
                break
            nxt = minimize_deviance(fun_and_grad, again, lower, hess=hessian, fun=fun, probes=DISTANT_PROBES)
            if not nxt.deviance < opt.deviance:
                break
            opt = replace(nxt, n_evaluations=opt.n_evaluations + nxt.n_evaluations)
        return opt
