"""A cluster-robust Wald test of linear constraints in a linear regression with few clusters: the CR2 covariance
with Pustejovsky & Tipton's (2018) approximate Hotelling's T-squared reference distribution (``HTZ``), as R's
``clubSandwich::Wald_test(..., vcov = "CR2", test = "HTZ")`` for an unweighted ``lm``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["WaldTest", "cr2_wald_htz"]


@dataclass(frozen=True)
class WaldTest:
    """``statistic`` the F statistic (``delta * Q / q``), ``Q`` the Wald statistic with the CR2 covariance,
    ``df_num`` (q) and ``df_den`` (``eta - q + 1``), ``pvalue``, ``delta`` the scale ``(eta - q + 1) / eta``,
    ``eta`` the Hotelling degrees of freedom (clubSandwich's ``nu_Z``)."""

    statistic: float
    Q: float
    df_num: int
    df_den: float
    pvalue: float
    delta: float
    eta: float


def _inverse_sqrt(matrix: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    vals, vecs = np.linalg.eigh(matrix)
    power = np.where(vals > tol, 1.0 / np.sqrt(np.where(vals > tol, vals, 1.0)), 0.0)
    return (vecs * power) @ vecs.T


def cr2_wald_htz(x: np.ndarray, y: np.ndarray, cluster: np.ndarray, constraints: np.ndarray) -> WaldTest:
    """Test ``constraints @ beta = 0`` in ``y = x beta + e`` (OLS) with CR2 standard errors and the HTZ test.

    Parameters
    ----------
    x : ndarray, shape (n, p)
        Design matrix of full column rank.
    y : ndarray, shape (n,)
    cluster : ndarray of int, shape (n,)
        Cluster codes.
    constraints : ndarray, shape (q, p)
        The rows of the hypothesis (e.g. the differences of class means).

    Returns
    -------
    WaldTest

    Notes
    -----
    With :math:`M = (X^\\top X)^{-1} = L L^\\top`, cluster blocks :math:`X_j`, the CR2 adjustment
    :math:`A_j = (I - X_j M X_j^\\top)^{-1/2}` (symmetric; eigenvalues of 0 left at 0, as clubSandwich's
    ``matrix_power``) is computed from the :math:`p \\times p` matrix :math:`L^\\top X_j^\\top X_j L`:
    with its eigen-decomposition :math:`V \\Lambda V^\\top`, :math:`A_j = I + X_j L V \\,\\mathrm{diag}(f)\\,
    V^\\top L^\\top X_j^\\top` and :math:`f_i = ((1 - \\lambda_i)^{-1/2} - 1) / \\lambda_i`. Then
    :math:`V^{CR2} = M \\sum_j X_j^\\top A_j e_j e_j^\\top A_j X_j M` and :math:`Q = (C\\hat\\beta)^\\top
    (C V^{CR2} C^\\top)^{-1} C\\hat\\beta`. Under the working model :math:`\\sigma^2 I`, with
    :math:`G_j = C M X_j^\\top A_j`, :math:`H_j = C M X_j^\\top A_j X_j L`,
    :math:`\\Omega = \\sum_j (G_j G_j^\\top - H_j H_j^\\top)` and the blocks
    :math:`B_{jk} = \\Omega^{-1/2}(\\delta_{jk} G_j G_j^\\top - H_j H_k^\\top)\\Omega^{-1/2}`, the Hotelling degrees of
    freedom are :math:`\\eta = q (q + 1) / \\sum_{j,k} [\\mathrm{tr}(B_{jk}^2) + \\mathrm{tr}(B_{jk})^2]` and
    :math:`F = \\frac{\\eta - q + 1}{\\eta q} Q \\sim F(q, \\eta - q + 1)` (Pustejovsky & Tipton 2018, Section 3.3;
    clubSandwich's ``Wald_test(test = "HTZ")``). The double sums over clusters use
    :math:`\\sum_{j,k} \\langle H_j, H_k\\rangle^2` and the like, from the :math:`qp \\times qp` Gram matrix of the
    :math:`H_j`, so the cost is linear in the number of clusters.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(8), 5)
    >>> x = np.column_stack([np.ones(40), np.tile([0.0, 1.0], 20)])
    >>> res = cr2_wald_htz(x, rng.normal(size=40) + rng.normal(size=8)[g], g, np.array([[0.0, 1.0]]))
    >>> res.df_num, round(res.df_den, 3), round(res.pvalue, 4)     # clubSandwich: HTZ F 7.1 on 1 and 7, p 0.0322
    (1, 6.999, 0.0322)
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    c = np.atleast_2d(np.asarray(constraints, dtype=float))
    q, p = c.shape
    codes, cluster = np.unique(np.asarray(cluster), return_inverse=True)
    n_clusters = len(codes)
    m = np.linalg.inv(x.T @ x)
    ell = np.linalg.cholesky(m)
    beta = m @ (x.T @ y)
    e = y - x @ beta
    xx = np.zeros((n_clusters, p, p))                          # X_j' X_j
    np.add.at(xx, cluster, x[:, :, None] * x[:, None, :])
    xe = np.zeros((n_clusters, p))                             # X_j' e_j
    np.add.at(xe, cluster, x * e[:, None])
    inner = np.einsum("ab,jac,cd->jbd", ell, xx, ell)          # L' X_j' X_j L
    lam, vec = np.linalg.eigh(inner)
    lam = np.clip(lam, 0.0, None)
    keep = lam > 1e-12
    one_minus = 1.0 - lam
    root = np.where(one_minus > 1e-12, 1.0 / np.sqrt(np.where(one_minus > 1e-12, one_minus, 1.0)), 0.0)
    safe = np.where(keep, lam, 1.0)
    f1 = np.where(keep, (root - 1.0) / safe, 0.0)              # A_j = I + B V diag(f1) V' B'
    f2 = np.where(keep, (root * root - 1.0) / safe, 0.0)       # A_j^2 = I + B V diag(f2) V' B'
    lv = np.einsum("ab,jbc->jac", ell, vec)                    # L V, per cluster
    nlv = np.einsum("jab,jbc->jac", xx, lv)                    # X_j' X_j L V
    xax = xx + np.einsum("jac,jc,jbc->jab", nlv, f1, nlv)      # X_j' A_j X_j
    xaax = xx + np.einsum("jac,jc,jbc->jab", nlv, f2, nlv)     # X_j' A_j^2 X_j
    xae = xe + np.einsum("jac,jc,jbc,jb->ja", nlv, f1, lv, xe) # X_j' A_j e_j
    cm = c @ m
    u = xae @ cm.T                                             # C M X_j' A_j e_j, per cluster (J x q)
    vcov = u.T @ u
    est = c @ beta
    wald = float(est @ np.linalg.solve(vcov, est))
    gg = np.einsum("ab,jbc,dc->jad", cm, xaax, cm)             # G_j G_j'
    h = np.einsum("ab,jbc,cd->jad", cm, xax, ell)              # H_j (q x p)
    omega = gg.sum(axis=0) - np.einsum("jab,jcb->ac", h, h)
    root_omega = _inverse_sqrt(omega)
    d = np.einsum("ab,jbc,cd->jad", root_omega, gg, root_omega)
    hh = np.einsum("ab,jbc->jac", root_omega, h).reshape(n_clusters, q * p)
    gram = (hh.T @ hh).reshape(q, p, q, p)                     # K[s, r, t, r'] = sum_j h_j[s, r] h_j[t, r']
    hj = hh.reshape(n_clusters, q, p)
    tr_d = np.einsum("jss->j", d)
    norm_h = (hh * hh).sum(axis=1)
    squares_of_traces = (tr_d ** 2).sum() - 2.0 * (tr_d * norm_h).sum() + float((gram ** 2).sum())
    traces_of_squares = _trace_of_squares(d, hj, gram)
    eta = q * (q + 1) / (squares_of_traces + traces_of_squares)
    df_den = eta - q + 1
    delta = max(df_den / eta, 0.0)
    statistic = delta * wald / q
    pvalue = float(stats.f.sf(statistic, q, df_den)) if df_den > 0 else float("nan")
    return WaldTest(statistic=float(statistic), Q=wald, df_num=q, df_den=float(df_den), pvalue=pvalue,
                    delta=float(delta), eta=float(eta))


def _trace_of_squares(d: np.ndarray, h: np.ndarray, gram: np.ndarray) -> float:
    """``sum_{j,k} tr(B_jk^2)`` for ``B_jk = delta_jk D_j - h_j h_k'``."""
    own = float(np.einsum("jst,jts->", d, d)) - 2.0 * float(np.einsum("jst,jtr,jsr->", d, h, h))
    cross = float(np.einsum("srtu,trsu->", gram, gram))        # sum_{j,k} tr(h_j h_k' h_j h_k')
    return own + cross
