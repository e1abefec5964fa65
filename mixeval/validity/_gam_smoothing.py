"""Penalized least squares and the choice of smoothing parameters (GCV, UBRE, REML).

The fit of any set of terms is a function of the cross products ``G = X'WX``, ``b = X'Wz`` and
``z'Wz`` only, so it costs ``O(p^3)`` whatever the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.optimize import minimize

__all__ = ["PenalizedFit", "penalized_solve", "select_smoothing", "RHO_BOUND"]

RHO_BOUND = 25.0


@dataclass
class PenalizedFit:
    beta: np.ndarray
    Ainv: np.ndarray
    edf_diag: np.ndarray
    rss: float
    lam: np.ndarray


def penalized_solve(G: np.ndarray, b: np.ndarray, yy: float, S_list: list[tuple[slice, np.ndarray]], lam: np.ndarray) -> tuple:
    """Penalized solve: ``(A, A^{-1}, beta, RSS, log|A|, RSS + beta' S beta)`` with ``A = G + sum lam_k S_k``."""
    A = G.copy()
    for (sl, S), lam_k in zip(S_list, lam):
        A[sl, sl] += lam_k * S
    try:
        c, _ = sla.cho_factor(A, lower=False, check_finite=False)
        inv, info = sla.lapack.dpotri(c, lower=0)
        if info != 0:
            raise np.linalg.LinAlgError("dpotri failed")
        Ainv = np.triu(inv) + np.triu(inv, 1).T
        logdet = 2.0 * float(np.sum(np.log(np.abs(np.diag(c)))))
    except np.linalg.LinAlgError:
        Ainv = np.linalg.pinv(A, hermitian=True)
        logdet = float(np.linalg.slogdet(A)[1])
    beta = Ainv @ b
    rss = float(yy - 2.0 * beta @ b + beta @ G @ beta)
    return A, Ainv, beta, max(rss, 0.0), logdet, float(yy - beta @ b)


def select_smoothing(
    G: np.ndarray, b: np.ndarray, yy: float, n: float, S_list: list[tuple[slice, np.ndarray]], criterion: str,
    start: np.ndarray | None = None,
) -> PenalizedFit:
    """Choose log smoothing parameters by one of four criteria.

    ``GCV``: ``n RSS / (n - tau)^2``; ``UBRE``: ``RSS/n - 1 + 2 tau / n`` (scale 1);
    ``REML``: restricted likelihood with the scale profiled out,
    ``(n - M_p)/2 log(D_p) + 1/2 log|A| - 1/2 sum_k r_k rho_k``; ``REML1``: the same with scale 1,
    ``D_p/2 + 1/2 log|A| - 1/2 sum_k r_k rho_k``. ``D_p = RSS + beta' S beta``, ``r_k = rank(S_k)``,
    ``M_p`` the dimension of the penalty null space (constants dropped).

    Examples
    --------
    >>> G = np.eye(3) * 10.0
    >>> fit = select_smoothing(G, np.array([1.0, 2.0, 3.0]), 20.0, 10.0, [(slice(1, 3), np.eye(2))], "GCV")
    >>> fit.beta.shape, bool(fit.edf_diag.sum() <= 3)
    ((3,), True)
    """
    m = len(S_list)
    if m == 0:
        _, Ainv, beta, rss, _, _ = penalized_solve(G, b, yy, S_list, np.zeros(0))
        return PenalizedFit(beta, Ainv, np.einsum("ij,ji->i", Ainv, G), rss, np.zeros(0))
    ranks = np.array([np.linalg.matrix_rank(S) for _, S in S_list], dtype=float)
    n_null = G.shape[0] - ranks.sum()

    def reml(rho: np.ndarray) -> tuple[float, np.ndarray]:
        lam = np.exp(rho)
        _, Ainv, beta, _, logdet, dp = penalized_solve(G, b, yy, S_list, lam)
        dp = max(dp, 1e-300)
        bSb = np.array([beta[sl] @ S @ beta[sl] for sl, S in S_list])
        trAS = np.array([np.sum(Ainv[sl, sl] * S) for sl, S in S_list])
        if criterion == "REML":
            value = 0.5 * (n - n_null) * np.log(dp) + 0.5 * logdet - 0.5 * ranks @ rho
            grad = 0.5 * (n - n_null) * lam * bSb / dp + 0.5 * lam * trAS - 0.5 * ranks
        else:
            value = 0.5 * dp + 0.5 * logdet - 0.5 * ranks @ rho
            grad = 0.5 * lam * bSb + 0.5 * lam * trAS - 0.5 * ranks
        return float(value), grad

    def objective(rho: np.ndarray) -> tuple[float, np.ndarray]:
        # tau = tr(A^{-1} G) = p - sum_j lam_j tr(A^{-1}_jj S_j); only penalty blocks are touched,
        # so one evaluation costs the Cholesky inverse plus O(m^2 k^3), not several p^3 products.
        lam = np.exp(rho)
        _, Ainv, beta, rss, _, _ = penalized_solve(G, b, yy, S_list, lam)
        C = [[Ainv[sk, sj] @ Sj for (sj, Sj) in S_list] for (sk, _) in S_list]
        trC = np.array([np.trace(C[k][k]) for k in range(m)])
        tau = float(G.shape[0] - lam @ trC)
        cross = np.array([[np.sum(C[k][j] * C[j][k].T) for j in range(m)] for k in range(m)])
        d_tau = -lam * (trC - cross @ lam)
        Sb = np.zeros_like(beta)
        for (sl, S), lam_k in zip(S_list, lam):
            Sb[sl] += lam_k * (S @ beta[sl])
        AinvSb = Ainv @ Sb
        d_rss = np.array([2.0 * lam_k * AinvSb[sl] @ (S @ beta[sl]) for (sl, S), lam_k in zip(S_list, lam)])
        if criterion == "GCV":
            denom = max(n - tau, 1e-8)
            rss_s = max(rss, 1e-300)
            value = np.log(rss_s) - 2.0 * np.log(denom)
            grad = d_rss / rss_s + 2.0 * d_tau / denom
        else:  # UBRE with scale 1
            value = rss / n - 1.0 + 2.0 * tau / n
            grad = d_rss / n + 2.0 * d_tau / n
        return float(value), grad

    best = None
    starts = [np.full(m, 0.0), np.full(m, 6.0)] if start is None else [np.asarray(start, dtype=float)]
    for x0 in starts:
        res = minimize(
            reml if criterion.startswith("REML") else objective, x0, jac=True, method="L-BFGS-B",
            bounds=[(-RHO_BOUND, RHO_BOUND)] * m, options={"maxiter": 200, "ftol": 1e-12, "gtol": 1e-8},
        )
        if best is None or res.fun < best.fun:
            best = res
    lam = np.exp(best.x)
    _, Ainv, beta, rss, _, _ = penalized_solve(G, b, yy, S_list, lam)
    return PenalizedFit(beta, Ainv, np.einsum("ij,ji->i", Ainv, G), rss, lam)
